// RUN: dlc-opt %s -split-input-file -dlc-tensor-parallel=ranks=2 | FileCheck %s
// RUN: dlc-opt %s -split-input-file '-dlc-tensor-parallel=ranks=2 report=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: dlc-opt %s -split-input-file -dlc-tensor-parallel | FileCheck %s --check-prefix=ONE

// An MLP block (Megatron-LM's): W1 (read transposed, as Gemm imports it)
// is split by its output columns, with its bias; W2 by its input rows. The
// hidden layer is the rank's columns; dlc.tp_copy enters the pair and
// dlc.tp_reduce sums the partial outputs, before the replicated bias.
// CHECK-LABEL: module attributes {dlc.tensor_parallel = 2 : i64}
// CHECK: dlc.global @w1 : tensor<4x3xf32> = dense<1.000000e+00> : tensor<8x3xf32> {dlc.tp_split = 0 : i64}
// CHECK: dlc.global @b1 : tensor<4xf32> = dense<5.000000e-01> : tensor<8xf32> {dlc.tp_split = 0 : i64}
// CHECK: dlc.global @w2 : tensor<2x4xf32> = dense<2.000000e+00> : tensor<2x8xf32> {dlc.tp_split = 1 : i64}
// CHECK: dlc.global @b2 : tensor<2xf32> = dense<1.000000e+00> : tensor<2xf32>{{$}}
// CHECK-LABEL: func.func @forward
// CHECK: %[[W1:.*]] = dlc.global_load @w1 : tensor<4x3xf32>
// CHECK: %[[B1:.*]] = dlc.global_load @b1 : tensor<4xf32>
// CHECK: %[[W2:.*]] = dlc.global_load @w2 : tensor<2x4xf32>
// CHECK: %[[B2:.*]] = dlc.global_load @b2 : tensor<2xf32>
// CHECK: %[[W1T:.*]] = dlc.transpose %[[W1]] [1, 0] : tensor<4x3xf32> -> tensor<3x4xf32>
// CHECK: %[[X:.*]] = dlc.tp_copy %arg0 : tensor<5x3xf32>
// CHECK: %[[H:.*]] = dlc.matmul %[[X]], %[[W1T]] : tensor<5x3xf32>, tensor<3x4xf32> -> tensor<5x4xf32>
// CHECK: %[[HB:.*]] = dlc.add %[[H]], %[[B1]] : tensor<5x4xf32>, tensor<4xf32> -> tensor<5x4xf32>
// CHECK: %[[M:.*]] = dlc.compare le, %[[HB]], %{{.*}} : tensor<5x4xf32>, tensor<f32> -> tensor<5x4xi1>
// CHECK: %[[R:.*]] = dlc.select %[[M]], %{{.*}}, %[[HB]] : tensor<5x4xi1>, tensor<f32>, tensor<5x4xf32> -> tensor<5x4xf32>
// The gate enters through dlc.tp_copy, so that its gradient sums every
// rank's columns.
// CHECK: %[[G:.*]] = dlc.tp_copy %arg1 : tensor<5x1xf32>
// CHECK: %[[S:.*]] = dlc.mul %[[R]], %[[G]] : tensor<5x4xf32>, tensor<5x1xf32> -> tensor<5x4xf32>
// CHECK: %[[W2T:.*]] = dlc.transpose %[[W2]] [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
// CHECK: %[[P:.*]] = dlc.matmul %[[S]], %[[W2T]] : tensor<5x4xf32>, tensor<4x2xf32> -> tensor<5x2xf32>
// CHECK: %[[Y:.*]] = dlc.tp_reduce %[[P]] : tensor<5x2xf32>
// CHECK: %[[YB:.*]] = dlc.add %[[Y]], %[[B2]]
// CHECK: return %[[YB]]
// REPORT: tensor parallelism over 2 ranks
// REPORT-NEXT: @forward:
// REPORT-NEXT: dlc.matmul at loc({{.*}}): column-parallel, @w1 split along dimension 0, @b1 along dimension 0
// REPORT-NEXT: dlc.matmul at loc({{.*}}): row-parallel, @w2 split along dimension 1
// One rank changes nothing.
// ONE-NOT: tp_
// ONE-NOT: dlc.tensor_parallel
module {
  dlc.global @w1 : tensor<8x3xf32> = dense<1.0> : tensor<8x3xf32>
  dlc.global @b1 : tensor<8xf32> = dense<0.5> : tensor<8xf32>
  dlc.global @w2 : tensor<2x8xf32> = dense<2.0> : tensor<2x8xf32>
  dlc.global @b2 : tensor<2xf32> = dense<1.0> : tensor<2xf32>
  func.func @forward(%x: tensor<5x3xf32> {dlc.name = "x"}, %g: tensor<5x1xf32> {dlc.name = "gate"}) -> (tensor<5x2xf32> {dlc.name = "y"}) {
    %w1 = dlc.global_load @w1 : tensor<8x3xf32>
    %b1 = dlc.global_load @b1 : tensor<8xf32>
    %w2 = dlc.global_load @w2 : tensor<2x8xf32>
    %b2 = dlc.global_load @b2 : tensor<2xf32>
    %w1t = dlc.transpose %w1 [1, 0] : tensor<8x3xf32> -> tensor<3x8xf32>
    %h = dlc.matmul %x, %w1t : tensor<5x3xf32>, tensor<3x8xf32> -> tensor<5x8xf32>
    %hb = dlc.add %h, %b1 : tensor<5x8xf32>, tensor<8xf32> -> tensor<5x8xf32>
    %zero = dlc.constant dense<0.0> : tensor<f32>
    %m = dlc.compare le, %hb, %zero : tensor<5x8xf32>, tensor<f32> -> tensor<5x8xi1>
    %r = dlc.select %m, %zero, %hb : tensor<5x8xi1>, tensor<f32>, tensor<5x8xf32> -> tensor<5x8xf32>
    // A value broadcast along the hidden layer's columns may enter it.
    %s = dlc.mul %r, %g : tensor<5x8xf32>, tensor<5x1xf32> -> tensor<5x8xf32>
    %w2t = dlc.transpose %w2 [1, 0] : tensor<2x8xf32> -> tensor<8x2xf32>
    %y = dlc.matmul %s, %w2t : tensor<5x8xf32>, tensor<8x2xf32> -> tensor<5x2xf32>
    %yb = dlc.add %y, %b2 : tensor<5x2xf32>, tensor<2xf32> -> tensor<5x2xf32>
    return %yb : tensor<5x2xf32>
  }
}

