// RUN: dlc-opt %s -split-input-file -dlc-lower-to-plan=conv-engine=library -verify-diagnostics

// oneDNN has no float64 convolution and takes 1 to 3 spatial dimensions:
// the CPU's library engine cannot be demanded for either.
// expected-error-re @+1 {{has 2 ops without a compiled path on the CPU: {{.*}}'dlc.conv_grad_input' op cannot run on the library engine: oneDNN convolves float32, bfloat16 and float16 over 1 to 3 spatial dimensions (conv-engine auto or direct); {{.*}}'dlc.conv' op cannot run on the library engine}}
func.func @library(%dy: tensor<1x4x6x6xf64>, %w: tensor<4x3x3x3xf64>, %x: tensor<1x1x3x3x3x3xf32>, %v: tensor<1x1x2x2x2x2xf32>) -> (tensor<1x3x8x8xf64>, tensor<1x1x2x2x2x2xf32>) attributes {dlc.arena_size = 0 : i64} {
  %dx = dlc.conv_grad_input %dy, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x4x6x6xf64>, tensor<4x3x3x3xf64> -> tensor<1x3x8x8xf64>
  %y = dlc.conv %x, %v stride [1, 1, 1, 1] pad_low [0, 0, 0, 0] pad_high [0, 0, 0, 0] dilation [1, 1, 1, 1] groups 1 : tensor<1x1x3x3x3x3xf32>, tensor<1x1x2x2x2x2xf32> -> tensor<1x1x2x2x2x2xf32>
  return %dx, %y : tensor<1x3x8x8xf64>, tensor<1x1x2x2x2x2xf32>
}
