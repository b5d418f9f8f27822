// RUN: dlc-opt %s --split-input-file --dlc-pipeline-place | FileCheck %s
// RUN: dlc-opt %s --split-input-file --dlc-pipeline-place --dlc-fuse | FileCheck %s --check-prefix=FUSED

// Ops without a stage go where their results are read: the weight's
// transpose to the one stage that reads it, the step counter's increment
// (read by no stage: a result without one) to every stage, the update of
// a stage's parameter to the stage holding its gradient. Each result one
// stage holds is marked with it.
// CHECK-LABEL: func.func @step
// CHECK-SAME: -> (tensor<2x2xf32> {dlc.name = "w", dlc.pp_stage = 1 : i64, dlc.role = "param"}, tensor<i64> {dlc.name = "dlc.step", dlc.role = "step"})
// CHECK: dlc.transpose %arg0 [1, 0] {dlc.pp_stage = 1 : i64}
// CHECK: dlc.pp_transfer
// CHECK: dlc.matmul {{.*}} {dlc.pp_stage = 1 : i64}
// CHECK: dlc.sub %arg0, {{.*}} {dlc.pp_stage = 1 : i64}
// CHECK: %[[NEXT:.*]] = dlc.add %arg2, %{{.*}} : tensor<i64>
// CHECK-NOT: pp_stage
// CHECK: return
// Kernels are one stage's: the stage-0 negation and exponential, the
// transpose and the update of stage 1, the counter's increment (every
// stage) alone.
// FUSED-LABEL: func.func @step
// FUSED: dlc.fusion %arg1 {dlc.pp_stage = 0 : i64}
// FUSED: dlc.fusion %arg0 {dlc.pp_stage = 1 : i64}
// FUSED: dlc.pp_transfer
// FUSED: dlc.fusion %arg0, %{{.*}} {dlc.pp_stage = 1 : i64}
// FUSED: dlc.fusion %arg2 : (tensor<i64>)
module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @step(%w: tensor<2x2xf32> {dlc.name = "w", dlc.role = "param"},
                  %x: tensor<2x2xf32> {dlc.name = "x", dlc.role = "input"},
                  %s: tensor<i64> {dlc.name = "dlc.step", dlc.role = "step"})
      -> (tensor<2x2xf32> {dlc.name = "w", dlc.role = "param"},
          tensor<i64> {dlc.name = "dlc.step", dlc.role = "step"}) {
    %one = dlc.constant dense<1> : tensor<i64>
    %n = dlc.neg %x {dlc.pp_stage = 0 : i64} : tensor<2x2xf32>
    %e = dlc.exp %n {dlc.pp_stage = 0 : i64} : tensor<2x2xf32>
    %t = dlc.transpose %w [1, 0] : tensor<2x2xf32> -> tensor<2x2xf32>
    %h = dlc.pp_transfer %e from 0 to 1 : tensor<2x2xf32>
    %g = dlc.matmul %h, %t {dlc.pp_stage = 1 : i64} : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
    %u = dlc.sub %w, %g : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
    %next = dlc.add %s, %one : tensor<i64>, tensor<i64> -> tensor<i64>
    return %u, %next : tensor<2x2xf32>, tensor<i64>
  }
}

// -----

// A weight two stages read (an embedding tied to the head), updated on
// the last: the updated value is sent to the first, so that both start the
// next step from it; the result is then held by both (no stage).
// CHECK-LABEL: func.func @tied
// CHECK-SAME: -> (tensor<2x2xf32> {dlc.name = "e", dlc.role = "param"}, tensor<f32> {dlc.name = "loss", dlc.pp_stage = 1 : i64, dlc.role = "loss"})
// CHECK: %[[U:.*]] = dlc.sub %arg0, %{{.*}} {dlc.pp_stage = 1 : i64}
// CHECK: %[[SENT:.*]] = dlc.pp_transfer %[[U]] from 1 to 0
// CHECK: return %[[SENT]],
module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @tied(%e: tensor<2x2xf32> {dlc.name = "e", dlc.role = "param"},
                  %x: tensor<2x2xf32> {dlc.name = "x", dlc.role = "input"})
      -> (tensor<2x2xf32> {dlc.name = "e", dlc.role = "param"},
          tensor<f32> {dlc.name = "loss", dlc.role = "loss"}) {
    %a = dlc.matmul %x, %e {dlc.pp_stage = 0 : i64} : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
    %h = dlc.pp_transfer %a from 0 to 1 : tensor<2x2xf32>
    %b = dlc.matmul %h, %e {dlc.pp_stage = 1 : i64} : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
    %l = dlc.reduce_sum %b axes [0, 1] {dlc.pp_stage = 1 : i64} : tensor<2x2xf32> -> tensor<f32>
    %u = dlc.sub %e, %b : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
    return %u, %l : tensor<2x2xf32>, tensor<f32>
  }
}

