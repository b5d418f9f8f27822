//===- Nvrtc.cpp - CUDA kernels through NVRTC -----------------------------===//
//
// The few NVRTC entry points dlc uses are declared here with their C
// signatures, so building dlc needs no CUDA headers.
//
//===----------------------------------------------------------------------===//

#include "codegen/Nvrtc.h"

#include <dlfcn.h>
#include <vector>

namespace {

using Program = struct NvrtcProgram *;
using Result = int; // nvrtcResult; 0 is NVRTC_SUCCESS

struct Nvrtc {
  const char *(*getErrorString)(Result);
  Result (*version)(int *, int *);
  Result (*createProgram)(Program *, const char *, const char *, int,
                          const char *const *, const char *const *);
  Result (*destroyProgram)(Program *);
  Result (*compileProgram)(Program, int, const char *const *);
  Result (*getProgramLogSize)(Program, size_t *);
  Result (*getProgramLog)(Program, char *);
  Result (*getCUBINSize)(Program, size_t *);
  Result (*getCUBIN)(Program, char *);
  Result (*getPTXSize)(Program, size_t *);
  Result (*getPTX)(Program, char *);
};

/// NVRTC, loaded once; null when no library is found. The toolkit's default
/// location is tried after the loader's search path.
const Nvrtc *nvrtc() {
  static const Nvrtc *loaded = []() -> const Nvrtc * {
    void *handle = nullptr;
    for (const char *name : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                             "/usr/local/cuda/lib64/libnvrtc.so"})
      if ((handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!handle)
      return nullptr;
    static Nvrtc api;
    bool ok = true;
    auto bind = [&](auto &fn, const char *symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(handle, symbol));
      ok &= fn != nullptr;
    };
    bind(api.getErrorString, "nvrtcGetErrorString");
    bind(api.version, "nvrtcVersion");
    bind(api.createProgram, "nvrtcCreateProgram");
    bind(api.destroyProgram, "nvrtcDestroyProgram");
    bind(api.compileProgram, "nvrtcCompileProgram");
    bind(api.getProgramLogSize, "nvrtcGetProgramLogSize");
    bind(api.getProgramLog, "nvrtcGetProgramLog");
    bind(api.getCUBINSize, "nvrtcGetCUBINSize");
    bind(api.getCUBIN, "nvrtcGetCUBIN");
    bind(api.getPTXSize, "nvrtcGetPTXSize");
    bind(api.getPTX, "nvrtcGetPTX");
    return ok ? &api : nullptr;
  }();
  return loaded;
}

} // namespace

bool mlir::dlc::codegen::nvrtcAvailable(std::string *version) {
  const Nvrtc *api = nvrtc();
  if (!api)
    return false;
  if (version) {
    int major = 0, minor = 0;
    api->version(&major, &minor);
    *version = std::to_string(major) + "." + std::to_string(minor);
  }
  return true;
}

std::optional<std::string>
mlir::dlc::codegen::compileCuda(const std::string &source,
                                const std::string &arch, bool ptx,
                                std::string &error) {
  const Nvrtc *api = nvrtc();
  if (!api) {
    error = "--target cuda needs NVRTC (libnvrtc.so from the CUDA toolkit), "
            "which cannot be loaded";
    return std::nullopt;
  }
  Program program = nullptr;
  Result rc = api->createProgram(&program, source.c_str(), "dlc_kernels.cu", 0,
                                 nullptr, nullptr);
  if (rc != 0) {
    error = std::string("NVRTC cannot create a program: ") +
            api->getErrorString(rc);
    return std::nullopt;
  }
  std::string archOption = "--gpu-architecture=" + arch;
  const char *options[] = {archOption.c_str(), "--std=c++17", "--fmad=false"};
  rc = api->compileProgram(program, 3, options);
  std::optional<std::string> output;
  if (rc != 0) {
    size_t size = 0;
    api->getProgramLogSize(program, &size);
    std::vector<char> log(size + 1, '\0');
    api->getProgramLog(program, log.data());
    error = "NVRTC failed to compile the generated CUDA kernels for " + arch +
            ": " + std::string(log.data());
  } else {
    size_t size = 0;
    if (ptx)
      api->getPTXSize(program, &size);
    else
      api->getCUBINSize(program, &size);
    std::string bytes(size, '\0');
    if (ptx)
      api->getPTX(program, bytes.data());
    else
      api->getCUBIN(program, bytes.data());
    if (ptx && !bytes.empty() && bytes.back() == '\0')
      bytes.pop_back();
    output = std::move(bytes);
  }
  api->destroyProgram(&program);
  return output;
}
