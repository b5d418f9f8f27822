// RUN: dlc-opt %s '-dlc-data-parallel=ranks=2 zero=1' '--dlc-optimizer=optimizer=sgd momentum=0.9' | FileCheck %s
// ZeRO-1 with tensor parallelism: a split parameter's gradient is its
// tensor rank's slice's, reduce-scattered among that tensor rank's
// replicas into a shard of the slice. The momentum buffer holds that
// shard: dlc.sharded is the slice's type, dlc.tp_split the slice's
// dimension, and its initial value is its own (every rank's alike). A
// replicated parameter's state is sharded as without tensor ranks.
// CHECK: dlc.global @optimizer.w.momentum_buffer : tensor<3xf32> = dense<0.000000e+00> : tensor<3xf32> {dlc.sharded = tensor<2x3xf32>, dlc.tp_split = 0 : i64}
// CHECK: dlc.global @optimizer.b.momentum_buffer : tensor<2xf32> = dense<0.000000e+00> : tensor<2xf32> {dlc.sharded = tensor<4xf32>}
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: tensor<3xf32> {dlc.name = "optimizer.w.momentum_buffer", dlc.role = "optimizer_state", dlc.sharded = tensor<2x3xf32>, dlc.tp_split = 0 : i64}
// CHECK: dlc.reduce_scatter mean ranks 2 bucket 0 %{{.+}}, %{{.+}} : tensor<2x3xf32>, tensor<4xf32>
// CHECK: dlc.rank_shard ranks 2 %{{.+}} : tensor<2x3xf32>
// CHECK: dlc.all_gather ranks 2 bucket 1 %{{.+}}, %{{.+}} : tensor<3xf32>, tensor<2xf32> -> tensor<2x3xf32>, tensor<4xf32>
module attributes {dlc.tensor_parallel = 2 : i64} {
  dlc.global @w : tensor<2x3xf32> = dense<0.5> : tensor<4x3xf32> {dlc.tp_split = 0 : i64}
  dlc.global @b : tensor<4xf32> = dense<0.5> : tensor<4xf32>
  func.func @loss_grad(%w: tensor<2x3xf32> {dlc.name = "w", dlc.role = "param", dlc.tp_split = 0 : i64}, %b: tensor<4xf32> {dlc.name = "b", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2x3xf32> {dlc.name = "w", dlc.role = "gradient", dlc.tp_split = 0 : i64}, tensor<4xf32> {dlc.name = "b", dlc.role = "gradient"}) {
    %l = dlc.reduce_sum %b axes [0] : tensor<4xf32> -> tensor<f32>
    %gw = dlc.mul %w, %w : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
    %gb = dlc.mul %b, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    return %l, %gw, %gb : tensor<f32>, tensor<2x3xf32>, tensor<4xf32>
  }
}
