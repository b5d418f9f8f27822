// RUN: dlc-opt %s -split-input-file -dlc-split-reductions | FileCheck %s
// dlc-split-reductions (sized for 132 multiprocessors by default) splits
// reductions whose rows are too few to fill the GPU into a partial per
// chunk and a reduction of the partials; it leaves the rest alone.

// ResNet-50's stem BatchNorm statistics: 64 channels of 64 x 112 x 112.
// Two blocks a multiprocessor want 5 chunks a channel; 8 is the smallest
// divisor of the batch (the outermost reduced axis) from 5 to 10.
// CHECK-LABEL: func.func @stem_statistics
// CHECK: %[[X:.*]] = dlc.reshape %arg0 : tensor<64x64x112x112xf32> to tensor<8x8x64x112x112xf32>
// CHECK: %[[P:.*]] = dlc.reduce_sum %[[X]] axes [1, 3, 4] keep_dims : tensor<8x8x64x112x112xf32> -> tensor<8x1x64x1x1xf32>
// CHECK: %[[S:.*]] = dlc.reduce_sum %[[P]] axes [0] : tensor<8x1x64x1x1xf32> -> tensor<1x64x1x1xf32>
// CHECK: return %[[S]]
func.func @stem_statistics(%x: tensor<64x64x112x112xf32>) -> tensor<1x64x1x1xf32> {
  %s = dlc.reduce_sum %x axes [0, 2, 3] keep_dims : tensor<64x64x112x112xf32> -> tensor<1x64x1x1xf32>
  return %s : tensor<1x64x1x1xf32>
}

// -----

// Without kept dimensions the chunk axis moves left past the reduced axes
// before it. A batch of 3 has no divisor from 5 to 10, so the next run of
// reduced axes (224 x 224, merged) is split into 7 x 7168. Maxima and
// products split the same way.
// CHECK-LABEL: func.func @dropped_dims
// CHECK: %[[X:.*]] = dlc.reshape %arg0 : tensor<3x64x224x224xf32> to tensor<3x64x7x7168xf32>
// CHECK: %[[P:.*]] = dlc.reduce_max %[[X]] axes [0, 3] : tensor<3x64x7x7168xf32> -> tensor<64x7xf32>
// CHECK: dlc.reduce_max %[[P]] axes [1] : tensor<64x7xf32> -> tensor<64xf32>
// CHECK: dlc.reduce_prod %{{.*}} axes [1] : tensor<64x7xf32> -> tensor<64xf32>
func.func @dropped_dims(%x: tensor<3x64x224x224xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %m = dlc.reduce_max %x axes [0, 2, 3] : tensor<3x64x224x224xf32> -> tensor<64xf32>
  %p = dlc.reduce_prod %x axes [0, 2, 3] : tensor<3x64x224x224xf32> -> tensor<64xf32>
  return %m, %p : tensor<64xf32>, tensor<64xf32>
}

// -----

// Left alone: rows enough to fill the chip (GPT-2's loss), rows short of a
// block, and rows whose reduced axes have no divisor near the chunks
// asked for (131 and 8009 are prime; 64 chunks are asked for).
// CHECK-LABEL: func.func @unsplit
// CHECK-NOT: dlc.reshape
// CHECK: dlc.reduce_max %arg0 axes [1]
// CHECK: dlc.reduce_sum %arg1 axes [0, 1]
// CHECK: dlc.reduce_sum %arg2 axes [0, 1]
func.func @unsplit(%logits: tensor<8192x50304xf32>, %small: tensor<4x100xf32>, %prime: tensor<131x8009xf32>) -> (tensor<8192xf32>, tensor<f32>, tensor<f32>) {
  %m = dlc.reduce_max %logits axes [1] : tensor<8192x50304xf32> -> tensor<8192xf32>
  %s = dlc.reduce_sum %small axes [0, 1] : tensor<4x100xf32> -> tensor<f32>
  %p = dlc.reduce_sum %prime axes [0, 1] : tensor<131x8009xf32> -> tensor<f32>
  return %m, %s, %p : tensor<8192xf32>, tensor<f32>, tensor<f32>
}

// -----

// Strided rows: channels-last BatchNorm statistics (256 channels of
// 64 x 56 x 56, the reduced axes merged) and a bias gradient (768 columns
// of 8192 tokens) split into chunks enough for a wave of threads, 1568 of
// 200704 and 512 of 8192; kept dimensions come back by a reshape.
// CHECK-LABEL: func.func @strided
// CHECK: %[[X:.*]] = dlc.reshape %arg0 : tensor<64x56x56x256xf32> to tensor<1568x128x256xf32>
// CHECK: %[[P:.*]] = dlc.reduce_sum %[[X]] axes [1] keep_dims : tensor<1568x128x256xf32> -> tensor<1568x1x256xf32>
// CHECK: %[[S:.*]] = dlc.reduce_sum %[[P]] axes [0] : tensor<1568x1x256xf32> -> tensor<1x256xf32>
// CHECK: dlc.reshape %[[S]] : tensor<1x256xf32> to tensor<1x1x1x256xf32>
// CHECK: %[[G:.*]] = dlc.reshape %arg1 : tensor<8192x768xf32> to tensor<512x16x768xf32>
// CHECK: %[[Q:.*]] = dlc.reduce_sum %[[G]] axes [1] : tensor<512x16x768xf32> -> tensor<512x768xf32>
// CHECK: dlc.reduce_sum %[[Q]] axes [0] : tensor<512x768xf32> -> tensor<768xf32>
func.func @strided(%x: tensor<64x56x56x256xf32>, %g: tensor<8192x768xf32>) -> (tensor<1x1x1x256xf32>, tensor<768xf32>) {
  %s = dlc.reduce_sum %x axes [0, 1, 2] keep_dims : tensor<64x56x56x256xf32> -> tensor<1x1x1x256xf32>
  %b = dlc.reduce_sum %g axes [0] : tensor<8192x768xf32> -> tensor<768xf32>
  return %s, %b : tensor<1x1x1x256xf32>, tensor<768xf32>
}
