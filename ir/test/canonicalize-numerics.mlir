// Canonicalization must not change what a program computes: the evaluator
// runs this function before and after -canonicalize on the same seeded
// random inputs, and the outputs must agree bit for bit (folding runs the
// same evaluator, so even rounding must match: rtol 0).
// RUN: dlc-opt %s -canonicalize -o %t.after.mlir
// RUN: dlc-run --interpret %s --random-inputs 7 --outputs %t.before.npz
// RUN: dlc-run --interpret %t.after.mlir --random-inputs 7 --outputs %t.after.npz
// RUN: %reference_python %S/../../tests/tools/compare_npz.py %t.after.npz %t.before.npz | FileCheck %s
// RUN: FileCheck %s --check-prefix=AFTER --input-file=%t.after.mlir
// AFTER-LABEL: func.func @transposed_product
// AFTER: dlc.matmul %{{.*}}, %arg0 : tensor<5x6xf32>, tensor<6x4xf32> -> tensor<5x4xf32>
// RUN: dlc-run --interpret %s --function transposed_product --random-inputs 8 --outputs %t.product.before.npz
// RUN: dlc-run --interpret %t.after.mlir --function transposed_product --random-inputs 8 --outputs %t.product.after.npz
// RUN: %reference_python %S/../../tests/tools/compare_npz.py %t.product.after.npz %t.product.before.npz | FileCheck %s
// CHECK: {{^}}RESULT: match{{$}}

func.func @forward(%x: tensor<4x3xf32>, %ids: tensor<2xi64>) -> (tensor<3x4xf32>, tensor<2x3xf32>) {
  %shape = dlc.constant dense<[3, 4]> : tensor<2xi64>
  %half = dlc.constant dense<0.5> : tensor<f32>
  %two = dlc.constant dense<2.0> : tensor<f32>
  %one = dlc.mul %half, %two : tensor<f32>, tensor<f32> -> tensor<f32>
  %0 = dlc.transpose %x [1, 0] : tensor<4x3xf32> -> tensor<3x4xf32>
  %1 = dlc.reshape %0 : tensor<3x4xf32> to tensor<12xf32>
  %2 = dlc.reshape %1 : tensor<12xf32> to tensor<3x4xf32>
  %3 = dlc.mul %2, %one : tensor<3x4xf32>, tensor<f32> -> tensor<3x4xf32>
  %4 = dlc.cast %3 : tensor<3x4xf32> to tensor<3x4xf32>
  %negzero = dlc.constant dense<-0.0> : tensor<f32>
  %g = dlc.gather %x[%ids] {axis = 0 : i64} : tensor<4x3xf32>, tensor<2xi64> -> tensor<2x3xf32>
  %5 = dlc.add %g, %negzero : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  return %4, %5 : tensor<3x4xf32>, tensor<2x3xf32>
}

// A transposed product becomes the product of the transposed operands:
// the same products summed in the same order.
func.func @transposed_product(%x: tensor<6x4xf32>, %g: tensor<6x5xf32>) -> tensor<5x4xf32> {
  %xt = dlc.transpose %x [1, 0] : tensor<6x4xf32> -> tensor<4x6xf32>
  %w = dlc.matmul %xt, %g : tensor<4x6xf32>, tensor<6x5xf32> -> tensor<4x5xf32>
  %wt = dlc.transpose %w [1, 0] : tensor<4x5xf32> -> tensor<5x4xf32>
  return %wt : tensor<5x4xf32>
}
