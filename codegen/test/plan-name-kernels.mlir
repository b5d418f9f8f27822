// RUN: dlc-opt %s -dlc-fuse -dlc-plan-memory -dlc-lower-to-plan -dlc-name-kernels | FileCheck %s

// Launches of the same kernel (the same body on the same shapes) share its
// name, numbered in order of first launch across functions; a kernel on
// other shapes is another kernel (the same count of elements would not be:
// elementwise kernels run over a linear space).
// CHECK-LABEL: func.func @first
// CHECK: dlc.plan.launch "dlc_kernel_0"(%arg0)
// CHECK: dlc.plan.launch "dlc_kernel_1"(%{{.*}})
// CHECK: dlc.plan.launch "dlc_kernel_0"(%{{.*}})
// CHECK-LABEL: func.func @second
// CHECK: dlc.plan.launch "dlc_kernel_0"(%arg0)
// CHECK: dlc.plan.launch "dlc_kernel_2"(%arg1)
func.func @first(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %a = dlc.exp %x : tensor<4x8xf32>
  %m = dlc.matmul %a, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %n = dlc.neg %m : tensor<4x8xf32>
  %o = dlc.matmul %n, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %e = dlc.exp %o : tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}
func.func @second(%x: tensor<4x8xf32>, %y: tensor<2x8xf32>) -> (tensor<4x8xf32>, tensor<2x8xf32>) {
  %a = dlc.exp %x : tensor<4x8xf32>
  %b = dlc.exp %y : tensor<2x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<2x8xf32>
}
