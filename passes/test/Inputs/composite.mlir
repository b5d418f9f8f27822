// Composite ops for the numeric tests of dlc-fuse-attention and
// dlc-decompose (decompose-numerics.test): @forward is what the importer
// makes of nanoGPT's causal attention (two heads), @grad an attention and
// its gradient with a causal, position-dependent bias, @cross_entropy the
// loss and its gradient with an ignored label, a negative one and label
// smoothing.
func.func @forward(%q: tensor<2x2x5x4xf32>, %kt: tensor<2x2x4x5xf32>, %v: tensor<2x2x5x3xf32>) -> tensor<2x2x5x3xf32> {
  %s = dlc.matmul %q, %kt : tensor<2x2x5x4xf32>, tensor<2x2x4x5xf32> -> tensor<2x2x5x5xf32>
  %c = dlc.constant dense<5.000000e-01> : tensor<f32>
  %y = dlc.mul %s, %c : tensor<2x2x5x5xf32>, tensor<f32> -> tensor<2x2x5x5xf32>
  %mask = dlc.constant dense<[[[[false, true, true, true, true], [false, false, true, true, true], [false, false, false, true, true], [false, false, false, false, true], [false, false, false, false, false]]]]> : tensor<1x1x5x5xi1>
  %inf = dlc.constant dense<0xFF800000> : tensor<f32>
  %x = dlc.select %mask, %inf, %y : tensor<1x1x5x5xi1>, tensor<f32>, tensor<2x2x5x5xf32> -> tensor<2x2x5x5xf32>
  %m = dlc.reduce_max %x axes [3] keep_dims : tensor<2x2x5x5xf32> -> tensor<2x2x5x1xf32>
  %d = dlc.sub %x, %m : tensor<2x2x5x5xf32>, tensor<2x2x5x1xf32> -> tensor<2x2x5x5xf32>
  %e = dlc.exp %d : tensor<2x2x5x5xf32>
  %z = dlc.reduce_sum %e axes [3] keep_dims : tensor<2x2x5x5xf32> -> tensor<2x2x5x1xf32>
  %p = dlc.div %e, %z : tensor<2x2x5x5xf32>, tensor<2x2x5x1xf32> -> tensor<2x2x5x5xf32>
  %o = dlc.matmul %p, %v : tensor<2x2x5x5xf32>, tensor<2x2x5x3xf32> -> tensor<2x2x5x3xf32>
  return %o : tensor<2x2x5x3xf32>
}

func.func @grad(%q: tensor<3x4x6xf32>, %k: tensor<3x4x6xf32>, %v: tensor<3x4x2xf32>, %dout: tensor<3x4x2xf32>) -> (tensor<3x4x2xf32>, tensor<3x4xf32>, tensor<3x4x6xf32>, tensor<3x4x6xf32>, tensor<3x4x2xf32>) {
  %b = dlc.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [-0.5, 0.0, 0xFF800000, 0xFF800000], [-1.0, -0.5, 0.0, 0xFF800000], [-1.5, -1.0, -0.5, 0.0]]> : tensor<4x4xf32>
  %out, %lse = dlc.attention %q, %k, %v bias %b scale 0.40824829046386307 : tensor<3x4x6xf32>, tensor<3x4x6xf32>, tensor<3x4x2xf32>, tensor<4x4xf32> -> tensor<3x4x2xf32>, tensor<3x4xf32>
  %dq, %dk, %dv = dlc.attention_grad %q, %k, %v, %out, %lse, %dout bias %b scale 0.40824829046386307 : tensor<3x4x6xf32>, tensor<3x4x6xf32>, tensor<3x4x2xf32>, tensor<3x4x2xf32>, tensor<3x4xf32>, tensor<3x4x2xf32>, tensor<4x4xf32> -> tensor<3x4x6xf32>, tensor<3x4x6xf32>, tensor<3x4x2xf32>
  return %out, %lse, %dq, %dk, %dv : tensor<3x4x2xf32>, tensor<3x4xf32>, tensor<3x4x6xf32>, tensor<3x4x6xf32>, tensor<3x4x2xf32>
}

func.func @cross_entropy(%x: tensor<2x3x6xf32>, %g: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3x6xf32>) {
  %l = dlc.constant dense<[[0, 5, -100], [2, -1, 3]]> : tensor<2x3xi64>
  %loss, %lse = dlc.cross_entropy %x, %l ignore_index -100 label_smoothing 0.2 : tensor<2x3x6xf32>, tensor<2x3xi64> -> tensor<2x3xf32>, tensor<2x3xf32>
  %d = dlc.cross_entropy_grad %x, %l, %lse, %g ignore_index -100 label_smoothing 0.2 : tensor<2x3x6xf32>, tensor<2x3xi64>, tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3x6xf32>
  return %loss, %lse, %d : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3x6xf32>
}
