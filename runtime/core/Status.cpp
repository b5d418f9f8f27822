//===- Status.cpp - Statuses from exceptions, prefixed statuses
//------------===//
//
// The helpers of Status.h that catch exceptions; dlc_status_* and
// makeStatus are runtime/support's (Status.cpp there).
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Status.h"

namespace dlc {

dlc_status_t prefixStatus(dlc_status_t status, const std::string &prefix) {
  if (!status || isStaticStatus(status))
    return status;
  try {
    status->message = prefix + ": " + status->message;
  } catch (...) {
    // Out of memory: the unprefixed message still names the cause.
  }
  return status;
}

dlc_status_t statusFromException(const char *what, const std::exception *e,
                                 bool outOfMemory) {
  if (outOfMemory)
    return makeStatus(DLC_RESOURCE_EXHAUSTED,
                      std::string(what) + ": out of memory");
  return makeStatus(DLC_INTERNAL, std::string(what) + ": unexpected error: " +
                                      (e ? e->what() : "unknown exception"));
}

} // namespace dlc
