//===- Nccl.h - NCCL, opened at run time ------------------------*- C++ -*-===//
//
// GPU collectives run on NCCL (DESIGN.md decision 9), which, like cuDNN, is
// opened with dlopen (DynamicLibrary.h) rather than linked: a binary built
// with CUDA starts, and trains on one rank or on the CPU, where NCCL is not
// installed. nccl.h provides the types; this table the functions.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_NCCL_H
#define DLC_RUNTIME_CUDA_NCCL_H

#include "dlc/runtime.h"
#include "runtime/cuda/DynamicLibrary.h"

#include <nccl.h>

#include <memory>
#include <string>

namespace dlc::cuda {

/// The NCCL entry points dlc calls, as members of Nccl named like the API.
#define DLC_NCCL_FUNCTIONS(X)                                                  \
  X(ncclGetVersion)                                                            \
  X(ncclGetErrorString)                                                        \
  X(ncclGetLastError)                                                          \
  X(ncclGetUniqueId)                                                           \
  X(ncclCommInitRankConfig)                                                    \
  X(ncclCommGetAsyncError)                                                     \
  X(ncclCommAbort)                                                             \
  X(ncclCommDestroy)                                                           \
  X(ncclAllReduce)                                                             \
  X(ncclReduceScatter)                                                         \
  X(ncclAllGather)                                                             \
  X(ncclBroadcast)

class Nccl {
public:
  /// The soname opened: NCCL 2's ABI.
  static constexpr const char *kLibrary = "libnccl.so.2";

  /// Loads `library` and binds every function. A library that cannot be
  /// loaded is DLC_UNAVAILABLE naming it, dlerror's text and where NCCL
  /// comes from; a missing symbol, or a version older than the nccl.h dlc
  /// was built with (whose ncclConfig_t init is given), DLC_UNAVAILABLE too.
  static dlc_status_t open(std::shared_ptr<const Nccl> &out,
                           const char *library = kLibrary);

  /// A table with no functions, for a test to fill with fakes; open()
  /// fills it from the library.
  Nccl() = default;
  Nccl(const Nccl &) = delete;
  Nccl &operator=(const Nccl &) = delete;

  /// NULL for ncclSuccess, else a status naming `call`, NCCL's text for
  /// `result` and its code, then NCCL's last error on `comm` (or the last
  /// one of this thread when `comm` is null) when it has one:
  /// "ncclAllReduce: unhandled cuda error (ncclResult_t 1): Cuda failure
  /// 'out of memory'". Invalid arguments are DLC_INVALID_ARGUMENT, a
  /// system or remote error (a network, a peer gone) DLC_UNAVAILABLE, the
  /// rest DLC_INTERNAL.
  dlc_status_t check(ncclResult_t result, const std::string &call,
                     ncclComm_t comm) const;

  DLC_NCCL_FUNCTIONS(DLC_DECLARE_LIBRARY_FUNCTION)

private:
  DynamicLibrary library_;
};

/// "2.28.9" for NCCL's version code (ncclGetVersion's 22809).
std::string ncclVersionText(int version);

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_NCCL_H
