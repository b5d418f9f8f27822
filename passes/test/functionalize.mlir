// RUN: dlc-opt %s -split-input-file -dlc-functionalize | FileCheck %s --implicit-check-not=dlc.global_load --implicit-check-not=dlc.global_store
// A second run finds no global to rewrite and changes nothing.
// RUN: dlc-opt %s -split-input-file -dlc-functionalize -dlc-functionalize | FileCheck %s --implicit-check-not=dlc.global_load --implicit-check-not=dlc.global_store
// Globals become leading arguments (in order of first use) and written
// globals trailing results; roles: param (never written), state (written by
// some function), input and output for the function's own values.

// CHECK: dlc.global @w : tensor<3x2xf32> = dense<5.000000e-01>
// CHECK: dlc.global @b : tensor<2xf32> = dense<0.000000e+00>
// CHECK: dlc.global @count : tensor<f32> = dense<0.000000e+00>
dlc.global @w : tensor<3x2xf32> = dense<0.5> : tensor<3x2xf32>
dlc.global @b : tensor<2xf32> = dense<0.0> : tensor<2xf32>
dlc.global @count : tensor<f32> = dense<0.0> : tensor<f32>

// CHECK-LABEL: func.func @forward_train
// CHECK-SAME: (%[[W:[a-z0-9_]+]]: tensor<3x2xf32> {dlc.name = "w", dlc.role = "param"}, %[[B:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "b", dlc.role = "param"}, %[[C:[a-z0-9_]+]]: tensor<f32> {dlc.name = "count", dlc.role = "state"}, %[[X:[a-z0-9_]+]]: tensor<4x3xf32> {dlc.name = "x", dlc.role = "input"})
// CHECK-SAME: -> (tensor<4x2xf32> {dlc.name = "y", dlc.role = "output"}, tensor<f32> {dlc.name = "count", dlc.role = "state"})
// CHECK: %[[MM:[a-z0-9_]+]] = dlc.matmul %[[X]], %[[W]]
// CHECK: %[[Y:[a-z0-9_]+]] = dlc.add %[[MM]], %[[B]]
// CHECK: %[[C1:[a-z0-9_]+]] = dlc.add %[[C]], %{{.*}} : tensor<f32>
// CHECK: return %[[Y]], %[[C1]] : tensor<4x2xf32>, tensor<f32>
func.func @forward_train(%x: tensor<4x3xf32> {dlc.name = "x"}) -> (tensor<4x2xf32> {dlc.name = "y"}) {
  %w = dlc.global_load @w : tensor<3x2xf32>
  %b = dlc.global_load @b : tensor<2xf32>
  %0 = dlc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
  %1 = dlc.add %0, %b : tensor<4x2xf32>, tensor<2xf32> -> tensor<4x2xf32>
  %c = dlc.global_load @count : tensor<f32>
  %one = dlc.constant dense<1.0> : tensor<f32>
  %c1 = dlc.add %c, %one : tensor<f32>, tensor<f32> -> tensor<f32>
  dlc.global_store @count, %c1 : tensor<f32>
  return %1 : tensor<4x2xf32>
}

// A global another function writes is state here too, but this function
// does not write it, so it returns nothing for it. Unnamed values get a
// role and no name.
// CHECK-LABEL: func.func @forward_eval
// CHECK-SAME: (%[[C:[a-z0-9_]+]]: tensor<f32> {dlc.name = "count", dlc.role = "state"}, %[[W:[a-z0-9_]+]]: tensor<3x2xf32> {dlc.name = "w", dlc.role = "param"}, %[[X:[a-z0-9_]+]]: tensor<4x3xf32> {dlc.role = "input"})
// CHECK-SAME: -> (tensor<4x2xf32> {dlc.role = "output"}, tensor<f32> {dlc.role = "output"})
// CHECK: %[[MM:[a-z0-9_]+]] = dlc.matmul %[[X]], %[[W]]
// CHECK: return %[[MM]], %[[C]] : tensor<4x2xf32>, tensor<f32>
func.func @forward_eval(%x: tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<f32>) {
  %c = dlc.global_load @count : tensor<f32>
  %w = dlc.global_load @w : tensor<3x2xf32>
  %0 = dlc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
  return %0, %c : tensor<4x2xf32>, tensor<f32>
}

// A declaration has no body to rewrite.
// CHECK-LABEL: func.func private @external(tensor<3xf32>) -> tensor<3xf32>
func.func private @external(tensor<3xf32>) -> tensor<3xf32>

// -----

// Loads read the latest stored value; the result is the last store; a
// global that is only written still comes in as an argument. Roles already
// present are kept.
dlc.global @s : tensor<2xf32> = dense<1.0> : tensor<2xf32>
dlc.global @only_written : tensor<2xf32> = dense<0.0> : tensor<2xf32>

// CHECK-LABEL: func.func @update
// CHECK-SAME: (%[[OW:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "only_written", dlc.role = "state"}, %[[S:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "s", dlc.role = "state"}, %[[X:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "t", dlc.role = "label"})
// CHECK-SAME: -> (tensor<2xf32> {dlc.name = "y", dlc.role = "output"}, tensor<2xf32> {dlc.name = "only_written", dlc.role = "state"}, tensor<2xf32> {dlc.name = "s", dlc.role = "state"})
// CHECK: %[[S1:[a-z0-9_]+]] = dlc.add %[[S]], %[[X]]
// CHECK: %[[S2:[a-z0-9_]+]] = dlc.mul %[[S1]], %[[S1]]
// CHECK: %[[Y:[a-z0-9_]+]] = dlc.sub %[[S2]], %[[S]]
// CHECK: return %[[Y]], %[[X]], %[[S2]] :
func.func @update(%x: tensor<2xf32> {dlc.name = "t", dlc.role = "label"}) -> (tensor<2xf32> {dlc.name = "y"}) {
  dlc.global_store @only_written, %x : tensor<2xf32>
  %s0 = dlc.global_load @s : tensor<2xf32>
  %s1 = dlc.add %s0, %x : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  dlc.global_store @s, %s1 : tensor<2xf32>
  %a = dlc.global_load @s : tensor<2xf32>
  %s2 = dlc.mul %a, %a : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  dlc.global_store @s, %s2 : tensor<2xf32>
  %y = dlc.sub %s2, %s0 : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// Without globals only the roles change.
// CHECK-LABEL: func.func @pure
// CHECK-SAME: (%{{.*}}: tensor<2xf32> {dlc.role = "input"}) -> (tensor<2xf32> {dlc.role = "output"})
func.func @pure(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
