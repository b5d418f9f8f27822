// RUN: dlc-opt %s -split-input-file '--dlc-optimizer=optimizer=sgd momentum=0.9 clip-grad-norm=1' | FileCheck %s
// ZeRO-1 (dlc-data-parallel zero=1 left each gradient as this rank's 1-D
// shard): the optimizer updates the matching shard of each parameter
// (dlc.rank_shard), keeps its state for that shard alone (sharded globals
// that carry the whole type), sums the clipping norm's squares over the
// ranks (the shards' padding adds 0), and all-gathers the updated shards,
// one collective per gradient bucket, into the whole parameters.
// CHECK: dlc.global @optimizer.w.momentum_buffer : tensor<8xf32> = dense<0.000000e+00> : tensor<8xf32> {dlc.sharded = tensor<3x5xf32>}
// CHECK: dlc.global @optimizer.b.momentum_buffer : tensor<2xf32> = dense<0.000000e+00> : tensor<2xf32> {dlc.sharded = tensor<3xf32>}
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W:[^:]+]]: tensor<3x5xf32> {dlc.name = "w", dlc.role = "param"}, %[[B:[^:]+]]: tensor<3xf32> {dlc.name = "b", dlc.role = "param"}
// CHECK-SAME: tensor<8xf32> {dlc.name = "optimizer.w.momentum_buffer", dlc.role = "optimizer_state", dlc.sharded = tensor<3x5xf32>}
// CHECK-SAME: -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<f32> {dlc.name = "lr", dlc.role = "metric"}, tensor<f32> {dlc.name = "grad_norm", dlc.role = "metric"}, tensor<8xf32> {dlc.name = "optimizer.w.momentum_buffer", dlc.role = "optimizer_state", dlc.sharded = tensor<3x5xf32>}, tensor<2xf32> {dlc.name = "optimizer.b.momentum_buffer", dlc.role = "optimizer_state", dlc.sharded = tensor<3xf32>}, tensor<3x5xf32> {dlc.name = "w", dlc.role = "param"}, tensor<3xf32> {dlc.name = "b", dlc.role = "param"}
// CHECK: %[[S:.+]]:2 = dlc.reduce_scatter mean ranks 2 bucket 0 %[[W]], %[[B]]
// CHECK: %[[SQ:.+]] = dlc.add %{{.+}}, %{{.+}} : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT: %[[ALL:.+]] = dlc.all_reduce sum bucket 1 %[[SQ]] : tensor<f32>
// CHECK-NEXT: dlc.sqrt %[[ALL]]
// CHECK: %[[WS:.+]] = dlc.rank_shard ranks 2 %[[W]] : tensor<3x5xf32>
// CHECK: %[[WN:.+]] = dlc.sub %[[WS]], %{{.+}} : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
// CHECK: %[[BS:.+]] = dlc.rank_shard ranks 2 %[[B]] : tensor<3xf32>
// CHECK: %[[BN:.+]] = dlc.sub %[[BS]], %{{.+}} : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
// CHECK-NEXT: %[[G:.+]]:2 = dlc.all_gather ranks 2 bucket 2 %[[WN]], %[[BN]] : tensor<8xf32>, tensor<2xf32> -> tensor<3x5xf32>, tensor<3xf32>
// CHECK: return {{.*}}, %[[G]]#0, %[[G]]#1, %{{.+}} :
// A [1] parameter's shard has its type, and is still a shard (rank 0
// holds the gradient, the others padding): it is updated as one.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: tensor<1xf32> {dlc.name = "optimizer.c.momentum_buffer", dlc.role = "optimizer_state", dlc.sharded = tensor<1xf32>}
// CHECK: %[[CS:.+]] = dlc.rank_shard ranks 2 %{{.+}} : tensor<1xf32>
// CHECK: %[[CN:.+]] = dlc.sub %[[CS]], %{{.+}} : tensor<1xf32>, tensor<1xf32> -> tensor<1xf32>
// CHECK-NEXT: dlc.all_gather ranks 2 bucket 2 %[[CN]] : tensor<1xf32> -> tensor<1xf32>
module attributes {dlc.data_parallel = 2 : i64, dlc.zero = 1 : i64} {
  dlc.global @w : tensor<3x5xf32> = dense<0.5> : tensor<3x5xf32>
  dlc.global @b : tensor<3xf32> = dense<0.0> : tensor<3xf32>
  func.func @loss_grad(%w: tensor<3x5xf32> {dlc.name = "w", dlc.role = "param"}, %b: tensor<3xf32> {dlc.name = "b", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<8xf32> {dlc.name = "w", dlc.role = "gradient", dlc.sharded = tensor<3x5xf32>}, tensor<2xf32> {dlc.name = "b", dlc.role = "gradient", dlc.sharded = tensor<3xf32>}) {
    %l = dlc.reduce_sum %b axes [0] : tensor<3xf32> -> tensor<f32>
    %s:2 = dlc.reduce_scatter mean ranks 2 bucket 0 %w, %b : tensor<3x5xf32>, tensor<3xf32>
    return %l, %s#0, %s#1 : tensor<f32>, tensor<8xf32>, tensor<2xf32>
  }
}

// -----

module attributes {dlc.data_parallel = 2 : i64, dlc.zero = 1 : i64} {
  dlc.global @c : tensor<1xf32> = dense<0.5> : tensor<1xf32>
  func.func @loss_grad(%c: tensor<1xf32> {dlc.name = "c", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<1xf32> {dlc.name = "c", dlc.role = "gradient", dlc.sharded = tensor<1xf32>}) {
    %l = dlc.reduce_sum %c axes [0] : tensor<1xf32> -> tensor<f32>
    %s = dlc.reduce_scatter mean ranks 2 bucket 0 %c : tensor<1xf32>
    return %l, %s : tensor<f32>, tensor<1xf32>
  }
}
