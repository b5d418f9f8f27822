// RUN: dlc-opt %s -split-input-file -dlc-lower-to-plan="target=cuda conv-engine=direct" -verify-diagnostics

// CUDA convolutions run on cuDNN: the direct engine is the CPU's.
// expected-error-re @+1 {{has 1 op without a compiled path on CUDA: {{.*}}'dlc.conv' op cannot run on the direct engine: CUDA convolutions run on cuDNN (conv-engine auto or library)}}
func.func @direct(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> attributes {dlc.arena_size = 0 : i64} {
  %y = dlc.conv %x, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// -----

// An empty convolution computes nothing, on any engine.
func.func @empty(%x: tensor<0x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<0x4x6x6xf32> attributes {dlc.arena_size = 0 : i64} {
  %y = dlc.conv %x, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<0x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<0x4x6x6xf32>
  return %y : tensor<0x4x6x6xf32>
}
