//===- TestModules.h - Ready-made modules for runtime tests -----*- C++ -*-===//
//
// Small, correct modules built with ModuleBuilder, shared by the tests and
// by the example-module writer the embedding test runs.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_TEST_TESTMODULES_H
#define DLC_RUNTIME_TEST_TESTMODULES_H

#include "runtime/test/ModuleBuilder.h"

#include <cstdint>
#include <vector>

namespace dlc::test {

/// The bytes of the test kernels' shared object (TestKernels.cpp), read
/// from the path the build passes in DLC_TEST_KERNELS_PATH.
const std::vector<uint8_t> &testKernelsObject();

/// A linear softmax classifier trained with SGD:
///   forward(x: float32[batch, features]) -> logits: float32[batch, classes]
///   train_step(x, labels: int64[batch]) -> loss: float32[]
/// with globals "w" (param, float32[features, classes], small seeded
/// values), "lr" (hyperparameter, float32[] = 0.5) and "dlc.step" (step,
/// int64[]). train_step runs a matmul, the test cross-entropy kernel, a
/// transposed matmul for the weight gradient and the SGD and step-counter
/// kernels; forward one matmul.
ModuleBuilder linearClassifier(int64_t batch, int64_t features,
                               int64_t classes);

} // namespace dlc::test

#endif // DLC_RUNTIME_TEST_TESTMODULES_H
