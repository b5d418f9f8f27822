// Convolutions and the work around them, for channels-last.mlir and
// channels-last-numerics.test: a conv-BatchNorm-ReLU-max-pool stage, a
// grouped convolution with a residual add, global average pooling into a
// matmul, the stage's gradients (through the max pool) with an SGD update
// of the filter, and a 1-D convolution into a sum pool.
func.func @stage(%x: tensor<2x3x6x6xf32>, %w: tensor<4x3x3x3xf32>,
                 %gamma: tensor<4xf32>, %w2: tensor<4x2x3x3xf32>,
                 %fc: tensor<4x5xf32>, %dy: tensor<2x4x3x3xf32>,
                 %x1: tensor<2x3x8xf32>, %w1: tensor<4x3x3xf32>)
    -> (tensor<2x5xf32>, tensor<4x3x3x3xf32>, tensor<2x4x3xf32>, tensor<1x4x1x1xf32>) {
  %y = dlc.conv %x, %w stride [1, 1] pad_low [1, 1] pad_high [1, 1]
      dilation [1, 1] groups 1
      : tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  %n = dlc.constant dense<72.0> : tensor<f32>
  %s = dlc.reduce_sum %y axes [0, 2, 3] keep_dims : tensor<2x4x6x6xf32> -> tensor<1x4x1x1xf32>
  %mean = dlc.div %s, %n : tensor<1x4x1x1xf32>, tensor<f32> -> tensor<1x4x1x1xf32>
  %d = dlc.sub %y, %mean : tensor<2x4x6x6xf32>, tensor<1x4x1x1xf32> -> tensor<2x4x6x6xf32>
  %dd = dlc.mul %d, %d : tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32> -> tensor<2x4x6x6xf32>
  %ss = dlc.reduce_sum %dd axes [0, 2, 3] keep_dims : tensor<2x4x6x6xf32> -> tensor<1x4x1x1xf32>
  %var = dlc.div %ss, %n : tensor<1x4x1x1xf32>, tensor<f32> -> tensor<1x4x1x1xf32>
  %eps = dlc.constant dense<1.0e-5> : tensor<f32>
  %ve = dlc.add %var, %eps : tensor<1x4x1x1xf32>, tensor<f32> -> tensor<1x4x1x1xf32>
  %inv = dlc.rsqrt %ve : tensor<1x4x1x1xf32>
  %norm = dlc.mul %d, %inv : tensor<2x4x6x6xf32>, tensor<1x4x1x1xf32> -> tensor<2x4x6x6xf32>
  %g = dlc.reshape %gamma : tensor<4xf32> to tensor<4x1x1xf32>
  %scaled = dlc.mul %norm, %g : tensor<2x4x6x6xf32>, tensor<4x1x1xf32> -> tensor<2x4x6x6xf32>
  %zero = dlc.constant dense<0.0> : tensor<f32>
  %relu = dlc.max %scaled, %zero : tensor<2x4x6x6xf32>, tensor<f32> -> tensor<2x4x6x6xf32>
  %p = dlc.max_pool %relu window [2, 2] stride [2, 2] pad_low [0, 0]
      pad_high [0, 0] dilation [1, 1] : tensor<2x4x6x6xf32> -> tensor<2x4x3x3xf32>
  %y2 = dlc.conv %p, %w2 stride [1, 1] pad_low [1, 1] pad_high [1, 1]
      dilation [1, 1] groups 2
      : tensor<2x4x3x3xf32>, tensor<4x2x3x3xf32> -> tensor<2x4x3x3xf32>
  %r = dlc.add %y2, %p : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  %avg = dlc.reduce_sum %r axes [2, 3] : tensor<2x4x3x3xf32> -> tensor<2x4xf32>
  %logits = dlc.matmul %avg, %fc : tensor<2x4xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  // Backward through the second convolution, the pool and the first.
  %dp = dlc.conv_grad_input %dy, %w2 stride [1, 1] pad_low [1, 1]
      pad_high [1, 1] dilation [1, 1] groups 2
      : tensor<2x4x3x3xf32>, tensor<4x2x3x3xf32> -> tensor<2x4x3x3xf32>
  %dsum = dlc.add %dp, %dy : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  %drelu = dlc.max_pool_grad %relu, %dsum window [2, 2] stride [2, 2]
      pad_low [0, 0] pad_high [0, 0] dilation [1, 1]
      : tensor<2x4x6x6xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x6x6xf32>
  %dw = dlc.conv_grad_filter %x, %drelu stride [1, 1] pad_low [1, 1]
      pad_high [1, 1] dilation [1, 1] groups 1
      : tensor<2x3x6x6xf32>, tensor<2x4x6x6xf32> -> tensor<4x3x3x3xf32>
  %lr = dlc.constant dense<0.1> : tensor<f32>
  %step = dlc.mul %dw, %lr : tensor<4x3x3x3xf32>, tensor<f32> -> tensor<4x3x3x3xf32>
  %wnew = dlc.sub %w, %step : tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32> -> tensor<4x3x3x3xf32>
  // A 1-D convolution into a sum pool.
  %z = dlc.conv %x1, %w1 stride [1] pad_low [0] pad_high [0] dilation [1]
      groups 1
      : tensor<2x3x8xf32>, tensor<4x3x3xf32> -> tensor<2x4x6xf32>
  %zp = dlc.sum_pool %z window [2] stride [2] pad_low [0] pad_high [0]
      dilation [1] : tensor<2x4x6xf32> -> tensor<2x4x3xf32>
  return %logits, %wnew, %zp, %mean : tensor<2x5xf32>, tensor<4x3x3x3xf32>, tensor<2x4x3xf32>, tensor<1x4x1x1xf32>
}
