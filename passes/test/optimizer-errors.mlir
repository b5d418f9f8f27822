// RUN: dlc-opt %s -split-input-file -dlc-optimizer -verify-diagnostics
// The errors of dlc-optimizer that depend on the module (with the options'
// errors in optimizer-option-errors.mlir). They are reported on the module.

// expected-error@+1 {{dlc-optimizer: no function @loss_grad with a one-block body}}
module {
  func.func @loss(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> tensor<f32> {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// expected-error@+1 {{dlc-optimizer: no function @loss_grad with a one-block body}}
module {
  func.func private @loss_grad(tensor<2xf32>) -> (tensor<f32>, tensor<2xf32>)
}

// -----

// A body of more than one block.
// expected-error@+1 {{dlc-optimizer: no function @loss_grad with a one-block body}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<2xf32>
  ^bb1(%l: tensor<f32>, %g: tensor<2xf32>):
    return %l, %g : tensor<f32>, tensor<2xf32>
  }
}

// -----

// The symbols train_step adds (the function, the step count, the
// hyperparameters; the optimizer state's in optimizer-option-errors.mlir)
// must be free, whatever the symbol that has the name.
// expected-error@+1 {{dlc-optimizer: the module already has a symbol @"train_step", which train_step adds}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<2xf32>
  }
  func.func private @train_step()
}

// -----

// expected-error@+1 {{dlc-optimizer: the module already has a symbol @"dlc.step", which train_step adds}}
module {
  dlc.global @dlc.step : tensor<i64> = dense<0> : tensor<i64>
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<2xf32>
  }
}

// -----

// expected-error@+1 {{dlc-optimizer: the module already has a symbol @"dlc.lr", which train_step adds}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<2xf32>
  }
  func.func private @dlc.lr()
}

// -----

// expected-error@+1 {{dlc-optimizer: the module already has a symbol @"dlc.weight_decay", which train_step adds}}
module {
  dlc.global @dlc.weight_decay : tensor<f32> = dense<0.0> : tensor<f32>
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<2xf32>
  }
}

// -----

// The first result is the loss: a float scalar tensor.
// expected-error@+1 {{dlc-optimizer: the first result of @loss_grad must be the loss, a float scalar}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<2xf32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    return %w, %w : tensor<2xf32>, tensor<2xf32>
  }
}

// -----

// expected-error@+1 {{dlc-optimizer: the first result of @loss_grad must be the loss, a float scalar}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %n: tensor<i64> {dlc.name = "n", dlc.role = "input"}) -> (tensor<i64> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    return %n, %w : tensor<i64>, tensor<2xf32>
  }
}

// -----

// expected-error@+1 {{dlc-optimizer: the first result of @loss_grad must be the loss, a float scalar}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) {
    return
  }
}

// -----

// Results update arguments by name: names must be unique.
// expected-error@+1 {{dlc-optimizer: @loss_grad has two arguments named 'w'}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %x: tensor<2xf32> {dlc.name = "w", dlc.role = "input"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<2xf32>
  }
}

// -----

// expected-error@+1 {{dlc-optimizer: two results of @loss_grad update 'w'}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w, %w : tensor<f32>, tensor<2xf32>, tensor<2xf32>
  }
}

// -----

// A state result and a gradient for the same parameter.
// expected-error@+1 {{dlc-optimizer: two results of @loss_grad update 'w'}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "state"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w, %w : tensor<f32>, tensor<2xf32>, tensor<2xf32>
  }
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

// State results alone: still no gradient (checked before the step count
// and hyperparameter globals are added, so the clash is not reported).
// expected-error@+1 {{dlc-optimizer: @loss_grad returns no gradient}}
module {
  dlc.global @dlc.step : tensor<i64> = dense<0> : tensor<i64>
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %s: tensor<f32> {dlc.name = "s", dlc.role = "state"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<f32> {dlc.name = "s", dlc.role = "state"}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %s : tensor<f32>, tensor<f32>
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

// -----

// Under ZeRO-1 a gradient may be its parameter's shard, and nothing else.
// expected-error@+1 {{dlc-optimizer: result 1 of @loss_grad (gradient 'w') matches no parameter whose ZeRO-1 shard it is (dlc.sharded naming the parameter's type)}}
module attributes {dlc.data_parallel = 2 : i64, dlc.zero = 1 : i64} {
  func.func @loss_grad(%w: tensor<3x5xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<7xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    %l = dlc.constant dense<0.0> : tensor<f32>
    %g = dlc.constant dense<0.0> : tensor<7xf32>
    return %l, %g : tensor<f32>, tensor<7xf32>
  }
}

// -----

// expected-error@+1 {{dlc-optimizer: a module with dlc.zero must have it 1 (ZeRO stage 1) and dlc.data_parallel an i64 of at least 2 ranks}}
module attributes {dlc.data_parallel = 0 : i64, dlc.zero = 1 : i64} {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<1xf32> {dlc.name = "w", dlc.role = "gradient", dlc.sharded = tensor<2xf32>}) {
    %l = dlc.constant dense<0.0> : tensor<f32>
    %g = dlc.constant dense<0.0> : tensor<1xf32>
    return %l, %g : tensor<f32>, tensor<1xf32>
  }
}

// -----

// A tensor-parallel slice needs the module's tensor ranks.
// expected-error@+1 {{dlc-optimizer: argument 0 of @loss_grad ('w') is a tensor-parallel slice (dlc.tp_split) in a module without dlc.tensor_parallel}}
module {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param", dlc.tp_split = 0 : i64}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient", dlc.tp_split = 0 : i64}) {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<2xf32>
  }
}
