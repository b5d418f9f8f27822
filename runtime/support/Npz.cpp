//===- Npz.cpp - NumPy .npy and .npz files --------------------------------===//
//
// A .npy file is a magic string, a format version, a header length, a header
// (a Python dict literal such as "{'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }" padded with spaces) and the raw elements. A .npz file
// is a zip archive of .npy members: MappedNpz (MappedNpz.h) reads it,
// stored or deflated, and libzip writes it.
//
// The header is parsed by a small recursive-descent parser that accepts what
// NumPy writes (strings, True/False, tuples of integers) and nothing else;
// it never reads past its bounds and reports the first thing it does not
// understand. Sizes are checked in 64 bits with overflow detection against
// the bytes actually present before anything is allocated, so a forged shape
// cannot make us allocate or read beyond the input.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/Npz.h"
#include "runtime/support/MappedNpz.h"

#include <zip.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <string>
#include <unistd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .npy reader and writer assume a little-endian host"
#endif

namespace dlc {

namespace {

constexpr char kMagic[] = "\x93"
                          "NUMPY";
constexpr size_t kMagicSize = 6;
/// NumPy aligns the data to 64 bytes so that memory-mapped arrays are aligned
/// for vector loads; we do the same so our files are byte-identical.
constexpr size_t kDataAlignment = 64;
constexpr const char *kBF16Reason =
    "bfloat16 has no NumPy dtype; cast to float32";

/// A status of `code` with the message "<what>: <reason>".
dlc_status_t fail(dlc_status_code_t code, const std::string &what,
                  const std::string &reason) {
  return makeStatus(code, what + ": " + reason);
}

/// A failed system call, `doing` ("cannot open"), with its errno `e`.
dlc_status_t failErrno(int e, const std::string &what,
                       const std::string &doing) {
  return fail(errnoStatusCode(e), what, doing + ": " + std::strerror(e));
}

//===----------------------------------------------------------------------===//
// Header parsing
//===----------------------------------------------------------------------===//

struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Parses the dict literal of a .npy header, the bytes `what` names. Each
/// method returns the first failure, so it propagates unchanged to the
/// caller: DLC_UNIMPLEMENTED for what NumPy writes and dlc does not hold,
/// DLC_DATA_LOSS for anything else.
class HeaderParser {
public:
  HeaderParser(const char *text, size_t size, const std::string &what)
      : pos(text), end(text + size), what(what) {}

  dlc_status_t parse(NpyHeader &header) {
    bool seenDescr = false, seenFortran = false, seenShape = false;
    skipSpace();
    if (!consume('{'))
      return malformed("expected '{'");
    skipSpace();
    while (!consume('}')) {
      std::string key;
      if (!parseString(key))
        return malformed("expected a string key");
      skipSpace();
      if (!consume(':'))
        return malformed("expected ':' after '" + sanitize(key) + "'");
      skipSpace();
      if (key == "descr")
        DLC_RETURN_IF_ERROR(parseDescr(header.descr, seenDescr));
      else if (key == "fortran_order")
        DLC_RETURN_IF_ERROR(parseBool(header.fortranOrder, seenFortran));
      else if (key == "shape")
        DLC_RETURN_IF_ERROR(parseShape(header.shape, seenShape));
      else
        return malformed("unexpected key '" + sanitize(key) + "'");
      skipSpace();
      if (consume(','))
        skipSpace();
      else if (pos == end || *pos != '}')
        return malformed("expected ',' or '}'");
    }
    skipSpace();
    if (pos != end)
      return malformed("unexpected text after '}'");
    if (!seenDescr)
      return malformed("missing key 'descr'");
    if (!seenFortran)
      return malformed("missing key 'fortran_order'");
    if (!seenShape)
      return malformed("missing key 'shape'");
    return nullptr;
  }

private:
  void skipSpace() {
    while (pos != end &&
           (*pos == ' ' || *pos == '\t' || *pos == '\n' || *pos == '\r'))
      ++pos;
  }

