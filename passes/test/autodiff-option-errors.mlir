// The errors of dlc-autodiff that come with its options, one run each
// (-verify-diagnostics takes one set of pass options per file).
// RUN: not dlc-opt %s '-dlc-autodiff=freeze=fc[' 2>&1 | FileCheck %s --check-prefix=REGEX
// RUN: not dlc-opt %s -dlc-autodiff=freeze=fc 2>&1 | FileCheck %s --check-prefix=NOMATCH
// RUN: not dlc-opt %s '-dlc-autodiff=freeze=fc\..*|mask' 2>&1 | FileCheck %s --check-prefix=ALL
// RUN: not dlc-opt %s -dlc-autodiff=function=loss_fn 2>&1 | FileCheck %s --check-prefix=FUNCTION
// RUN: not dlc-opt %s '-dlc-autodiff=function=loss_fn vjp=true' 2>&1 | FileCheck %s --check-prefix=FUNCTION
// RUN: not dlc-opt %s '-dlc-autodiff=function=scatter vjp=true' 2>&1 | FileCheck %s --check-prefix=VJP
// RUN: not dlc-opt %s '-dlc-autodiff=function=taken vjp=true' 2>&1 | FileCheck %s --check-prefix=VJP-TAKEN
// RUN: not dlc-opt %s '-dlc-autodiff=function=blocks vjp=true' 2>&1 | FileCheck %s --check-prefix=VJP-BLOCKS

// The vector-Jacobian product's name must be free; its function, one block.
// VJP-TAKEN: error: dlc-autodiff: the module already has a symbol @taken_vjp
// VJP-BLOCKS: error: dlc-autodiff: @blocks is not a function with one block
// REGEX: error: dlc-autodiff: freeze 'fc[' is not a valid regular expression: {{.+}}
// The pattern must match the whole name; the message lists every float
// parameter, frozen or not, the integer one aside.
// NOMATCH: error: dlc-autodiff: freeze 'fc' matches no parameter; the parameters are: fc.weight, fc.bias, mask{{$}}
// ALL: error: dlc-autodiff: @loss has no trainable parameter
// FUNCTION: error: dlc-autodiff: no function @loss_fn with a body
// VJP: autodiff-option-errors.mlir:[[@LINE+10]]:1: error: no gradient rule for 1 op on the path to the loss: {{.*}}autodiff-option-errors.mlir:[[@LINE+11]]:8 [dlc.scatter_elements]{{$}}

func.func @loss(%w: tensor<3xf32> {dlc.name = "fc.weight", dlc.role = "param"}, %b: tensor<3xf32> {dlc.name = "fc.bias", dlc.role = "param"}, %m: tensor<3xf32> {dlc.name = "mask", dlc.role = "param"}, %n: tensor<3xi64> {dlc.name = "count", dlc.role = "param"}) -> tensor<f32> {
  %0 = dlc.mul %w, %m : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %1 = dlc.add %0, %b : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %2 = dlc.reduce_sum %1 axes [0] : tensor<3xf32> -> tensor<f32>
  return %2 : tensor<f32>
}

// A vector-Jacobian product needs rules too.
func.func @scatter(%w: tensor<3xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) -> tensor<3xf32> {
  %0 = dlc.scatter_elements %w[%i], %u {axis = 0 : i64} reduction mul : tensor<3xf32>, tensor<2xi64>, tensor<2xf32>
  return %0 : tensor<3xf32>
}

func.func @taken(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = dlc.exp %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @taken_vjp(tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)

func.func @blocks(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = dlc.exp %x : tensor<3xf32>
  return %0 : tensor<3xf32>
^bb1(%1: tensor<3xf32>):
  return %1 : tensor<3xf32>
}
