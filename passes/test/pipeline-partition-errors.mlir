// RUN: dlc-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect '-dlc-pipeline-partition=stages=2 microbatches=4'

// expected-error@below {{dlc-pipeline-partition: the module is already partitioned into 2 pipeline stages}}
module attributes {dlc.pipeline_stages = 2 : i64} {
}

// -----

// expected-error@below {{dlc-pipeline-partition: no function returns a loss (dlc.role = "loss"); run dlc-add-loss first}}
module {
  func.func @forward(%x: tensor<8xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<8xf32> {dlc.name = "y", dlc.role = "output"}) {
    return %x : tensor<8xf32>
  }
}

// -----

// expected-error@below {{'func.func' op already has a backward pass (it returns gradients): dlc-pipeline-partition runs before dlc-autodiff, which keeps each stage's backward on its stage}}
func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
  %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
  return %0, %w : tensor<f32>, tensor<2xf32>
}

// -----

// expected-error@below {{'func.func' op has more than one block; dlc-pipeline-partition cuts single-block functions}}
func.func @loss(%x: tensor<8xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}) {
  "test.br"()[^next] : () -> ()
^next:
  %0 = dlc.reduce_sum %x axes [0] : tensor<8xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// expected-error@below {{'func.func' op reads no input or label: there is no batch to pipeline}}
func.func @loss(%w: tensor<8xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}) {
  %0 = dlc.reduce_sum %w axes [0] : tensor<8xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// The weight's negation reads no batch: one op is left for two stages.
// expected-error@below {{'func.func' op has 1 ops that read the batch, fewer than the 2 pipeline stages}}
func.func @loss(%x: tensor<8xf32> {dlc.name = "x", dlc.role = "input"}, %w: tensor<8xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<8xf32> {dlc.name = "loss", dlc.role = "loss"}) {
  %0 = dlc.neg %w : tensor<8xf32>
  %1 = dlc.mul %x, %0 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
