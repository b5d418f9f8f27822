// RUN: dlc-opt %s -verify-diagnostics '-dlc-data-parallel=ranks=2 zero=1'
// ZeRO-1's flat shards and tensor-parallel slices do not compose yet.

// expected-error@below {{dlc-data-parallel: zero=1 does not yet shard the optimizer state of a tensor-parallel module}}
module attributes {dlc.tensor_parallel = 2 : i64} {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    return %w : tensor<2xf32>
  }
}
