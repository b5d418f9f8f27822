//===- Status.cpp - dlc_status_t built and passed on in C++ ---------------===//
//
// The C API's dlc_status_* and the helpers of Status.h. They live in the
// support library, the lowest one that reports statuses; the runtime's
// shared library embeds it and exports the C functions.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/Status.h"

#include <cerrno>
#include <new>

namespace dlc {
namespace {
/// What an allocation failure while building a status returns: static, so
/// it needs no memory, and never freed.
/// Its message is short enough for std::string's inline buffer, so that
/// nothing is allocated for it either, and code reading `message` directly
/// sees the reason.
dlc_status_s outOfMemoryStatus{DLC_RESOURCE_EXHAUSTED, "out of memory"};
} // namespace

dlc_status_t makeStatus(dlc_status_code_t code, std::string message) {
  if (code == DLC_OK)
    return nullptr;
  // A status is how an allocation failure is reported, so building one must
  // not fail for want of memory: the nothrow new is the only allocation,
  // moving the message in allocates nothing.
  auto *status = new (std::nothrow) dlc_status_s{code, std::move(message)};
  return status ? status : &outOfMemoryStatus;
}

bool isStaticStatus(dlc_status_t status) {
  return status == &outOfMemoryStatus;
}

dlc_status_code_t errnoStatusCode(int errnoValue) {
  switch (errnoValue) {
  case ENOENT:
    return DLC_NOT_FOUND;
  case ENOSPC:
  case EDQUOT:
  case EFBIG:
  case ENOMEM:
    return DLC_RESOURCE_EXHAUSTED;
  default:
    return DLC_IO_ERROR;
  }
}

} // namespace dlc

extern "C" {

dlc_status_code_t dlc_status_code(dlc_status_t status) {
  return status ? status->code : DLC_OK;
}

const char *dlc_status_message(dlc_status_t status) {
  return status ? status->message.c_str() : "";
}

void dlc_status_free(dlc_status_t status) {
  if (!dlc::isStaticStatus(status))
    delete status;
}

} // extern "C"
