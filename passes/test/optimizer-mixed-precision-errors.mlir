// RUN: dlc-opt %s -split-input-file -dlc-optimizer -verify-diagnostics
// The errors of dlc-optimizer about mixed precision: a gradient function's
// loss scale (dlc-autodiff's loss-scale; the options' errors are in
// loss-scaling-errors.mlir) and the globals of 16-bit parameter copies.
// They are reported on the module.

// The scale must be an f32 scalar named dlc.loss_scale.
// expected-error@+1 {{dlc-optimizer: argument 1 of @loss_grad (role loss_scale) must be the only one, an f32 scalar named 'dlc.loss_scale'}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %s: tensor<f16> {dlc.name = "dlc.loss_scale", dlc.role = "loss_scale"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<2xf32>
  }
}

// -----

// expected-error@+1 {{dlc-optimizer: argument 2 of @loss_grad (role loss_scale) must be the only one, an f32 scalar named 'dlc.loss_scale'}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %s: tensor<f32> {dlc.name = "dlc.loss_scale", dlc.role = "loss_scale"}, %t: tensor<f32> {dlc.name = "scale2", dlc.role = "loss_scale"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<2xf32>
  }
}

// -----

// The globals loss scaling adds must be free.
// expected-error@+1 {{dlc-optimizer: the module already has a symbol @"dlc.loss_scale", which train_step adds}}
module {
  dlc.global @dlc.loss_scale : tensor<f32> = dense<1.0> : tensor<f32>
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %s: tensor<f32> {dlc.name = "dlc.loss_scale", dlc.role = "loss_scale"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<2xf32>
  }
}

// -----

// expected-error@+1 {{dlc-optimizer: the module already has a symbol @"dlc.skipped_steps", which train_step adds}}
module {
  dlc.global @dlc.skipped_steps : tensor<i64> = dense<0> : tensor<i64>
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %s: tensor<f32> {dlc.name = "dlc.loss_scale", dlc.role = "loss_scale"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<2xf32>
  }
}

// -----

// A parameter's 16-bit copy is a new global too.
// expected-error@+1 {{dlc-optimizer: the module already has a symbol @"w@bf16", which train_step adds}}
module {
  dlc.global @"w@bf16" : tensor<2xbf16>
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    %c = dlc.cast %w : tensor<2xf32> to tensor<2xbf16>
    %f = dlc.cast %c : tensor<2xbf16> to tensor<2xf32>
    %0 = dlc.reduce_sum %f axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<2xf32>
  }
}

// -----

// GradScaler unscales float32 gradients only.
// expected-error@+1 {{dlc-optimizer: loss scaling needs float32 or float64 parameters (master weights); 'w' is 'f16'}}
module {
  func.func @loss_grad(%w: tensor<2xf16> {dlc.name = "w", dlc.role = "param"}, %s: tensor<f32> {dlc.name = "dlc.loss_scale", dlc.role = "loss_scale"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf16> {dlc.name = "w", dlc.role = "gradient"}) {
    %c = dlc.cast %w : tensor<2xf16> to tensor<2xf32>
    %0 = dlc.reduce_sum %c axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<2xf16>
  }
}