  bool consume(char c) {
    if (pos == end || *pos != c)
      return false;
    ++pos;
    return true;
  }

  bool consumeWord(const char *word) {
    size_t length = std::strlen(word);
    if (static_cast<size_t>(end - pos) < length ||
        std::memcmp(pos, word, length) != 0)
      return false;
    pos += length;
    return true;
  }

  /// A quoted string without escapes: NumPy's descr strings never need one.
  bool parseString(std::string &out) {
    if (pos == end || (*pos != '\'' && *pos != '"'))
      return false;
    char quote = *pos++;
    const char *start = pos;
    while (pos != end && *pos != quote) {
      if (*pos == '\\' || *pos == '\n')
        return false;
      ++pos;
    }
    if (pos == end)
      return false;
    out.assign(start, pos);
    ++pos;
    return true;
  }

  dlc_status_t malformed(const std::string &reason) const {
    return fail(DLC_DATA_LOSS, what, "malformed header: " + reason);
  }
  dlc_status_t duplicate(const char *key) const {
    return malformed(std::string("duplicate key '") + key + "'");
  }

  dlc_status_t parseDescr(std::string &out, bool &seen) {
    if (seen)
      return duplicate("descr");
    seen = true;
    if (pos != end && *pos == '[')
      return fail(DLC_UNIMPLEMENTED, what,
                  "structured dtypes are not supported");
    if (!parseString(out))
      return malformed("'descr' is not a string");
    return nullptr;
  }

  dlc_status_t parseBool(bool &out, bool &seen) {
    if (seen)
      return duplicate("fortran_order");
    seen = true;
    if (consumeWord("True"))
      out = true;
    else if (consumeWord("False"))
      out = false;
    else
      return malformed("'fortran_order' is not True or False");
    return nullptr;
  }

  /// A tuple of integers: "()", "(5,)", "(2, 3)". A lone "(5)" is an int in
  /// Python, not a tuple, so it is rejected as NumPy rejects it.
  dlc_status_t parseShape(std::vector<int64_t> &out, bool &seen) {
    if (seen)
      return duplicate("shape");
    seen = true;
    if (!consume('('))
      return malformed("'shape' is not a tuple");
    skipSpace();
    bool sawComma = false;
    while (!consume(')')) {
      int64_t dim;
      DLC_RETURN_IF_ERROR(parseDim(dim));
      out.push_back(dim);
      skipSpace();
      if (consume(',')) {
        sawComma = true;
        skipSpace();
      } else if (pos == end || *pos != ')') {
        return malformed("expected ',' or ')' in 'shape'");
      }
    }
    if (out.size() == 1 && !sawComma)
      return malformed("'shape' is not a tuple");
    return nullptr;
  }

  /// A decimal integer with an optional sign and Python 2's 'L' suffix.
  dlc_status_t parseDim(int64_t &out) {
    bool negative = consume('-');
    if (pos == end || *pos < '0' || *pos > '9')
      return malformed("expected an integer in 'shape'");
    uint64_t value = 0;
    while (pos != end && *pos >= '0' && *pos <= '9') {
      uint64_t digit = static_cast<uint64_t>(*pos++ - '0');
      if (value > (static_cast<uint64_t>(INT64_MAX) - digit) / 10)
        return malformed("dimension too large");
      value = value * 10 + digit;
    }
    consume('L');
    if (negative && value != 0)
      return fail(DLC_DATA_LOSS, what,
                  "negative dimension -" + std::to_string(value) + " in shape");
    out = static_cast<int64_t>(value);
    return nullptr;
  }

