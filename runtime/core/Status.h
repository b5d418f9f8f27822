//===- Status.h - The C API's status values, built from C++ ---------------===//
//
// Statuses are built and passed on with runtime/support/Status.h (makeStatus,
// StatusOwner, DLC_RETURN_IF_ERROR). What needs exceptions is here, above the
// support library, which builds without them: C API entry points wrap their
// body in guardStatus so no C++ exception (an allocation failure, a oneDNN
// error) ever crosses the C boundary, and prefixStatus survives running out
// of memory.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CORE_STATUS_H
#define DLC_RUNTIME_CORE_STATUS_H

#include "runtime/support/Status.h"

#include <exception>
#include <new>
#include <string>

namespace dlc {

/// `status` with "PREFIX: " put before its message (NULL stays NULL).
dlc_status_t prefixStatus(dlc_status_t status, const std::string &prefix);

/// Runs `body` (returning dlc_status_t) and turns any exception it throws
/// into a status: std::bad_alloc is DLC_RESOURCE_EXHAUSTED, anything else
/// DLC_INTERNAL naming `what` (the API function).
template <typename Fn> dlc_status_t guardStatus(const char *what, Fn &&body);

/// The status guardStatus returns for a caught exception (`e` may be null).
dlc_status_t statusFromException(const char *what, const std::exception *e,
                                 bool outOfMemory);

template <typename Fn> dlc_status_t guardStatus(const char *what, Fn &&body) {
  try {
    return body();
  } catch (const std::bad_alloc &e) {
    return statusFromException(what, &e, true);
  } catch (const std::exception &e) {
    return statusFromException(what, &e, false);
  } catch (...) {
    return statusFromException(what, nullptr, false);
  }
}

} // namespace dlc

#endif // DLC_RUNTIME_CORE_STATUS_H
