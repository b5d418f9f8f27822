// RUN: dlc-opt %s -split-input-file --dlc-channels-last | FileCheck %s
// RUN: dlc-opt %S/Inputs/conv-layers.mlir --dlc-channels-last | FileCheck %s --check-prefix=STAGE

// A conv-BatchNorm-ReLU-pool stage stays channels-last from the first
// convolution on: arguments are transposed once each (filters whose
// layouts agree are reshaped), statistics reduce all but the innermost
// axis, per-channel vectors are reshaped, pools gain a unit channel
// dimension, and only the function's results and the matmul's operand
// return to channels-first.
// STAGE-LABEL: func.func @stage
// STAGE-DAG: %[[W:.*]] = dlc.transpose %arg1 [0, 2, 3, 1] : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xf32>
// STAGE-DAG: %[[X:.*]] = dlc.transpose %arg0 [0, 2, 3, 1] : tensor<2x3x6x6xf32> -> tensor<2x6x6x3xf32>
// STAGE: %[[Y:.*]] = dlc.conv %[[X]], %[[W]] channels_last {{.*}} groups 1 : tensor<2x6x6x3xf32>, tensor<4x3x3x3xf32> -> tensor<2x6x6x4xf32>
// STAGE: %[[S:.*]] = dlc.reduce_sum %[[Y]] axes [0, 1, 2] keep_dims : tensor<2x6x6x4xf32> -> tensor<1x1x1x4xf32>
// STAGE: %[[MEAN:.*]] = dlc.div %[[S]], %{{.*}} : tensor<1x1x1x4xf32>, tensor<f32> -> tensor<1x1x1x4xf32>
// STAGE: dlc.sub %[[Y]], %[[MEAN]] : tensor<2x6x6x4xf32>, tensor<1x1x1x4xf32> -> tensor<2x6x6x4xf32>
// STAGE: %[[G:.*]] = dlc.reshape %{{.*}} : tensor<4x1x1xf32> to tensor<1x1x1x4xf32>
// STAGE: dlc.mul %{{.*}}, %[[G]] : tensor<2x6x6x4xf32>, tensor<1x1x1x4xf32> -> tensor<2x6x6x4xf32>
// STAGE: %[[RELU:.*]] = dlc.max %{{.*}}, %{{.*}} : tensor<2x6x6x4xf32>, tensor<f32> -> tensor<2x6x6x4xf32>
// STAGE: %[[U:.*]] = dlc.reshape %[[RELU]] : tensor<2x6x6x4xf32> to tensor<2x1x6x6x4xf32>
// STAGE: dlc.max_pool %[[U]] window [2, 2, 1] stride [2, 2, 1] pad_low [0, 0, 0] pad_high [0, 0, 0] dilation [1, 1, 1] : tensor<2x1x6x6x4xf32> -> tensor<2x1x3x3x4xf32>
// STAGE: %[[P:.*]] = dlc.reshape %{{.*}} : tensor<2x1x3x3x4xf32> to tensor<2x3x3x4xf32>
// STAGE: %[[W2:.*]] = dlc.transpose %arg3 [0, 2, 3, 1] : tensor<4x2x3x3xf32> -> tensor<4x3x3x2xf32>
// STAGE: %[[Y2:.*]] = dlc.conv %[[P]], %[[W2]] channels_last {{.*}} groups 2 : tensor<2x3x3x4xf32>, tensor<4x3x3x2xf32> -> tensor<2x3x3x4xf32>
// STAGE: %[[R:.*]] = dlc.add %[[Y2]], %[[P]] : tensor<2x3x3x4xf32>
// Global average pooling keeps [N, C] in order: no transpose.
// STAGE: %[[AVG:.*]] = dlc.reduce_sum %[[R]] axes [1, 2] : tensor<2x3x3x4xf32> -> tensor<2x4xf32>
// STAGE: dlc.matmul %[[AVG]], %arg4
// The gradient dy, an argument, is transposed once; the residual add of it
// is then channels-last too.
// STAGE: %[[DY:.*]] = dlc.transpose %arg5 [0, 2, 3, 1]
// STAGE: %[[DP:.*]] = dlc.conv_grad_input %[[DY]], %[[W2]] channels_last
// STAGE: dlc.add %[[DP]], %[[DY]] : tensor<2x3x3x4xf32>
// STAGE: dlc.max_pool_grad {{.*}} window [2, 2, 1] {{.*}} : tensor<2x1x6x6x4xf32>, tensor<2x1x3x3x4xf32> -> tensor<2x1x6x6x4xf32>
// STAGE: %[[DW:.*]] = dlc.conv_grad_filter %[[X]], %{{.*}} channels_last {{.*}} : tensor<2x6x6x3xf32>, tensor<2x6x6x4xf32> -> tensor<4x3x3x3xf32>
// The update reads the parameter's channels-last copy (made for the
// convolution) and is transposed back once, as a result.
// STAGE: %[[STEP:.*]] = dlc.mul %[[DW]], %{{.*}} : tensor<4x3x3x3xf32>, tensor<f32>
// STAGE: %[[NEW:.*]] = dlc.sub %[[W]], %[[STEP]]
// 1-D: [N, W, C], and the sum pool over [N, 1, W, C].
// STAGE: dlc.conv %{{.*}}, %{{.*}} channels_last stride [1] {{.*}} : tensor<2x8x3xf32>, tensor<4x3x3xf32> -> tensor<2x6x4xf32>
// STAGE: dlc.sum_pool %{{.*}} window [2, 1] stride [2, 1] {{.*}} : tensor<2x1x6x4xf32> -> tensor<2x1x3x4xf32>
// STAGE-DAG: %[[NEWW:.*]] = dlc.transpose %[[NEW]] [0, 3, 1, 2] : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xf32>
// STAGE-DAG: %[[ZP:.*]] = dlc.transpose %{{.*}} [0, 2, 1] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
// STAGE-DAG: %[[MEANOUT:.*]] = dlc.reshape %[[MEAN]] : tensor<1x1x1x4xf32> to tensor<1x4x1x1xf32>
// STAGE: return %{{.*}}, %[[NEWW]], %[[ZP]], %[[MEANOUT]]

