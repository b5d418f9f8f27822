// RUN: dlc-opt %s -split-input-file -dlc-decompose=keep-attention | FileCheck %s
// dlc-decompose=keep-attention (the CUDA pipeline) leaves the attention ops
// its fused kernels take whole, and lowers the rest as without the option.

// float32 with head sizes up to 128: both ops stay.
// CHECK-LABEL: func.func @kept
// CHECK: dlc.attention %arg0, %arg1, %arg2 scale
// CHECK: dlc.attention_grad %arg0, %arg1, %arg2
// CHECK-NOT: dlc.exp
func.func @kept(%q: tensor<2x3x128xf32>, %k: tensor<2x5x128xf32>, %v: tensor<2x5x96xf32>, %dout: tensor<2x3x96xf32>) -> (tensor<2x3x128xf32>, tensor<2x5x128xf32>, tensor<2x5x96xf32>) {
  %out, %lse = dlc.attention %q, %k, %v scale 0.125 : tensor<2x3x128xf32>, tensor<2x5x128xf32>, tensor<2x5x96xf32> -> tensor<2x3x96xf32>, tensor<2x3xf32>
  %dq, %dk, %dv = dlc.attention_grad %q, %k, %v, %out, %lse, %dout scale 0.125 : tensor<2x3x128xf32>, tensor<2x5x128xf32>, tensor<2x5x96xf32>, tensor<2x3x96xf32>, tensor<2x3xf32>, tensor<2x3x96xf32> -> tensor<2x3x128xf32>, tensor<2x5x128xf32>, tensor<2x5x96xf32>
  return %dq, %dk, %dv : tensor<2x3x128xf32>, tensor<2x5x128xf32>, tensor<2x5x96xf32>
}

// -----

// A head of 129 is too large for the kernels' tiles; float64 is not theirs.
// CHECK-LABEL: func.func @wide_head
// CHECK-NOT: dlc.attention
// CHECK: dlc.exp
// CHECK-LABEL: func.func @float64
// CHECK-NOT: dlc.attention
// CHECK: dlc.exp
func.func @wide_head(%q: tensor<3x129xf32>, %k: tensor<5x129xf32>, %v: tensor<5x2xf32>) -> tensor<3x2xf32> {
  %out, %lse = dlc.attention %q, %k, %v scale 1.0 : tensor<3x129xf32>, tensor<5x129xf32>, tensor<5x2xf32> -> tensor<3x2xf32>, tensor<3xf32>
  return %out : tensor<3x2xf32>
}
func.func @float64(%q: tensor<3x4xf64>, %k: tensor<5x4xf64>, %v: tensor<5x2xf64>) -> tensor<3x2xf64> {
  %out, %lse = dlc.attention %q, %k, %v scale 1.0 : tensor<3x4xf64>, tensor<5x4xf64>, tensor<5x2xf64> -> tensor<3x2xf64>, tensor<3xf64>
  return %out : tensor<3x2xf64>
}

// -----

// Cross-entropy is lowered either way.
// CHECK-LABEL: func.func @loss
// CHECK-NOT: dlc.cross_entropy
// CHECK: dlc.reduce_max
func.func @loss(%x: tensor<4x7xf32>, %labels: tensor<4xi64>) -> tensor<4xf32> {
  %loss, %lse = dlc.cross_entropy %x, %labels ignore_index -100 label_smoothing 0.0 : tensor<4x7xf32>, tensor<4xi64> -> tensor<4xf32>, tensor<4xf32>
  return %loss : tensor<4xf32>
}
