// RUN: dlc-opt %s -split-input-file -dlc-autodiff | FileCheck %s
// RUN: dlc-opt %s -split-input-file '-dlc-autodiff=freeze=fc\..*' | FileCheck %s --check-prefix=FREEZE
// @loss_grad: @loss's arguments, its results, then the gradient of the loss
// for each trainable parameter (role param, float, reached by the loss), in
// argument order.

func.func @loss(%w: tensor<3x2xf32> {dlc.name = "fc.weight", dlc.role = "param"}, %b: tensor<2xf32> {dlc.name = "fc.bias", dlc.role = "param"}, %h: tensor<2xf32> {dlc.name = "head.scale", dlc.role = "param"}, %unused: tensor<5xf32> {dlc.name = "unused", dlc.role = "param"}, %s: tensor<2xf32> {dlc.name = "bn.mean", dlc.role = "state"}, %x: tensor<4x3xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "bn.mean", dlc.role = "state"}) {
  %0 = dlc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
  %1 = dlc.add %0, %b : tensor<4x2xf32>, tensor<2xf32> -> tensor<4x2xf32>
  %2 = dlc.mul %1, %h : tensor<4x2xf32>, tensor<2xf32> -> tensor<4x2xf32>
  %3 = dlc.mul %2, %h : tensor<4x2xf32>, tensor<2xf32> -> tensor<4x2xf32>
  %4 = dlc.add %3, %s : tensor<4x2xf32>, tensor<2xf32> -> tensor<4x2xf32>
  %5 = dlc.reduce_sum %4 axes [0, 1] : tensor<4x2xf32> -> tensor<f32>
  %6 = dlc.reduce_sum %1 axes [0] : tensor<4x2xf32> -> tensor<2xf32>
  return %5, %6 : tensor<f32>, tensor<2xf32>
}

