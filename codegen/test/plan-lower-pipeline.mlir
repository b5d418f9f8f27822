// RUN: dlc-opt %s --dlc-pipeline-place --dlc-fuse --dlc-plan-memory --dlc-plan-pipeline=target=cpu | FileCheck %s
// RUN: not dlc-opt %s --dlc-pipeline-place --dlc-fuse --dlc-plan-memory --dlc-plan-pipeline=target=cuda -o /dev/null 2>&1 | FileCheck %s --check-prefix=CUDA
// A pipelined step's plan: each launch keeps its stage, a transfer is a
// step of its own on the buffer of the value it carries (no arena offset
// of its own: the receiving rank writes where the sender reads), and a
// transfer of an argument gets a buffer.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: -> (tensor<2xf32> {dlc.name = "y", dlc.pp_stage = 1 : i64, dlc.role = "output"})
// CHECK: %[[A:.*]] = dlc.plan.launch {{.*}}(%arg0) {{.*}} {dlc.arena_offsets = array<i64: 0>, dlc.pp_stage = 0 : i64}
// CHECK: %[[T:.*]] = dlc.pp_transfer %[[A]] from 0 to 1 : tensor<2xf32>
// CHECK: %[[X:.*]] = dlc.pp_transfer %arg0 from 0 to 1 {dlc.arena_offsets = array<i64: {{[0-9]+}}>} : tensor<2xf32>
// CHECK: dlc.plan.launch {{.*}}(%[[T]], %[[X]]) {{.*}} {dlc.pp_stage = 1 : i64}
// CUDA: 'dlc.pp_transfer' op has no CUDA path yet: pipelined modules run on CPU ranks (--target cpu)
module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @forward(%x: tensor<2xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<2xf32> {dlc.name = "y", dlc.role = "output"}) {
    %a = dlc.neg %x {dlc.pp_stage = 0 : i64} : tensor<2xf32>
    %t = dlc.pp_transfer %a from 0 to 1 : tensor<2xf32>
    %b = dlc.exp %t {dlc.pp_stage = 1 : i64} : tensor<2xf32>
    %c = dlc.mul %b, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    %s = dlc.pp_transfer %x from 0 to 1 : tensor<2xf32>
    %d = dlc.add %c, %s {dlc.pp_stage = 1 : i64} : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    return %d : tensor<2xf32>
  }
}
