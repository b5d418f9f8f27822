// RUN: dlc-opt %s --split-input-file --dlc-plan-memory | FileCheck %s

// No rank holds values of two stages: %a (stage 0) and %b (stage 1), alive
// at the same time, share the arena's first bytes; %e, which every stage
// computes, shares with neither.
// CHECK-LABEL: func.func @apart
// CHECK-SAME: dlc.arena_size = 128
// CHECK: dlc.neg {{.*}}dlc.arena_offsets = array<i64: 0>
// CHECK: dlc.exp {{.*}}dlc.arena_offsets = array<i64: 0>
// CHECK: dlc.sqrt {{.*}}dlc.arena_offsets = array<i64: 64>
module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @apart(%x: tensor<16xf32>) -> (tensor<16xf32> {dlc.pp_stage = 0 : i64}, tensor<16xf32> {dlc.pp_stage = 1 : i64}) {
    %a = dlc.neg %x {dlc.pp_stage = 0 : i64} : tensor<16xf32>
    %b = dlc.exp %x {dlc.pp_stage = 1 : i64} : tensor<16xf32>
    %e = dlc.sqrt %x : tensor<16xf32>
    %c = dlc.add %a, %e {dlc.pp_stage = 0 : i64} : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
    %d = dlc.add %b, %e {dlc.pp_stage = 1 : i64} : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
    return %c, %d : tensor<16xf32>, tensor<16xf32>
  }
}

// -----

// A value sent to stage 1 is held there too (the transfer is a view of
// it): it no longer shares with stage 1's %b.
// CHECK-LABEL: func.func @sent
// CHECK-SAME: dlc.arena_size = 128
// CHECK: dlc.neg {{.*}}dlc.arena_offsets = array<i64: [[A:[0-9]+]]>
// CHECK: dlc.exp {{.*}}dlc.arena_offsets = array<i64: [[B:[0-9]+]]>
// CHECK: dlc.pp_transfer
// CHECK-NOT: arena_offsets
module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @sent(%x: tensor<16xf32>) -> (tensor<16xf32> {dlc.pp_stage = 1 : i64}) {
    %a = dlc.neg %x {dlc.pp_stage = 0 : i64} : tensor<16xf32>
    %b = dlc.exp %x {dlc.pp_stage = 1 : i64} : tensor<16xf32>
    %t = dlc.pp_transfer %a from 0 to 1 : tensor<16xf32>
    %d = dlc.add %b, %t {dlc.pp_stage = 1 : i64} : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
    return %d : tensor<16xf32>
  }
}
