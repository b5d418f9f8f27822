// RUN: dlc-opt %s -split-input-file -dlc-add-loss=loss=cross_entropy -verify-diagnostics
// The errors of dlc-add-loss that depend on the module (with the options'
// errors in add-loss-option-errors.mlir). They are reported on the module.

// expected-error@+1 {{dlc-add-loss: no function @forward_train with a body}}
module {
  func.func @forward(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
    return %x : tensor<4x5xf32>
  }
}

// -----

// expected-error@+1 {{dlc-add-loss: no function @forward_train with a body}}
module {
  func.func private @forward_train(tensor<4x5xf32>) -> tensor<4x5xf32>
}

// -----

// expected-error@+1 {{dlc-add-loss: the module already has a symbol @loss}}
module {
  func.func @forward_train(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
    return %x : tensor<4x5xf32>
  }
  dlc.global @loss : tensor<f32> = dense<0.0> : tensor<f32>
}

// -----

// State results are not outputs the loss can use.
// expected-error@+1 {{dlc-add-loss: the model has 2 outputs; name the one the loss is computed from; the outputs are: logits, aux}}
module {
  func.func @forward_train(%s: tensor<2xf32> {dlc.name = "bn.mean", dlc.role = "state"}, %x: tensor<4x5xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<2xf32> {dlc.name = "bn.mean", dlc.role = "state"}, tensor<4x5xf32> {dlc.name = "logits", dlc.role = "output"}, tensor<4x5xf32> {dlc.name = "aux", dlc.role = "output"}) {
    return %s, %x, %x : tensor<2xf32>, tensor<4x5xf32>, tensor<4x5xf32>
  }
}

// -----

// expected-error@+1 {{dlc-add-loss: the label name 'labels' is already an input of the model}}
module {
  func.func @forward_train(%x: tensor<4x5xf32> {dlc.name = "x", dlc.role = "input"}, %l: tensor<4xi64> {dlc.name = "labels", dlc.role = "input"}) -> (tensor<4x5xf32> {dlc.name = "logits", dlc.role = "output"}) {
    return %x : tensor<4x5xf32>
  }
}

// -----

// expected-error@+1 {{dlc-add-loss: output 'classes' is 'tensor<4xi64>', not a statically shaped float tensor}}
module {
  func.func @forward_train(%x: tensor<4xi64> {dlc.name = "x", dlc.role = "input"}) -> (tensor<4xi64> {dlc.name = "classes", dlc.role = "output"}) {
    return %x : tensor<4xi64>
  }
}

// -----

// expected-error@+1 {{dlc-add-loss: output 'logits' is 'tensor<?x5xf32>', not a statically shaped float tensor}}
module {
  func.func @forward_train(%x: tensor<?x5xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<?x5xf32> {dlc.name = "logits", dlc.role = "output"}) {
    return %x : tensor<?x5xf32>
  }
}

// -----

// expected-error@+1 {{dlc-add-loss: output 'logits' is 'tensor<*xf32>', not a statically shaped float tensor}}
module {
  func.func @forward_train(%x: tensor<*xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<*xf32> {dlc.name = "logits", dlc.role = "output"}) {
    return %x : tensor<*xf32>
  }
}

// -----

// expected-error@+1 {{dlc-add-loss: cross_entropy needs class scores on the last axis; the output is a scalar}}
module {
  func.func @forward_train(%x: tensor<f32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<f32> {dlc.name = "logits", dlc.role = "output"}) {
    return %x : tensor<f32>
  }
}

// -----

// expected-error@+1 {{dlc-add-loss: cross_entropy needs at least one class; the output is 'tensor<4x0xf32>'}}
module {
  func.func @forward_train(%x: tensor<4x0xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<4x0xf32> {dlc.name = "logits", dlc.role = "output"}) {
    return %x : tensor<4x0xf32>
  }
}

// -----

// expected-error@+1 {{dlc-add-loss: @forward_train has more than one block}}
module {
  func.func @forward_train(%x: tensor<4x5xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<4x5xf32> {dlc.name = "logits", dlc.role = "output"}) {
    return %x : tensor<4x5xf32>
  ^bb1(%y: tensor<4x5xf32>):
    return %y : tensor<4x5xf32>
  }
}
