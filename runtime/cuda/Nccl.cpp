//===- Nccl.cpp - NCCL, opened at run time --------------------------------===//
#include "runtime/cuda/Nccl.h"

#include "runtime/core/Status.h"

namespace dlc::cuda {

std::string ncclVersionText(int version) {
  // NCCL_VERSION(X, Y, Z): X * 10000 + Y * 100 + Z since 2.9.
  return std::to_string(version / 10000) + "." +
         std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

dlc_status_t Nccl::open(std::shared_ptr<const Nccl> &out, const char *library) {
  auto nccl = std::make_shared<Nccl>();
  DynamicLibrary &lib = nccl->library_;
  if (dlc_status_t failure = lib.open("NCCL", {library})) {
    StatusOwner owner(failure);
    return makeStatus(
        DLC_UNAVAILABLE,
        std::string(dlc_status_message(failure)) +
            "; GPU collectives need NCCL 2's " + kLibrary +
            ": install NCCL (NVIDIA's libnccl2 package, or PyTorch's "
            "nvidia-nccl-cu13 wheel) and put the folder holding it on "
            "LD_LIBRARY_PATH");
  }
#define DLC_BIND_NCCL_FUNCTION(name)                                           \
  DLC_RETURN_IF_ERROR(lib.bind(nccl->name, DLC_SYMBOL_NAME(name)));
  DLC_NCCL_FUNCTIONS(DLC_BIND_NCCL_FUNCTION)
#undef DLC_BIND_NCCL_FUNCTION
  // ncclConfig_t is versioned by the major and minor version of the
  // header dlc was built with; an older library would refuse the
  // configuration with a less helpful message.
  constexpr int kBuiltWith = NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, 0);
  int version = 0;
  DLC_RETURN_IF_ERROR(
      nccl->check(nccl->ncclGetVersion(&version), "ncclGetVersion", nullptr));
  if (version < kBuiltWith)
    return makeStatus(DLC_UNAVAILABLE, "NCCL " + ncclVersionText(version) +
                                           " (" + library + ") is older than " +
                                           ncclVersionText(kBuiltWith) +
                                           ", the version dlc was built with");
  out = std::move(nccl);
  return nullptr;
}

dlc_status_t Nccl::check(ncclResult_t result, const std::string &call,
                         ncclComm_t comm) const {
  if (result == ncclSuccess)
    return nullptr;
  std::string message = call + ": " + this->ncclGetErrorString(result) +
                        " (ncclResult_t " +
                        std::to_string(static_cast<int>(result)) + ")";
  const char *last = this->ncclGetLastError(comm);
  if (last && *last)
    message += std::string(": ") + last;
  dlc_status_code_t code = DLC_INTERNAL;
  if (result == ncclInvalidArgument)
    code = DLC_INVALID_ARGUMENT;
  else if (result == ncclSystemError || result == ncclRemoteError)
    code = DLC_UNAVAILABLE;
  return makeStatus(code, message);
}

} // namespace dlc::cuda
