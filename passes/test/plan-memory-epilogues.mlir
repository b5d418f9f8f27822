// RUN: dlc-opt %s -dlc-fuse -dlc-plan-memory | FileCheck %s --check-prefix=SHARED
// RUN: dlc-opt %s -dlc-fuse -dlc-plan-memory=keep-epilogue-operands=true | FileCheck %s --check-prefix=KEPT

// The matmul's lhs (%a) dies at the matmul, so by default the bias fusion
// after it takes %a's arena bytes. A backend that folds that fusion into
// the matmul (cuBLASLt's bias epilogue) writes the fusion's result while
// it still reads %a: with keep-epilogue-operands, %a lives until the
// fusion, which then gets bytes of its own.
// SHARED-LABEL: func.func @epilogue
// SHARED-SAME: dlc.arena_size = 3072
// SHARED: dlc.fusion %arg0 {dlc.arena_offsets = array<i64: 0>}
// SHARED: dlc.matmul {{.*}}{dlc.arena_offsets = array<i64: 2048>, dlc.epilogue = "bias"}
// SHARED: dlc.fusion %{{.*}}, %arg2 {dlc.arena_offsets = array<i64: 0>}
// KEPT-LABEL: func.func @epilogue
// KEPT-SAME: dlc.arena_size = 4096
// KEPT: dlc.fusion %arg0 {dlc.arena_offsets = array<i64: 0>}
// KEPT: dlc.matmul {{.*}}{dlc.arena_offsets = array<i64: 2048>, dlc.epilogue = "bias"}
// KEPT: dlc.fusion %{{.*}}, %arg2 {dlc.arena_offsets = array<i64: 3072>}
func.func @epilogue(%x: tensor<16x32xf32>, %w: tensor<32x16xf32>, %b: tensor<16xf32>, %w2: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %a = dlc.neg %x : tensor<16x32xf32>
  %m = dlc.matmul %a, %w : tensor<16x32xf32>, tensor<32x16xf32> -> tensor<16x16xf32>
  %y = dlc.add %m, %b : tensor<16x16xf32>, tensor<16xf32> -> tensor<16x16xf32>
  %z = dlc.matmul %y, %w2 : tensor<16x16xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  return %z : tensor<16x8xf32>
}
