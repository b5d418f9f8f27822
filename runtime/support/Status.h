//===- Status.h - dlc_status_t built and passed on in C++ -----------------===//
//
// dlc_status_t is NULL on success and otherwise an owned code + message
// (IREE's iree_status_t). Every fallible function of the support library and
// of the runtime above it returns one: code builds statuses with makeStatus,
// propagates them with DLC_RETURN_IF_ERROR and frees the ones it consumes
// with StatusOwner. Nothing here throws or catches, so the support library
// builds without exceptions; runtime/core/Status.h adds what catches them at
// the C API's boundary.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_SUPPORT_STATUS_H
#define DLC_RUNTIME_SUPPORT_STATUS_H

#include "dlc/runtime.h"

#include <string>

/// The object behind dlc_status_t.
struct dlc_status_s {
  dlc_status_code_t code;
  std::string message;
};

namespace dlc {

/// A new status with `code` and `message`; DLC_OK gives NULL. Without memory
/// for it, a preallocated out-of-memory status.
dlc_status_t makeStatus(dlc_status_code_t code, std::string message);

/// True for the preallocated out-of-memory status, which is never freed and
/// whose message is never changed.
bool isStaticStatus(dlc_status_t status);

/// The code of a failed system call's errno: a missing file or directory is
/// DLC_NOT_FOUND; a full disk, quota, file size limit or memory
/// DLC_RESOURCE_EXHAUSTED; anything else DLC_IO_ERROR.
dlc_status_code_t errnoStatusCode(int errnoValue);

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
  /// Frees the status held and takes `status`.
  void reset(dlc_status_t status) {
    dlc_status_free(status_);
    status_ = status;
  }

private:
  dlc_status_t status_;
};

} // namespace dlc

/// Returns the status of `expr` from the enclosing function if it is an
/// error.
#define DLC_RETURN_IF_ERROR(expr)                                              \
  do {                                                                         \
    dlc_status_t dlc_status_ = (expr);                                         \
    if (dlc_status_)                                                           \
      return dlc_status_;                                                      \
  } while (false)

#endif // DLC_RUNTIME_SUPPORT_STATUS_H
