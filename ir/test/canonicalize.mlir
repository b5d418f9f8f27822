// RUN: dlc-opt %s -canonicalize -split-input-file | FileCheck %s
// Folding: op-specific folds, and the evaluator-backed fold of ops whose
// operands are all constants.

// CHECK-LABEL: func.func @fold_constants
func.func @fold_constants() -> tensor<3xi64> {
  // Shape arithmetic as exporters emit it: gather a dim, concat, cast.
  %shape = dlc.constant dense<[2, 3, 4]> : tensor<3xi64>
  %idx = dlc.constant dense<[2, 0]> : tensor<2xi64>
  %dims = dlc.gather %shape[%idx] {axis = 0 : i64} : tensor<3xi64>, tensor<2xi64> -> tensor<2xi64>
  %minus = dlc.constant dense<-1> : tensor<1xi64>
  %cat = dlc.concat %dims, %minus {axis = 0 : i64} : tensor<2xi64>, tensor<1xi64> -> tensor<3xi64>
  // CHECK: %[[C:.*]] = dlc.constant dense<[4, 2, -1]> : tensor<3xi64>
  // CHECK-NEXT: return %[[C]]
  return %cat : tensor<3xi64>
}

// -----

// CHECK-LABEL: func.func @fold_float_math
func.func @fold_float_math() -> tensor<2xf32> {
  %a = dlc.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %b = dlc.sqrt %a : tensor<2xf32>
  %c = dlc.constant dense<0.5> : tensor<f32>
  %d = dlc.mul %b, %c : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
  // CHECK: dlc.constant dense<[5.000000e-01, 1.000000e+00]> : tensor<2xf32>
  return %d : tensor<2xf32>
}

// -----

