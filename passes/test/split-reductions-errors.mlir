// RUN: not dlc-opt %s -dlc-split-reductions=multiprocessors=0 2>&1 | FileCheck %s
// RUN: not dlc-opt %s '-dlc-split-reductions=threads-per-multiprocessor=-32' 2>&1 | FileCheck %s --check-prefix=THREADS
// CHECK: error: dlc-split-reductions: multiprocessors and threads-per-multiprocessor must be positive (got 0 and 2048)
// THREADS: error: dlc-split-reductions: multiprocessors and threads-per-multiprocessor must be positive (got 132 and -32)
func.func @f(%x: tensor<4xf32>) -> tensor<f32> {
  %s = dlc.reduce_sum %x axes [0] : tensor<4xf32> -> tensor<f32>
  return %s : tensor<f32>
}
