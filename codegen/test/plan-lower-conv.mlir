// RUN: dlc-opt %s -dlc-fuse -dlc-plan-memory -dlc-lower-to-plan | FileCheck %s
// RUN: dlc-opt %s -dlc-fuse -dlc-plan-memory -dlc-lower-to-plan=conv-engine=direct | FileCheck %s --check-prefix=DIRECT
// RUN: dlc-opt %s -dlc-fuse -dlc-plan-memory -dlc-lower-to-plan="target=cuda conv-engine=library" | FileCheck %s --check-prefix=LIBRARY
// RUN: dlc-opt %s -dlc-fuse -dlc-plan-memory -dlc-plan-pipeline="target=cpu conv-engine=direct" | FileCheck %s --check-prefix=DIRECT

// A convolution and its two gradients become dlc.plan.conv steps of their
// kinds, with the attributes, the layout, the arena offsets and dlc-fuse's
// epilogue mark they had, on the engine the option names (auto: none
// printed).
// CHECK-LABEL: func.func @conv
// CHECK: %[[Y:.*]] = dlc.plan.conv forward %arg0, %arg1 stride [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] groups 1 {dlc.arena_offsets = array<i64: {{[0-9]+}}>, dlc.epilogue = "bias"} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
// CHECK: dlc.plan.launch(%[[Y]], %arg2)
// CHECK: dlc.plan.conv backward_data %arg3, %arg1 stride [2, 2] pad_low [1, 1] pad_high [0, 0] dilation [1, 1] groups 1 : (tensor<2x4x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<2x3x8x8xf32>
// CHECK: dlc.plan.conv backward_filter %arg0, %arg3 stride [2, 2] pad_low [1, 1] pad_high [0, 0] dilation [1, 1] groups 1 : (tensor<2x3x8x8xf32>, tensor<2x4x4x4xf32>) -> tensor<4x3x3x3xf32>
// CHECK: dlc.plan.conv forward %arg4, %arg5 channels_last stride [1] pad_low [0] pad_high [0] dilation [2] groups 2 : (tensor<1x9x4xf64>, tensor<2x3x2xf64>) -> tensor<1x5x2xf64>
// CHECK-NOT: engine
// DIRECT-COUNT-4: groups {{[0-9]}} engine direct
// LIBRARY-COUNT-3: groups 1 engine library
func.func @conv(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4x1x1xf32>, %dy: tensor<2x4x4x4xf32>, %u: tensor<1x9x4xf64>, %v: tensor<2x3x2xf64>) -> (tensor<2x4x8x8xf32>, tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x5x2xf64>) {
  %y = dlc.conv %x, %w stride [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] groups 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
  %z = dlc.add %y, %b : tensor<2x4x8x8xf32>, tensor<4x1x1xf32> -> tensor<2x4x8x8xf32>
  %dx = dlc.conv_grad_input %dy, %w stride [2, 2] pad_low [1, 1] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<2x4x4x4xf32>, tensor<4x3x3x3xf32> -> tensor<2x3x8x8xf32>
  %dw = dlc.conv_grad_filter %x, %dy stride [2, 2] pad_low [1, 1] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<2x3x8x8xf32>, tensor<2x4x4x4xf32> -> tensor<4x3x3x3xf32>
  %n = dlc.conv %u, %v channels_last stride [1] pad_low [0] pad_high [0] dilation [2] groups 2 : tensor<1x9x4xf64>, tensor<2x3x2xf64> -> tensor<1x5x2xf64>
  return %z, %dx, %dw, %n : tensor<2x4x8x8xf32>, tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x5x2xf64>
}
