// RUN: dlc-opt %s -split-input-file -dlc-tensor-parallel=ranks=2 | FileCheck %s
// RUN: dlc-opt %s -split-input-file '-dlc-tensor-parallel=ranks=2 report=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// Attention by heads (Megatron-LM): a fused QKV projection, cut into Q, K
// and V, each reshaped into 2 heads and transposed, attended, merged back
// and projected. Each rank holds its head's rows of Q, of K and of V (the
// weight and bias split in 3 blocks) and the output projection's columns
// of its head; the slices take the rank's part of each block; the masked
// attention runs on 1 head; dlc.tp_reduce sums the projections.
// CHECK-LABEL: module attributes {dlc.tensor_parallel = 2 : i64}
// CHECK: dlc.global @wqkv : tensor<12x8xf32> = {{.*}} : tensor<24x8xf32> {dlc.tp_split = array<i64: 0, 3>}
// CHECK: dlc.global @bqkv : tensor<12xf32> = {{.*}} : tensor<24xf32> {dlc.tp_split = array<i64: 0, 3>}
// CHECK: dlc.global @wo : tensor<8x4xf32> = {{.*}} : tensor<8x8xf32> {dlc.tp_split = 1 : i64}
// CHECK-LABEL: func.func @attn
// CHECK: %[[X:.*]] = dlc.tp_copy %arg0 : tensor<2x4x8xf32>
// CHECK: %[[H:.*]] = dlc.matmul %[[X]], %{{.*}} : tensor<2x4x8xf32>, tensor<8x12xf32> -> tensor<2x4x12xf32>
// CHECK: %[[HB:.*]] = dlc.add %{{.*}}, %[[H]] : tensor<12xf32>, tensor<2x4x12xf32> -> tensor<2x4x12xf32>
// CHECK: dlc.slice %[[HB]] offsets [0, 0, 0] sizes [2, 4, 4] strides [1, 1, 1] : tensor<2x4x12xf32> -> tensor<2x4x4xf32>
// CHECK: dlc.slice %[[HB]] offsets [0, 0, 4] sizes [2, 4, 4] strides [1, 1, 1]
// CHECK: dlc.slice %[[HB]] offsets [0, 0, 8] sizes [2, 4, 4] strides [1, 1, 1]
// CHECK: dlc.reshape %{{.*}} : tensor<2x4x4xf32> to tensor<2x4x1x4xf32>
// CHECK: dlc.transpose %{{.*}} [0, 2, 1, 3] : tensor<2x4x1x4xf32> -> tensor<2x1x4x4xf32>
// CHECK: %{{.*}}, %{{.*}} = dlc.attention %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} scale 5.000000e-01 : tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<2x1x4x4xf32>, tensor<2x1x4xf32>
// CHECK: dlc.reshape %{{.*}} : tensor<2x4x1x4xf32> to tensor<2x4x4xf32>
// CHECK: %[[P:.*]] = dlc.matmul %{{.*}}, %{{.*}} : tensor<2x4x4xf32>, tensor<4x8xf32> -> tensor<2x4x8xf32>
// CHECK: dlc.tp_reduce %[[P]] : tensor<2x4x8xf32>
// REPORT: @attn:
// REPORT-NEXT: column-parallel by attention heads, @wqkv split along dimension 0 in 3 blocks, @bqkv along dimension 0 in 3 blocks
// REPORT-NEXT: row-parallel by attention heads, @wo split along dimension 1
module {
  dlc.global @wqkv : tensor<24x8xf32> = dense<0.1> : tensor<24x8xf32>
  dlc.global @bqkv : tensor<24xf32> = dense<0.5> : tensor<24xf32>
  dlc.global @wo : tensor<8x8xf32> = dense<0.2> : tensor<8x8xf32>
  func.func @attn(%x: tensor<2x4x8xf32> {dlc.name = "x"}) -> (tensor<2x4x8xf32> {dlc.name = "y"}) {
    %mask = dlc.constant dense<[[[[0.0, -1.0e30, -1.0e30, -1.0e30], [0.0, 0.0, -1.0e30, -1.0e30], [0.0, 0.0, 0.0, -1.0e30], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
    %w = dlc.global_load @wqkv : tensor<24x8xf32>
    %b = dlc.global_load @bqkv : tensor<24xf32>
    %wo = dlc.global_load @wo : tensor<8x8xf32>
    %wt = dlc.transpose %w [1, 0] : tensor<24x8xf32> -> tensor<8x24xf32>
    %h = dlc.matmul %x, %wt : tensor<2x4x8xf32>, tensor<8x24xf32> -> tensor<2x4x24xf32>
    %hb = dlc.add %b, %h : tensor<24xf32>, tensor<2x4x24xf32> -> tensor<2x4x24xf32>
    %q = dlc.slice %hb offsets [0, 0, 0] sizes [2, 4, 8] strides [1, 1, 1] : tensor<2x4x24xf32> -> tensor<2x4x8xf32>
    %k = dlc.slice %hb offsets [0, 0, 8] sizes [2, 4, 8] strides [1, 1, 1] : tensor<2x4x24xf32> -> tensor<2x4x8xf32>
    %v = dlc.slice %hb offsets [0, 0, 16] sizes [2, 4, 8] strides [1, 1, 1] : tensor<2x4x24xf32> -> tensor<2x4x8xf32>
    %q4 = dlc.reshape %q : tensor<2x4x8xf32> to tensor<2x4x2x4xf32>
    %k4 = dlc.reshape %k : tensor<2x4x8xf32> to tensor<2x4x2x4xf32>
    %v4 = dlc.reshape %v : tensor<2x4x8xf32> to tensor<2x4x2x4xf32>
    %qt = dlc.transpose %q4 [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
    %kt = dlc.transpose %k4 [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
    %vt = dlc.transpose %v4 [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
    %o, %lse = dlc.attention %qt, %kt, %vt bias %mask scale 0.5 : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<2x2x4x4xf32>, tensor<2x2x4xf32>
    %ot = dlc.transpose %o [0, 2, 1, 3] : tensor<2x2x4x4xf32> -> tensor<2x4x2x4xf32>
    %om = dlc.reshape %ot : tensor<2x4x2x4xf32> to tensor<2x4x8xf32>
    %wot = dlc.transpose %wo [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
    %y = dlc.matmul %om, %wot : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    return %y : tensor<2x4x8xf32>
  }
}

// -----

// What keeps attention replicated, with the reason.
// A bias that differs between the batch's rows too has no block per head.
// REPORT: @batch_head_bias:
// REPORT-NEXT: replicated: dlc.attention at loc({{.*}}) adds a bias that differs between its heads and is not one block per head
// REPORT: @one_head:
// REPORT-NEXT: replicated: dlc.reshape at loc({{.*}}) reshapes its hidden layer other than into heads and back
// REPORT: @uneven_cut:
// REPORT-NEXT: replicated: dlc.slice at loc({{.*}}) reads its hidden layer and is not a cut of its columns into equal blocks
// A slice of the whole width reads the projection uncut: it cannot then be
// cut into blocks.
// REPORT: @whole_then_cut:
// REPORT-NEXT: replicated: dlc.slice at loc({{.*}}) cuts its columns into blocks of 8, which do not divide over 2 ranks as its other blocks do
// REPORT: @q_only:
// REPORT-NEXT: replicated: dlc.attention at loc({{.*}}) does not read Q, K and V of its hidden layer split by the same heads
module {
  dlc.global @w1 : tensor<8x16xf32> = dense<0.1> : tensor<8x16xf32>
  dlc.global @w2 : tensor<8x8xf32> = dense<0.1> : tensor<8x8xf32>
  dlc.global @w3 : tensor<8x16xf32> = dense<0.1> : tensor<8x16xf32>
  dlc.global @w4 : tensor<8x8xf32> = dense<0.1> : tensor<8x8xf32>
  dlc.global @w5 : tensor<8x16xf32> = dense<0.1> : tensor<8x16xf32>
  dlc.global @w6 : tensor<8x8xf32> = dense<0.1> : tensor<8x8xf32>
  dlc.global @w7 : tensor<8x8xf32> = dense<0.1> : tensor<8x8xf32>
  dlc.global @w8 : tensor<8x8xf32> = dense<0.1> : tensor<8x8xf32>
  dlc.global @w9 : tensor<8x16xf32> = dense<0.1> : tensor<8x16xf32>
  dlc.global @w10 : tensor<16x8xf32> = dense<0.1> : tensor<16x8xf32>
  func.func @batch_head_bias(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    %bias = dlc.constant dense<[[[[0.0]], [[1.0]]], [[[2.0]], [[3.0]]]]> : tensor<2x2x1x1xf32>
    %w = dlc.global_load @w1 : tensor<8x16xf32>
    %wo = dlc.global_load @w2 : tensor<8x8xf32>
    %h = dlc.matmul %x, %w : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
    %q = dlc.slice %h offsets [0, 0, 0] sizes [2, 4, 8] strides [1, 1, 1] : tensor<2x4x16xf32> -> tensor<2x4x8xf32>
    %k = dlc.slice %h offsets [0, 0, 8] sizes [2, 4, 8] strides [1, 1, 1] : tensor<2x4x16xf32> -> tensor<2x4x8xf32>
    %q4 = dlc.reshape %q : tensor<2x4x8xf32> to tensor<2x4x2x4xf32>
    %k4 = dlc.reshape %k : tensor<2x4x8xf32> to tensor<2x4x2x4xf32>
    %qt = dlc.transpose %q4 [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
    %kt = dlc.transpose %k4 [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
    %o, %lse = dlc.attention %qt, %kt, %kt bias %bias scale 0.5 : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x1x1xf32> -> tensor<2x2x4x4xf32>, tensor<2x2x4xf32>
    %ot = dlc.transpose %o [0, 2, 1, 3] : tensor<2x2x4x4xf32> -> tensor<2x4x2x4xf32>
    %om = dlc.reshape %ot : tensor<2x4x2x4xf32> to tensor<2x4x8xf32>
    %y = dlc.matmul %om, %wo : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    return %y : tensor<2x4x8xf32>
  }
  func.func @one_head(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %w = dlc.global_load @w3 : tensor<8x16xf32>
    %wo = dlc.global_load @w4 : tensor<8x8xf32>
    %h = dlc.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
    %q = dlc.slice %h offsets [0, 0] sizes [4, 8] strides [1, 1] : tensor<4x16xf32> -> tensor<4x8xf32>
    %k = dlc.slice %h offsets [0, 8] sizes [4, 8] strides [1, 1] : tensor<4x16xf32> -> tensor<4x8xf32>
    %q3 = dlc.reshape %q : tensor<4x8xf32> to tensor<4x1x8xf32>
    %k3 = dlc.reshape %k : tensor<4x8xf32> to tensor<4x1x8xf32>
    %qt = dlc.transpose %q3 [1, 0, 2] : tensor<4x1x8xf32> -> tensor<1x4x8xf32>
    %kt = dlc.transpose %k3 [1, 0, 2] : tensor<4x1x8xf32> -> tensor<1x4x8xf32>
    %o, %lse = dlc.attention %qt, %kt, %kt scale 0.5 : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>, tensor<1x4xf32>
    %ot = dlc.transpose %o [1, 0, 2] : tensor<1x4x8xf32> -> tensor<4x1x8xf32>
    %om = dlc.reshape %ot : tensor<4x1x8xf32> to tensor<4x8xf32>
    %y = dlc.matmul %om, %wo : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
  func.func @uneven_cut(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %w = dlc.global_load @w5 : tensor<8x16xf32>
    %wo = dlc.global_load @w6 : tensor<8x8xf32>
    %h = dlc.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
    %q = dlc.slice %h offsets [0, 2] sizes [4, 8] strides [1, 1] : tensor<4x16xf32> -> tensor<4x8xf32>
    %y = dlc.matmul %q, %wo : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
  func.func @whole_then_cut(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %w = dlc.global_load @w9 : tensor<8x16xf32>
    %wo = dlc.global_load @w10 : tensor<16x8xf32>
    %h = dlc.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
    %all = dlc.slice %h offsets [0, 0] sizes [4, 16] strides [1, 1] : tensor<4x16xf32> -> tensor<4x16xf32>
    %q = dlc.slice %h offsets [0, 0] sizes [4, 8] strides [1, 1] : tensor<4x16xf32> -> tensor<4x8xf32>
    %y = dlc.matmul %all, %wo : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
    %r = dlc.add %y, %q : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    return %r : tensor<4x8xf32>
  }
  func.func @q_only(%x: tensor<4x8xf32>, %k: tensor<2x4x4xf32>) -> tensor<4x8xf32> {
    %w = dlc.global_load @w7 : tensor<8x8xf32>
    %wo = dlc.global_load @w8 : tensor<8x8xf32>
    %q = dlc.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    %q3 = dlc.reshape %q : tensor<4x8xf32> to tensor<4x2x4xf32>
    %qt = dlc.transpose %q3 [1, 0, 2] : tensor<4x2x4xf32> -> tensor<2x4x4xf32>
    %o, %lse = dlc.attention %qt, %k, %k scale 0.5 : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>, tensor<2x4xf32>
    %ot = dlc.transpose %o [1, 0, 2] : tensor<2x4x4xf32> -> tensor<4x2x4xf32>
    %om = dlc.reshape %ot : tensor<4x2x4xf32> to tensor<4x8xf32>
    %y = dlc.matmul %om, %wo : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
}

// -----

// Separate Q, K and V projections of one input (BERT's) are one pair: one
// dlc.tp_copy of the input feeds the three column matmuls, each split by
// its output columns (Q's bias with it).
// CHECK-LABEL: func.func @separate
// CHECK: %[[X:.*]] = dlc.tp_copy %arg0 : tensor<4x8xf32>
// CHECK: dlc.matmul %[[X]], %{{.*}} : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK: dlc.add %{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
// CHECK: dlc.matmul %[[X]], %{{.*}} : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK: dlc.matmul %[[X]], %{{.*}} : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK: dlc.attention %{{.*}} : tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32> -> tensor<1x4x4xf32>, tensor<1x4xf32>
// CHECK: %[[P:.*]] = dlc.matmul %{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: dlc.tp_reduce %[[P]] : tensor<4x8xf32>
// REPORT: @separate:
// REPORT-NEXT: column-parallel by attention heads, @wq split along dimension 1, @bq along dimension 0
// REPORT-NEXT: column-parallel by attention heads, @wk split along dimension 1
// REPORT-NEXT: column-parallel by attention heads, @wv split along dimension 1
// REPORT-NEXT: row-parallel by attention heads, @wo split along dimension 0
module {
  dlc.global @wq : tensor<8x8xf32> = dense<0.1> : tensor<8x8xf32>
  dlc.global @bq : tensor<8xf32> = dense<0.1> : tensor<8xf32>
  dlc.global @wk : tensor<8x8xf32> = dense<0.1> : tensor<8x8xf32>
  dlc.global @wv : tensor<8x8xf32> = dense<0.1> : tensor<8x8xf32>
  dlc.global @wo : tensor<8x8xf32> = dense<0.1> : tensor<8x8xf32>
  func.func @separate(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %wq = dlc.global_load @wq : tensor<8x8xf32>
    %bq = dlc.global_load @bq : tensor<8xf32>
    %wk = dlc.global_load @wk : tensor<8x8xf32>
    %wv = dlc.global_load @wv : tensor<8x8xf32>
    %wo = dlc.global_load @wo : tensor<8x8xf32>
    %q = dlc.matmul %x, %wq : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    %qb = dlc.add %q, %bq : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %k = dlc.matmul %x, %wk : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    %v = dlc.matmul %x, %wv : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    %q3 = dlc.reshape %qb : tensor<4x8xf32> to tensor<4x2x4xf32>
    %k3 = dlc.reshape %k : tensor<4x8xf32> to tensor<4x2x4xf32>
    %v3 = dlc.reshape %v : tensor<4x8xf32> to tensor<4x2x4xf32>
    %qt = dlc.transpose %q3 [1, 0, 2] : tensor<4x2x4xf32> -> tensor<2x4x4xf32>
    %kt = dlc.transpose %k3 [1, 0, 2] : tensor<4x2x4xf32> -> tensor<2x4x4xf32>
    %vt = dlc.transpose %v3 [1, 0, 2] : tensor<4x2x4xf32> -> tensor<2x4x4xf32>
    %o, %lse = dlc.attention %qt, %kt, %vt scale 0.5 : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>, tensor<2x4xf32>
    %ot = dlc.transpose %o [1, 0, 2] : tensor<2x4x4xf32> -> tensor<4x2x4xf32>
    %om = dlc.reshape %ot : tensor<4x2x4xf32> to tensor<4x8xf32>
    %y = dlc.matmul %om, %wo : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
}

// -----

// A bias that differs between heads (ALiBi's slopes) is sliced by them:
// each rank reads its head's block (dlc.rank_shard among the tensor ranks
// of the bias every rank holds whole).
// CHECK-LABEL: func.func @per_head_bias
// CHECK: %[[BIAS:.*]] = dlc.constant dense<{{.*}}> : tensor<2x1x1xf32>
// CHECK: %[[BLOCK:.*]] = dlc.rank_shard ranks 2 tensor %[[BIAS]] : tensor<2x1x1xf32>
// CHECK-NEXT: %[[OWN:.*]] = dlc.reshape %[[BLOCK]] : tensor<1xf32> to tensor<1x1x1xf32>
// CHECK-NEXT: dlc.attention %{{.*}}, %{{.*}}, %{{.*}} bias %[[OWN]] scale 5.000000e-01 : tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x1x1xf32>
// REPORT: @per_head_bias:
// REPORT-NEXT: column-parallel by attention heads, @w1 split along dimension 1 in 2 blocks
module {
  dlc.global @w1 : tensor<8x16xf32> = dense<0.1> : tensor<8x16xf32>
  dlc.global @w2 : tensor<8x8xf32> = dense<0.1> : tensor<8x8xf32>
  func.func @per_head_bias(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %bias = dlc.constant dense<[[[0.0]], [[1.0]]]> : tensor<2x1x1xf32>
    %w = dlc.global_load @w1 : tensor<8x16xf32>
    %wo = dlc.global_load @w2 : tensor<8x8xf32>
    %h = dlc.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
    %q = dlc.slice %h offsets [0, 0] sizes [4, 8] strides [1, 1] : tensor<4x16xf32> -> tensor<4x8xf32>
    %k = dlc.slice %h offsets [0, 8] sizes [4, 8] strides [1, 1] : tensor<4x16xf32> -> tensor<4x8xf32>
    %q3 = dlc.reshape %q : tensor<4x8xf32> to tensor<4x2x4xf32>
    %k3 = dlc.reshape %k : tensor<4x8xf32> to tensor<4x2x4xf32>
    %qt = dlc.transpose %q3 [1, 0, 2] : tensor<4x2x4xf32> -> tensor<2x4x4xf32>
    %kt = dlc.transpose %k3 [1, 0, 2] : tensor<4x2x4xf32> -> tensor<2x4x4xf32>
    %o, %lse = dlc.attention %qt, %kt, %kt bias %bias scale 0.5 : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x1x1xf32> -> tensor<2x4x4xf32>, tensor<2x4xf32>
    %ot = dlc.transpose %o [1, 0, 2] : tensor<2x4x4xf32> -> tensor<4x2x4xf32>
    %om = dlc.reshape %ot : tensor<4x2x4xf32> to tensor<4x8xf32>
    %y = dlc.matmul %om, %wo : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
}