// -----

// Weights read directly ([in, out], as MatMul imports them) on [B, T, D]
// activations; two pairs in a row, each with its own collectives. The
// third matmul has no partner and stays replicated.
// CHECK-LABEL: module attributes {dlc.tensor_parallel = 2 : i64}
// CHECK: dlc.global @a1 : tensor<4x2xf32> = dense<1.000000e+00> : tensor<4x4xf32> {dlc.tp_split = 1 : i64}
// CHECK: dlc.global @a2 : tensor<2x4xf32> = dense<1.000000e+00> : tensor<4x4xf32> {dlc.tp_split = 0 : i64}
// CHECK: dlc.global @c1 : tensor<4x2xf32> = dense<1.000000e+00> : tensor<4x4xf32> {dlc.tp_split = 1 : i64}
// CHECK: dlc.global @c2 : tensor<2x4xf32> = dense<1.000000e+00> : tensor<4x4xf32> {dlc.tp_split = 0 : i64}
// CHECK: dlc.global @head : tensor<4x6xf32> = dense<1.000000e+00> : tensor<4x6xf32>{{$}}
// CHECK-LABEL: func.func @blocks
// CHECK: dlc.tp_copy %arg0 : tensor<2x5x4xf32>
// CHECK: dlc.matmul %{{.*}}, %{{.*}} : tensor<2x5x4xf32>, tensor<4x2xf32> -> tensor<2x5x2xf32>
// CHECK: dlc.tanh %{{.*}} : tensor<2x5x2xf32>
// CHECK: dlc.matmul %{{.*}}, %{{.*}} : tensor<2x5x2xf32>, tensor<2x4xf32> -> tensor<2x5x4xf32>
// CHECK: dlc.tp_reduce %{{.*}} : tensor<2x5x4xf32>
// CHECK: dlc.tp_copy %{{.*}} : tensor<2x5x4xf32>
// CHECK: dlc.tp_reduce %{{.*}} : tensor<2x5x4xf32>
// CHECK: dlc.matmul %{{.*}}, %{{.*}} : tensor<2x5x4xf32>, tensor<4x6xf32> -> tensor<2x5x6xf32>
// CHECK-NOT: tp_
// CHECK: return
// REPORT: @blocks:
// REPORT-NEXT: column-parallel, @a1 split along dimension 1
// REPORT-NEXT: row-parallel, @a2 split along dimension 0
// REPORT-NEXT: column-parallel, @c1 split along dimension 1
// REPORT-NEXT: row-parallel, @c2 split along dimension 0
// REPORT-NEXT: replicated: it is a class head, which is split for a cross-entropy loss alone
module {
  dlc.global @a1 : tensor<4x4xf32> = dense<1.0> : tensor<4x4xf32>
  dlc.global @a2 : tensor<4x4xf32> = dense<1.0> : tensor<4x4xf32>
  dlc.global @c1 : tensor<4x4xf32> = dense<1.0> : tensor<4x4xf32>
  dlc.global @c2 : tensor<4x4xf32> = dense<1.0> : tensor<4x4xf32>
  dlc.global @head : tensor<4x6xf32> = dense<1.0> : tensor<4x6xf32>
  func.func @blocks(%x: tensor<2x5x4xf32> {dlc.name = "x"}) -> (tensor<2x5x6xf32> {dlc.name = "y"}) {
    %a1 = dlc.global_load @a1 : tensor<4x4xf32>
    %a2 = dlc.global_load @a2 : tensor<4x4xf32>
    %c1 = dlc.global_load @c1 : tensor<4x4xf32>
    %c2 = dlc.global_load @c2 : tensor<4x4xf32>
    %head = dlc.global_load @head : tensor<4x6xf32>
    %0 = dlc.matmul %x, %a1 : tensor<2x5x4xf32>, tensor<4x4xf32> -> tensor<2x5x4xf32>
    %1 = dlc.tanh %0 : tensor<2x5x4xf32>
    %2 = dlc.matmul %1, %a2 : tensor<2x5x4xf32>, tensor<4x4xf32> -> tensor<2x5x4xf32>
    %3 = dlc.add %2, %x : tensor<2x5x4xf32>, tensor<2x5x4xf32> -> tensor<2x5x4xf32>
    %4 = dlc.matmul %3, %c1 : tensor<2x5x4xf32>, tensor<4x4xf32> -> tensor<2x5x4xf32>
    %5 = dlc.tanh %4 : tensor<2x5x4xf32>
    %6 = dlc.matmul %5, %c2 : tensor<2x5x4xf32>, tensor<4x4xf32> -> tensor<2x5x4xf32>
    %7 = dlc.add %6, %3 : tensor<2x5x4xf32>, tensor<2x5x4xf32> -> tensor<2x5x4xf32>
    %8 = dlc.matmul %7, %head : tensor<2x5x4xf32>, tensor<4x6xf32> -> tensor<2x5x6xf32>
    return %8 : tensor<2x5x6xf32>
  }
}