  const char *pos;
  const char *end;
  const std::string &what;
};

/// Maps a descr ("<f4") of the bytes `what` names to a DType and whether
/// its bytes need swapping. A type dlc does not hold is DLC_UNIMPLEMENTED.
dlc_status_t parseDescr(const std::string &descr, const std::string &what,
                        DType &type, bool &swap) {
  struct Code {
    const char *code;
    DType type;
  };
  static const Code kCodes[] = {
      {"b1", DType::Bool}, {"i1", DType::I8},  {"i2", DType::I16},
      {"i4", DType::I32},  {"i8", DType::I64}, {"u1", DType::U8},
      {"u2", DType::U16},  {"u4", DType::U32}, {"u8", DType::U64},
      {"f2", DType::F16},  {"f4", DType::F32}, {"f8", DType::F64},
  };
  // '|' means byte order does not apply, '=' native; a descr without a
  // prefix is native too, as np.dtype reads it.
  char order = '=';
  std::string code = descr;
  if (!descr.empty() && std::strchr("<>|=", descr[0])) {
    order = descr[0];
    code = descr.substr(1);
  }
  if (!code.empty() && code[0] == 'O')
    return fail(DLC_UNIMPLEMENTED, what, "object arrays are not supported");
  for (const Code &entry : kCodes) {
    if (code == entry.code) {
      type = entry.type;
      swap = order == '>' && dtypeSize(type) > 1;
      return nullptr;
    }
  }
  return fail(DLC_UNIMPLEMENTED, what,
              "unsupported dtype '" + sanitize(descr) + "'");
}

/// Checks a shape's dimensions and computes its element count. Like NumPy,
/// the product of the non-zero dimensions must fit in int64 even when the
/// array is empty, so strides computed from the shape cannot overflow.
dlc_status_t checkShape(const std::vector<int64_t> &shape,
                        const std::string &what, int64_t &count) {
  int64_t product = 1;
  bool empty = false;
  for (int64_t dim : shape) {
    if (dim == 0) {
      empty = true;
      continue;
    }
    if (__builtin_mul_overflow(product, dim, &product))
      return fail(DLC_DATA_LOSS, what,
                  "element count of the shape overflows int64");
  }
  count = empty ? 0 : product;
  return nullptr;
}

/// Copies a column-major array into row-major order.
void copyFromColumnMajor(const unsigned char *src, std::byte *dst,
                         const std::vector<int64_t> &shape, size_t itemSize) {
  int64_t count = numElements(shape);
  if (count == 0)
    return;
  size_t rank = shape.size();
  // In column-major order the first index varies fastest.
  std::vector<int64_t> srcStrides(rank);
  int64_t stride = 1;
  for (size_t d = 0; d < rank; ++d) {
    srcStrides[d] = stride;
    stride *= shape[d];
  }
  // Walk the destination in row-major order, carrying the source offset.
  std::vector<int64_t> index(rank, 0);
  int64_t srcOffset = 0;
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(dst + i * itemSize, src + srcOffset * itemSize, itemSize);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d]) {
        srcOffset += srcStrides[d];
        break;
      }
      srcOffset -= (shape[d] - 1) * srcStrides[d];
      index[d] = 0;
    }
  }
}

void byteSwapElements(std::byte *data, int64_t count, size_t itemSize) {
  for (int64_t i = 0; i < count; ++i)
    std::reverse(data + i * itemSize, data + (i + 1) * itemSize);
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

dlc_status_t readFile(const std::string &path,
                      std::vector<unsigned char> &out) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return failErrno(errno, path, "cannot open");
  unsigned char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    out.insert(out.end(), buffer, buffer + n);
  int readErrno = errno;
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed)
    return failErrno(readErrno, path, "cannot read");
  return nullptr;
}

/// Renames the written file `tmp` over `path`, or removes it on failure.
dlc_status_t renameOver(const std::string &tmp, const std::string &path) {
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int renameErrno = errno;
    std::remove(tmp.c_str());
    return failErrno(renameErrno, path, "cannot rename '" + tmp + "'");
  }
  return nullptr;
}

