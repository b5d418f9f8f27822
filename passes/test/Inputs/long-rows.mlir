// Reductions of few long rows, for split-reductions-numerics.test: a
// BatchNorm's statistics (mean and biased variance per channel of an NCHW
// batch) and a maximum and a product with the reduced dimensions dropped.
// With multiprocessors=8 each row (4 channels of 2 x 128 x 128) splits.
func.func @statistics(%x: tensor<2x4x128x128xf32>) -> (tensor<1x4x1x1xf32>, tensor<1x4x1x1xf32>, tensor<4xf32>) {
  %n = dlc.constant dense<32768.0> : tensor<f32>
  %s = dlc.reduce_sum %x axes [0, 2, 3] keep_dims : tensor<2x4x128x128xf32> -> tensor<1x4x1x1xf32>
  %mean = dlc.div %s, %n : tensor<1x4x1x1xf32>, tensor<f32> -> tensor<1x4x1x1xf32>
  %d = dlc.sub %x, %mean : tensor<2x4x128x128xf32>, tensor<1x4x1x1xf32> -> tensor<2x4x128x128xf32>
  %dd = dlc.mul %d, %d : tensor<2x4x128x128xf32>, tensor<2x4x128x128xf32> -> tensor<2x4x128x128xf32>
  %ss = dlc.reduce_sum %dd axes [0, 2, 3] keep_dims : tensor<2x4x128x128xf32> -> tensor<1x4x1x1xf32>
  %var = dlc.div %ss, %n : tensor<1x4x1x1xf32>, tensor<f32> -> tensor<1x4x1x1xf32>
  %m = dlc.reduce_max %x axes [0, 2, 3] : tensor<2x4x128x128xf32> -> tensor<4xf32>
  return %mean, %var, %m : tensor<1x4x1x1xf32>, tensor<1x4x1x1xf32>, tensor<4xf32>
}

// Strided rows: channels-last statistics (8 channels of 2 x 16 x 16) and a
// bias gradient (24 columns of 512); with multiprocessors=8 (a wave of
// 16384 threads) each splits into 64 chunks.
func.func @columns(%x: tensor<2x16x16x8xf32>, %g: tensor<512x24xf32>) -> (tensor<1x1x1x8xf32>, tensor<24xf32>) {
  %s = dlc.reduce_sum %x axes [0, 1, 2] keep_dims : tensor<2x16x16x8xf32> -> tensor<1x1x1x8xf32>
  %b = dlc.reduce_sum %g axes [0] : tensor<512x24xf32> -> tensor<24xf32>
  return %s, %b : tensor<1x1x1x8xf32>, tensor<24xf32>
}
