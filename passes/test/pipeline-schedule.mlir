// RUN: dlc-opt %s '-dlc-pipeline-partition=stages=2 flops-per-byte=0 link-flops-per-byte=0' -dlc-autodiff '-dlc-pipeline-schedule=microbatches=2' | FileCheck %s
// RUN: dlc-opt %s '-dlc-pipeline-partition=stages=3 flops-per-byte=0 link-flops-per-byte=0' -dlc-autodiff '-dlc-pipeline-schedule=microbatches=4' | FileCheck %s --check-prefix=THREE

// Two stages, two micro-batches: stage 0 has the first matmul, stage 1 the
// second and the loss; dlc-autodiff gives each backward op its forward
// op's stage. The batch of 4 rows becomes two slices of 2. The 1F1B
// timetable (forward 1, backward 2): stage 0 runs F0 F1 B0 B1 (one
// warm-up forward), stage 1 F0 B0 F1 B1; by start time, F0/0 F1/0 F0/1
// B0/1 B0/0 F1/1 B1/1 B1/0 (micro-batch/stage). A value crosses stages
// through dlc.pp_transfer right after it is computed. The loss and the
// gradients are the micro-batches' means, each on its stage.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: %arg2: tensor<4x4xf32> {dlc.name = "x", dlc.role = "input"}
// CHECK-SAME: -> (tensor<f32> {dlc.name = "loss", dlc.pp_stage = 1 : i64, dlc.role = "loss"}, tensor<4x4xf32> {dlc.name = "w1", dlc.pp_stage = 0 : i64, dlc.role = "gradient"}, tensor<4x4xf32> {dlc.name = "w2", dlc.pp_stage = 1 : i64, dlc.role = "gradient"})
// The weight's transpose reads no micro-batch: computed once, by every
// stage that reads it.
// CHECK: %[[T:.*]] = dlc.transpose %arg1 [1, 0] : tensor<4x4xf32>
// The sum's gradient (ones) does not depend on the micro-batch either: the
// input gradient of the second matmul is the same for both, sent once.
// CHECK: %[[DA:.*]] = dlc.matmul {{.*}} {dlc.pp_stage = 1 : i64}
// CHECK-NEXT: %[[DA0:.*]] = dlc.pp_transfer %[[DA]] from 1 to 0
// Each micro-batch's rows, which every stage reading them slices:
// CHECK-NEXT: %[[X0:.*]] = dlc.slice %arg2 offsets [0, 0] sizes [2, 4] strides [1, 1] : tensor<4x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[X1:.*]] = dlc.slice %arg2 offsets [2, 0] sizes [2, 4]
// F0 on stage 0, sent:
// CHECK-NEXT: %[[A0:.*]] = dlc.matmul %[[X0]], %arg0 {dlc.pp_stage = 0 : i64}
// CHECK-NEXT: %[[A0S:.*]] = dlc.pp_transfer %[[A0]] from 0 to 1
// F1 on stage 0:
// CHECK-NEXT: %[[A1:.*]] = dlc.matmul %[[X1]], %arg0 {dlc.pp_stage = 0 : i64}
// CHECK-NEXT: %[[A1S:.*]] = dlc.pp_transfer %[[A1]] from 0 to 1
// F0 on stage 1, then B0 on stage 1 (w2's gradient of micro-batch 0):
// CHECK-NEXT: dlc.matmul %[[A0S]], %[[T]] {dlc.pp_stage = 1 : i64}
// CHECK-NEXT: %[[L0:.*]] = dlc.reduce_sum {{.*}} {dlc.pp_stage = 1 : i64}
// CHECK-NEXT: dlc.transpose %[[A0S]] [1, 0] {dlc.pp_stage = 1 : i64}
// CHECK-NEXT: dlc.matmul {{.*}} {dlc.pp_stage = 1 : i64}
// CHECK-NEXT: %[[G20:.*]] = dlc.transpose {{.*}} {dlc.pp_stage = 1 : i64}
// B0 on stage 0 (w1's), then F1 on stage 1 with the loss's running sum:
// CHECK-NEXT: dlc.transpose %[[X0]] [1, 0] {dlc.pp_stage = 0 : i64}
// CHECK-NEXT: %[[G10:.*]] = dlc.matmul {{.*}}, %[[DA0]] {dlc.pp_stage = 0 : i64}
// CHECK-NEXT: dlc.matmul %[[A1S]], %[[T]] {dlc.pp_stage = 1 : i64}
// CHECK-NEXT: %[[L1:.*]] = dlc.reduce_sum {{.*}} {dlc.pp_stage = 1 : i64}
// CHECK-NEXT: %[[L:.*]] = dlc.add %[[L0]], %[[L1]] {dlc.pp_accumulate, dlc.pp_stage = 1 : i64}
// B1 on stage 1, B1 on stage 0, each gradient summed as soon as it is there:
// CHECK-NEXT: dlc.transpose %[[A1S]] [1, 0] {dlc.pp_stage = 1 : i64}
// CHECK-NEXT: dlc.matmul {{.*}} {dlc.pp_stage = 1 : i64}
// CHECK-NEXT: %[[G21:.*]] = dlc.transpose {{.*}} {dlc.pp_stage = 1 : i64}
// CHECK-NEXT: %[[G2:.*]] = dlc.add %[[G20]], %[[G21]] {dlc.pp_accumulate, dlc.pp_stage = 1 : i64}
// CHECK-NEXT: dlc.transpose %[[X1]] [1, 0] {dlc.pp_stage = 0 : i64}
// CHECK-NEXT: %[[G11:.*]] = dlc.matmul {{.*}}, %[[DA0]] {dlc.pp_stage = 0 : i64}
// CHECK-NEXT: %[[G1:.*]] = dlc.add %[[G10]], %[[G11]] {dlc.pp_accumulate, dlc.pp_stage = 0 : i64}
// CHECK: %[[LM:.*]] = dlc.mul %[[L]], %{{.*}} {dlc.pp_stage = 1 : i64}
// CHECK: %[[G1M:.*]] = dlc.mul %[[G1]], %{{.*}} {dlc.pp_stage = 0 : i64}
// CHECK: %[[G2M:.*]] = dlc.mul %[[G2]], %{{.*}} {dlc.pp_stage = 1 : i64}
// CHECK: return %[[LM]], %[[G1M]], %[[G2M]]

// Three stages over four micro-batches schedule too. This run checks only
// the module's marks: each stage's 1F1B order is checked in
// passes/test/unit/TimetableTest.cpp, and three stages' numerics against
// one device in pipeline-numerics.test.
// THREE: module attributes {dlc.microbatches = 4 : i64, dlc.pipeline_stages = 3 : i64}
// THREE-LABEL: func.func @loss_grad
func.func @loss(%w1: tensor<4x4xf32> {dlc.name = "w1", dlc.role = "param"},
                %w2: tensor<4x4xf32> {dlc.name = "w2", dlc.role = "param"},
                %x: tensor<2x4xf32> {dlc.name = "x", dlc.role = "input"})
    -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}) {
  %a = dlc.matmul %x, %w1 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %t = dlc.transpose %w2 [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %b = dlc.matmul %a, %t : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %c = dlc.reduce_sum %b axes [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %c : tensor<f32>
}