/// The little-endian descr NumPy writes for a type; null for BF16.
const char *npyDescr(DType t) {
  switch (t) {
  case DType::Bool:
    return "|b1";
  case DType::I8:
    return "|i1";
  case DType::I16:
    return "<i2";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::U8:
    return "|u1";
  case DType::U16:
    return "<u2";
  case DType::U32:
    return "<u4";
  case DType::U64:
    return "<u8";
  case DType::F16:
    return "<f2";
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::BF16:
    return nullptr;
  }
  return nullptr;
}

std::string zipErrorString(int code) {
  zip_error_t zipError;
  zip_error_init_with_code(&zipError, code);
  std::string message = zip_error_strerror(&zipError);
  zip_error_fini(&zipError);
  return message;
}

/// The code of libzip's failure `error`: its errno's where it has one (a
/// full disk when the archive is written out).
dlc_status_code_t zipStatusCode(zip_error_t *error) {
  if (zip_error_code_zip(error) == ZIP_ER_MEMORY)
    return DLC_RESOURCE_EXHAUSTED;
  if (zip_error_system_type(error) == ZIP_ET_SYS)
    return errnoStatusCode(zip_error_code_system(error));
  return DLC_IO_ERROR;
}

} // namespace

dlc_status_t writeFileAtomically(const std::string &path,
                                 const std::string &bytes) {
  std::string temp = path + ".tmp";
  auto failure = [&](const char *what, int fd) {
    int e = errno;
    if (fd >= 0)
      ::close(fd);
    ::unlink(temp.c_str());
    return failErrno(e, path, what);
  };
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return failure("cannot create a temporary file", -1);
  const char *p = bytes.data();
  size_t left = bytes.size();
  while (left) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return failure("write failed", fd);
    p += n;
    left -= static_cast<size_t>(n);
  }
  // Flushed before the rename: after a crash the path holds the old file or
  // the whole new one, never an empty one.
  if (::fsync(fd) != 0)
    return failure("flush failed", fd);
  if (::close(fd) != 0)
    return failure("close failed", -1);
  if (::rename(temp.c_str(), path.c_str()) != 0)
    return failure("rename failed", -1);
  return nullptr;
}

std::string sanitize(const std::string &text) {
  std::string safe;
  for (char c : text.substr(0, 64))
    safe += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > 64)
    safe += "...";
  return safe;
}

Tensor bfloat16AsBits(const Tensor &tensor) {
  Tensor bits(DType::U16, tensor.shape());
  if (tensor.byteSize() > 0)
    std::memcpy(bits.bytes(), tensor.bytes(), tensor.byteSize());
  return bits;
}

Tensor bfloat16FromBits(const Tensor &bits) {
  Tensor tensor(DType::BF16, bits.shape());
  if (bits.byteSize() > 0)
    std::memcpy(tensor.bytes(), bits.bytes(), bits.byteSize());
  return tensor;
}

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

