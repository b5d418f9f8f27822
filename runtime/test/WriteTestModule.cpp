//===- WriteTestModule.cpp - Writes a small trainable module to a file ----===//
//
// Usage: dlc_write_test_module OUT.dlcm
//
// Writes TestModules.h's linear classifier (batch 8, 5 features, 3
// classes), so that tests of programs embedding the runtime have a real
// module without running the compiler.
//
//===----------------------------------------------------------------------===//
#include "runtime/test/TestModules.h"

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT.dlcm\n", argv[0]);
    return 2;
  }
  if (dlc::test::testKernelsObject().empty()) {
    std::fprintf(stderr, "error: cannot read the test kernels at %s\n",
                 DLC_TEST_KERNELS_PATH);
    return 1;
  }
  if (!dlc::test::writeFileBytes(
          argv[1], dlc::test::linearClassifier(8, 5, 3).finish())) {
    std::fprintf(stderr, "error: cannot write %s\n", argv[1]);
    return 1;
  }
  return 0;
}
