//===- Outcome.h - Statuses as gtest checks them ----------------*- C++ -*-===//
//
// dlc_support and the runtime report failures as dlc_status_t. Their tests
// check a status's code and message, and show the message when a call that
// should succeed fails; both helpers free the status.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_SUPPORT_TEST_OUTCOME_H
#define DLC_RUNTIME_SUPPORT_TEST_OUTCOME_H

#include "dlc/runtime.h"

#include <gtest/gtest.h>

#include <string>

namespace dlc::testing {

/// A status's code and message (the status is freed).
struct Outcome {
  dlc_status_code_t code = DLC_OK;
  std::string message;
  bool ok() const { return code == DLC_OK; }
};

inline Outcome outcome(dlc_status_t status) {
  Outcome o{dlc_status_code(status), dlc_status_message(status)};
  dlc_status_free(status);
  return o;
}

/// Success for a NULL status, else a failure showing its message:
/// ASSERT_TRUE(isOk(writeNpz(path, arrays))).
inline ::testing::AssertionResult isOk(dlc_status_t status) {
  Outcome o = outcome(status);
  if (o.ok())
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << o.message;
}

} // namespace dlc::testing

#endif // DLC_RUNTIME_SUPPORT_TEST_OUTCOME_H
