// RUN: dlc-opt %s | dlc-opt | FileCheck %s
// Every op parses, verifies and prints back in its custom form.

// CHECK: dlc.global @fc.weight : tensor<3x4xf32> = dense<5.000000e-01> : tensor<3x4xf32>
dlc.global @"fc.weight" : tensor<3x4xf32> = dense<0.5> : tensor<3x4xf32>

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %b: tensor<2x3xi1>, %i: tensor<2x3xi32>) -> tensor<2x3xf32> {
  // CHECK: %[[W:.*]] = dlc.global_load @fc.weight : tensor<3x4xf32>
  %w = dlc.global_load @"fc.weight" : tensor<3x4xf32>
  // CHECK: dlc.global_store @fc.weight, %[[W]] : tensor<3x4xf32>
  dlc.global_store @"fc.weight", %w : tensor<3x4xf32>
  // CHECK: dlc.constant dense<1.000000e+00> : tensor<f32>
  %c = dlc.constant dense<1.0> : tensor<f32>
  // CHECK: dlc.neg %{{.*}} : tensor<2x3xf32>
  %0 = dlc.neg %x : tensor<2x3xf32>
  %1 = dlc.abs %0 : tensor<2x3xf32>
  %2 = dlc.sign %1 : tensor<2x3xf32>
  %3 = dlc.exp %2 : tensor<2x3xf32>
  %4 = dlc.log %3 : tensor<2x3xf32>
  %5 = dlc.sqrt %4 : tensor<2x3xf32>
  %6 = dlc.rsqrt %5 : tensor<2x3xf32>
  %7 = dlc.reciprocal %6 : tensor<2x3xf32>
  %8 = dlc.ceil %7 : tensor<2x3xf32>
  %9 = dlc.floor %8 : tensor<2x3xf32>
  %10 = dlc.round %9 : tensor<2x3xf32>
  %11 = dlc.erf %10 : tensor<2x3xf32>
  %12 = dlc.sin %11 : tensor<2x3xf32>
  %13 = dlc.cos %12 : tensor<2x3xf32>
  %14 = dlc.tanh %13 : tensor<2x3xf32>
  // CHECK: dlc.tan
  %t0 = dlc.tan %14 : tensor<2x3xf32>
  %t1 = dlc.asin %t0 : tensor<2x3xf32>
  %t2 = dlc.acos %t1 : tensor<2x3xf32>
  %t3 = dlc.atan %t2 : tensor<2x3xf32>
  %t4 = dlc.sinh %t3 : tensor<2x3xf32>
  %t5 = dlc.cosh %t4 : tensor<2x3xf32>
  %t6 = dlc.asinh %t5 : tensor<2x3xf32>
  %t7 = dlc.acosh %t6 : tensor<2x3xf32>
  // CHECK: dlc.atanh
  %t8 = dlc.atanh %t7 : tensor<2x3xf32>
  // CHECK: dlc.sigmoid
  %15 = dlc.sigmoid %t8 : tensor<2x3xf32>
  // CHECK: dlc.not %{{.*}} : tensor<2x3xi1>
  %16 = dlc.not %b : tensor<2x3xi1>
  // CHECK: dlc.add %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %17 = dlc.add %15, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %18 = dlc.sub %17, %c : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %19 = dlc.mul %18, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %20 = dlc.div %19, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %21 = dlc.rem %20, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %22 = dlc.pow %21, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %23 = dlc.max %22, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %24 = dlc.min %23, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %25 = dlc.and %16, %b : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  %26 = dlc.or %25, %b : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  %27 = dlc.xor %26, %b : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  // CHECK: dlc.compare lt, %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xi1>
  %28 = dlc.compare lt, %24, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xi1>
  %29 = dlc.and %27, %28 : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  // CHECK: dlc.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %30 = dlc.select %29, %24, %c : tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  // CHECK: dlc.cast %{{.*}} : tensor<2x3xi32> to tensor<2x3xf32>
  %31 = dlc.cast %i : tensor<2x3xi32> to tensor<2x3xf32>
  %32 = dlc.add %30, %31 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return %32 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<2x3xf32>, %idx: tensor<4xi64>, %idx2: tensor<2x2xi64>, %u: tensor<2x2xf32>) -> tensor<2x3xf32> {
  // CHECK: dlc.reshape %{{.*}} : tensor<2x3xf32> to tensor<6xf32>
  %0 = dlc.reshape %x : tensor<2x3xf32> to tensor<6xf32>
  // CHECK: dlc.transpose %{{.*}} [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %1 = dlc.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  // CHECK: dlc.broadcast_to %{{.*}} : tensor<2x3xf32> to tensor<4x2x3xf32>
  %2 = dlc.broadcast_to %x : tensor<2x3xf32> to tensor<4x2x3xf32>
  // CHECK: dlc.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  %3 = dlc.concat %x, %x {axis = 0 : i64} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  // CHECK: dlc.slice %{{.*}} offsets [3, 0] sizes [2, 3] strides [-2, 1] : tensor<4x3xf32> -> tensor<2x3xf32>
  %4 = dlc.slice %3 offsets [3, 0] sizes [2, 3] strides [-2, 1] : tensor<4x3xf32> -> tensor<2x3xf32>
  %v = dlc.constant dense<0.0> : tensor<f32>
  // CHECK: dlc.pad %{{.*}} value %{{.*}} : tensor<f32> low [0, 1] high [1, 0] mode constant : tensor<2x3xf32> -> tensor<3x4xf32>
  %5 = dlc.pad %4 value %v : tensor<f32> low [0, 1] high [1, 0] mode constant : tensor<2x3xf32> -> tensor<3x4xf32>
  // CHECK: dlc.pad %{{.*}} low [1, 1] high [1, 1] mode reflect
  %6 = dlc.pad %x low [1, 1] high [1, 1] mode reflect : tensor<2x3xf32> -> tensor<4x5xf32>
  // CHECK: dlc.gather %{{.*}}[%{{.*}}] {axis = 1 : i64} : tensor<2x3xf32>, tensor<4xi64> -> tensor<2x4xf32>
  %7 = dlc.gather %x[%idx] {axis = 1 : i64} : tensor<2x3xf32>, tensor<4xi64> -> tensor<2x4xf32>
  // CHECK: dlc.gather_elements
  %8 = dlc.gather_elements %x[%idx2] {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x2xi64> -> tensor<2x2xf32>
  // CHECK: dlc.scatter_elements %{{.*}}[%{{.*}}], %{{.*}} {axis = 1 : i64} reduction add
  %9 = dlc.scatter_elements %x[%idx2], %u {axis = 1 : i64} reduction add : tensor<2x3xf32>, tensor<2x2xi64>, tensor<2x2xf32>
  return %9 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @segment_sum
// CHECK: dlc.segment_sum %arg0[%arg1, %arg2, %arg3] : tensor<6x3xf32>, tensor<6xi64>, tensor<6xi64>, tensor<4xi64> -> tensor<4x3xf32>
func.func @segment_sum(%rows: tensor<6x3xf32>, %ids: tensor<6xi64>, %order: tensor<6xi64>, %starts: tensor<4xi64>) -> tensor<4x3xf32> {
  %0 = dlc.segment_sum %rows[%ids, %order, %starts] : tensor<6x3xf32>, tensor<6xi64>, tensor<6xi64>, tensor<4xi64> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: dlc.reduce_sum %{{.*}} axes [1] keep_dims : tensor<2x3xf32> -> tensor<2x1xf32>
  %0 = dlc.reduce_sum %x axes [1] keep_dims : tensor<2x3xf32> -> tensor<2x1xf32>
  // CHECK: dlc.reduce_prod %{{.*}} axes [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %1 = dlc.reduce_prod %x axes [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %2 = dlc.reduce_max %x axes [0] : tensor<2x3xf32> -> tensor<3xf32>
  %3 = dlc.reduce_min %x axes [] : tensor<2x3xf32> -> tensor<2x3xf32>
  // CHECK: dlc.argmax %{{.*}} {axis = 1 : i64, select_last_index} : tensor<2x3xf32> -> tensor<2xi64>
  %4 = dlc.argmax %x {axis = 1 : i64, select_last_index} : tensor<2x3xf32> -> tensor<2xi64>
  // CHECK: dlc.argmin %{{.*}} {axis = 0 : i64, keep_dims} : tensor<2x3xf32> -> tensor<1x3xi64>
  %5 = dlc.argmin %x {axis = 0 : i64, keep_dims} : tensor<2x3xf32> -> tensor<1x3xi64>
  // CHECK: dlc.cumsum %{{.*}} {axis = 1 : i64, exclusive, reverse} : tensor<2x3xf32>
  %6 = dlc.cumsum %x {axis = 1 : i64, exclusive, reverse} : tensor<2x3xf32>
  // CHECK: dlc.top_k %{{.*}} {axis = 1 : i64, k = 2 : i64, largest, sorted} : tensor<2x3xf32> -> tensor<2x2xf32>, tensor<2x2xi64>
  %7, %8 = dlc.top_k %x {axis = 1 : i64, k = 2 : i64, largest, sorted} : tensor<2x3xf32> -> tensor<2x2xf32>, tensor<2x2xi64>
  // CHECK: dlc.top_k %{{.*}} {axis = 0 : i64, k = 0 : i64} : tensor<2x3xf32> -> tensor<0x3xf32>, tensor<0x3xi64>
  %9, %10 = dlc.top_k %x {axis = 0 : i64, k = 0 : i64} : tensor<2x3xf32> -> tensor<0x3xf32>, tensor<0x3xi64>
  return %6 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @nn
func.func @nn(%x: tensor<1x4x8x8xf32>, %w: tensor<8x2x3x3xf32>, %a: tensor<5x2x3xf32>, %b: tensor<3x4xf32>) -> tensor<5x2x4xf32> {
  // CHECK: dlc.matmul %{{.*}}, %{{.*}} : tensor<5x2x3xf32>, tensor<3x4xf32> -> tensor<5x2x4xf32>
  %0 = dlc.matmul %a, %b : tensor<5x2x3xf32>, tensor<3x4xf32> -> tensor<5x2x4xf32>
  // CHECK: dlc.conv %{{.*}}, %{{.*}} stride [2, 2] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] groups 2 : tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32> -> tensor<1x8x4x4xf32>
  %1 = dlc.conv %x, %w stride [2, 2] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] groups 2 : tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32> -> tensor<1x8x4x4xf32>
  // A transposed convolution (ONNX ConvTranspose) is a conv_grad_input.
  // CHECK: dlc.conv_grad_input %{{.*}}, %{{.*}} stride [2, 2] pad_low [1, 1] pad_high [0, 0] dilation [1, 1] groups 2 : tensor<1x8x4x4xf32>, tensor<8x2x3x3xf32> -> tensor<1x4x8x8xf32>
  %2 = dlc.conv_grad_input %1, %w stride [2, 2] pad_low [1, 1] pad_high [0, 0] dilation [1, 1] groups 2 : tensor<1x8x4x4xf32>, tensor<8x2x3x3xf32> -> tensor<1x4x8x8xf32>
  // CHECK: dlc.max_pool %{{.*}} window [2, 2] stride [2, 2] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  %3 = dlc.max_pool %x window [2, 2] stride [2, 2] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  // CHECK: dlc.sum_pool
  %4 = dlc.sum_pool %x window [3, 3] stride [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  // CHECK: dlc.dropout %{{.*}}, %{{.*}} {ratio = 1.000000e-01 : f64, stream = 3 : i64} : tensor<1x4x8x8xf32>, tensor<i64> -> tensor<1x4x8x8xi1>
  %seed = dlc.constant dense<7> : tensor<i64>
  %5, %6 = dlc.dropout %x, %seed {ratio = 0.1 : f64, stream = 3 : i64} : tensor<1x4x8x8xf32>, tensor<i64> -> tensor<1x4x8x8xi1>
  // CHECK: dlc.random_uniform %{{.*}} {stream = 1073741824 : i64} : tensor<i64> -> tensor<2x3xf32>
  %7 = dlc.random_uniform %seed {stream = 1073741824 : i64} : tensor<i64> -> tensor<2x3xf32>
  return %0 : tensor<5x2x4xf32>
}

// A fusion round-trips with its body; results may be several.
// CHECK-LABEL: func.func @fusion
// CHECK: %[[F:.*]]:2 = dlc.fusion %arg0, %arg1 : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>):
// CHECK-NEXT: %[[S:.*]] = dlc.add %[[A]], %[[B]]
// CHECK-NEXT: %[[E:.*]] = dlc.exp %[[S]]
// CHECK-NEXT: dlc.yield %[[S]], %[[E]] : tensor<4x8xf32>, tensor<4x8xf32>
func.func @fusion(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0:2 = dlc.fusion %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
    %s = dlc.add %a, %c : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %e = dlc.exp %s : tensor<4x8xf32>
    dlc.yield %s, %e : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @conv_channels_last
func.func @conv_channels_last(%x: tensor<1x8x8x4xf32>, %w: tensor<8x3x3x2xf32>) -> tensor<1x4x4x8xf32> {
  // CHECK: dlc.conv %{{.*}}, %{{.*}} channels_last stride [2, 2] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] groups 2 : tensor<1x8x8x4xf32>, tensor<8x3x3x2xf32> -> tensor<1x4x4x8xf32>
  %0 = dlc.conv %x, %w channels_last stride [2, 2] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] groups 2 : tensor<1x8x8x4xf32>, tensor<8x3x3x2xf32> -> tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
}

// ZeRO-1's collectives: a bucket of gradients reduce-scattered into 1-D
// shards of ceil(elements / ranks) elements (15 over 4 ranks: 4), the
// updated shards gathered into the whole values, and a rank's own shard of
// a parameter.
// CHECK-LABEL: func.func @zero_collectives
// CHECK: %{{.*}}:2 = dlc.reduce_scatter mean ranks 4 bucket 0 %arg0, %arg1 : tensor<3x5xf32>, tensor<3xf32>
// CHECK: dlc.all_gather ranks 4 bucket 1 %{{.*}}#0, %{{.*}}#1 : tensor<4xf32>, tensor<1xf32> -> tensor<3x5xf32>, tensor<3xf32>
// CHECK: dlc.rank_shard ranks 4 %arg0 : tensor<3x5xf32>
func.func @zero_collectives(%w: tensor<3x5xf32>, %b: tensor<3xf32>) -> (tensor<3x5xf32>, tensor<3xf32>, tensor<4xf32>) {
  %s:2 = dlc.reduce_scatter mean ranks 4 bucket 0 %w, %b : tensor<3x5xf32>, tensor<3xf32>
  %g:2 = dlc.all_gather ranks 4 bucket 1 %s#0, %s#1 : tensor<4xf32>, tensor<1xf32> -> tensor<3x5xf32>, tensor<3xf32>
  %r = dlc.rank_shard ranks 4 %w : tensor<3x5xf32>
  return %g#0, %g#1, %r : tensor<3x5xf32>, tensor<3xf32>, tensor<4xf32>
}

// Megatron-LM's conjugate pair of tensor-parallel collectives.
// CHECK-LABEL: func.func @tensor_parallel
// CHECK: %[[C:.*]] = dlc.tp_copy %arg0 : tensor<4x8xbf16>
// CHECK: dlc.tp_reduce %[[C]] : tensor<4x8xbf16>
func.func @tensor_parallel(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %0 = dlc.tp_copy %x : tensor<4x8xbf16>
  %1 = dlc.tp_reduce %0 : tensor<4x8xbf16>
  return %1 : tensor<4x8xbf16>
}

// A tensor group's slices joined, a tensor rank's slice of a constant, and
// a value autodiff treats as a constant (a vocabulary-parallel loss's).
// CHECK-LABEL: func.func @tensor_parallel_slices
// CHECK: dlc.stop_gradient %arg0 : tensor<6xf32>
// CHECK: dlc.all_gather ranks 2 tensor bucket 0 %{{.*}} : tensor<6xf32> -> tensor<2x6xf32>
// CHECK: dlc.rank_shard ranks 2 tensor %arg1 : tensor<2xi64>
func.func @tensor_parallel_slices(%m: tensor<6xf32>, %firsts: tensor<2xi64>) -> (tensor<2x6xf32>, tensor<1xi64>) {
  %0 = dlc.stop_gradient %m : tensor<6xf32>
  %1 = dlc.all_gather ranks 2 tensor bucket 0 %0 : tensor<6xf32> -> tensor<2x6xf32>
  %2 = dlc.rank_shard ranks 2 tensor %firsts : tensor<2xi64>
  return %1, %2 : tensor<2x6xf32>, tensor<1xi64>
}

// A tensor-parallel rank's slice of a global keeps the whole initial value.
// CHECK: module attributes {dlc.tensor_parallel = 2 : i64}
// CHECK: dlc.global @slice : tensor<3x2xf32> = dense<1.000000e+00> : tensor<3x4xf32> {dlc.tp_split = 1 : i64}
module attributes {dlc.tensor_parallel = 2 : i64} {
  dlc.global @slice : tensor<3x2xf32> = dense<1.0> : tensor<3x4xf32> {dlc.tp_split = 1 : i64}
}

// A ZeRO shard of a slice (ZeRO-1 with tensor parallelism): split along
// the slice's dimension, its initial value its own.
// CHECK: module attributes {dlc.data_parallel = 2 : i64, dlc.tensor_parallel = 2 : i64}
// CHECK: dlc.global @shard : tensor<3xf32> = dense<0.000000e+00> : tensor<3xf32> {dlc.sharded = tensor<3x2xf32>, dlc.tp_split = 1 : i64}
module attributes {dlc.data_parallel = 2 : i64, dlc.tensor_parallel = 2 : i64} {
  dlc.global @shard : tensor<3xf32> = dense<0.0> : tensor<3xf32> {dlc.sharded = tensor<3x2xf32>, dlc.tp_split = 1 : i64}
}

// A value of pipeline stage 0 that stage 1 reads.
// CHECK: module attributes {dlc.pipeline_stages = 2 : i64}
// CHECK: dlc.pp_transfer %arg0 from 0 to 1 : tensor<2x16xbf16>
module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @pp_transfer(%h: tensor<2x16xbf16>) -> tensor<2x16xbf16> {
    %0 = dlc.pp_transfer %h from 0 to 1 : tensor<2x16xbf16>
    return %0 : tensor<2x16xbf16>
  }
}

// A bucket of gradients averaged over the data-parallel ranks.
// CHECK-LABEL: func.func @all_reduce
// CHECK: %{{.*}}:2 = dlc.all_reduce mean bucket 3 %arg0, %arg1 : tensor<4x8xf32>, tensor<8xbf16>
// CHECK: dlc.all_reduce sum bucket 0 %arg1 : tensor<8xbf16>
func.func @all_reduce(%w: tensor<4x8xf32>, %b: tensor<8xbf16>) -> (tensor<4x8xf32>, tensor<8xbf16>, tensor<8xbf16>) {
  %0:2 = dlc.all_reduce mean bucket 3 %w, %b : tensor<4x8xf32>, tensor<8xbf16>
  %1 = dlc.all_reduce sum bucket 0 %b : tensor<8xbf16>
  return %0#0, %0#1, %1 : tensor<4x8xf32>, tensor<8xbf16>, tensor<8xbf16>
}
