//===- Status.cpp - The C API's status values -----------------------------===//
//
// dlc_status_* and the C++ helpers of Status.h.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Status.h"

#include <new>

namespace dlc {
namespace {
/// What an allocation failure while building a status returns: static, so
/// it needs no memory, and never freed.
dlc_status_s outOfMemoryStatus{DLC_RESOURCE_EXHAUSTED, ""};
} // namespace

dlc_status_t makeStatus(dlc_status_code_t code, std::string message) {
  if (code == DLC_OK)
    return nullptr;
  // A status is how an allocation failure is reported, so building one must
  // not throw: without memory the caller still gets an error.
  auto *status = new (std::nothrow) dlc_status_s{code, std::string()};
  if (!status)
    return &outOfMemoryStatus;
  try {
    status->message = std::move(message);
  } catch (...) {
    delete status;
    return &outOfMemoryStatus;
  }
  return status;
}

dlc_status_t prefixStatus(dlc_status_t status, const std::string &prefix) {
  if (!status || status == &outOfMemoryStatus)
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

bool isStaticStatus(dlc_status_t status) {
  return status == &outOfMemoryStatus;
}

} // namespace dlc

extern "C" {

dlc_status_code_t dlc_status_code(dlc_status_t status) {
  return status ? status->code : DLC_OK;
}

const char *dlc_status_message(dlc_status_t status) {
  if (!status)
    return "";
  if (dlc::isStaticStatus(status))
    return "out of memory";
  return status->message.c_str();
}

void dlc_status_free(dlc_status_t status) {
  if (!dlc::isStaticStatus(status))
    delete status;
}

} // extern "C"
