// RUN: dlc-opt %s -split-input-file -dlc-augment='function=forward_train transforms=hflip,crop:2,rotate:10,normalize:0.5,0.4/0.2,0.3' | FileCheck %s

// The image argument is replaced by its augmentation at the entry; the
// seed global is declared, loaded first and advanced before the return;
// each draw takes a stream of its own from 2^30; arguments that are no
// images and other functions are left as they are.
// CHECK: dlc.global @dlc.rng_seed : tensor<i64> = dense<0> : tensor<i64>
// CHECK-LABEL: func.func @forward_train
// CHECK-NEXT: %[[SEED:.*]] = dlc.global_load @dlc.rng_seed
// hflip: the mirror, chosen per sample.
// CHECK-DAG: %[[MIRROR:.*]] = dlc.slice %arg0 offsets [0, 0, 0, 4] sizes [2, 2, 6, 5] strides [1, 1, 1, -1]
// CHECK-DAG: %[[U0:.*]] = dlc.random_uniform %[[SEED]] {stream = 1073741824 : i64} : tensor<i64> -> tensor<2x1x1x1xf32>
// CHECK: %[[FLIP:.*]] = dlc.compare lt, %[[U0]]
// CHECK: %[[FLIPPED:.*]] = dlc.select %[[FLIP]], %[[MIRROR]], %arg0
// crop:2: zero padding, then a window per sample.
// CHECK: %[[PADDED:.*]] = dlc.pad %[[FLIPPED]] low [0, 0, 2, 2] high [0, 0, 2, 2] mode constant : tensor<2x2x6x5xf32> -> tensor<2x2x10x9xf32>
// CHECK-DAG: dlc.random_uniform %[[SEED]] {stream = 1073741825 : i64}
// CHECK-DAG: dlc.random_uniform %[[SEED]] {stream = 1073741826 : i64}
// CHECK: %[[ROWS:.*]] = dlc.gather_elements %[[PADDED]][%{{.*}}] {axis = 2 : i64} : tensor<2x2x10x9xf32>, tensor<2x2x6x9xi64> -> tensor<2x2x6x9xf32>
// CHECK: %[[CROPPED:.*]] = dlc.gather_elements %[[ROWS]][%{{.*}}] {axis = 3 : i64} : tensor<2x2x6x9xf32>, tensor<2x2x6x5xi64> -> tensor<2x2x6x5xf32>
// rotate:10: an angle per sample, four bilinear neighbours.
// CHECK: dlc.random_uniform %[[SEED]] {stream = 1073741827 : i64}
// CHECK: dlc.cos
// CHECK: dlc.sin
// CHECK: %[[FLAT:.*]] = dlc.reshape %[[CROPPED]] : tensor<2x2x6x5xf32> to tensor<2x2x30xf32>
// CHECK-COUNT-4: dlc.gather_elements %[[FLAT]]
// normalize: per channel.
// CHECK: dlc.constant dense<[{{\[}}{{\[}}[5.000000e-01]], {{\[}}[4.000000e-01]]]]> : tensor<1x2x1x1xf32>
// CHECK: %[[AUGMENTED:.*]] = dlc.div
// CHECK: dlc.matmul %[[AUGMENTED]]
// CHECK: dlc.add %{{.*}}, %arg1
// CHECK: dlc.global_store @dlc.rng_seed
// CHECK-LABEL: func.func @forward(
// CHECK-NOT: dlc.random_uniform
// CHECK: dlc.matmul %arg0
func.func @forward_train(%x: tensor<2x2x6x5xf32>, %bias: tensor<6x5xf32>) -> tensor<2x2x6x5xf32> {
  %w = dlc.constant dense<1.0> : tensor<5x5xf32>
  %y = dlc.matmul %x, %w : tensor<2x2x6x5xf32>, tensor<5x5xf32> -> tensor<2x2x6x5xf32>
  %z = dlc.add %y, %bias : tensor<2x2x6x5xf32>, tensor<6x5xf32> -> tensor<2x2x6x5xf32>
  return %z : tensor<2x2x6x5xf32>
}
func.func @forward(%x: tensor<2x2x6x5xf32>) -> tensor<2x2x6x5xf32> {
  %w = dlc.constant dense<1.0> : tensor<5x5xf32>
  %y = dlc.matmul %x, %w : tensor<2x2x6x5xf32>, tensor<5x5xf32> -> tensor<2x2x6x5xf32>
  return %y : tensor<2x2x6x5xf32>
}

// -----

// A function with dropout already draws from the seed: augmentation uses
// that load (moved to the entry) and adds no second advance.
// CHECK: dlc.global @dlc.rng_seed
// CHECK-LABEL: func.func @forward_train
// CHECK-NEXT: %[[SEED:.*]] = dlc.global_load @dlc.rng_seed
// CHECK: dlc.random_uniform %[[SEED]]
// CHECK: dlc.dropout %{{.*}}, %[[SEED]]
// CHECK-COUNT-1: dlc.global_store @dlc.rng_seed
// CHECK-NOT: dlc.global_store
dlc.global @dlc.rng_seed : tensor<i64> = dense<0> : tensor<i64>
func.func @forward_train(%x: tensor<1x2x6x5xf32>) -> tensor<1x2x6x5xf32> {
  %e = dlc.exp %x : tensor<1x2x6x5xf32>
  %seed = dlc.global_load @dlc.rng_seed : tensor<i64>
  %d, %m = dlc.dropout %e, %seed {ratio = 0.5 : f64, stream = 0 : i64} : tensor<1x2x6x5xf32>, tensor<i64> -> tensor<1x2x6x5xi1>
  %one = dlc.constant dense<1> : tensor<i64>
  %next = dlc.add %seed, %one : tensor<i64>, tensor<i64> -> tensor<i64>
  dlc.global_store @dlc.rng_seed, %next : tensor<i64>
  return %d : tensor<1x2x6x5xf32>
}

// -----

// Two images (an image and its mask) share their draws: the same streams;
// a bfloat16 image is augmented in float32 and rounded back.
// CHECK-LABEL: func.func @forward_train
// CHECK: %[[IMAGE:.*]] = dlc.cast %arg0 : tensor<2x2x4x4xbf16> to tensor<2x2x4x4xf32>
// CHECK: dlc.random_uniform %{{.*}} {stream = 1073741824 : i64}
// CHECK: dlc.cast %{{.*}} : tensor<2x2x4x4xf32> to tensor<2x2x4x4xbf16>
// CHECK: dlc.random_uniform %{{.*}} {stream = 1073741824 : i64}
func.func @forward_train(%x: tensor<2x2x4x4xbf16>, %mask: tensor<2x2x4x4xf32>) -> (tensor<2x2x4x4xbf16>, tensor<2x2x4x4xf32>) {
  return %x, %mask : tensor<2x2x4x4xbf16>, tensor<2x2x4x4xf32>
}
