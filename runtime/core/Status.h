//===- Status.h - The C API's status values, built from C++ ---------------===//
//
// dlc_status_t is NULL on success and otherwise an owned code + message
// (IREE's iree_status_t). Runtime code builds statuses with makeStatus and
// propagates them with DLC_RETURN_IF_ERROR; C API entry points wrap their
// body in guardStatus so no C++ exception (an allocation failure, a oneDNN
// error) ever crosses the C boundary.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CORE_STATUS_H
#define DLC_RUNTIME_CORE_STATUS_H

#include "dlc/runtime.h"

#include <exception>
#include <new>
#include <string>

/// The object behind dlc_status_t.
struct dlc_status_s {
  dlc_status_code_t code;
  std::string message;
};

namespace dlc {

/// A new status with `code` and `message`; DLC_OK gives NULL.
dlc_status_t makeStatus(dlc_status_code_t code, std::string message);

/// `status` with "PREFIX: " put before its message (NULL stays NULL).
dlc_status_t prefixStatus(dlc_status_t status, const std::string &prefix);

/// Runs `body` (returning dlc_status_t) and turns any exception it throws
/// into a status: std::bad_alloc is DLC_RESOURCE_EXHAUSTED, anything else
/// DLC_INTERNAL naming `what` (the API function).
template <typename Fn> dlc_status_t guardStatus(const char *what, Fn &&body);

/// Frees a status when it goes out of scope unless released.
class StatusOwner {
public:
  explicit StatusOwner(dlc_status_t status) : status_(status) {}
  ~StatusOwner() { dlc_status_free(status_); }
  StatusOwner(const StatusOwner &) = delete;
  StatusOwner &operator=(const StatusOwner &) = delete;
  dlc_status_t get() const { return status_; }
  dlc_status_t release() {
    dlc_status_t s = status_;
    status_ = nullptr;
    return s;
  }

private:
  dlc_status_t status_;
};

/// The status guardStatus returns for a caught exception (`e` may be null).
dlc_status_t statusFromException(const char *what, const std::exception *e,
                                 bool outOfMemory);

/// True for the preallocated out-of-memory status, which is never freed.
bool isStaticStatus(dlc_status_t status);

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

/// Returns the status of `expr` from the enclosing function if it is an
/// error.
#define DLC_RETURN_IF_ERROR(expr)                                              \
  do {                                                                         \
    dlc_status_t dlc_status_ = (expr);                                         \
    if (dlc_status_)                                                           \
      return dlc_status_;                                                      \
  } while (false)

#endif // DLC_RUNTIME_CORE_STATUS_H