dlc_status_t parseNpyHeader(const void *data, size_t size,
                            const std::string &what, NpyLayout &out) {
  const auto *bytes = static_cast<const unsigned char *>(data);
  if (size < kMagicSize || std::memcmp(bytes, kMagic, kMagicSize) != 0)
    return fail(DLC_DATA_LOSS, what, "not a .npy file (bad magic)");
  if (size < kMagicSize + 2)
    return fail(DLC_DATA_LOSS, what, "truncated header");
  unsigned major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return fail(DLC_UNIMPLEMENTED, what,
                "unsupported .npy format version " + std::to_string(major) +
                    "." + std::to_string(minor));
  // Version 1.0 has a 2-byte header length; 2.0 and 3.0 (UTF-8 header) a
  // 4-byte one.
  size_t prefix = major == 1 ? 10 : 12;
  if (size < prefix)
    return fail(DLC_DATA_LOSS, what, "truncated header");
  size_t headerSize = bytes[8] | (bytes[9] << 8);
  if (major != 1)
    headerSize |= static_cast<size_t>(bytes[10]) << 16 |
                  static_cast<size_t>(bytes[11]) << 24;
  if (headerSize > size - prefix)
    return fail(DLC_DATA_LOSS, what,
                "truncated header: " + std::to_string(headerSize) +
                    " bytes declared, " + std::to_string(size - prefix) +
                    " present");

  NpyHeader header;
  const char *headerText = reinterpret_cast<const char *>(bytes + prefix);
  DLC_RETURN_IF_ERROR(HeaderParser(headerText, headerSize, what).parse(header));
  DType type = DType::F32;
  bool swap = false;
  DLC_RETURN_IF_ERROR(parseDescr(header.descr, what, type, swap));
  int64_t count = 0;
  DLC_RETURN_IF_ERROR(checkShape(header.shape, what, count));

  size_t itemSize = dtypeSize(type);
  size_t available = size - prefix - headerSize;
  uint64_t needed;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), itemSize, &needed) ||
      needed > available)
    return fail(DLC_DATA_LOSS, what,
                "truncated data: shape (" + std::to_string(count) +
                    " elements of " + std::to_string(itemSize) +
                    " bytes) needs more than the " + std::to_string(available) +
                    " bytes present");
  if (needed < available)
    return fail(DLC_DATA_LOSS, what,
                std::to_string(available - needed) +
                    " unexpected bytes after the data");

  out.dtype = type;
  out.shape = std::move(header.shape);
  out.fortranOrder = header.fortranOrder;
  out.byteSwapped = swap;
  out.dataOffset = prefix + headerSize;
  out.dataBytes = static_cast<size_t>(needed);
  return nullptr;
}

dlc_status_t parseNpy(const void *data, size_t size, const std::string &what,
                      Tensor &out) {
  NpyLayout layout;
  DLC_RETURN_IF_ERROR(parseNpyHeader(data, size, what, layout));
  Tensor result(layout.dtype, layout.shape);
  int64_t count = result.numElements();
  const unsigned char *src =
      static_cast<const unsigned char *>(data) + layout.dataOffset;
  if (layout.fortranOrder && result.rank() > 1)
    copyFromColumnMajor(src, result.bytes(), layout.shape,
                        dtypeSize(layout.dtype));
  else if (layout.dataBytes > 0)
    std::memcpy(result.bytes(), src, layout.dataBytes);
  if (layout.byteSwapped)
    byteSwapElements(result.bytes(), count, dtypeSize(layout.dtype));
  // Any non-zero byte is True to NumPy; store the canonical 1 so that
  // tensors compare by bytes.
  if (layout.dtype == DType::Bool)
    for (int64_t i = 0; i < count; ++i)
      result.bytes()[i] =
          static_cast<std::byte>(result.bytes()[i] != std::byte{0} ? 1 : 0);
  out = std::move(result);
  return nullptr;
}

dlc_status_t readNpy(const std::string &path, Tensor &out) {
  std::vector<unsigned char> bytes;
  DLC_RETURN_IF_ERROR(readFile(path, bytes));
  return parseNpy(bytes.data(), bytes.size(), path, out);
}

std::string serializeNpyHeader(DType dtype, const std::vector<int64_t> &shape) {
  const char *descr = npyDescr(dtype);
  if (!descr)
    return "";
  std::string dims;
  for (int64_t dim : shape)
    dims += (dims.empty() ? "" : ", ") + std::to_string(dim);
  if (shape.size() == 1)
    dims += ',';
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Pad with spaces and end with a newline so the data starts on a 64-byte
  // boundary. Version 1.0 stores the header length in 2 bytes; a header
  // longer than that (a very high rank) needs version 2.0.
  auto paddedSize = [&](size_t prefix) {
    size_t unpadded = prefix + header.size() + 1;
    return (unpadded + kDataAlignment - 1) / kDataAlignment * kDataAlignment -
           prefix;
  };
  size_t prefix = 10;
  size_t headerSize = paddedSize(prefix);
  if (headerSize > 0xffff) {
    prefix = 12;
    headerSize = paddedSize(prefix);
  }
  header.append(headerSize - header.size() - 1, ' ');
  header += '\n';

  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(prefix == 10 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < prefix - 8; ++i)
    out += static_cast<char>((headerSize >> (8 * i)) & 0xff);
  out += header;
  return out;
}

