// RUN: dlc-opt %s -split-input-file -allow-unregistered-dialect -dlc-autodiff -verify-diagnostics
// The errors of dlc-autodiff that depend on the module (with the options'
// errors in autodiff-option-errors.mlir).

// expected-error@+1 {{dlc-autodiff: no function @loss with a body}}
module {
  func.func private @loss(tensor<3xf32>) -> tensor<f32>
}

// -----

// expected-error@+1 {{dlc-autodiff: the first result of @loss must be the loss, a float scalar}}
func.func @loss(%w: tensor<3xf32> {dlc.name = "w", dlc.role = "param"}) -> tensor<3xf32> {
  return %w : tensor<3xf32>
}

// -----

// expected-error@+1 {{dlc-autodiff: the first result of @loss must be the loss, a float scalar}}
func.func @loss(%n: tensor<i64> {dlc.name = "n", dlc.role = "param"}) -> tensor<i64> {
  return %n : tensor<i64>
}

// -----

// expected-error@+1 {{dlc-autodiff: the first result of @loss must be the loss, a float scalar}}
func.func @loss(%w: tensor<3xf32> {dlc.name = "w", dlc.role = "param"}) {
  return
}

// -----

// expected-error@+1 {{dlc-autodiff: the first result of @loss must be the loss, a float scalar}}
func.func @loss(%w: f32 {dlc.name = "w", dlc.role = "param"}) -> f32 {
  return %w : f32
}

// -----

// Parameters the loss does not read, a "param" without a name, and
// arguments of other roles are not trainable.
// expected-error@+1 {{dlc-autodiff: @loss has no trainable parameter (no float argument with role 'param' that the loss depends on)}}
func.func @loss(%w: tensor<3xf32> {dlc.name = "w", dlc.role = "param"}, %u: tensor<3xf32> {dlc.role = "param"}, %x: tensor<3xf32> {dlc.name = "x", dlc.role = "input"}, %s: tensor<3xf32> {dlc.name = "s", dlc.role = "state"}) -> tensor<f32> {
  %0 = dlc.add %x, %s : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %1 = dlc.add %0, %u : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %2 = dlc.reduce_sum %1 axes [0] : tensor<3xf32> -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// Reached only through an integer value: no gradient flows.
// expected-error@+1 {{dlc-autodiff: @loss has no trainable parameter}}
func.func @loss(%w: tensor<3xf32> {dlc.name = "w", dlc.role = "param"}) -> tensor<f32> {
  %0 = dlc.cast %w : tensor<3xf32> to tensor<3xi64>
  %1 = dlc.cast %0 : tensor<3xi64> to tensor<3xf32>
  %2 = dlc.reduce_sum %1 axes [0] : tensor<3xf32> -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// Every op on the path without a rule, in one error at the function: a
// scatter with reduction mul (twice), a call, another dialect's op. The
// ops off the path (the one on the integer indices, the one whose result
// the loss does not use) are not listed.
func.func private @helper(tensor<3xf32>) -> tensor<3xf32>
// expected-error-re@+1 {{no gradient rule for 4 ops on the path to the loss: {{.*}}autodiff-errors.mlir:72:8 [dlc.scatter_elements]; {{.*}}autodiff-errors.mlir:73:8 [dlc.scatter_elements]; {{.*}}autodiff-errors.mlir:74:8 [func.call]; {{.*}}autodiff-errors.mlir:75:8 [other.op]{{$}}}}
func.func @loss(%w: tensor<3xf32> {dlc.name = "w", dlc.role = "param"}, %i: tensor<2xi64> {dlc.name = "i", dlc.role = "input"}, %u: tensor<2xf32> {dlc.name = "u", dlc.role = "input"}) -> (tensor<f32> {dlc.name = "loss"}) {
  %j = "other.index_op"(%i) : (tensor<2xi64>) -> tensor<2xi64>
  %dead = "other.unused"(%w) : (tensor<3xf32>) -> tensor<3xf32>
  %0 = dlc.scatter_elements %w[%j], %u {axis = 0 : i64} reduction mul : tensor<3xf32>, tensor<2xi64>, tensor<2xf32>
  %1 = dlc.scatter_elements %0[%j], %u {axis = 0 : i64} reduction mul : tensor<3xf32>, tensor<2xi64>, tensor<2xf32>
  %2 = func.call @helper(%1) : (tensor<3xf32>) -> tensor<3xf32>
  %3 = "other.op"(%2) : (tensor<3xf32>) -> tensor<3xf32>
  %4 = dlc.reduce_sum %3 axes [0] : tensor<3xf32> -> tensor<f32>
  return %4 : tensor<f32>
}

// -----

// One op: the singular. (The line numbers in these messages are this
// file's: keep them in step when editing above.)
// expected-error-re@+1 {{no gradient rule for 1 op on the path to the loss: {{.*}}autodiff-errors.mlir:86:8 [dlc.scatter_elements]{{$}}}}
func.func @loss(%w: tensor<3xf32> {dlc.name = "w", dlc.role = "param"}, %i: tensor<2xi64>, %u: tensor<2xf32>) -> tensor<f32> {
  %0 = dlc.scatter_elements %w[%i], %u {axis = 0 : i64} reduction max : tensor<3xf32>, tensor<2xi64>, tensor<2xf32>
  %1 = dlc.reduce_sum %0 axes [0] : tensor<3xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// The gradient function's name must be free.
func.func private @loss_grad(tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>)
// expected-error@+1 {{dlc-autodiff: the module already has a symbol @loss_grad}}
func.func @loss(%w: tensor<3xf32> {dlc.name = "w", dlc.role = "param"}) -> tensor<f32> {
  %0 = dlc.reduce_sum %w axes [0] : tensor<3xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A body of more than one block.
// expected-error@+1 {{dlc-autodiff: @loss is not a function with one block}}
func.func @loss(%w: tensor<3xf32> {dlc.name = "w", dlc.role = "param"}) -> tensor<f32> {
  %0 = dlc.reduce_sum %w axes [0] : tensor<3xf32> -> tensor<f32>
  return %0 : tensor<f32>
^bb1(%1: tensor<f32>):
  return %1 : tensor<f32>
}

// -----

// Attention's log-sum-exp result is for its gradient only.
func.func @loss(%q: tensor<4x2xf32> {dlc.name = "q", dlc.role = "param"}, %k: tensor<4x2xf32>, %v: tensor<4x2xf32>) -> tensor<f32> {
  // expected-error@+1 {{'dlc.attention' op has a gradient flowing into its log-sum-exp result, which has no gradient rule}}
  %out, %lse = dlc.attention %q, %k, %v scale 1.0 : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>, tensor<4xf32>
  %l = dlc.reduce_sum %lse axes [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
