// RUN: dlc-opt %s -dlc-fuse -dlc-plan-memory -dlc-lower-to-plan -dlc-fold-transposes | FileCheck %s

// A fusion that only swaps the last two dimensions of a matmul operand
// (batched too) is read through the library call's transposed flag and
// disappears; one that also feeds a kernel (%bt, read by the exp) is
// computed: the memory plan gave it storage.
// CHECK-LABEL: func.func @transposes
// CHECK: %[[BT:.*]] = dlc.plan.launch(%arg1)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: dlc.fusion
// CHECK-NEXT: ^bb0
// CHECK-NEXT: dlc.transpose
// CHECK: dlc.plan.matmul %arg0 lhs_transposed, %[[BT]] : (tensor<8x4xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: dlc.plan.matmul %arg2 lhs_transposed, %arg2 : (tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
// CHECK-NEXT: dlc.plan.launch(%[[BT]])
// CHECK-NOT: dlc.transpose
func.func @transposes(%a: tensor<8x4xf32>, %b: tensor<6x8xf32>, %c: tensor<2x8x4xf32>) -> (tensor<4x6xf32>, tensor<2x4x4xf32>, tensor<8x6xf32>) {
  %at = dlc.transpose %a [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %bt = dlc.transpose %b [1, 0] : tensor<6x8xf32> -> tensor<8x6xf32>
  %m = dlc.matmul %at, %bt : tensor<4x8xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
  %ct = dlc.transpose %c [0, 2, 1] : tensor<2x8x4xf32> -> tensor<2x4x8xf32>
  %n = dlc.matmul %ct, %c : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %e = dlc.exp %bt : tensor<8x6xf32>
  return %m, %n, %e : tensor<4x6xf32>, tensor<2x4x4xf32>, tensor<8x6xf32>
}
