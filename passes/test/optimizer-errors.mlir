// RUN: dlc-opt %s -split-input-file -dlc-optimizer -verify-diagnostics
// The errors of dlc-optimizer that depend on the module (with the options'
// errors in optimizer-option-errors.mlir). They are reported on the module.

// expected-error@+1 {{dlc-optimizer: no function @loss_grad with a body}}
module {
  func.func @loss(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> tensor<f32> {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// expected-error@+1 {{dlc-optimizer: no function @loss_grad with a body}}
module {
  func.func private @loss_grad(tensor<2xf32>) -> (tensor<f32>, tensor<2xf32>)
}

// -----

// expected-error@+1 {{dlc-optimizer: the module already has a symbol @train_step}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<2xf32>
  }
  func.func private @train_step()
}

// -----

// expected-error@+1 {{dlc-optimizer: @loss_grad returns no gradient}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "output"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<2xf32>
  }
}

// -----

// Each gradient updates the parameter of its name, of its type.
// expected-error@+1 {{dlc-optimizer: result 1 of @loss_grad (gradient 'v') matches no parameter of the same name and type}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "v", dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<2xf32>
  }
}

// -----

// expected-error@+1 {{dlc-optimizer: result 1 of @loss_grad (gradient 'w') matches no parameter of the same name and type}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf64> {dlc.name = "w", dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    %1 = dlc.cast %w : tensor<2xf32> to tensor<2xf64>
    return %0, %1 : tensor<f32>, tensor<2xf64>
  }
}

// -----

// expected-error@+1 {{dlc-optimizer: result 1 of @loss_grad (gradient 'x') matches no parameter of the same name and type}}
module {
  func.func @loss_grad(%x: tensor<2xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "x", dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %x axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %x : tensor<f32>, tensor<2xf32>
  }
}

// -----

// expected-error@+1 {{dlc-optimizer: result 1 of @loss_grad (gradient '') matches no parameter of the same name and type}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<2xf32>
  }
}

// -----

// Each state result updates the argument of its name.
// expected-error@+1 {{dlc-optimizer: result 1 of @loss_grad (state 'bn.mean') matches no argument of the same name and type}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "bn.mean", dlc.role = "state"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w, %w : tensor<f32>, tensor<2xf32>, tensor<2xf32>
  }
}
