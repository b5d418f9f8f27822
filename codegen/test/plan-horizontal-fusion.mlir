// RUN: dlc-opt %s -split-input-file -dlc-fuse -dlc-plan-memory -dlc-lower-to-plan=target=cuda -dlc-horizontal-fusion -verify-diagnostics | FileCheck %s

// Two parameter updates (16-byte elementwise groups: 16 and 32 iterations)
// run as one launch where the first was: the second moves up past the
// library matmul, which touches none of its buffers. The learning rate,
// read by both, is one argument (%arg4). The sum reads the first update's
// result, and has 32 threads an iteration: it stays a launch of its own.
// CHECK-LABEL: func.func @updates
// CHECK: %[[G:.*]]:2 = dlc.plan.launch(%arg1, %arg4, %arg0, %arg3, %arg2) iterations 48 grain 1 threads 1
// CHECK-SAME: {dlc.arena_offsets = array<i64: -1, -1>}
// CHECK-NEXT: ^bb0(%[[G1:.*]]: tensor<64xf32>, %[[LR:.*]]: tensor<f32>, %[[P0:.*]]: tensor<64xf32>, %[[G2:.*]]: tensor<32x4xf32>, %[[P1:.*]]: tensor<32x4xf32>):
// CHECK-NEXT: %[[U0:.*]] = dlc.fusion %[[G1]], %[[LR]], %[[P0]]
// CHECK: %[[U1:.*]] = dlc.fusion %[[G2]], %[[LR]], %[[P1]]
// CHECK: dlc.plan.yield %[[U0]], %[[U1]]
// CHECK: dlc.plan.matmul
// CHECK: dlc.plan.launch(%[[G]]#0) iterations 1 grain 1 threads 32
// CHECK: return %[[G]]#0, %[[G]]#1
func.func @updates(%p0: tensor<64xf32>, %g0: tensor<64xf32>, %p1: tensor<32x4xf32>, %g1: tensor<32x4xf32>, %lr: tensor<f32>) -> (tensor<64xf32>, tensor<32x4xf32>, tensor<8x8xf32>, tensor<f32>) {
  %s0 = dlc.mul %g0, %lr : tensor<64xf32>, tensor<f32> -> tensor<64xf32>
  %n0 = dlc.sub %p0, %s0 : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  %r = dlc.reshape %g0 : tensor<64xf32> to tensor<8x8xf32>
  %m = dlc.matmul %r, %r : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %s1 = dlc.mul %g1, %lr : tensor<32x4xf32>, tensor<f32> -> tensor<32x4xf32>
  %n1 = dlc.sub %p1, %s1 : tensor<32x4xf32>, tensor<32x4xf32> -> tensor<32x4xf32>
  %sum = dlc.reduce_sum %n0 axes [0] : tensor<64xf32> -> tensor<f32>
  return %n0, %n1, %m, %sum : tensor<64xf32>, tensor<32x4xf32>, tensor<8x8xf32>, tensor<f32>
}

// -----

// A kernel that reads what an earlier step writes cannot move above it:
// the exp reads the matmul's product, so it starts a launch of its own
// after the matmul, and the update before the matmul stays alone.
// CHECK-LABEL: func.func @dependent
// CHECK: dlc.plan.launch(%arg1, %arg2, %arg0) iterations 16
// CHECK-NEXT: ^bb0
// CHECK-NEXT: dlc.fusion
// CHECK: dlc.plan.matmul
// CHECK: dlc.plan.launch(%{{.*}}) iterations 16
func.func @dependent(%p0: tensor<64xf32>, %g0: tensor<64xf32>, %lr: tensor<f32>, %a: tensor<8x8xf32>) -> (tensor<64xf32>, tensor<8x8xf32>) {
  %s0 = dlc.mul %g0, %lr : tensor<64xf32>, tensor<f32> -> tensor<64xf32>
  %n0 = dlc.sub %p0, %s0 : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  %m = dlc.matmul %a, %a : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %e = dlc.exp %m : tensor<8x8xf32>
  return %n0, %e : tensor<64xf32>, tensor<8x8xf32>
}
