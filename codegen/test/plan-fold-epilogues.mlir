// RUN: dlc-opt %s -dlc-fuse -dlc-plan-memory=keep-epilogue-operands -dlc-lower-to-plan=target=cuda -dlc-fold-epilogues | FileCheck %s
// RUN: dlc-opt %s -dlc-fuse -dlc-plan-memory -dlc-lower-to-plan=target=cuda -dlc-fold-epilogues | FileCheck %s --check-prefix=OVERLAP

// A launch that is nothing but the bias add (and ReLU, as max) of a marked
// matmul's product becomes the matmul's epilogue and is gone; the matmul
// writes the launch's buffer (its arena offset). The add followed by a
// tanh keeps its kernel, and so does the float64 one (no cuBLASLt bias
// epilogue taken for it).
// CHECK-LABEL: func.func @epilogues
// CHECK: %[[NEG:.*]] = dlc.plan.launch(%arg0)
// CHECK: %[[H:.*]] = dlc.plan.matmul %[[NEG]], %arg1 bias %arg2 epilogue bias_relu {dlc.arena_offsets = array<i64: 3072>}
// CHECK-NEXT: %[[Z:.*]] = dlc.plan.matmul %[[H]], %arg3 {dlc.arena_offsets = array<i64: 0>, dlc.epilogue = "bias"}
// CHECK-NEXT: %[[T:.*]] = dlc.plan.launch(%[[Z]], %arg4)
// CHECK: dlc.tanh
// CHECK: %[[Q:.*]] = dlc.plan.matmul %[[T]], %arg5 bias %arg6 epilogue bias :
// CHECK-NEXT: %[[D:.*]] = dlc.plan.matmul %arg7, %arg7 {dlc.arena_offsets = array<i64: 0>, dlc.epilogue = "bias"}
// CHECK-NEXT: %[[E:.*]] = dlc.plan.launch(%[[D]], %arg8)
// CHECK: return %[[Q]], %[[E]]

// Where the memory plan lets the add's result reuse the matmul's operand
// (without keep-epilogue-operands), the matmul would overwrite what it
// reads: that fold is refused, the others are taken.
// OVERLAP: dlc.plan.matmul %{{.*}}, %arg1 {dlc.arena_offsets = array<i64: 2048>, dlc.epilogue = "bias_relu"}
// OVERLAP: dlc.plan.matmul %{{.*}}, %arg5 bias %arg6 epilogue bias
func.func @epilogues(%x: tensor<16x32xf32>, %w: tensor<32x16xf32>, %b: tensor<16xf32>, %w2: tensor<16x8xf32>, %b2: tensor<8xf32>, %w3: tensor<8x8xf32>, %b3: tensor<8xf32>, %xd: tensor<4x4xf64>, %bd: tensor<4xf64>) -> (tensor<16x8xf32>, tensor<4x4xf64>) {
  %a = dlc.neg %x : tensor<16x32xf32>
  %m = dlc.matmul %a, %w : tensor<16x32xf32>, tensor<32x16xf32> -> tensor<16x16xf32>
  %y = dlc.add %m, %b : tensor<16x16xf32>, tensor<16xf32> -> tensor<16x16xf32>
  %zero = dlc.constant dense<0.0> : tensor<f32>
  %r = dlc.max %y, %zero : tensor<16x16xf32>, tensor<f32> -> tensor<16x16xf32>
  %z = dlc.matmul %r, %w2 : tensor<16x16xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  %o = dlc.add %z, %b2 : tensor<16x8xf32>, tensor<8xf32> -> tensor<16x8xf32>
  %t = dlc.tanh %o : tensor<16x8xf32>
  %p = dlc.matmul %t, %w3 : tensor<16x8xf32>, tensor<8x8xf32> -> tensor<16x8xf32>
  %q = dlc.add %p, %b3 : tensor<16x8xf32>, tensor<8xf32> -> tensor<16x8xf32>
  %d = dlc.matmul %xd, %xd : tensor<4x4xf64>, tensor<4x4xf64> -> tensor<4x4xf64>
  %e = dlc.add %d, %bd : tensor<4x4xf64>, tensor<4xf64> -> tensor<4x4xf64>
  return %q, %e : tensor<16x8xf32>, tensor<4x4xf64>
}
