// Two attention blocks of 2 heads of 4 on [2, 4, 8]: GPT-2's, whose fused
// QKV projection (with a bias) is cut into Q, K and V under a causal mask,
// then BERT's, with separate Q (with a bias), K and V projections of its
// input (Q's and K's weights read directly, V's transposed as Gemm
// imports it); each projected back and added to its input.
module {
  dlc.global @wqkv : tensor<24x8xf32> = dense<0.1> : tensor<24x8xf32>
  dlc.global @bqkv : tensor<24xf32> = dense<0.0> : tensor<24xf32>
  dlc.global @wo : tensor<8x8xf32> = dense<0.1> : tensor<8x8xf32>
  dlc.global @wq : tensor<8x8xf32> = dense<0.1> : tensor<8x8xf32>
  dlc.global @bq : tensor<8xf32> = dense<0.0> : tensor<8xf32>
  dlc.global @wk : tensor<8x8xf32> = dense<0.1> : tensor<8x8xf32>
  dlc.global @wv : tensor<8x8xf32> = dense<0.1> : tensor<8x8xf32>
  dlc.global @wo2 : tensor<8x8xf32> = dense<0.1> : tensor<8x8xf32>
  func.func @forward_train(%x: tensor<2x4x8xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<2x4x8xf32> {dlc.name = "y", dlc.role = "output"}) {
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
    %p = dlc.matmul %om, %wot : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %y1 = dlc.add %x, %p : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>

    %wq = dlc.global_load @wq : tensor<8x8xf32>
    %bq = dlc.global_load @bq : tensor<8xf32>
    %wk = dlc.global_load @wk : tensor<8x8xf32>
    %wv = dlc.global_load @wv : tensor<8x8xf32>
    %wo2 = dlc.global_load @wo2 : tensor<8x8xf32>
    %q2 = dlc.matmul %y1, %wq : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %q2b = dlc.add %q2, %bq : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
    %k2 = dlc.matmul %y1, %wk : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %wvt = dlc.transpose %wv [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
    %v2 = dlc.matmul %y1, %wvt : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %q24 = dlc.reshape %q2b : tensor<2x4x8xf32> to tensor<2x4x2x4xf32>
    %k24 = dlc.reshape %k2 : tensor<2x4x8xf32> to tensor<2x4x2x4xf32>
    %v24 = dlc.reshape %v2 : tensor<2x4x8xf32> to tensor<2x4x2x4xf32>
    %q2t = dlc.transpose %q24 [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
    %k2t = dlc.transpose %k24 [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
    %v2t = dlc.transpose %v24 [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
    %o2, %lse2 = dlc.attention %q2t, %k2t, %v2t scale 0.5 : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32> -> tensor<2x2x4x4xf32>, tensor<2x2x4xf32>
    %o2t = dlc.transpose %o2 [0, 2, 1, 3] : tensor<2x2x4x4xf32> -> tensor<2x4x2x4xf32>
    %o2m = dlc.reshape %o2t : tensor<2x4x2x4xf32> to tensor<2x4x8xf32>
    %p2 = dlc.matmul %o2m, %wo2 : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %y2 = dlc.add %y1, %p2 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    return %y2 : tensor<2x4x8xf32>
  }
}
