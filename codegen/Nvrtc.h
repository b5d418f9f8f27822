//===- Nvrtc.h - CUDA kernels through NVRTC ---------------------*- C++ -*-===//
//
// NVRTC compiles CUDA C++ to cubin or PTX without a GPU. It is loaded at run
// time (dlopen), so dlc-compile builds and runs where no CUDA toolkit is
// installed and only --target cuda needs one.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_CODEGEN_NVRTC_H
#define DLC_CODEGEN_NVRTC_H

#include <optional>
#include <string>

namespace mlir::dlc::codegen {

/// Whether libnvrtc can be loaded (its version in `version` if so).
bool nvrtcAvailable(std::string *version = nullptr);

/// Compiles `source` for `arch`: a real architecture ("sm_90a") gives
/// cubin, a virtual one ("compute_80") with `ptx` gives PTX text. On
/// failure, `error` holds NVRTC's log.
std::optional<std::string> compileCuda(const std::string &source,
                                       const std::string &arch, bool ptx,
                                       std::string &error);

} // namespace mlir::dlc::codegen

#endif // DLC_CODEGEN_NVRTC_H
