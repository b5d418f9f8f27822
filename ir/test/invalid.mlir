// RUN: dlc-opt %s -split-input-file -verify-diagnostics

// expected-error@+1 {{initial value type 'tensor<2xf32>' does not match the global's type 'tensor<3xf32>'}}
dlc.global @w : tensor<3xf32> = dense<1.0> : tensor<2xf32>

// -----

func.func @unknown_global() -> tensor<2xf32> {
  // expected-error@+1 {{refers to an unknown global @missing}}
  %0 = dlc.global_load @missing : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

dlc.global @w : tensor<3xf32> = dense<1.0> : tensor<3xf32>
func.func @global_type() -> tensor<2xf32> {
  // expected-error@+1 {{type 'tensor<2xf32>' does not match the global's type 'tensor<3xf32>'}}
  %0 = dlc.global_load @w : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error@+2 {{operand shapes [2, 3] and [4] are not broadcast-compatible}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.add %a, %b : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @wrong_result(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3x3xf32> {
  // expected-error@+2 {{inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3x3xf32>'}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.mul %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @float_only(%a: tensor<2xi32>) -> tensor<2xi32> {
  // expected-error@+1 {{must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = dlc.exp %a : tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @compare(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xi1> {
  // expected-error@+2 {{operand shapes [2] and [3] are not broadcast-compatible}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.compare lt, %a, %b : tensor<2xf32>, tensor<3xf32> -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @select(%c: tensor<4xi1>, %a: tensor<3xf32>, %b: tensor<f32>) -> tensor<4xf32> {
  // expected-error@+2 {{operand shapes [4] and [3] are not broadcast-compatible}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.select %c, %a, %b : tensor<4xi1>, tensor<3xf32>, tensor<f32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reshape(%a: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error@+1 {{cannot reshape 6 elements into 7}}
  %0 = dlc.reshape %a : tensor<2x3xf32> to tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @transpose_size(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+2 {{permutation has 3 entries for rank 2}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.transpose %a [1, 0, 2] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @transpose_perm(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+2 {{permutation [1, 1] is not a permutation of 0..1}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.transpose %a [1, 1] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @broadcast_to(%a: tensor<2x3xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{cannot broadcast [2, 3] to [2, 4]}}
  %0 = dlc.broadcast_to %a : tensor<2x3xf32> to tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+2 {{axis 2 is out of range for rank 2}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.concat %a, %a {axis = 2 : i64} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  // expected-error@+2 {{inputs have different ranks}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.concat %a, %b {axis = 0 : i64} : tensor<2x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @concat_shape(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error@+2 {{input shapes [2, 3] and [2, 4] differ outside axis 0}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.concat %a, %b {axis = 0 : i64} : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @slice_entries(%a: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error@+2 {{offsets, sizes and strides need 1 entries each}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.slice %a offsets [0, 0] sizes [2] strides [1] : tensor<4xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @slice_stride(%a: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error@+2 {{stride of dimension 0 is zero}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.slice %a offsets [0] sizes [2] strides [0] : tensor<4xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @slice_size(%a: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error@+2 {{size of dimension 0 is negative}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.slice %a offsets [0] sizes [-2] strides [1] : tensor<4xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @slice_bounds(%a: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error@+2 {{slice of dimension 0 reads outside [0, 4)}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.slice %a offsets [1] sizes [3] strides [-1] : tensor<4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @pad_entries(%a: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error@+2 {{low and high need 1 entries each}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.pad %a low [1, 0] high [0] mode constant : tensor<4xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @pad_value(%a: tensor<4xf32>, %v: tensor<1xf32>) -> tensor<5xf32> {
  // expected-error@+2 {{padding value must be a scalar tensor of 'f32'}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.pad %a value %v : tensor<1xf32> low [1] high [0] mode constant : tensor<4xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @pad_negative(%a: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error@+2 {{padding of dimension 0 is negative}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.pad %a low [-1] high [0] mode constant : tensor<4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @pad_reflect(%a: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error@+2 {{reflect padding of dimension 0 must be smaller than its size 4}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.pad %a low [4] high [0] mode reflect : tensor<4xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @pad_edge(%a: tensor<0xf32>) -> tensor<1xf32> {
  // expected-error@+2 {{edge padding of empty dimension 0}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.pad %a low [1] high [0] mode edge : tensor<0xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @gather_axis(%a: tensor<4x2xf32>, %i: tensor<3xi64>) -> tensor<3x2xf32> {
  // expected-error@+2 {{axis 2 is out of range for rank 2}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.gather %a[%i] {axis = 2 : i64} : tensor<4x2xf32>, tensor<3xi64> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @gather_elements_rank(%a: tensor<4x2xf32>, %i: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error@+2 {{data and indices ranks differ (2 vs 1)}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.gather_elements %a[%i] {axis = 0 : i64} : tensor<4x2xf32>, tensor<3xi64> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @scatter_shapes(%a: tensor<4x2xf32>, %i: tensor<1x2xi64>, %u: tensor<2x2xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{indices shape [1, 2] and updates shape [2, 2] differ}}
  %0 = dlc.scatter_elements %a[%i], %u {axis = 0 : i64} reduction none : tensor<4x2xf32>, tensor<1x2xi64>, tensor<2x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @scatter_rank(%a: tensor<4x2xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{data and indices ranks differ (2 vs 1)}}
  %0 = dlc.scatter_elements %a[%i], %u {axis = 0 : i64} reduction add : tensor<4x2xf32>, tensor<2xi64>, tensor<2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @scatter_axis(%a: tensor<4x2xf32>, %i: tensor<1x2xi64>, %u: tensor<1x2xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{axis 3 is out of range for rank 2}}
  %0 = dlc.scatter_elements %a[%i], %u {axis = 3 : i64} reduction max : tensor<4x2xf32>, tensor<1x2xi64>, tensor<1x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @reduce_axes(%a: tensor<4x2xf32>) -> tensor<f32> {
  // expected-error@+2 {{axes [1, 0] must be sorted and unique}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.reduce_sum %a axes [1, 0] : tensor<4x2xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @reduce_range(%a: tensor<4x2xf32>) -> tensor<4xf32> {
  // expected-error@+2 {{axis 2 is out of range for rank 2}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.reduce_max %a axes [2] : tensor<4x2xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @argmax(%a: tensor<4x2xf32>) -> tensor<4xi64> {
  // expected-error@+2 {{axis -1 is out of range for rank 2}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.argmax %a {axis = -1 : i64} : tensor<4x2xf32> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @cumsum(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{axis 1 is out of range for rank 1}}
  %0 = dlc.cumsum %a {axis = 1 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @top_k_axis(%a: tensor<3x4xf32>) -> tensor<3x2xf32> {
  // expected-error@+2 {{axis 2 is out of range for rank 2}}
  // expected-error@+1 {{failed to infer returned types}}
  %0, %1 = dlc.top_k %a {axis = 2 : i64, k = 2 : i64} : tensor<3x4xf32> -> tensor<3x2xf32>, tensor<3x2xi64>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @top_k_too_large(%a: tensor<3x4xf32>) -> tensor<3x5xf32> {
  // expected-error@+2 {{k 5 is out of range [0, 4] for axis 1 of [3, 4]}}
  // expected-error@+1 {{failed to infer returned types}}
  %0, %1 = dlc.top_k %a {axis = 1 : i64, k = 5 : i64, largest} : tensor<3x4xf32> -> tensor<3x5xf32>, tensor<3x5xi64>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @top_k_negative(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+2 {{k -1 is out of range [0, 3] for axis 0 of [3, 4]}}
  // expected-error@+1 {{failed to infer returned types}}
  %0, %1 = dlc.top_k %a {axis = 0 : i64, k = -1 : i64} : tensor<3x4xf32> -> tensor<3x4xf32>, tensor<3x4xi64>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @top_k_result(%a: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+2 {{inferred type(s) 'tensor<3x2xf32>', 'tensor<3x2xi64>' are incompatible with return type(s) of operation 'tensor<2x4xf32>', 'tensor<2x4xi64>'}}
  // expected-error@+1 {{failed to infer returned types}}
  %0, %1 = dlc.top_k %a {axis = 1 : i64, k = 2 : i64} : tensor<3x4xf32> -> tensor<2x4xf32>, tensor<2x4xi64>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @top_k_bool(%a: tensor<4xi1>) -> tensor<2xi1> {
  // expected-error@+1 {{operand #0 must be statically shaped tensor of}}
  %0, %1 = dlc.top_k %a {axis = 0 : i64, k = 2 : i64} : tensor<4xi1> -> tensor<2xi1>, tensor<2xi64>
  return %0 : tensor<2xi1>
}

// -----

func.func @top_k_indices(%a: tensor<4xf32>) -> tensor<2xi32> {
  // expected-error@+1 {{result #1 must be statically shaped tensor of 64-bit signless integer values}}
  %0, %1 = dlc.top_k %a {axis = 0 : i64, k = 2 : i64} : tensor<4xf32> -> tensor<2xf32>, tensor<2xi32>
  return %1 : tensor<2xi32>
}

// -----

func.func @matmul_rank(%a: tensor<4xf32>, %b: tensor<4x2xf32>) -> tensor<2xf32> {
  // expected-error@+2 {{operands must have rank 2 or more}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.matmul %a, %b : tensor<4xf32>, tensor<4x2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @matmul_k(%a: tensor<3x4xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // expected-error@+2 {{contraction sizes differ: lhs [3, 4], rhs [3, 2]}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.matmul %a, %b : tensor<3x4xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @matmul_batch(%a: tensor<2x3x4xf32>, %b: tensor<3x4x2xf32>) -> tensor<3x3x2xf32> {
  // expected-error@+2 {{batch dimensions of [2, 3, 4] and [3, 4, 2] are not broadcast-compatible}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.matmul %a, %b : tensor<2x3x4xf32>, tensor<3x4x2xf32> -> tensor<3x3x2xf32>
  return %0 : tensor<3x3x2xf32>
}

// -----

func.func @conv_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error@+2 {{input and filter must have the same rank, 3 or more}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.conv %x, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x3x8x8xf32>, tensor<4x3x3xf32> -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_attrs(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error@+2 {{stride has 1 entries for 2 spatial dimensions}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.conv %x, %w stride [1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error@+2 {{groups 2 must divide input channels 3 and output channels 4}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.conv %x, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 2 : tensor<1x3x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error@+2 {{filter has 4 input channels per group, expected 2}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.conv %x, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 2 : tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32> -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_fit(%x: tensor<1x3x2x2xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32> {
  // expected-error@+2 {{filter does not fit spatial dimension 0}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.conv %x, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x1x1xf32>
  return %0 : tensor<1x4x1x1xf32>
}

// -----

func.func @pool_rank(%x: tensor<3x8xf32>) -> tensor<3x4xf32> {
  // expected-error@+2 {{input must have rank 3 or more}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.max_pool %x window [2] stride [2] pad_low [0] pad_high [0] dilation [1] : tensor<3x8xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @pool_attrs(%x: tensor<1x3x8xf32>) -> tensor<1x3x4xf32> {
  // expected-error@+2 {{window has 2 entries for 1 spatial dimensions}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.sum_pool %x window [2, 2] stride [2] pad_low [0] pad_high [0] dilation [1] : tensor<1x3x8xf32> -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

func.func @pool_fit(%x: tensor<1x3x2xf32>) -> tensor<1x3x1xf32> {
  // expected-error@+2 {{window does not fit spatial dimension 0}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.max_pool %x window [3] stride [1] pad_low [0] pad_high [0] dilation [1] : tensor<1x3x2xf32> -> tensor<1x3x1xf32>
  return %0 : tensor<1x3x1xf32>
}

// -----

func.func @dropout_ratio(%x: tensor<4xf32>, %s: tensor<i64>) -> tensor<4xf32> {
  // expected-error@+1 {{ratio 1.000000e+00 is outside [0, 1)}}
  %0, %1 = dlc.dropout %x, %s {ratio = 1.0 : f64, stream = 0 : i64} : tensor<4xf32>, tensor<i64> -> tensor<4xi1>
  return %0 : tensor<4xf32>
}

// -----

func.func @dropout_mask(%x: tensor<4xf32>, %s: tensor<i64>) -> tensor<4xf32> {
  // expected-error@+1 {{mask shape [3] differs from the output shape [4]}}
  %0, %1 = dlc.dropout %x, %s {ratio = 0.5 : f64, stream = 0 : i64} : tensor<4xf32>, tensor<i64> -> tensor<3xi1>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_elements_fit(%a: tensor<2x3xf32>, %i: tensor<3x1xi64>) -> tensor<3x1xf32> {
  // expected-error@+2 {{indices dimension 0 (3) exceeds the data's (2)}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.gather_elements %a[%i] {axis = 1 : i64} : tensor<2x3xf32>, tensor<3x1xi64> -> tensor<3x1xf32>
  return %0 : tensor<3x1xf32>
}

// -----

func.func @scatter_fit(%a: tensor<2x3xf32>, %i: tensor<3x1xi64>, %u: tensor<3x1xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{indices dimension 0 (3) exceeds the data's (2)}}
  %0 = dlc.scatter_elements %a[%i], %u {axis = 1 : i64} reduction none : tensor<2x3xf32>, tensor<3x1xi64>, tensor<3x1xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @scatter_bool(%a: tensor<2x3xi1>, %i: tensor<1x1xi64>, %u: tensor<1x1xi1>) -> tensor<2x3xi1> {
  // expected-error@+1 {{cannot reduce bool elements with add}}
  %0 = dlc.scatter_elements %a[%i], %u {axis = 1 : i64} reduction add : tensor<2x3xi1>, tensor<1x1xi64>, tensor<1x1xi1>
  return %0 : tensor<2x3xi1>
}

// -----

func.func @concat_ranks_values(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<5x3xf32> {
  // expected-error@+2 {{inputs have different ranks (2 and 1)}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.concat %a, %b {axis = 0 : i64} : tensor<2x3xf32>, tensor<3xf32> -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// Sizes are bounded, so no shape arithmetic can overflow.
func.func @too_large() -> tensor<4294967296x4294967296xf32> {
  // expected-error@+1 {{of at most 2^40 elements, but got 'tensor<4294967296x4294967296xf32>'}}
  %0 = dlc.constant dense<1.0> : tensor<4294967296x4294967296xf32>
  return %0 : tensor<4294967296x4294967296xf32>
}

// -----

func.func @concat_too_large(%a: tensor<1099511627776xi1>) -> tensor<2199023255552xi1> {
  // expected-error@+1 {{of at most 2^40 elements, but got 'tensor<2199023255552xi1>'}}
  %0 = dlc.concat %a, %a {axis = 0 : i64} : tensor<1099511627776xi1>, tensor<1099511627776xi1> -> tensor<2199023255552xi1>
  return %0 : tensor<2199023255552xi1>
}

// -----

func.func @slice_overflow(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+2 {{slice of dimension 0 reads outside [0, 4)}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.slice %a offsets [0] sizes [4] strides [4611686018427387904] : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pad_too_large(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+2 {{padding of dimension 0 exceeds 1099511627776}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.pad %a low [9223372036854775807] high [9223372036854775807] mode constant : tensor<2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @pad_value_mode(%a: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<2x3xf32> {
  // expected-error@+2 {{a padding value needs mode constant, not reflect}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.pad %a value %v : tensor<f32> low [0, 0] high [0, 0] mode reflect : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @argmax_empty(%a: tensor<3x0xf32>) -> tensor<3xi64> {
  // expected-error@+2 {{axis 1 is empty: there is no index to return}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.argmax %a {axis = 1 : i64} : tensor<3x0xf32> -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @cumsum_negative(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{axis -1 is out of range for rank 1}}
  %0 = dlc.cumsum %a {axis = -1 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_elements_axis(%a: tensor<4x2xf32>, %i: tensor<4x2xi64>) -> tensor<4x2xf32> {
  // expected-error@+2 {{axis 2 is out of range for rank 2}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.gather_elements %a[%i] {axis = 2 : i64} : tensor<4x2xf32>, tensor<4x2xi64> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @conv_groups_zero(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error@+2 {{groups 0 must divide input channels 4 and output channels 4}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.conv %x, %w stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 0 : tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32> -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_zero_stride(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x6xf32> {
  // expected-error@+2 {{stride [0] must be positive}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.conv %x, %w stride [0] pad_low [0] pad_high [0] dilation [1] groups 1 : tensor<1x3x8xf32>, tensor<4x3x3xf32> -> tensor<1x4x6xf32>
  return %0 : tensor<1x4x6xf32>
}

// -----

func.func @conv_negative_pad(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x4xf32> {
  // expected-error@+2 {{pad_low [-1] must be non-negative}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.conv %x, %w stride [1] pad_low [-1] pad_high [0] dilation [1] groups 1 : tensor<1x3x8xf32>, tensor<4x3x3xf32> -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}

// -----

func.func @pool_zero_dilation(%x: tensor<1x3x8xf32>) -> tensor<1x3x4xf32> {
  // expected-error@+2 {{dilation [0] must be positive}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.max_pool %x window [2] stride [2] pad_low [0] pad_high [0] dilation [0] : tensor<1x3x8xf32> -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

func.func @dropout_negative(%x: tensor<4xf32>, %s: tensor<i64>) -> tensor<4xf32> {
  // expected-error@+1 {{ratio -1.000000e-01 is outside [0, 1)}}
  %0, %1 = dlc.dropout %x, %s {ratio = -0.1 : f64, stream = 0 : i64} : tensor<4xf32>, tensor<i64> -> tensor<4xi1>
  return %0 : tensor<4xf32>
}

// -----

func.func @store_unknown_global(%v: tensor<2xf32>) {
  // expected-error@+1 {{refers to an unknown global @missing}}
  dlc.global_store @missing, %v : tensor<2xf32>
  return
}

// -----

dlc.global @w : tensor<3xf32> = dense<1.0> : tensor<3xf32>
func.func @store_type(%v: tensor<3xf64>) {
  // expected-error@+1 {{type 'tensor<3xf64>' does not match the global's type 'tensor<3xf32>'}}
  dlc.global_store @w, %v : tensor<3xf64>
  return
}

// -----

func.func @dropout_seed_type(%x: tensor<4xf32>, %s: tensor<i32>) -> tensor<4xf32> {
  // expected-error@+1 {{operand #1 must be}}
  %0, %1 = dlc.dropout %x, %s {ratio = 0.5 : f64, stream = 0 : i64} : tensor<4xf32>, tensor<i32> -> tensor<4xi1>
  return %0 : tensor<4xf32>
}

// -----

func.func @global_in_function() {
  // expected-error@+1 {{expects parent op 'builtin.module'}}
  dlc.global @w : tensor<2xf32> = dense<1.0> : tensor<2xf32>
  return
}

// -----

func.func @dropout_seed_rank(%x: tensor<4xf32>, %s: tensor<2xi64>) -> tensor<4xf32> {
  // expected-error@+1 {{'dlc.dropout' op seed must be a scalar, got 'tensor<2xi64>'}}
  %0, %1 = dlc.dropout %x, %s {ratio = 0.5 : f64, stream = 0 : i64} : tensor<4xf32>, tensor<2xi64> -> tensor<4xi1>
  return %0 : tensor<4xf32>
}

// -----

func.func @dropout_offset_rank(%x: tensor<4xf32>, %s: tensor<i64>, %o: tensor<2xi64>) -> tensor<4xf32> {
  // expected-error@+1 {{'dlc.dropout' op offset must be a scalar, got 'tensor<2xi64>'}}
  %0, %1 = dlc.dropout %x, %s offset %o {ratio = 0.5 : f64, stream = 0 : i64} : tensor<4xf32>, tensor<i64>, tensor<2xi64> -> tensor<4xi1>
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_argument_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'dlc.fusion' op has 1 inputs but its body takes 2 arguments}}
  %0 = dlc.fusion %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    dlc.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_argument_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'dlc.fusion' op input #0 has type 'tensor<4xf32>' but body argument #0 has type 'tensor<4xf64>'}}
  %0 = dlc.fusion %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf64>):
    %c = dlc.cast %a : tensor<4xf64> to tensor<4xf32>
    dlc.yield %c : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_yield_types(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'dlc.fusion' op yields 2 values of types ('tensor<4xf32>', 'tensor<4xf32>') but has results of types ('tensor<4xf32>')}}
  %0 = dlc.fusion %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    dlc.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

dlc.global @g : tensor<4xf32> = dense<1.0> : tensor<4xf32>
func.func @fusion_global_access(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dlc.fusion %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error@+1 {{'dlc.global_load' op cannot be inside a dlc.fusion}}
    %g = dlc.global_load @g : tensor<4xf32>
    dlc.yield %g : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @yield_outside_fusion(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'dlc.yield' op expects parent op 'dlc.fusion'}}
  dlc.yield %x : tensor<4xf32>
}

// -----

func.func @fusion_without_results(%x: tensor<4xf32>) {
  // expected-error@+1 {{'dlc.fusion' op has no results; a fusion computes at least one value}}
  dlc.fusion %x : (tensor<4xf32>) -> () {
  ^bb0(%a: tensor<4xf32>):
    dlc.yield
  }
  return
}

// -----

func.func @segment_ids(%rows: tensor<6x3xf32>, %ids: tensor<6xi64>, %order: tensor<5xi64>, %starts: tensor<4xi64>) -> tensor<4x3xf32> {
  // expected-error@+1 {{segments [6] and order [5] must be the same one-dimensional shape}}
  %0 = dlc.segment_sum %rows[%ids, %order, %starts] : tensor<6x3xf32>, tensor<6xi64>, tensor<5xi64>, tensor<4xi64> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @segment_rows(%rows: tensor<5x3xf32>, %ids: tensor<6xi64>, %order: tensor<6xi64>, %starts: tensor<4xi64>) -> tensor<4x3xf32> {
  // expected-error@+1 {{data [5, 3] must have 6 rows, one a segment id}}
  %0 = dlc.segment_sum %rows[%ids, %order, %starts] : tensor<5x3xf32>, tensor<6xi64>, tensor<6xi64>, tensor<4xi64> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @segment_result(%rows: tensor<6x3xf32>, %ids: tensor<6xi64>, %order: tensor<6xi64>, %starts: tensor<4xi64>) -> tensor<4x2xf32> {
  // expected-error@+1 {{result [4, 2] must be data [6, 3] with another number of rows}}
  %0 = dlc.segment_sum %rows[%ids, %order, %starts] : tensor<6x3xf32>, tensor<6xi64>, tensor<6xi64>, tensor<4xi64> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @segment_starts(%rows: tensor<6x3xf32>, %ids: tensor<6xi64>, %order: tensor<6xi64>, %starts: tensor<5xi64>) -> tensor<4x3xf32> {
  // expected-error@+1 {{starts [5] must hold one position for each of the 4 segments}}
  %0 = dlc.segment_sum %rows[%ids, %order, %starts] : tensor<6x3xf32>, tensor<6xi64>, tensor<6xi64>, tensor<5xi64> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @conv_channels_last_result(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error@+2 {{inferred type(s) 'tensor<1x6x6x4xf32>' are incompatible with return type(s) of operation 'tensor<1x4x6x6xf32>'}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = dlc.conv %x, %w channels_last stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @random_uniform_seed(%seed: tensor<2xi64>) -> tensor<3xf32> {
  // expected-error@+1 {{'dlc.random_uniform' op seed must be a scalar, got 'tensor<2xi64>'}}
  %0 = dlc.random_uniform %seed {stream = 0 : i64} : tensor<2xi64> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @random_uniform_offset(%seed: tensor<i64>, %o: tensor<1xi64>) -> tensor<3xf32> {
  // expected-error@+1 {{'dlc.random_uniform' op offset must be a scalar, got 'tensor<1xi64>'}}
  %0 = dlc.random_uniform %seed offset %o {stream = 0 : i64} : tensor<i64>, tensor<1xi64> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @all_reduce_nothing() {
  // expected-error@+1 {{'dlc.all_reduce' op reduces no values}}
  "dlc.all_reduce"() <{bucket = 0 : i64, reduction = 1 : i32}> : () -> ()
  return
}

// -----

func.func @all_reduce_bucket(%g: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'dlc.all_reduce' op attribute 'bucket' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = dlc.all_reduce sum bucket -1 %g : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @all_reduce_integers(%n: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error@+1 {{'dlc.all_reduce' op operand #0 must be variadic of statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = dlc.all_reduce sum bucket 0 %n : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @tp_reduce_integers(%n: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error@+1 {{'dlc.tp_reduce' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = dlc.tp_reduce %n : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// A tensor-parallel slice's initial value is the whole of the slices.
module attributes {dlc.tensor_parallel = 2 : i64} {
  // expected-error@+1 {{'dlc.global' op initial value type 'tensor<2x3xf32>' does not match the global's whole type 'tensor<4x3xf32>'}}
  dlc.global @w : tensor<2x3xf32> = dense<1.0> : tensor<2x3xf32> {dlc.tp_split = 0 : i64}
}

// -----

module attributes {dlc.tensor_parallel = 2 : i64} {
  // expected-error@+1 {{'dlc.global' op dlc.tp_split = 2 : i64 must be a dimension of the global's type 'tensor<2x3xf32>'}}
  dlc.global @w : tensor<2x3xf32> = dense<1.0> : tensor<2x3xf32> {dlc.tp_split = 2 : i64}
}

// -----

// A ZeRO shard of a tensor-parallel slice is split along the slice's
// dimensions.
module attributes {dlc.data_parallel = 2 : i64, dlc.tensor_parallel = 2 : i64} {
  // expected-error@+1 {{'dlc.global' op dlc.tp_split = 2 : i64 must be a dimension of the sharded value's type 'tensor<2x3xf32>'}}
  dlc.global @m : tensor<3xf32> = dense<0.0> : tensor<3xf32> {dlc.sharded = tensor<2x3xf32>, dlc.tp_split = 2 : i64}
}

// -----

module attributes {dlc.data_parallel = 2 : i64} {
  // expected-error@+1 {{'dlc.global' op is marked dlc.sharded = tensor<2x3xf32> but is not its ZeRO shard over the module's data-parallel ranks}}
  dlc.global @m : tensor<6xf32> = dense<0.0> : tensor<6xf32> {dlc.sharded = tensor<2x3xf32>}
}

// -----

// expected-error@+1 {{'dlc.global' op is marked dlc.sharded = tensor<2x3xf32> but is not its ZeRO shard over the module's data-parallel ranks}}
dlc.global @m : tensor<3xf32> = dense<0.0> : tensor<3xf32> {dlc.sharded = tensor<2x3xf32>}

// -----

// expected-error@+1 {{'dlc.global' op is split (dlc.tp_split) in a module without dlc.tensor_parallel}}
dlc.global @w : tensor<2x3xf32> = dense<1.0> : tensor<4x3xf32> {dlc.tp_split = 0 : i64}

// -----

module attributes {dlc.tensor_parallel = 2 : i64} {
  // expected-error@+1 {{'dlc.global' op dlc.tp_split = array<i64: 0, 4>: dimension 0 of 'tensor<2x3xf32>' is not 4 equal blocks}}
  dlc.global @w : tensor<2x3xf32> = dense<1.0> : tensor<4x3xf32> {dlc.tp_split = array<i64: 0, 4>}
}

// -----

module attributes {dlc.tensor_parallel = 2 : i64} {
  // expected-error@+1 {{'dlc.global' op dlc.tp_split = array<i64: 0> must be a dimension of the global's type 'tensor<2x3xf32>' (or [dimension, blocks])}}
  dlc.global @w : tensor<2x3xf32> = dense<1.0> : tensor<4x3xf32> {dlc.tp_split = array<i64: 0>}
}

// -----

func.func @reduce_scatter_nothing() {
  // expected-error@+1 {{'dlc.reduce_scatter' op moves no values}}
  "dlc.reduce_scatter"() <{bucket = 0 : i64, ranks = 2 : i64, reduction = 1 : i32}> : () -> ()
  return
}

// -----

func.func @reduce_scatter_mixed(%a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error@+1 {{'dlc.reduce_scatter' op mixes element types ('f32' and 'bf16'); one collective moves one type}}
  %0:2 = dlc.reduce_scatter mean ranks 2 bucket 0 %a, %b : tensor<4xf32>, tensor<4xbf16>
  return
}

// -----

func.func @reduce_scatter_one_rank(%a: tensor<4xf32>) {
  // expected-error@+1 {{'dlc.reduce_scatter' op attribute 'ranks' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 2}}
  %0 = dlc.reduce_scatter mean ranks 1 bucket 0 %a : tensor<4xf32>
  return
}

// -----

func.func @all_gather_count(%a: tensor<2xf32>) {
  // expected-error@+1 {{'dlc.all_gather' op gathers 1 shards into 2 values}}
  %0:2 = "dlc.all_gather"(%a) <{bucket = 0 : i64, ranks = 2 : i64}> : (tensor<2xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @all_gather_shape(%a: tensor<3xf32>) {
  // expected-error@+1 {{'dlc.all_gather' op gathers shard #0 of 'tensor<3xf32>' into 'tensor<2x3xf32>', whose shard over 3 ranks is 'tensor<2xf32>'}}
  %0 = dlc.all_gather ranks 3 bucket 0 %a : tensor<3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @all_gather_mixed(%a: tensor<2xf32>, %b: tensor<2xf16>) {
  // expected-error@+1 {{'dlc.all_gather' op mixes element types ('f32' and 'f16'); one collective moves one type}}
  %0:2 = dlc.all_gather ranks 2 bucket 0 %a, %b : tensor<2xf32>, tensor<2xf16> -> tensor<4xf32>, tensor<4xf16>
  return
}

// -----

func.func @rank_shard_integers(%n: tensor<4xi64>) {
  // expected-error@+1 {{'dlc.rank_shard' op shards 'tensor<4xi64>' among data-parallel ranks, which hold float state only (integers are sliced with `tensor`)}}
  %0 = "dlc.rank_shard"(%n) <{ranks = 2 : i64}> : (tensor<4xi64>) -> tensor<2xi64>
  return
}

// -----

// A tensor rank's slice has no padding.
func.func @rank_shard_tensor_uneven(%n: tensor<3xi64>) {
  // expected-error@+1 {{'dlc.rank_shard' op slices 'tensor<3xi64>' over 2 tensor-parallel ranks, which do not divide its elements}}
  %0 = dlc.rank_shard ranks 2 tensor %n : tensor<3xi64>
  return
}

// -----

func.func @all_gather_tensor_uneven(%a: tensor<2xf32>) {
  // expected-error@+1 {{'dlc.all_gather' op slices 'tensor<3xf32>' over 2 tensor-parallel ranks, which do not divide its elements}}
  %0 = dlc.all_gather ranks 2 tensor bucket 0 %a : tensor<2xf32> -> tensor<3xf32>
  return
}

// -----

// Inference leaves an invalid rank count to the verifier (no division by 0).
func.func @rank_shard_no_ranks(%a: tensor<4xf32>) {
  // expected-error@+1 {{'dlc.rank_shard' op attribute 'ranks' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 2}}
  %0 = dlc.rank_shard ranks 0 %a : tensor<4xf32>
  return
}

// -----

func.func @reduce_scatter_no_ranks(%a: tensor<4xf32>) {
  // expected-error@+1 {{'dlc.reduce_scatter' op attribute 'ranks' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 2}}
  %0 = dlc.reduce_scatter sum ranks 0 bucket 0 %a : tensor<4xf32>
  return
}

// -----

func.func @pp_transfer_unstaged(%h: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'dlc.pp_transfer' op is outside a module partitioned into pipeline stages (dlc.pipeline_stages)}}
  %0 = dlc.pp_transfer %h from 0 to 1 : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @pp_transfer_past_the_stages(%h: tensor<2xf32>) -> tensor<2xf32> {
    // expected-error@+1 {{'dlc.pp_transfer' op names stage 2 of a module of 2 pipeline stages}}
    %0 = dlc.pp_transfer %h from 0 to 2 : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}

// -----

module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @pp_transfer_to_itself(%h: tensor<2xf32>) -> tensor<2xf32> {
    // expected-error@+1 {{'dlc.pp_transfer' op sends a value from stage 1 to itself}}
    %0 = dlc.pp_transfer %h from 1 to 1 : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