std::string serializeNpy(const Tensor &t) {
  std::string out = serializeNpyHeader(t.dtype(), t.shape());
  if (out.empty())
    return "";
  out.append(reinterpret_cast<const char *>(t.bytes()), t.byteSize());
  return out;
}

dlc_status_t writeNpy(const std::string &path, const Tensor &t) {
  if (t.dtype() == DType::BF16)
    return fail(DLC_INVALID_ARGUMENT, path, kBF16Reason);
  return writeFileAtomically(path, serializeNpy(t));
}

dlc_status_t readNpz(const std::string &path, NamedTensors &out) {
  std::unique_ptr<MappedNpz> npz;
  DLC_RETURN_IF_ERROR(MappedNpz::open(path, CrcCheck::Verify, npz));
  NamedTensors arrays;
  for (const MappedArray &array : npz->arrays()) {
    Tensor tensor(array.dtype, array.shape);
    if (array.bytes)
      std::memcpy(tensor.bytes(), array.data, array.bytes);
    arrays.emplace_back(array.name, std::move(tensor));
  }
  out = std::move(arrays);
  return nullptr;
}

dlc_status_t writeNpz(const std::string &path, const NamedTensors &arrays) {
  // Serialize everything first, so an unwritable array fails before any file
  // is touched. The buffers must outlive zip_close, which reads them.
  std::vector<std::string> members;
  std::set<std::string> names;
  for (const auto &[name, tensor] : arrays) {
    std::string what = path + ": array '" + name + "'";
    if (!names.insert(name).second)
      return fail(DLC_INVALID_ARGUMENT, what, "duplicate name");
    if (tensor.dtype() == DType::BF16)
      return fail(DLC_INVALID_ARGUMENT, what, kBF16Reason);
    members.push_back(serializeNpy(tensor));
  }
  // libzip deletes an archive left without entries instead of writing it;
  // NumPy writes the bare end-of-central-directory record, and so do we.
  if (arrays.empty())
    return writeFileAtomically(path, std::string("PK\x05\x06", 4) +
                                         std::string(18, '\0'));

  std::string tmp = path + ".tmp";
  int code = 0;
  zip_t *archive = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  if (!archive)
    return fail(DLC_IO_ERROR, path,
                "cannot create '" + tmp + "': " + zipErrorString(code));
  for (size_t i = 0; i < arrays.size(); ++i) {
    std::string member = arrays[i].first + ".npy";
    zip_source_t *source =
        zip_source_buffer(archive, members[i].data(), members[i].size(), 0);
    zip_int64_t index =
        source ? zip_file_add(archive, member.c_str(), source, ZIP_FL_ENC_UTF_8)
               : -1;
    if (index < 0 && source)
      zip_source_free(source);
    // Stored, as np.savez writes: float data barely compresses, and stored
    // members read at memory speed.
    if (index < 0 ||
        zip_set_file_compression(archive, static_cast<zip_uint64_t>(index),
                                 ZIP_CM_STORE, 0) != 0) {
      dlc_status_t status =
          fail(zipStatusCode(zip_get_error(archive)), path,
               "cannot add '" + member + "': " + zip_strerror(archive));
      zip_discard(archive);
      return status;
    }
  }
  if (zip_close(archive) != 0) {
    dlc_status_t status =
        fail(zipStatusCode(zip_get_error(archive)), path,
             "cannot write '" + tmp + "': " + zip_strerror(archive));
    zip_discard(archive);
    std::remove(tmp.c_str());
    return status;
  }
  return renameOver(tmp, path);
}

} // namespace dlc
