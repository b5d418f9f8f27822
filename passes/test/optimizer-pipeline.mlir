// RUN: dlc-opt %s '--dlc-optimizer=optimizer=sgd clip-grad-norm=1' | FileCheck %s
// RUN: dlc-opt %s '--dlc-optimizer=optimizer=sgd clip-grad-norm=1' -dlc-pipeline-place | FileCheck %s --check-prefix=PLACED
// Pipeline stages: each stage sums the clipping norm's squares of the
// gradients it computes (the producer's dlc.pp_stage), stage 0 adds the
// others' partial sums in stage order, then sends the total back to each,
// so that every stage scales its gradients by the same coefficient. A
// gradient no stage computes (a constant) adds its term on every stage.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W0:[^:]+]]: tensor<4xf32> {dlc.name = "w0", dlc.role = "param"}, %[[W1:[^:]+]]: tensor<4xf32> {dlc.name = "w1", dlc.role = "param"}, %[[W2:[^:]+]]: tensor<4xf32> {dlc.name = "w2", dlc.role = "param"}, %[[U:[^:]+]]: tensor<4xf32> {dlc.name = "unused", dlc.role = "param"}
// CHECK: %[[G0:.+]] = dlc.mul %[[W0]], %[[W0]] {dlc.pp_stage = 0 : i64}
// CHECK: %[[G1:.+]] = dlc.mul %[[W1]], %[[W1]] {dlc.pp_stage = 1 : i64}
// CHECK: %[[G2:.+]] = dlc.mul %[[W2]], %[[W2]] {dlc.pp_stage = 1 : i64}
// CHECK: %[[S0:.+]] = dlc.reduce_sum %{{.+}} axes [0]
// CHECK: %[[S1:.+]] = dlc.reduce_sum %{{.+}} axes [0]
// CHECK: %[[S2:.+]] = dlc.reduce_sum %{{.+}} axes [0]
// CHECK: %[[SU:.+]] = dlc.reduce_sum %{{.+}} axes [0]
// CHECK: %[[P1:.+]] = dlc.add %[[S1]], %[[S2]] : tensor<f32>
// CHECK-NEXT: %[[R1:.+]] = dlc.pp_transfer %[[P1]] from 1 to 0 : tensor<f32>
// CHECK-NEXT: %[[T0:.+]] = dlc.add %[[S0]], %[[R1]] : tensor<f32>
// CHECK-NEXT: %[[B1:.+]] = dlc.pp_transfer %[[T0]] from 0 to 1 : tensor<f32>
// CHECK-NEXT: %[[B2:.+]] = dlc.pp_transfer %[[B1]] from 0 to 2 : tensor<f32>
// CHECK-NEXT: %[[ALL:.+]] = dlc.add %[[B2]], %[[SU]] : tensor<f32>
// CHECK-NEXT: dlc.sqrt %[[ALL]]
// Placed: each partial sum on its stage, the total and the coefficient on
// every stage.
// PLACED-LABEL: func.func @train_step
// PLACED: dlc.add %{{.+}}, %{{.+}} {dlc.pp_stage = 1 : i64} : tensor<f32>
// PLACED-NEXT: dlc.pp_transfer %{{.+}} from 1 to 0 : tensor<f32>
// PLACED-NEXT: dlc.add %{{.+}}, %{{.+}} {dlc.pp_stage = 0 : i64} : tensor<f32>
// PLACED-NEXT: dlc.pp_transfer %{{.+}} from 0 to 1 : tensor<f32>
// PLACED-NEXT: dlc.pp_transfer %{{.+}} from 0 to 2 : tensor<f32>
// PLACED-NEXT: dlc.add %{{.+}}, %{{.+}} : tensor<f32>
// PLACED-NEXT: dlc.sqrt %{{.+}} : tensor<f32>
module attributes {dlc.pipeline_stages = 3 : i64} {
  dlc.global @w0 : tensor<4xf32> = dense<0.5> : tensor<4xf32>
  dlc.global @w1 : tensor<4xf32> = dense<0.5> : tensor<4xf32>
  dlc.global @w2 : tensor<4xf32> = dense<0.5> : tensor<4xf32>
  dlc.global @unused : tensor<4xf32> = dense<0.5> : tensor<4xf32>
  func.func @loss_grad(%w0: tensor<4xf32> {dlc.name = "w0", dlc.role = "param"}, %w1: tensor<4xf32> {dlc.name = "w1", dlc.role = "param"}, %w2: tensor<4xf32> {dlc.name = "w2", dlc.role = "param"}, %u: tensor<4xf32> {dlc.name = "unused", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss", dlc.pp_stage = 2 : i64}, tensor<4xf32> {dlc.name = "w0", dlc.role = "gradient"}, tensor<4xf32> {dlc.name = "w1", dlc.role = "gradient"}, tensor<4xf32> {dlc.name = "w2", dlc.role = "gradient"}, tensor<4xf32> {dlc.name = "unused", dlc.role = "gradient"}) {
    %l = dlc.reduce_sum %w2 axes [0] {dlc.pp_stage = 2 : i64} : tensor<4xf32> -> tensor<f32>
    %g0 = dlc.mul %w0, %w0 {dlc.pp_stage = 0 : i64} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %g1 = dlc.mul %w1, %w1 {dlc.pp_stage = 1 : i64} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %g2 = dlc.mul %w2, %w2 {dlc.pp_stage = 1 : i64} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %z = dlc.constant dense<0.0> : tensor<4xf32>
    return %l, %g0, %g1, %g2, %z : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}