// A transpose of a transpose is one transpose, or none when they cancel.
// CHECK-LABEL: func.func @transposes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = dlc.transpose %[[X]] [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT: return %[[T]], %[[X]]
func.func @transposes(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
  %0 = dlc.transpose %x [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %1 = dlc.transpose %0 [2, 1, 0] : tensor<3x2x4xf32> -> tensor<4x2x3xf32>
  %2 = dlc.transpose %0 [1, 0, 2] : tensor<3x2x4xf32> -> tensor<2x3x4xf32>
  return %1, %2 : tensor<4x2x3xf32>, tensor<2x3x4xf32>
}

// -----

// A transposed product is the product of the transposed operands, in the
// other order (the tied LM head's gradient): the transpose of a transposed
// operand cancels, the other folds into the matmul call later. A product
// with another use, or a transpose that moves batch dimensions, stays.
// CHECK-LABEL: func.func @transposed_matmul
// CHECK-SAME: (%[[X:.*]]: tensor<6x4xf32>, %[[G:.*]]: tensor<6x5xf32>, %[[A:.*]]: tensor<2x3x4xf32>, %[[B:.*]]: tensor<2x4x5xf32>)
// CHECK-NEXT: %[[GT:.*]] = dlc.transpose %[[G]] [1, 0] : tensor<6x5xf32> -> tensor<5x6xf32>
// CHECK-NEXT: %[[W:.*]] = dlc.matmul %[[GT]], %[[X]] : tensor<5x6xf32>, tensor<6x4xf32> -> tensor<5x4xf32>
// CHECK-NEXT: %[[AB:.*]] = dlc.matmul %[[A]], %[[B]]
// CHECK-NEXT: %[[MOVED:.*]] = dlc.transpose %[[AB]] [1, 0, 2]
// CHECK-NEXT: %[[BT:.*]] = dlc.transpose %[[B]] [0, 2, 1] : tensor<2x4x5xf32> -> tensor<2x5x4xf32>
// CHECK-NEXT: %[[AT:.*]] = dlc.transpose %[[A]] [0, 2, 1] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
// CHECK-NEXT: %[[BATCHED:.*]] = dlc.matmul %[[BT]], %[[AT]] : tensor<2x5x4xf32>, tensor<2x4x3xf32> -> tensor<2x5x3xf32>
// CHECK-NEXT: return %[[W]], %[[MOVED]], %[[BATCHED]]
func.func @transposed_matmul(%x: tensor<6x4xf32>, %g: tensor<6x5xf32>, %a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> (tensor<5x4xf32>, tensor<3x2x5xf32>, tensor<2x5x3xf32>) {
  %xt = dlc.transpose %x [1, 0] : tensor<6x4xf32> -> tensor<4x6xf32>
  %w = dlc.matmul %xt, %g : tensor<4x6xf32>, tensor<6x5xf32> -> tensor<4x5xf32>
  %wt = dlc.transpose %w [1, 0] : tensor<4x5xf32> -> tensor<5x4xf32>
  %ab = dlc.matmul %a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32> -> tensor<2x3x5xf32>
  %moved = dlc.transpose %ab [1, 0, 2] : tensor<2x3x5xf32> -> tensor<3x2x5xf32>
  %ab2 = dlc.matmul %a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32> -> tensor<2x3x5xf32>
  %swapped = dlc.transpose %ab2 [0, 2, 1] : tensor<2x3x5xf32> -> tensor<2x5x3xf32>
  return %wt, %moved, %swapped : tensor<5x4xf32>, tensor<3x2x5xf32>, tensor<2x5x3xf32>
}

// -----

// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @identities(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.transpose %x [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = dlc.reshape %0 : tensor<2x3xf32> to tensor<2x3xf32>
  %2 = dlc.broadcast_to %1 : tensor<2x3xf32> to tensor<2x3xf32>
  %3 = dlc.cast %2 : tensor<2x3xf32> to tensor<2x3xf32>
  %4 = dlc.slice %3 offsets [0, 0] sizes [2, 3] strides [1, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  // CHECK-NEXT: return %[[X]]
  return %4 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_chain
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @reshape_chain(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // CHECK-NEXT: %[[R:.*]] = dlc.reshape %[[X]] : tensor<2x3xf32> to tensor<3x2xf32>
  // CHECK-NEXT: return %[[R]]
  %0 = dlc.reshape %x : tensor<2x3xf32> to tensor<6xf32>
  %1 = dlc.reshape %0 : tensor<6xf32> to tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// -----

// Folding never hides an error: an out-of-range constant index stays for the
// evaluator to report when the program runs.
// CHECK-LABEL: func.func @no_fold_on_error
func.func @no_fold_on_error() -> tensor<1xf32> {
  %data = dlc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %idx = dlc.constant dense<[5]> : tensor<1xi64>
  // CHECK: dlc.gather
  %0 = dlc.gather %data[%idx] {axis = 0 : i64} : tensor<2xf32>, tensor<1xi64> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

// dlc.dropout is a pure function of its input, seed and stream, so with
// constant operands it folds like any other op: to the evaluator's mask
// (Philox4x32-10 under key 1, stream 0: elements 0, 1 and 3 kept, 2 dropped)
// and the input scaled by 1 / (1 - 0.5) where kept.
// CHECK-LABEL: func.func @fold_dropout
func.func @fold_dropout() -> (tensor<4xf32>, tensor<4xi1>) {
  %x = dlc.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %seed = dlc.constant dense<1> : tensor<i64>
  // CHECK-NOT: dlc.dropout
  // CHECK-DAG: %[[Y:.*]] = dlc.constant dense<[2.000000e+00, 4.000000e+00, 0.000000e+00, 8.000000e+00]> : tensor<4xf32>
  // CHECK-DAG: %[[M:.*]] = dlc.constant dense<[true, true, false, true]> : tensor<4xi1>
  // CHECK: return %[[Y]], %[[M]]
  %0, %1 = dlc.dropout %x, %seed {ratio = 0.5 : f64, stream = 0 : i64} : tensor<4xf32>, tensor<i64> -> tensor<4xi1>
  return %0, %1 : tensor<4xf32>, tensor<4xi1>
}

// -----

// Identity operands fold away where exact for every value and no broadcast
// is lost: x * 1, 1 * x, x / 1, x - 0, x + -0 (floats), x + 0 (integers).
// CHECK-LABEL: func.func @fold_identities
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[I:.*]]: tensor<3xi32>)
func.func @fold_identities(%x: tensor<3xf32>, %i: tensor<3xi32>)
    -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>) {
  %one = dlc.constant dense<1.0> : tensor<f32>
  %zero = dlc.constant dense<0.0> : tensor<f32>
  %negzero = dlc.constant dense<-0.0> : tensor<3xf32>
  %izero = dlc.constant dense<0> : tensor<i32>
  %0 = dlc.mul %x, %one : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  %1 = dlc.mul %one, %x : tensor<f32>, tensor<3xf32> -> tensor<3xf32>
  %2 = dlc.div %x, %one : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  %3 = dlc.sub %x, %zero : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  %4 = dlc.add %negzero, %x : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %5 = dlc.add %i, %izero : tensor<3xi32>, tensor<i32> -> tensor<3xi32>
  // CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[I]]
  return %0, %1, %2, %3, %4, %5 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>
}

// -----

// Not folded: x + +0 (-0 + +0 is +0), x - -0, 1 / x, and an identity that
// broadcasts x to a larger result.
// CHECK-LABEL: func.func @no_fold_identities
func.func @no_fold_identities(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>) {
  %zero = dlc.constant dense<0.0> : tensor<f32>
  %negzero = dlc.constant dense<-0.0> : tensor<f32>
  %one = dlc.constant dense<1.0> : tensor<f32>
  %ones = dlc.constant dense<1.0> : tensor<2x3xf32>
  // CHECK: dlc.add
  %0 = dlc.add %x, %zero : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  // CHECK: dlc.sub
  %1 = dlc.sub %x, %negzero : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  // CHECK: dlc.div
  %2 = dlc.div %one, %x : tensor<f32>, tensor<3xf32> -> tensor<3xf32>
  // CHECK: dlc.mul
  %3 = dlc.mul %x, %ones : tensor<3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return %0, %1, %2, %3 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>
}
