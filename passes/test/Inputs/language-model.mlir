// A language model of 16 tokens and 8 classes over [4, 3] positions: a
// token embedding (@emb, rows by the ids) plus a position embedding (@pos,
// rows by constant ids), a replicated projection of the 6 features (a
// normalization, not pointwise, follows it, so it pairs with nothing) and
// a class head with a bias, whose 8 output columns @forward_train and
// @forward return (their bodies the same).
module {
  dlc.global @emb : tensor<16x6xf32> = dense<0.1> : tensor<16x6xf32>
  dlc.global @pos : tensor<3x6xf32> = dense<0.1> : tensor<3x6xf32>
  dlc.global @w0 : tensor<8x6xf32> = dense<0.1> : tensor<8x6xf32>
  dlc.global @wh : tensor<8x8xf32> = dense<0.1> : tensor<8x8xf32>
  dlc.global @bh : tensor<8xf32> = dense<0.0> : tensor<8xf32>
  func.func @forward_train(%ids: tensor<4x3xi64> {dlc.name = "ids", dlc.role = "input"}) -> (tensor<4x3x8xf32> {dlc.name = "logits", dlc.role = "output"}) {
    %emb = dlc.global_load @emb : tensor<16x6xf32>
    %tok = dlc.gather %emb[%ids] {axis = 0 : i64} : tensor<16x6xf32>, tensor<4x3xi64> -> tensor<4x3x6xf32>
    %pos = dlc.global_load @pos : tensor<3x6xf32>
    %at = dlc.constant dense<[0, 1, 2]> : tensor<3xi64>
    %p = dlc.gather %pos[%at] {axis = 0 : i64} : tensor<3x6xf32>, tensor<3xi64> -> tensor<3x6xf32>
    %x = dlc.add %tok, %p : tensor<4x3x6xf32>, tensor<3x6xf32> -> tensor<4x3x6xf32>
    %w0 = dlc.global_load @w0 : tensor<8x6xf32>
    %w0t = dlc.transpose %w0 [1, 0] : tensor<8x6xf32> -> tensor<6x8xf32>
    %h = dlc.matmul %x, %w0t : tensor<4x3x6xf32>, tensor<6x8xf32> -> tensor<4x3x8xf32>
    %t = dlc.tanh %h : tensor<4x3x8xf32>
    %sq = dlc.mul %t, %t : tensor<4x3x8xf32>, tensor<4x3x8xf32> -> tensor<4x3x8xf32>
    %n = dlc.reduce_sum %sq axes [2] keep_dims : tensor<4x3x8xf32> -> tensor<4x3x1xf32>
    %one = dlc.constant dense<1.0> : tensor<f32>
    %d = dlc.add %n, %one : tensor<4x3x1xf32>, tensor<f32> -> tensor<4x3x1xf32>
    %r = dlc.rsqrt %d : tensor<4x3x1xf32>
    %u = dlc.mul %t, %r : tensor<4x3x8xf32>, tensor<4x3x1xf32> -> tensor<4x3x8xf32>
    %wh = dlc.global_load @wh : tensor<8x8xf32>
    %wht = dlc.transpose %wh [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
    %l = dlc.matmul %u, %wht : tensor<4x3x8xf32>, tensor<8x8xf32> -> tensor<4x3x8xf32>
    %bh = dlc.global_load @bh : tensor<8xf32>
    %lb = dlc.add %l, %bh : tensor<4x3x8xf32>, tensor<8xf32> -> tensor<4x3x8xf32>
    return %lb : tensor<4x3x8xf32>
  }
  func.func @forward(%ids: tensor<4x3xi64> {dlc.name = "ids", dlc.role = "input"}) -> (tensor<4x3x8xf32> {dlc.name = "logits", dlc.role = "output"}) {
    %emb = dlc.global_load @emb : tensor<16x6xf32>
    %tok = dlc.gather %emb[%ids] {axis = 0 : i64} : tensor<16x6xf32>, tensor<4x3xi64> -> tensor<4x3x6xf32>
    %pos = dlc.global_load @pos : tensor<3x6xf32>
    %at = dlc.constant dense<[0, 1, 2]> : tensor<3xi64>
    %p = dlc.gather %pos[%at] {axis = 0 : i64} : tensor<3x6xf32>, tensor<3xi64> -> tensor<3x6xf32>
    %x = dlc.add %tok, %p : tensor<4x3x6xf32>, tensor<3x6xf32> -> tensor<4x3x6xf32>
    %w0 = dlc.global_load @w0 : tensor<8x6xf32>
    %w0t = dlc.transpose %w0 [1, 0] : tensor<8x6xf32> -> tensor<6x8xf32>
    %h = dlc.matmul %x, %w0t : tensor<4x3x6xf32>, tensor<6x8xf32> -> tensor<4x3x8xf32>
    %t = dlc.tanh %h : tensor<4x3x8xf32>
    %sq = dlc.mul %t, %t : tensor<4x3x8xf32>, tensor<4x3x8xf32> -> tensor<4x3x8xf32>
    %n = dlc.reduce_sum %sq axes [2] keep_dims : tensor<4x3x8xf32> -> tensor<4x3x1xf32>
    %one = dlc.constant dense<1.0> : tensor<f32>
    %d = dlc.add %n, %one : tensor<4x3x1xf32>, tensor<f32> -> tensor<4x3x1xf32>
    %r = dlc.rsqrt %d : tensor<4x3x1xf32>
    %u = dlc.mul %t, %r : tensor<4x3x8xf32>, tensor<4x3x1xf32> -> tensor<4x3x8xf32>
    %wh = dlc.global_load @wh : tensor<8x8xf32>
    %wht = dlc.transpose %wh [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
    %l = dlc.matmul %u, %wht : tensor<4x3x8xf32>, tensor<8x8xf32> -> tensor<4x3x8xf32>
    %bh = dlc.global_load @bh : tensor<8xf32>
    %lb = dlc.add %l, %bh : tensor<4x3x8xf32>, tensor<8xf32> -> tensor<4x3x8xf32>
    return %lb : tensor<4x3x8xf32>
  }
}
