// A small language-model-like loss for mixed-precision.mlir and
// mixed-precision-numerics.test: an embedding whose table is tied to the
// output projection (a parameter used twice), a Linear with a bias, a
// tanh, a LayerNorm (statistics, then a scale), the tied projection and a
// softmax cross-entropy written out as the importer decomposes it.
func.func @loss(%emb: tensor<16x8xf32> {dlc.name = "emb", dlc.role = "param"},
                %w: tensor<8x8xf32> {dlc.name = "fc.weight", dlc.role = "param"},
                %b: tensor<8xf32> {dlc.name = "fc.bias", dlc.role = "param"},
                %gamma: tensor<8xf32> {dlc.name = "ln.weight", dlc.role = "param"},
                %ids: tensor<4xi64> {dlc.name = "ids", dlc.role = "input"},
                %onehot: tensor<4x16xf32> {dlc.name = "labels", dlc.role = "input"})
    -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}) {
  %x = dlc.gather %emb[%ids] {axis = 0 : i64} : tensor<16x8xf32>, tensor<4xi64> -> tensor<4x8xf32>
  %h = dlc.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %hb = dlc.add %h, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %t = dlc.tanh %hb : tensor<4x8xf32>
  %r = dlc.add %t, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %n = dlc.constant dense<8.0> : tensor<f32>
  %s = dlc.reduce_sum %r axes [1] keep_dims : tensor<4x8xf32> -> tensor<4x1xf32>
  %mean = dlc.div %s, %n : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %d = dlc.sub %r, %mean : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %dd = dlc.mul %d, %d : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %ss = dlc.reduce_sum %dd axes [1] keep_dims : tensor<4x8xf32> -> tensor<4x1xf32>
  %var = dlc.div %ss, %n : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %eps = dlc.constant dense<1.0e-5> : tensor<f32>
  %ve = dlc.add %var, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %inv = dlc.rsqrt %ve : tensor<4x1xf32>
  %norm = dlc.mul %d, %inv : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %y = dlc.mul %norm, %gamma : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %embT = dlc.transpose %emb [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %logits = dlc.matmul %y, %embT : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %m = dlc.reduce_max %logits axes [1] keep_dims : tensor<4x16xf32> -> tensor<4x1xf32>
  %z = dlc.sub %logits, %m : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  %e = dlc.exp %z : tensor<4x16xf32>
  %se = dlc.reduce_sum %e axes [1] keep_dims : tensor<4x16xf32> -> tensor<4x1xf32>
  %lse = dlc.log %se : tensor<4x1xf32>
  %logp = dlc.sub %z, %lse : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  %picked = dlc.mul %logp, %onehot : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %total = dlc.reduce_sum %picked axes [0, 1] : tensor<4x16xf32> -> tensor<f32>
  %count = dlc.constant dense<-4.0> : tensor<f32>
  %loss = dlc.div %total, %count : tensor<f32>, tensor<f32> -> tensor<f32>
  return %loss : tensor<f32>
}
