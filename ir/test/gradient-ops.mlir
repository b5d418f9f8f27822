// RUN: dlc-opt %s | dlc-opt | FileCheck %s
// The gradient ops of convolution and pooling parse, verify and print back
// in their custom form.

// CHECK-LABEL: func.func @conv_grads
func.func @conv_grads(%x: tensor<2x4x7x6xf32>, %w: tensor<6x2x3x2xf32>, %dy: tensor<2x6x4x5xf32>) -> (tensor<2x4x7x6xf32>, tensor<6x2x3x2xf32>) {
  // CHECK: dlc.conv_grad_input %{{.*}}, %{{.*}} stride [2, 1] pad_low [1, 0] pad_high [2, 1] dilation [1, 2] groups 2 : tensor<2x6x4x5xf32>, tensor<6x2x3x2xf32> -> tensor<2x4x7x6xf32>
  %dx = dlc.conv_grad_input %dy, %w stride [2, 1] pad_low [1, 0] pad_high [2, 1] dilation [1, 2] groups 2 : tensor<2x6x4x5xf32>, tensor<6x2x3x2xf32> -> tensor<2x4x7x6xf32>
  // CHECK: dlc.conv_grad_filter %{{.*}}, %{{.*}} stride [2, 1] pad_low [1, 0] pad_high [2, 1] dilation [1, 2] groups 2 : tensor<2x4x7x6xf32>, tensor<2x6x4x5xf32> -> tensor<6x2x3x2xf32>
  %dw = dlc.conv_grad_filter %x, %dy stride [2, 1] pad_low [1, 0] pad_high [2, 1] dilation [1, 2] groups 2 : tensor<2x4x7x6xf32>, tensor<2x6x4x5xf32> -> tensor<6x2x3x2xf32>
  return %dx, %dw : tensor<2x4x7x6xf32>, tensor<6x2x3x2xf32>
}

// CHECK-LABEL: func.func @conv_grads_1d_3d
func.func @conv_grads_1d_3d(%x: tensor<1x3x5xbf16>, %w: tensor<2x3x2xbf16>, %dy: tensor<1x2x3xbf16>, %dy3: tensor<1x4x3x3x3xf16>, %w3: tensor<4x2x2x2x2xf16>) -> (tensor<1x3x5xbf16>, tensor<2x3x2xbf16>, tensor<1x4x4x4x4xf16>) {
  // CHECK: dlc.conv_grad_input %{{.*}}, %{{.*}} stride [2] pad_low [1] pad_high [0] dilation [1] groups 1 : tensor<1x2x3xbf16>, tensor<2x3x2xbf16> -> tensor<1x3x5xbf16>
  %dx = dlc.conv_grad_input %dy, %w stride [2] pad_low [1] pad_high [0] dilation [1] groups 1 : tensor<1x2x3xbf16>, tensor<2x3x2xbf16> -> tensor<1x3x5xbf16>
  // CHECK: dlc.conv_grad_filter %{{.*}}, %{{.*}} stride [2] pad_low [1] pad_high [0] dilation [1] groups 1 : tensor<1x3x5xbf16>, tensor<1x2x3xbf16> -> tensor<2x3x2xbf16>
  %dw = dlc.conv_grad_filter %x, %dy stride [2] pad_low [1] pad_high [0] dilation [1] groups 1 : tensor<1x3x5xbf16>, tensor<1x2x3xbf16> -> tensor<2x3x2xbf16>
  // CHECK: dlc.conv_grad_input {{.*}} groups 2 : tensor<1x4x3x3x3xf16>, tensor<4x2x2x2x2xf16> -> tensor<1x4x4x4x4xf16>
  %dx3 = dlc.conv_grad_input %dy3, %w3 stride [1, 1, 1] pad_low [0, 0, 0] pad_high [0, 0, 0] dilation [1, 1, 1] groups 2 : tensor<1x4x3x3x3xf16>, tensor<4x2x2x2x2xf16> -> tensor<1x4x4x4x4xf16>
  return %dx, %dw, %dx3 : tensor<1x3x5xbf16>, tensor<2x3x2xbf16>, tensor<1x4x4x4x4xf16>
}

// CHECK-LABEL: func.func @max_pool_grad
func.func @max_pool_grad(%x: tensor<2x3x7x6xf64>, %dy: tensor<2x3x4x5xf64>, %x1: tensor<1x2x8xf32>, %dy1: tensor<1x2x4xf32>) -> (tensor<2x3x7x6xf64>, tensor<1x2x8xf32>) {
  // CHECK: dlc.max_pool_grad %{{.*}}, %{{.*}} window [3, 2] stride [2, 1] pad_low [1, 0] pad_high [2, 1] dilation [1, 2] : tensor<2x3x7x6xf64>, tensor<2x3x4x5xf64> -> tensor<2x3x7x6xf64>
  %0 = dlc.max_pool_grad %x, %dy window [3, 2] stride [2, 1] pad_low [1, 0] pad_high [2, 1] dilation [1, 2] : tensor<2x3x7x6xf64>, tensor<2x3x4x5xf64> -> tensor<2x3x7x6xf64>
  // CHECK: dlc.max_pool_grad %{{.*}}, %{{.*}} window [2] stride [2] pad_low [0] pad_high [0] dilation [1] : tensor<1x2x8xf32>, tensor<1x2x4xf32> -> tensor<1x2x8xf32>
  %1 = dlc.max_pool_grad %x1, %dy1 window [2] stride [2] pad_low [0] pad_high [0] dilation [1] : tensor<1x2x8xf32>, tensor<1x2x4xf32> -> tensor<1x2x8xf32>
  return %0, %1 : tensor<2x3x7x6xf64>, tensor<1x2x8xf32>
}

// CHECK-LABEL: func.func @conv_grads_channels_last
func.func @conv_grads_channels_last(%x: tensor<2x7x6x4xf32>, %w: tensor<6x3x2x2xf32>, %dy: tensor<2x4x5x6xf32>) -> (tensor<2x7x6x4xf32>, tensor<6x3x2x2xf32>) {
  // CHECK: dlc.conv_grad_input %{{.*}}, %{{.*}} channels_last stride [2, 1] pad_low [1, 0] pad_high [2, 1] dilation [1, 2] groups 2 : tensor<2x4x5x6xf32>, tensor<6x3x2x2xf32> -> tensor<2x7x6x4xf32>
  %dx = dlc.conv_grad_input %dy, %w channels_last stride [2, 1] pad_low [1, 0] pad_high [2, 1] dilation [1, 2] groups 2 : tensor<2x4x5x6xf32>, tensor<6x3x2x2xf32> -> tensor<2x7x6x4xf32>
  // CHECK: dlc.conv_grad_filter %{{.*}}, %{{.*}} channels_last stride [2, 1] pad_low [1, 0] pad_high [2, 1] dilation [1, 2] groups 2 : tensor<2x7x6x4xf32>, tensor<2x4x5x6xf32> -> tensor<6x3x2x2xf32>
  %dw = dlc.conv_grad_filter %x, %dy channels_last stride [2, 1] pad_low [1, 0] pad_high [2, 1] dilation [1, 2] groups 2 : tensor<2x7x6x4xf32>, tensor<2x4x5x6xf32> -> tensor<6x3x2x2xf32>
  return %dx, %dw : tensor<2x7x6x4xf32>, tensor<6x3x2x2xf32>
}
