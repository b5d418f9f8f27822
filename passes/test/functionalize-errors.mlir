// RUN: dlc-opt %s -split-input-file -dlc-functionalize -verify-diagnostics
// Every error of dlc-functionalize.

// expected-error@+1 {{dlc-functionalize: @two_blocks has more than one block}}
func.func @two_blocks(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
^bb1:
  return %x : tensor<3xf32>
}

// -----

// A function that touches globals gains arguments and results; a call
// would no longer match it.
dlc.global @w : tensor<3xf32> = dense<0.5> : tensor<3xf32>
func.func @inner(%x: tensor<3xf32>) -> tensor<3xf32> {
  %w = dlc.global_load @w : tensor<3xf32>
  %0 = dlc.mul %x, %w : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @forward_train(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{dlc-functionalize: @inner reads or writes globals and is called; inline it first}}
  %0 = func.call @inner(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Calls to functions without globals are fine.
func.func @helper(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
func.func @caller(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @helper(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
