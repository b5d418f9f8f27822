// RUN: dlc-opt %s -dlc-data-parallel=ranks=2 | FileCheck %s
// RUN: dlc-opt %s '-dlc-data-parallel=ranks=2 zero=1' | FileCheck %s --check-prefix=ZERO
// RUN: dlc-opt %s '-dlc-data-parallel=ranks=2 zero=1' '--dlc-optimizer=optimizer=sgd momentum=0.9' -dlc-pipeline-place | FileCheck %s --check-prefix=PLACED
// A pipelined module's gradients are reduced among each stage's replicas:
// every bucket holds one stage's gradients and carries that stage, so
// that the stage's ranks alone run it, on their replicas' communicator
// (numbered by stage, then in backward's order).
// Under ZeRO-1 the buckets are reduce-scattered the same way, the stage's
// replicas each updating their shard of the stage's parameters, and the
// optimizer's all-gather of a bucket's updated shards lands on that stage
// too (dlc-pipeline-place follows its operands).
// CHECK-LABEL: func.func @loss_grad
// CHECK: %[[G1:.+]] = dlc.mul %{{.+}} {dlc.pp_stage = 1 : i64}
// CHECK: %[[R1:.+]] = dlc.all_reduce mean bucket 1 %[[G1]] {dlc.pp_stage = 1 : i64}
// CHECK: %[[G0:.+]] = dlc.mul %{{.+}} {dlc.pp_stage = 0 : i64}
// CHECK: %[[R0:.+]] = dlc.all_reduce mean bucket 0 %[[G0]] {dlc.pp_stage = 0 : i64}
// CHECK: return %{{.+}}, %[[R0]], %[[R1]]
// ZERO-LABEL: func.func @loss_grad
// ZERO-SAME: tensor<3xf32> {dlc.name = "w0", dlc.role = "gradient", dlc.sharded = tensor<6xf32>}
// ZERO-SAME: tensor<2xf32> {dlc.name = "w1", dlc.role = "gradient", dlc.sharded = tensor<4xf32>}
// ZERO: dlc.reduce_scatter mean ranks 2 bucket 1 %{{.+}} {dlc.pp_stage = 1 : i64} : tensor<4xf32>
// ZERO: dlc.reduce_scatter mean ranks 2 bucket 0 %{{.+}} {dlc.pp_stage = 0 : i64} : tensor<6xf32>
// PLACED-LABEL: func.func @train_step
// PLACED-DAG: dlc.all_gather ranks 2 bucket {{[0-9]+}} %{{.+}} {dlc.pp_stage = 0 : i64} : tensor<3xf32> -> tensor<6xf32>
// PLACED-DAG: dlc.all_gather ranks 2 bucket {{[0-9]+}} %{{.+}} {dlc.pp_stage = 1 : i64} : tensor<2xf32> -> tensor<4xf32>
module attributes {dlc.pipeline_stages = 2 : i64} {
  dlc.global @w0 : tensor<6xf32> = dense<0.5> : tensor<6xf32>
  dlc.global @w1 : tensor<4xf32> = dense<0.5> : tensor<4xf32>
  func.func @loss_grad(%w0: tensor<6xf32> {dlc.name = "w0", dlc.role = "param"}, %w1: tensor<4xf32> {dlc.name = "w1", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss", dlc.pp_stage = 1 : i64}, tensor<6xf32> {dlc.name = "w0", dlc.role = "gradient"}, tensor<4xf32> {dlc.name = "w1", dlc.role = "gradient"}) {
    %l = dlc.reduce_sum %w1 axes [0] {dlc.pp_stage = 1 : i64} : tensor<4xf32> -> tensor<f32>
    %g1 = dlc.mul %w1, %w1 {dlc.pp_stage = 1 : i64} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %g0 = dlc.mul %w0, %w0 {dlc.pp_stage = 0 : i64} : tensor<6xf32>, tensor<6xf32> -> tensor<6xf32>
    return %l, %g0, %g1 : tensor<f32>, tensor<6xf32>, tensor<4xf32>
  }
}