// Convolutions cuDNN has no tensor-core layout for stay as they are:
// float64.
// CHECK-LABEL: func.func @ineligible
// CHECK-NOT: channels_last
// CHECK-NOT: dlc.transpose
// CHECK: return
func.func @ineligible(%x: tensor<1x2x5x5xf64>, %w: tensor<3x2x3x3xf64>) -> tensor<1x3x3x3xf64> {
  %0 = dlc.conv %x, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x2x5x5xf64>, tensor<3x2x3x3xf64> -> tensor<1x3x3x3xf64>
  return %0 : tensor<1x3x3x3xf64>
}

// -----

// Dropout's mask follows element order: it reads the channels-first value.
// A reduction whose remaining dimensions come out of order is transposed
// back; a broadcast of a channels-last value stays channels-last; an
// elementwise op with more channels-first operands than channels-last ones
// computes channels-first.
// CHECK-LABEL: func.func @boundaries
// CHECK: %[[Y:.*]] = dlc.conv {{.*}} channels_last {{.*}} -> tensor<2x4x4x3xf32>
// CHECK: %[[BACK:.*]] = dlc.transpose %[[Y]] [0, 3, 1, 2] : tensor<2x4x4x3xf32> -> tensor<2x3x4x4xf32>
// CHECK: dlc.dropout %[[BACK]]
// CHECK: %[[R:.*]] = dlc.reduce_sum %[[Y]] axes [0] : tensor<2x4x4x3xf32> -> tensor<4x4x3xf32>
// CHECK: dlc.transpose %[[R]] [2, 0, 1] : tensor<4x4x3xf32> -> tensor<3x4x4xf32>
// CHECK: %[[B:.*]] = dlc.broadcast_to %{{.*}} : tensor<1x4x4x3xf32> to tensor<2x4x4x3xf32>
// CHECK: dlc.mul %[[B]], %[[Y]] : tensor<2x4x4x3xf32>, tensor<2x4x4x3xf32> -> tensor<2x4x4x3xf32>
// CHECK: dlc.add %[[BACK]], %arg2 : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
func.func @boundaries(%x: tensor<2x2x4x4xf32>, %w: tensor<3x2x1x1xf32>, %z: tensor<2x3x4x4xf32>, %seed: tensor<i64>)
    -> (tensor<2x3x4x4xf32>, tensor<3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) {
  %y = dlc.conv %x, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<2x2x4x4xf32>, tensor<3x2x1x1xf32> -> tensor<2x3x4x4xf32>
  %d, %mask = dlc.dropout %y, %seed {ratio = 0.5 : f64, stream = 0 : i64} : tensor<2x3x4x4xf32>, tensor<i64> -> tensor<2x3x4x4xi1>
  %r = dlc.reduce_sum %y axes [0] : tensor<2x3x4x4xf32> -> tensor<3x4x4xf32>
  %k = dlc.reduce_sum %y axes [0] keep_dims : tensor<2x3x4x4xf32> -> tensor<1x3x4x4xf32>
  %b = dlc.broadcast_to %k : tensor<1x3x4x4xf32> to tensor<2x3x4x4xf32>
  %m = dlc.mul %b, %y : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %a = dlc.add %y, %z : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  return %d, %r, %m, %a : tensor<2x3x4x4xf32>, tensor<3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
}
