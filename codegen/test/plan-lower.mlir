// RUN: dlc-opt %s -dlc-fuse -dlc-plan-memory -dlc-lower-to-plan | FileCheck %s
// RUN: dlc-opt %s -dlc-fuse -dlc-plan-memory -dlc-lower-to-plan=target=cuda | FileCheck %s --check-prefix=CUDA

// Each fusion becomes a launch of its kernel with the emitter's schedule
// for the target (the CPU: rows of the iteration space and a grain of
// about 2048 elements' worth; for CUDA one 16-byte group or element an
// iteration), keeping its arena offsets; each matmul a library call
// keeping dlc-fuse's epilogue mark; the transposing fusion is left for
// dlc-fold-transposes. The returned argument and the value returned twice
// get copies into their result buffers.
// CHECK: module attributes {dlc.plan_target = "cpu"}
// CHECK-LABEL: func.func @mlp
// CHECK: %[[NEG:.*]] = dlc.plan.launch(%arg0) iterations 1 grain 2 threads 1 {dlc.arena_offsets = array<i64: 0>}
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<16x32xf32>):
// CHECK-NEXT: %[[F:.*]] = dlc.fusion %[[X]]
// CHECK: dlc.neg
// CHECK: dlc.plan.yield %[[F]] : tensor<16x32xf32>
// CHECK: %[[M:.*]] = dlc.plan.matmul %[[NEG]], %arg1 {dlc.arena_offsets = array<i64: 2048>, dlc.epilogue = "bias_relu"}
// CHECK: %[[RELU:.*]] = dlc.plan.launch(%[[M]], %arg2) iterations 16 grain 62 threads 1
// CHECK: %[[T:.*]] = dlc.fusion %arg3
// CHECK-NEXT: ^bb0
// CHECK-NEXT: dlc.transpose
// CHECK: %[[M2:.*]] = dlc.plan.matmul %[[RELU]], %[[T]] {dlc.arena_offsets = array<i64: 1024>, dlc.epilogue = "bias"}
// CHECK: %[[OUT:.*]] = dlc.plan.launch(%[[M2]], %arg4) iterations 128 grain 1024 threads 1 :
// CHECK: %[[C1:.*]] = dlc.plan.copy %arg2 : tensor<16xf32>
// CHECK-NEXT: %[[C2:.*]] = dlc.plan.copy %[[OUT]] : tensor<16x8xf32>
// CHECK-NEXT: return %[[OUT]], %[[C1]], %[[C2]]
// CUDA: module attributes {dlc.plan_target = "cuda"}
// CUDA: dlc.plan.launch(%arg0) iterations 128 grain 1 threads 1
// CUDA: dlc.plan.launch(%{{.*}}, %arg2) iterations 256 grain 1 threads 1
func.func @mlp(%x: tensor<16x32xf32>, %w: tensor<32x16xf32>, %b: tensor<16xf32>, %w2: tensor<8x16xf32>, %b2: tensor<8xf32>) -> (tensor<16x8xf32>, tensor<16xf32>, tensor<16x8xf32>) {
  %a = dlc.neg %x : tensor<16x32xf32>
  %m = dlc.matmul %a, %w : tensor<16x32xf32>, tensor<32x16xf32> -> tensor<16x16xf32>
  %y = dlc.add %m, %b : tensor<16x16xf32>, tensor<16xf32> -> tensor<16x16xf32>
  %zero = dlc.constant dense<0.0> : tensor<f32>
  %r = dlc.max %y, %zero : tensor<16x16xf32>, tensor<f32> -> tensor<16x16xf32>
  %t = dlc.transpose %w2 [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
  %z = dlc.matmul %r, %t : tensor<16x16xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  %o = dlc.add %z, %b2 : tensor<16x8xf32>, tensor<8xf32> -> tensor<16x8xf32>
  return %o, %b, %o : tensor<16x8xf32>, tensor<16xf32>, tensor<16x8xf32>
}
