//===- Status.h - What fuzz targets ask of a loader's status ----*- C++ -*-===//
//
// The loaders return a dlc_status_t. Refusing an input is their job; a
// refusal must still say why, in a message a user could act on.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_FUZZ_STATUS_H
#define DLC_FUZZ_STATUS_H

#include "runtime/support/Status.h"

#include <cstdlib>

namespace dlc::fuzz {

/// Whether `status` (which it frees) is success. Aborts on a failure with
/// an empty message.
inline bool succeeded(dlc_status_t status) {
  StatusOwner owner(status);
  if (status && !*dlc_status_message(status))
    std::abort();
  return !status;
}

} // namespace dlc::fuzz

#endif // DLC_FUZZ_STATUS_H
