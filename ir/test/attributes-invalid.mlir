// RUN: dlc-opt %s -split-input-file -verify-diagnostics

// The dialect verifies its discardable attributes wherever they appear:
// dlc-fuse's epilogue mark on ops, and the role, name and class facts of
// function arguments and results.

func.func @unknown_epilogue(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{has dlc.epilogue = "bias_gelu"; an epilogue mark is "bias" or "bias_relu"}}
  %0 = dlc.matmul %a, %b {dlc.epilogue = "bias_gelu"} : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @no_epilogue_mark(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{has dlc.epilogue = "none"; an epilogue mark is "bias" or "bias_relu"}}
  %0 = dlc.matmul %a, %b {dlc.epilogue = "none"} : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @epilogue_not_a_string(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{has dlc.epilogue = 1 : i32; an epilogue mark is "bias" or "bias_relu"}}
  %0 = dlc.matmul %a, %b {dlc.epilogue = 1 : i32} : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @epilogue_on_an_add(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has dlc.epilogue, which marks matmuls and convolutions only}}
  %0 = dlc.add %a, %a {dlc.epilogue = "bias"} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument #1 has dlc.role = "weights"; a role is one of param, state, optimizer_state, step, hyperparameter, weight_copy, loss_scale, input, label, output, loss, gradient or metric}}
func.func @unknown_role(%x: tensor<4xf32> {dlc.role = "input"}, %w: tensor<4xf32> {dlc.role = "weights"}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{result #0 has dlc.role = 3 : i64; a role is one of}}
func.func @role_not_a_string(%x: tensor<4xf32>) -> (tensor<4xf32> {dlc.role = 3}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument #0 has dlc.name = 7 : i64, not a string}}
func.func @name_not_a_string(%x: tensor<4xf32> {dlc.name = 7}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument #0 has dlc.num_classes = "ten", not an integer}}
func.func @classes_not_an_integer(%y: tensor<4xi64> {dlc.role = "label", dlc.num_classes = "ten"}) -> tensor<4xi64> {
  return %y : tensor<4xi64>
}

// -----

// Every role, and the marks dlc-fuse writes, verify.
func.func @all_roles(%a: tensor<4xf32> {dlc.role = "param"}, %b: tensor<4xf32> {dlc.role = "state"}, %c: tensor<4xf32> {dlc.role = "optimizer_state"}, %d: tensor<i64> {dlc.role = "step"}, %e: tensor<f32> {dlc.role = "hyperparameter"}, %f: tensor<4xbf16> {dlc.role = "weight_copy"}, %g: tensor<f32> {dlc.role = "loss_scale"}, %h: tensor<4x8xf32> {dlc.role = "input", dlc.name = "h"}, %i: tensor<4xi64> {dlc.role = "label", dlc.num_classes = 4, dlc.ignore_index = -100}, %w: tensor<8x4xf32> {dlc.role = "param"}) -> (tensor<4x4xf32> {dlc.role = "output"}, tensor<f32> {dlc.role = "loss"}, tensor<4xf32> {dlc.role = "gradient"}, tensor<f32> {dlc.role = "metric"}) {
  %m = dlc.matmul %h, %w {dlc.epilogue = "bias_relu"} : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
  return %m, %e, %a, %g : tensor<4x4xf32>, tensor<f32>, tensor<4xf32>, tensor<f32>
}
