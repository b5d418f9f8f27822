// RUN: dlc-opt %s -split-input-file -verify-diagnostics
// Every verifier error of the gradient ops of convolution and pooling.

//===----------------------------------------------------------------------===//
// conv_grad_input: the result is the forward input
//===----------------------------------------------------------------------===//

func.func @grad_input_rank(%dy: tensor<1x4x6x6xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x3x8x8xf32> {
  // expected-error@+1 {{input and filter must have the same rank, 3 or more}}
  %0 = dlc.conv_grad_input %dy, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x4x6x6xf32>, tensor<4x3x3xf32> -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}

// -----

func.func @grad_input_rank2(%dy: tensor<1x4xf32>, %w: tensor<4x3xf32>) -> tensor<1x3xf32> {
  // expected-error@+1 {{input and filter must have the same rank, 3 or more}}
  %0 = dlc.conv_grad_input %dy, %w stride [] pad_low [] pad_high [] dilation [] groups 1 : tensor<1x4xf32>, tensor<4x3xf32> -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

func.func @grad_input_attrs(%dy: tensor<1x4x6x6xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32> {
  // expected-error@+1 {{dilation has 1 entries for 2 spatial dimensions}}
  %0 = dlc.conv_grad_input %dy, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1] groups 1 : tensor<1x4x6x6xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}

// -----

func.func @grad_input_stride(%dy: tensor<1x4x6xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x3x8xf32> {
  // expected-error@+1 {{stride [0] must be positive}}
  %0 = dlc.conv_grad_input %dy, %w stride [0] pad_low [0] pad_high [0] dilation [1] groups 1 : tensor<1x4x6xf32>, tensor<4x3x3xf32> -> tensor<1x3x8xf32>
  return %0 : tensor<1x3x8xf32>
}

// -----

func.func @grad_input_dilation(%dy: tensor<1x4x6xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x3x8xf32> {
  // expected-error@+1 {{dilation [0] must be positive}}
  %0 = dlc.conv_grad_input %dy, %w stride [1] pad_low [0] pad_high [0] dilation [0] groups 1 : tensor<1x4x6xf32>, tensor<4x3x3xf32> -> tensor<1x3x8xf32>
  return %0 : tensor<1x3x8xf32>
}

// -----

func.func @grad_input_pad(%dy: tensor<1x4x6xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x3x8xf32> {
  // expected-error@+1 {{pad_high [-1] must be non-negative}}
  %0 = dlc.conv_grad_input %dy, %w stride [1] pad_low [1] pad_high [-1] dilation [1] groups 1 : tensor<1x4x6xf32>, tensor<4x3x3xf32> -> tensor<1x3x8xf32>
  return %0 : tensor<1x3x8xf32>
}

// -----

func.func @grad_input_groups(%dy: tensor<1x4x6x6xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x3x8x8xf32> {
  // expected-error@+1 {{groups 2 must divide input channels 3 and output channels 4}}
  %0 = dlc.conv_grad_input %dy, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 2 : tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32> -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}

// -----

func.func @grad_input_groups_zero(%dy: tensor<1x4x6x6xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error@+1 {{groups 0 must divide input channels 4 and output channels 4}}
  %0 = dlc.conv_grad_input %dy, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 0 : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32> -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

func.func @grad_input_channels(%dy: tensor<1x4x6x6xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error@+1 {{filter has 4 input channels per group, expected 2}}
  %0 = dlc.conv_grad_input %dy, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 2 : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32> -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

func.func @grad_input_fit(%dy: tensor<1x4x1x1xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x2x2xf32> {
  // expected-error@+1 {{filter does not fit spatial dimension 0}}
  %0 = dlc.conv_grad_input %dy, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x4x1x1xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x2x2xf32>
  return %0 : tensor<1x3x2x2xf32>
}

// -----

func.func @grad_input_grad_output(%dy: tensor<1x4x6x5xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32> {
  // expected-error@+1 {{grad_output type 'tensor<1x4x6x5xf32>' differs from the forward result type 'tensor<1x4x6x6xf32>'}}
  %0 = dlc.conv_grad_input %dy, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x4x6x5xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}

// -----

func.func @grad_input_element_types(%dy: tensor<1x4x6x6xf16>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32> {
  // expected-error@+1 {{requires the same element type for all operands and results}}
  %0 = dlc.conv_grad_input %dy, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x4x6x6xf16>, tensor<4x3x3x3xf32> -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}

// -----

func.func @grad_input_integers(%dy: tensor<1x4x6x6xi32>, %w: tensor<4x3x3x3xi32>) -> tensor<1x3x8x8xi32> {
  // expected-error@+1 {{operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = dlc.conv_grad_input %dy, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x4x6x6xi32>, tensor<4x3x3x3xi32> -> tensor<1x3x8x8xi32>
  return %0 : tensor<1x3x8x8xi32>
}

// -----

//===----------------------------------------------------------------------===//
// conv_grad_filter: the result is the forward filter
//===----------------------------------------------------------------------===//

func.func @grad_filter_rank(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x4x6x6xf32>) -> tensor<4x3x3xf32> {
  // expected-error@+1 {{input and filter must have the same rank, 3 or more}}
  %0 = dlc.conv_grad_filter %x, %dy stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32> -> tensor<4x3x3xf32>
  return %0 : tensor<4x3x3xf32>
}

// -----

func.func @grad_filter_attrs(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x4x6x6xf32>) -> tensor<4x3x3x3xf32> {
  // expected-error@+1 {{pad_low has 3 entries for 2 spatial dimensions}}
  %0 = dlc.conv_grad_filter %x, %dy stride [1, 1] pad_low [0, 0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32> -> tensor<4x3x3x3xf32>
  return %0 : tensor<4x3x3x3xf32>
}

// -----

func.func @grad_filter_pad(%x: tensor<1x3x8xf32>, %dy: tensor<1x4x6xf32>) -> tensor<4x3x3xf32> {
  // expected-error@+1 {{pad_low [-1] must be non-negative}}
  %0 = dlc.conv_grad_filter %x, %dy stride [1] pad_low [-1] pad_high [1] dilation [1] groups 1 : tensor<1x3x8xf32>, tensor<1x4x6xf32> -> tensor<4x3x3xf32>
  return %0 : tensor<4x3x3xf32>
}

// -----

func.func @grad_filter_groups(%x: tensor<1x4x8x8xf32>, %dy: tensor<1x3x6x6xf32>) -> tensor<3x2x3x3xf32> {
  // expected-error@+1 {{groups 2 must divide input channels 4 and output channels 3}}
  %0 = dlc.conv_grad_filter %x, %dy stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 2 : tensor<1x4x8x8xf32>, tensor<1x3x6x6xf32> -> tensor<3x2x3x3xf32>
  return %0 : tensor<3x2x3x3xf32>
}

// -----

func.func @grad_filter_channels(%x: tensor<1x4x8x8xf32>, %dy: tensor<1x4x6x6xf32>) -> tensor<4x4x3x3xf32> {
  // expected-error@+1 {{filter has 4 input channels per group, expected 2}}
  %0 = dlc.conv_grad_filter %x, %dy stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 2 : tensor<1x4x8x8xf32>, tensor<1x4x6x6xf32> -> tensor<4x4x3x3xf32>
  return %0 : tensor<4x4x3x3xf32>
}

// -----

func.func @grad_filter_fit(%x: tensor<1x3x2x2xf32>, %dy: tensor<1x4x1x1xf32>) -> tensor<4x3x3x3xf32> {
  // expected-error@+1 {{filter does not fit spatial dimension 0}}
  %0 = dlc.conv_grad_filter %x, %dy stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x3x2x2xf32>, tensor<1x4x1x1xf32> -> tensor<4x3x3x3xf32>
  return %0 : tensor<4x3x3x3xf32>
}

// -----

func.func @grad_filter_grad_output(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x4x6x6xf32>) -> tensor<4x3x3x3xf32> {
  // expected-error@+1 {{grad_output type 'tensor<1x4x6x6xf32>' differs from the forward result type 'tensor<1x4x4x4xf32>'}}
  %0 = dlc.conv_grad_filter %x, %dy stride [2, 2] pad_low [0, 0] pad_high [1, 1] dilation [1, 1] groups 1 : tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32> -> tensor<4x3x3x3xf32>
  return %0 : tensor<4x3x3x3xf32>
}

// -----

func.func @grad_filter_element_types(%x: tensor<1x3x8x8xbf16>, %dy: tensor<1x4x6x6xf32>) -> tensor<4x3x3x3xf32> {
  // expected-error@+1 {{requires the same element type for all operands and results}}
  %0 = dlc.conv_grad_filter %x, %dy stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x3x8x8xbf16>, tensor<1x4x6x6xf32> -> tensor<4x3x3x3xf32>
  return %0 : tensor<4x3x3x3xf32>
}

// -----

//===----------------------------------------------------------------------===//
// max_pool_grad
//===----------------------------------------------------------------------===//

func.func @pool_grad_rank(%x: tensor<3x8xf32>, %dy: tensor<3x4xf32>) -> tensor<3x8xf32> {
  // expected-error@+1 {{input must have rank 3 or more}}
  %0 = dlc.max_pool_grad %x, %dy window [2] stride [2] pad_low [0] pad_high [0] dilation [1] : tensor<3x8xf32>, tensor<3x4xf32> -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

func.func @pool_grad_attrs(%x: tensor<1x3x8xf32>, %dy: tensor<1x3x4xf32>) -> tensor<1x3x8xf32> {
  // expected-error@+1 {{stride has 2 entries for 1 spatial dimensions}}
  %0 = dlc.max_pool_grad %x, %dy window [2] stride [2, 2] pad_low [0] pad_high [0] dilation [1] : tensor<1x3x8xf32>, tensor<1x3x4xf32> -> tensor<1x3x8xf32>
  return %0 : tensor<1x3x8xf32>
}

// -----

func.func @pool_grad_window(%x: tensor<1x3x8xf32>, %dy: tensor<1x3x4xf32>) -> tensor<1x3x8xf32> {
  // expected-error@+1 {{window [0] must be positive}}
  %0 = dlc.max_pool_grad %x, %dy window [0] stride [2] pad_low [0] pad_high [0] dilation [1] : tensor<1x3x8xf32>, tensor<1x3x4xf32> -> tensor<1x3x8xf32>
  return %0 : tensor<1x3x8xf32>
}

// -----

func.func @pool_grad_pad(%x: tensor<1x3x8xf32>, %dy: tensor<1x3x4xf32>) -> tensor<1x3x8xf32> {
  // expected-error@+1 {{pad_low [-2] must be non-negative}}
  %0 = dlc.max_pool_grad %x, %dy window [2] stride [2] pad_low [-2] pad_high [2] dilation [1] : tensor<1x3x8xf32>, tensor<1x3x4xf32> -> tensor<1x3x8xf32>
  return %0 : tensor<1x3x8xf32>
}

// -----

func.func @pool_grad_fit(%x: tensor<1x3x2xf32>, %dy: tensor<1x3x1xf32>) -> tensor<1x3x2xf32> {
  // expected-error@+1 {{window does not fit spatial dimension 0}}
  %0 = dlc.max_pool_grad %x, %dy window [2] stride [1] pad_low [0] pad_high [0] dilation [2] : tensor<1x3x2xf32>, tensor<1x3x1xf32> -> tensor<1x3x2xf32>
  return %0 : tensor<1x3x2xf32>
}

// -----

func.func @pool_grad_grad_output(%x: tensor<1x3x8xf32>, %dy: tensor<1x3x4xf32>) -> tensor<1x3x8xf32> {
  // expected-error@+1 {{grad_output type 'tensor<1x3x4xf32>' differs from the forward result type 'tensor<1x3x5xf32>'}}
  %0 = dlc.max_pool_grad %x, %dy window [2] stride [2] pad_low [1] pad_high [1] dilation [1] : tensor<1x3x8xf32>, tensor<1x3x4xf32> -> tensor<1x3x8xf32>
  return %0 : tensor<1x3x8xf32>
}

// -----

func.func @pool_grad_result(%x: tensor<1x3x8xf32>, %dy: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  // expected-error@+1 {{all of {input, result} have same type}}
  %0 = dlc.max_pool_grad %x, %dy window [2] stride [2] pad_low [0] pad_high [0] dilation [1] : tensor<1x3x8xf32>, tensor<1x3x4xf32> -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

func.func @pool_grad_element_types(%x: tensor<1x3x8xf32>, %dy: tensor<1x3x4xf16>) -> tensor<1x3x8xf32> {
  // expected-error@+1 {{all of {input, grad_output} have same element type}}
  %0 = dlc.max_pool_grad %x, %dy window [2] stride [2] pad_low [0] pad_high [0] dilation [1] : tensor<1x3x8xf32>, tensor<1x3x4xf16> -> tensor<1x3x8xf32>
  return %0 : tensor<1x3x8xf32>
}

// -----

func.func @pool_grad_integers(%x: tensor<1x3x8xi32>, %dy: tensor<1x3x4xi32>) -> tensor<1x3x8xi32> {
  // expected-error@+1 {{operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = dlc.max_pool_grad %x, %dy window [2] stride [2] pad_low [0] pad_high [0] dilation [1] : tensor<1x3x8xi32>, tensor<1x3x4xi32> -> tensor<1x3x8xi32>
  return %0 : tensor<1x3x8xi32>
}

// -----

// A channels-first result read channels-last: 8 channels of 3 x 8.
func.func @grad_input_channels_last(%dy: tensor<1x6x6x4xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32> {
  // expected-error@+1 {{filter has 3 input channels per group, expected 8}}
  %0 = dlc.conv_grad_input %dy, %w channels_last stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x6x6x4xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}

// -----

func.func @grad_filter_channels_last(%x: tensor<1x8x8x3xf32>, %dy: tensor<1x4x6x6xf32>) -> tensor<4x3x3x3xf32> {
  // expected-error@+1 {{grad_output type 'tensor<1x4x6x6xf32>' differs from the forward result type 'tensor<1x6x6x4xf32>'}}
  %0 = dlc.conv_grad_filter %x, %dy channels_last stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x8x8x3xf32>, tensor<1x4x6x6xf32> -> tensor<4x3x3x3xf32>
  return %0 : tensor<4x3x3x3xf32>
}
