// RUN: dlc-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect -dlc-pipeline-schedule=microbatches=2

// expected-error@below {{dlc-pipeline-schedule: the module has no pipeline stages (dlc.pipeline_stages); run dlc-pipeline-partition first}}
module {
}

// -----

// expected-error@below {{dlc-pipeline-schedule: the module is already scheduled for 4 micro-batches}}
module attributes {dlc.pipeline_stages = 2 : i64, dlc.microbatches = 4 : i64} {
}

// -----

// expected-error@below {{dlc-pipeline-schedule: no function returns gradients of staged ops; run dlc-autodiff on the partitioned loss first}}
module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @loss(%x: tensor<2xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}) {
    %0 = dlc.reduce_sum %x axes [0] {dlc.pp_stage = 1 : i64} : tensor<2xf32> -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

module attributes {dlc.pipeline_stages = 2 : i64} {
  // expected-error@below {{'func.func' op returns state 'bn.running_mean' (result #2), which micro-batches do not combine yet: only the loss and the gradients are averaged over them}}
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %x: tensor<2xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}, tensor<2xf32> {dlc.name = "bn.running_mean", dlc.role = "state"}) {
    %0 = dlc.mul %x, %w {dlc.pp_stage = 0 : i64} : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    %1 = dlc.reduce_sum %0 axes [0] {dlc.pp_stage = 1 : i64} : tensor<2xf32> -> tensor<f32>
    return %1, %x, %x : tensor<f32>, tensor<2xf32>, tensor<2xf32>
  }
}

// -----

module attributes {dlc.pipeline_stages = 2 : i64} {
  // expected-error@below {{'func.func' op returns no loss: a pipelined step's backward starts from its loss}}
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %x: tensor<2xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    %0 = dlc.mul %x, %w {dlc.pp_stage = 0 : i64} : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}

// -----

module attributes {dlc.pipeline_stages = 2 : i64} {
  // expected-error@below {{'func.func' op has input 'x' of 'tensor<f32>', with no static leading (batch) dimension to cut into micro-batches}}
  func.func @loss_grad(%w: tensor<f32> {dlc.name = "w", dlc.role = "param"}, %x: tensor<f32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<f32> {dlc.name = "w", dlc.role = "gradient"}) {
    %0 = dlc.mul %x, %w {dlc.pp_stage = 0 : i64} : tensor<f32>, tensor<f32> -> tensor<f32>
    return %0, %x : tensor<f32>, tensor<f32>
  }
}

// -----

module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %x: tensor<2xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    // expected-error@below {{'dlc.neg' op reads the batch but has no pipeline stage (dlc.pp_stage): dlc-pipeline-partition stages every such op}}
    %n = dlc.neg %x : tensor<2xf32>
    %0 = dlc.mul %n, %w {dlc.pp_stage = 0 : i64} : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    %1 = dlc.reduce_sum %0 axes [0] {dlc.pp_stage = 1 : i64} : tensor<2xf32> -> tensor<f32>
    return %1, %0 : tensor<f32>, tensor<2xf32>
  }
}
