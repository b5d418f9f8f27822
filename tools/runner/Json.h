//===- Json.h - JSON text of the metrics log --------------------*- C++ -*-===//
//
// The runner's metrics log must be byte-for-byte what the interpreter's
// trainer (tools/dlc-run/Train.cpp, through llvm::json) writes for the same
// values, so that tools compare the two logs directly: numbers with the
// digits that tell their type's values apart, null for NaN and infinity,
// strings escaped as llvm::json escapes them.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_RUNNER_JSON_H
#define DLC_TOOLS_RUNNER_JSON_H

#include <string>

namespace dlc::runner {

/// `value` as a JSON number: %.17g for a float64 value, %.9g for float32
/// and narrower ones (which round-trip through those digits); "null" when
/// not finite.
std::string jsonNumber(double value, bool float64);

/// `s` as a quoted JSON string: `"` and `\` escaped, \t \n \r short,
/// other control characters as \u00XX, invalid UTF-8 bytes replaced by
/// U+FFFD.
std::string jsonString(const std::string &s);

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_JSON_H
