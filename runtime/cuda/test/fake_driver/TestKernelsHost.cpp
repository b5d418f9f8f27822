//===- TestKernelsHost.cpp - The GPU tests' kernels, for the fake driver --===//
//
// TestKernels.cu compiled with g++ against the CUDA emulation (cuda_shim.h),
// into the library the fake CUDA driver runs the session tests' kernels
// from when it replaces libcuda.so.1 (FakeDriver.cpp).
//
//===----------------------------------------------------------------------===//
#include "cuda_shim.h"
#include "runtime/cuda/test/fake_driver/FakeDriver.h"

#include "runtime/cuda/test/TestKernels.cu"

DLC_FAKE_KERNEL(test_add_f32)
