// RUN: dlc-opt %s -split-input-file '-dlc-rematerialize=min-bytes=16 min-distance=4' | FileCheck %s
// dlc-rematerialize clones elementwise chains right before distant uses
// when every value the chain starts from is alive there anyway.

// A tanh read near and far: recomputed from %x before the far use, which
// reads %x too; the original dies at its near use.
// CHECK-LABEL: func.func @distant_tanh
// CHECK-NEXT: %[[T:.*]] = dlc.tanh %arg0
// CHECK-NEXT: %[[NEAR:.*]] = dlc.add %[[T]], %arg0
// CHECK-NEXT: dlc.exp %arg1
// CHECK-NEXT: dlc.exp
// CHECK-NEXT: dlc.exp
// CHECK-NEXT: %[[D:.*]] = dlc.exp
// CHECK-NEXT: %[[RT:.*]] = dlc.tanh %arg0
// CHECK-NEXT: %[[FAR:.*]] = dlc.mul %[[RT]], %arg0
// CHECK-NEXT: return %[[NEAR]], %[[FAR]], %[[D]]
func.func @distant_tanh(%x: tensor<16xf32>, %y: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %t = dlc.tanh %x : tensor<16xf32>
  %near = dlc.add %t, %x : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  %a = dlc.exp %y : tensor<16xf32>
  %b = dlc.exp %a : tensor<16xf32>
  %c = dlc.exp %b : tensor<16xf32>
  %d = dlc.exp %c : tensor<16xf32>
  %far = dlc.mul %t, %x : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  return %near, %far, %d : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// A chain of two ops (a square, then its tanh) from a function argument:
// every use is distant, so the chain moves to its use. A returned value is
// left alone (it lives in its result buffer, outside the arena).
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %[[R:.*]] = dlc.exp %arg1
// CHECK-NEXT: %[[A:.*]] = dlc.exp %[[R]]
// CHECK-NEXT: %[[B:.*]] = dlc.exp %[[A]]
// CHECK-NEXT: %[[D:.*]] = dlc.exp %[[B]]
// CHECK-NEXT: %[[SQ:.*]] = dlc.mul %arg0, %arg0
// CHECK-NEXT: %[[T:.*]] = dlc.tanh %[[SQ]]
// CHECK-NEXT: %[[FAR:.*]] = dlc.add %[[T]], %[[D]]
// CHECK-NEXT: return %[[FAR]], %[[R]]
func.func @chain(%x: tensor<16xf32>, %y: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %sq = dlc.mul %x, %x : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  %t = dlc.tanh %sq : tensor<16xf32>
  %r = dlc.exp %y : tensor<16xf32>
  %a = dlc.exp %r : tensor<16xf32>
  %b = dlc.exp %a : tensor<16xf32>
  %d = dlc.exp %b : tensor<16xf32>
  %far = dlc.add %t, %d : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  return %far, %r : tensor<16xf32>, tensor<16xf32>
}

// -----

// Kept: a chain that would start from %e, which nothing reads at the far
// use (recomputing it would need the reduction too); a value under
// min-bytes.
// CHECK-LABEL: func.func @kept
// CHECK-NEXT: %[[M:.*]] = dlc.reduce_max
// CHECK-NEXT: %[[E:.*]] = dlc.exp %[[M]]
// CHECK-NEXT: %[[P:.*]] = dlc.sub %arg0, %[[E]]
// CHECK-NEXT: %[[Q:.*]] = dlc.exp %[[P]]
// CHECK-NEXT: %[[S:.*]] = dlc.sqrt %arg2
// CHECK-NEXT: dlc.exp %arg1
// CHECK-NEXT: dlc.exp
// CHECK-NEXT: dlc.exp
// CHECK-NEXT: %[[C:.*]] = dlc.exp
// CHECK-NEXT: %[[FAR:.*]] = dlc.add %[[Q]], %arg0
// CHECK-NEXT: %[[FAR2:.*]] = dlc.add %[[S]], %[[C]]
// CHECK-NEXT: return %[[FAR]], %[[FAR2]]
func.func @kept(%x: tensor<4x4xf32>, %y: tensor<2xf32>, %s: tensor<2xf32>) -> (tensor<4x4xf32>, tensor<2xf32>) {
  %m = dlc.reduce_max %x axes [1] keep_dims : tensor<4x4xf32> -> tensor<4x1xf32>
  %e = dlc.exp %m : tensor<4x1xf32>
  %p = dlc.sub %x, %e : tensor<4x4xf32>, tensor<4x1xf32> -> tensor<4x4xf32>
  %q = dlc.exp %p : tensor<4x4xf32>
  %small = dlc.sqrt %s : tensor<2xf32>
  %a = dlc.exp %y : tensor<2xf32>
  %b = dlc.exp %a : tensor<2xf32>
  %c0 = dlc.exp %b : tensor<2xf32>
  %c = dlc.exp %c0 : tensor<2xf32>
  %far = dlc.add %q, %x : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %far2 = dlc.add %small, %c : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return %far, %far2 : tensor<4x4xf32>, tensor<2xf32>
}

// -----

// A diamond (%r reads %t and %a, %t reads %a) read twice by one distant
// op: one clone of the chain serves both operands, and the whole original
// chain goes.
// CHECK-LABEL: func.func @diamond
// CHECK-COUNT-4: dlc.exp
// CHECK-NEXT: %[[A:.*]] = dlc.mul %arg0, %arg0
// CHECK-NEXT: %[[T:.*]] = dlc.tanh %[[A]]
// CHECK-NEXT: %[[R:.*]] = dlc.mul %[[T]], %[[A]]
// CHECK-NEXT: %[[FAR:.*]] = dlc.add %[[R]], %[[R]]
// CHECK-NOT: dlc.tanh
func.func @diamond(%x: tensor<16xf32>, %y: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %a = dlc.mul %x, %x : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  %t = dlc.tanh %a : tensor<16xf32>
  %r = dlc.mul %t, %a : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  %e1 = dlc.exp %y : tensor<16xf32>
  %e2 = dlc.exp %e1 : tensor<16xf32>
  %e3 = dlc.exp %e2 : tensor<16xf32>
  %e4 = dlc.exp %e3 : tensor<16xf32>
  %far = dlc.add %r, %r : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  return %far, %e4 : tensor<16xf32>, tensor<16xf32>
}
