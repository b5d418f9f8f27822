// RUN: not dlc-opt %s '--dlc-mixed-precision=precision=fp8' 2>&1 | FileCheck %s
// RUN: not dlc-opt %s '--dlc-mixed-precision=low-ops=dlc.matmul,dlc.gemm' 2>&1 | FileCheck %s --check-prefix=LOW
// RUN: not dlc-opt %s '--dlc-mixed-precision=fp32-ops=tanh' 2>&1 | FileCheck %s --check-prefix=FP32
// CHECK: for the --precision option: Cannot find option named 'fp8'!
// LOW: error: dlc-mixed-precision: low-ops names 'dlc.gemm', which is not an op
// FP32: error: dlc-mixed-precision: fp32-ops names 'tanh', which is not an op
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlc.tanh %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
