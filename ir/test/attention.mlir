// RUN: dlc-opt %s -split-input-file | dlc-opt -split-input-file | FileCheck %s
// dlc.attention and dlc.attention_grad parse, verify and print back, with
// and without a bias; the bias broadcasts to the scores.

// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x12x8xf32>, %v: tensor<2x4x12x6xf32>, %b: tensor<1x1x16x12xf32>) -> (tensor<2x4x16x6xf32>, tensor<2x4x16xf32>, tensor<2x4x16x6xf32>) {
  // CHECK: dlc.attention %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} scale 0.35355339059327373 : tensor<2x4x16x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x6xf32>, tensor<1x1x16x12xf32> -> tensor<2x4x16x6xf32>, tensor<2x4x16xf32>
  %out, %lse = dlc.attention %q, %k, %v bias %b scale 0.35355339059327373 : tensor<2x4x16x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x6xf32>, tensor<1x1x16x12xf32> -> tensor<2x4x16x6xf32>, tensor<2x4x16xf32>
  // CHECK: dlc.attention %{{.*}}, %{{.*}}, %{{.*}} scale 1.000000e+00 : tensor<2x4x16x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x6xf32> -> tensor<2x4x16x6xf32>, tensor<2x4x16xf32>
  %out2, %lse2 = dlc.attention %q, %k, %v scale 1.0 : tensor<2x4x16x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x6xf32> -> tensor<2x4x16x6xf32>, tensor<2x4x16xf32>
  return %out, %lse, %out2 : tensor<2x4x16x6xf32>, tensor<2x4x16xf32>, tensor<2x4x16x6xf32>
}

// -----

// CHECK-LABEL: func.func @attention_grad
func.func @attention_grad(%q: tensor<3x5x8xf64>, %k: tensor<3x7x8xf64>, %v: tensor<3x7x2xf64>, %out: tensor<3x5x2xf64>, %lse: tensor<3x5xf64>, %dout: tensor<3x5x2xf64>, %b: tensor<7xf64>) -> (tensor<3x5x8xf64>, tensor<3x7x8xf64>, tensor<3x7x2xf64>) {
  // CHECK: dlc.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} scale 5.000000e-01 : tensor<3x5x8xf64>, tensor<3x7x8xf64>, tensor<3x7x2xf64>, tensor<3x5x2xf64>, tensor<3x5xf64>, tensor<3x5x2xf64>, tensor<7xf64> -> tensor<3x5x8xf64>, tensor<3x7x8xf64>, tensor<3x7x2xf64>
  %dq, %dk, %dv = dlc.attention_grad %q, %k, %v, %out, %lse, %dout bias %b scale 0.5 : tensor<3x5x8xf64>, tensor<3x7x8xf64>, tensor<3x7x2xf64>, tensor<3x5x2xf64>, tensor<3x5xf64>, tensor<3x5x2xf64>, tensor<7xf64> -> tensor<3x5x8xf64>, tensor<3x7x8xf64>, tensor<3x7x2xf64>
  return %dq, %dk, %dv : tensor<3x5x8xf64>, tensor<3x7x8xf64>, tensor<3x7x2xf64>
}