// @loss stays; the state, the input and the parameter the loss does not
// read get no gradient (PyTorch leaves their .grad None).
// CHECK-LABEL: func.func @loss(
// CHECK: return %{{.*}}, %{{.*}} : tensor<f32>, tensor<2xf32>
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[W:[a-z0-9_]+]]: tensor<3x2xf32> {dlc.name = "fc.weight", dlc.role = "param"}, %[[B:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "fc.bias", dlc.role = "param"}, %[[H:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "head.scale", dlc.role = "param"}, %{{.*}}: tensor<5xf32> {dlc.name = "unused", dlc.role = "param"}, %[[S:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "bn.mean", dlc.role = "state"}, %[[X:[a-z0-9_]+]]: tensor<4x3xf32> {dlc.name = "x", dlc.role = "input"})
// CHECK-SAME: -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "bn.mean", dlc.role = "state"}, tensor<3x2xf32> {dlc.name = "fc.weight", dlc.role = "gradient"}, tensor<2xf32> {dlc.name = "fc.bias", dlc.role = "gradient"}, tensor<2xf32> {dlc.name = "head.scale", dlc.role = "gradient"})
// CHECK: %[[Y:[a-z0-9_]+]] = dlc.add %{{.*}}, %[[B]]
// CHECK: %[[YH:[a-z0-9_]+]] = dlc.mul %[[Y]], %[[H]]
// CHECK: %[[LOSS:[a-z0-9_]+]] = dlc.reduce_sum %{{.*}} axes [0, 1]
// CHECK: %[[STATE:[a-z0-9_]+]] = dlc.reduce_sum %[[Y]] axes [0]
// The seed: d loss / d loss = 1, broadcast back over the summed axes.
// CHECK: %[[ONE:[a-z0-9_]+]] = dlc.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[ONE2:[a-z0-9_]+]] = dlc.reshape %[[ONE]] : tensor<f32> to tensor<1x1xf32>
// CHECK: %[[G:[a-z0-9_]+]] = dlc.broadcast_to %[[ONE2]] : tensor<1x1xf32> to tensor<4x2xf32>
// head.scale is read twice: the two contributions are summed.
// CHECK: %[[GH1:[a-z0-9_]+]] = dlc.mul %[[G]], %[[YH]]
// CHECK: %[[GYH:[a-z0-9_]+]] = dlc.mul %[[G]], %[[H]]
// CHECK: %[[GH1S:[a-z0-9_]+]] = dlc.reduce_sum %[[GH1]] axes [0]
// CHECK: %[[GH2:[a-z0-9_]+]] = dlc.mul %[[GYH]], %[[Y]]
// CHECK: %[[GY:[a-z0-9_]+]] = dlc.mul %[[GYH]], %[[H]]
// CHECK: %[[GH2S:[a-z0-9_]+]] = dlc.reduce_sum %[[GH2]] axes [0]
// CHECK: %[[GRADH:[a-z0-9_]+]] = dlc.add %[[GH1S]], %[[GH2S]]
// The bias gradient undoes the broadcast; the weight's is x^T dy.
// CHECK: %[[GRADB:[a-z0-9_]+]] = dlc.reduce_sum %[[GY]] axes [0] : tensor<4x2xf32> -> tensor<2xf32>
// The input's gradient, dy W^T, which no result needs, is removed.
// CHECK-NOT: dlc.transpose %[[W]]
// CHECK: %[[XT:[a-z0-9_]+]] = dlc.transpose %[[X]] [1, 0]
// CHECK: %[[GRADW:[a-z0-9_]+]] = dlc.matmul %[[XT]], %[[GY]] : tensor<3x4xf32>, tensor<4x2xf32> -> tensor<3x2xf32>
// CHECK-NOT: dlc.transpose %[[W]]
// CHECK: return %[[LOSS]], %[[STATE]], %[[GRADW]], %[[GRADB]], %[[GRADH]] : tensor<f32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>

// freeze matches whole names: fc.weight and fc.bias are kept fixed.
// FREEZE-LABEL: func.func @loss_grad
// FREEZE-SAME: -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "bn.mean", dlc.role = "state"}, tensor<2xf32> {dlc.name = "head.scale", dlc.role = "gradient"})
// FREEZE-NOT: dlc.transpose
// FREEZE: return

// -----

// Parameters of any float type; an integer "param" is not trainable.
func.func @loss(%w: tensor<2xf64> {dlc.name = "fc.w", dlc.role = "param"}, %v: tensor<2xf32> {dlc.name = "v", dlc.role = "param"}, %n: tensor<2xi64> {dlc.name = "n", dlc.role = "param"}) -> (tensor<f64> {dlc.name = "loss", dlc.role = "loss"}) {
  %0 = dlc.cast %v : tensor<2xf32> to tensor<2xf64>
  %1 = dlc.mul %w, %0 : tensor<2xf64>, tensor<2xf64> -> tensor<2xf64>
  %2 = dlc.reduce_sum %1 axes [0] : tensor<2xf64> -> tensor<f64>
  return %2 : tensor<f64>
}

// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: -> (tensor<f64> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf64> {dlc.name = "fc.w", dlc.role = "gradient"}, tensor<2xf32> {dlc.name = "v", dlc.role = "gradient"})
// CHECK: %[[GV:[a-z0-9_]+]] = dlc.cast %{{.*}} : tensor<2xf64> to tensor<2xf32>
// CHECK: return %{{.*}}, %{{.*}}, %[[GV]] : tensor<f64>, tensor<2xf64>, tensor<2xf32>

// FREEZE-LABEL: func.func @loss_grad
// FREEZE-SAME: -> (tensor<f64> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "v", dlc.role = "gradient"})

// -----

// The tensor-parallel pair are each other's gradient, and a slice's
// gradient is marked as the slice is.
// FREEZE-LABEL: func.func @loss_grad
// FREEZE-SAME: -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2x1xf32> {dlc.name = "w", dlc.role = "gradient", dlc.tp_split = 0 : i64})
func.func @loss(%s: tensor<2xf32> {dlc.name = "fc.s", dlc.role = "param"}, %w: tensor<2x1xf32> {dlc.name = "w", dlc.role = "param", dlc.tp_split = 0 : i64}, %x: tensor<3x2xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}) {
  %0 = dlc.mul %x, %s : tensor<3x2xf32>, tensor<2xf32> -> tensor<3x2xf32>
  %1 = dlc.tp_copy %0 : tensor<3x2xf32>
  %2 = dlc.matmul %1, %w : tensor<3x2xf32>, tensor<2x1xf32> -> tensor<3x1xf32>
  %3 = dlc.tp_reduce %2 : tensor<3x1xf32>
  %4 = dlc.reduce_sum %3 axes [0, 1] : tensor<3x1xf32> -> tensor<f32>
  return %4 : tensor<f32>
}

// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "fc.s", dlc.role = "gradient"}, tensor<2x1xf32> {dlc.name = "w", dlc.role = "gradient", dlc.tp_split = 0 : i64})
// CHECK: %[[G:[a-z0-9_]+]] = dlc.broadcast_to %{{.*}} : tensor<1x1xf32> to tensor<3x1xf32>
// CHECK: %[[GP:[a-z0-9_]+]] = dlc.tp_copy %[[G]] : tensor<3x1xf32>
// CHECK: %[[GX:[a-z0-9_]+]] = dlc.matmul %[[GP]], %{{.*}} : tensor<3x1xf32>, tensor<1x2xf32> -> tensor<3x2xf32>
// CHECK: %[[GC:[a-z0-9_]+]] = dlc.tp_reduce %[[GX]] : tensor<3x2xf32>
// CHECK: dlc.mul %[[GC]], %{{.*}}