// -----

// A function without stages in a pipelined module (inference), and a
// module without stages, are left alone.
// CHECK-LABEL: func.func @whole
// CHECK: dlc.neg %arg0 : tensor<2xf32>
// CHECK-NEXT: return
module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @whole(%x: tensor<2xf32>) -> tensor<2xf32> {
    %n = dlc.neg %x : tensor<2xf32>
    return %n : tensor<2xf32>
  }
}

// -----

// An op every stage runs (it reads only an argument, and two stages read
// it) is a kernel of its own: inside one stage's kernel, the other stage
// would not compute it.
// FUSED-LABEL: func.func @everywhere
// FUSED: %[[E:.*]] = dlc.fusion %arg0 : (tensor<2xf32>)
// FUSED: dlc.fusion %[[E]] {dlc.pp_stage = 1 : i64}
// FUSED: dlc.fusion %[[E]] {dlc.pp_stage = 0 : i64}
module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @everywhere(%x: tensor<2xf32>) -> (tensor<2xf32> {dlc.pp_stage = 0 : i64}, tensor<2xf32> {dlc.pp_stage = 1 : i64}) {
    %e = dlc.exp %x : tensor<2xf32>
    %b = dlc.abs %e {dlc.pp_stage = 1 : i64} : tensor<2xf32>
    %a = dlc.neg %e {dlc.pp_stage = 0 : i64} : tensor<2xf32>
    return %a, %b : tensor<2xf32>, tensor<2xf32>
  }
}

// -----

// An op no stage demands that reads arguments only (a weight decay's
// product) goes to the stage of its users (the update of a stage-1
// parameter), so that stage 0 never reads the parameter and it needs no
// transfer after the step.
// CHECK-LABEL: func.func @decay
// CHECK: dlc.mul %arg0, %arg2 {dlc.pp_stage = 1 : i64}
// CHECK-NOT: dlc.pp_transfer
// CHECK: return
module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @decay(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"},
                   %x: tensor<2xf32> {dlc.name = "x", dlc.role = "input"},
                   %wd: tensor<f32> {dlc.name = "wd", dlc.role = "hyperparameter"})
      -> (tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) {
    %a = dlc.neg %x {dlc.pp_stage = 0 : i64} : tensor<2xf32>
    %t = dlc.pp_transfer %a from 0 to 1 : tensor<2xf32>
    %g = dlc.mul %t, %w {dlc.pp_stage = 1 : i64} : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    %d = dlc.mul %w, %wd : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
    %s = dlc.add %g, %d : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    %u = dlc.sub %w, %s : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    return %u : tensor<2xf32>
  }
}

// -----

// A running sum over micro-batches (dlc.pp_accumulate) is a kernel of its
// own, not part of the update that reads it: fused there, every
// micro-batch's gradient would stay live until the update.
// FUSED-LABEL: func.func @accumulate
// FUSED: %[[S:.*]] = dlc.fusion %arg0, %arg1 {dlc.pp_stage = 0 : i64}
// FUSED: dlc.fusion %arg2, %[[S]] {dlc.pp_stage = 0 : i64}
module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @accumulate(%g0: tensor<4xf32>, %g1: tensor<4xf32>, %w: tensor<4xf32>) -> (tensor<4xf32> {dlc.pp_stage = 0 : i64}) {
    %s = dlc.add %g0, %g1 {dlc.pp_accumulate, dlc.pp_stage = 0 : i64} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %u = dlc.sub %w, %s {dlc.pp_stage = 0 : i64} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    return %u : tensor<4xf32>
  }
}
