// RUN: dlc-opt %s -dlc-fuse=max-group-size=2 | FileCheck %s
// The control function caps a group at max-group-size ops: a chain of
// three elementwise ops becomes two kernels.
// CHECK-LABEL: func.func @chain
// CHECK: %[[A:.*]] = dlc.fusion %arg0 : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: dlc.neg
// CHECK-NEXT: dlc.yield
// CHECK: %[[B:.*]] = dlc.fusion %[[A]] : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: dlc.abs
// CHECK-NEXT: dlc.neg
// CHECK-NEXT: dlc.yield
func.func @chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = dlc.neg %x : tensor<8xf32>
  %1 = dlc.abs %0 : tensor<8xf32>
  %2 = dlc.neg %1 : tensor<8xf32>
  return %2 : tensor<8xf32>
}