// -----

// What stays replicated, and why.
// CHECK-LABEL: module attributes {dlc.tensor_parallel = 2 : i64}
// CHECK-NOT: tp_
// REPORT: @odd:
// REPORT-NEXT: replicated: its 3 output columns do not divide over 2 ranks
// REPORT: @nonpointwise:
// REPORT-NEXT: replicated: dlc.reduce_sum at loc({{.*}}) reads its hidden layer and is not pointwise
// REPORT: @dropout:
// REPORT-NEXT: replicated: a random draw (dlc.dropout at loc({{.*}})) reads its hidden layer, whose slices would need each rank's own counters
// REPORT: @fullwidth:
// REPORT-NEXT: replicated: dlc.add at loc({{.*}}) mixes a full-width value other than a 1-D bias global into its hidden layer
// REPORT: @activation_weight:
// REPORT-NEXT: replicated: its right operand is not a 2-D dlc.global (or its transpose)
// REPORT: @shared:
// REPORT-NEXT: replicated: @w is also read outside a split pair, head or embedding
// REPORT-NEXT: replicated: @w is also read outside a split pair, head or embedding
// REPORT: @reader:
// REPORT-NEXT: replicated: its right operand is not a 2-D dlc.global (or its transpose)
// REPORT: @state:
// REPORT-NEXT: replicated: @s is written (it is state)
module {
  dlc.global @w : tensor<4x4xf32> = dense<1.0> : tensor<4x4xf32>
  dlc.global @w3 : tensor<4x3xf32> = dense<1.0> : tensor<4x3xf32>
  dlc.global @u : tensor<3x4xf32> = dense<1.0> : tensor<3x4xf32>
  dlc.global @s : tensor<4x4xf32> = dense<1.0> : tensor<4x4xf32>
  dlc.global @v : tensor<4x4xf32> = dense<1.0> : tensor<4x4xf32>
  func.func @odd(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %w = dlc.global_load @w3 : tensor<4x3xf32>
    %h = dlc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
    %u = dlc.global_load @u : tensor<3x4xf32>
    %o = dlc.matmul %h, %u : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
    return %o : tensor<2x4xf32>
  }
  func.func @nonpointwise(%x: tensor<2x4xf32>) -> tensor<2xf32> {
    %w = dlc.global_load @v : tensor<4x4xf32>
    %h = dlc.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %r = dlc.reduce_sum %h axes [1] : tensor<2x4xf32> -> tensor<2xf32>
    return %r : tensor<2xf32>
  }
  func.func @dropout(%x: tensor<2x4xf32>, %seed: tensor<i64>) -> tensor<2x4xf32> {
    %w = dlc.global_load @v : tensor<4x4xf32>
    %h = dlc.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %d, %mask = dlc.dropout %h, %seed {ratio = 0.1 : f64, stream = 0 : i64} : tensor<2x4xf32>, tensor<i64> -> tensor<2x4xi1>
    %v = dlc.global_load @v : tensor<4x4xf32>
    %o = dlc.matmul %d, %v : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    return %o : tensor<2x4xf32>
  }
  func.func @fullwidth(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %w = dlc.global_load @v : tensor<4x4xf32>
    %h = dlc.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %a = dlc.add %h, %x : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
    %v = dlc.global_load @v : tensor<4x4xf32>
    %o = dlc.matmul %a, %v : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    return %o : tensor<2x4xf32>
  }
  func.func @activation_weight(%x: tensor<2x4xf32>, %y: tensor<4x4xf32>) -> tensor<2x4xf32> {
    %h = dlc.matmul %x, %y : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    return %h : tensor<2x4xf32>
  }
  // @w pairs here, but @reader reads it as an activation: one layout per
  // global, so the pair stays replicated.
  func.func @shared(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %w = dlc.global_load @w : tensor<4x4xf32>
    %h = dlc.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %w2 = dlc.global_load @w : tensor<4x4xf32>
    %o = dlc.matmul %h, %w2 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    return %o : tensor<2x4xf32>
  }
  func.func @reader(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %w = dlc.global_load @w : tensor<4x4xf32>
    %o = dlc.matmul %w, %x : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    return %o : tensor<4x4xf32>
  }
  func.func @state(%x: tensor<2x4xf32>, %n: tensor<4x4xf32>) -> tensor<2x4xf32> {
    %w = dlc.global_load @s : tensor<4x4xf32>
    %h = dlc.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %v = dlc.global_load @v : tensor<4x4xf32>
    %o = dlc.matmul %h, %v : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    dlc.global_store @s, %n : tensor<4x4xf32>
    return %o : tensor<2x4xf32>
  }
}
