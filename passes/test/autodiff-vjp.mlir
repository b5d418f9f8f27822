// RUN: dlc-opt %s '-dlc-autodiff=function=f vjp=true' | FileCheck %s
// @f_vjp: @f's arguments and one cotangent per float result; @f's results
// (with their attributes) and then the gradient of every float argument,
// zeros where no result depends on it. Integer values take no part.

func.func @f(%x: tensor<3xf64>, %i: tensor<2xi64>, %y: tensor<3xf64> {dlc.name = "y"}, %z: tensor<3xf64>) -> (tensor<3xf64> {dlc.name = "p"}, tensor<2xi64>, tensor<f64>) {
  %0 = dlc.mul %x, %y : tensor<3xf64>, tensor<3xf64> -> tensor<3xf64>
  %1 = dlc.reduce_sum %x axes [0] : tensor<3xf64> -> tensor<f64>
  return %0, %i, %1 : tensor<3xf64>, tensor<2xi64>, tensor<f64>
}

// CHECK-LABEL: func.func @f(
// CHECK-LABEL: func.func @f_vjp
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<3xf64>, %[[I:[a-z0-9_]+]]: tensor<2xi64>, %[[Y:[a-z0-9_]+]]: tensor<3xf64> {dlc.name = "y"}, %{{.*}}: tensor<3xf64>, %[[DP:[a-z0-9_]+]]: tensor<3xf64>, %[[DS:[a-z0-9_]+]]: tensor<f64>)
// CHECK-SAME: -> (tensor<3xf64> {dlc.name = "p"}, tensor<2xi64>, tensor<f64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>)
// CHECK: %[[P:[a-z0-9_]+]] = dlc.mul %[[X]], %[[Y]]
// CHECK: %[[S:[a-z0-9_]+]] = dlc.reduce_sum %[[X]] axes [0]
// CHECK: %[[DS1:[a-z0-9_]+]] = dlc.reshape %[[DS]] : tensor<f64> to tensor<1xf64>
// CHECK: %[[DSX:[a-z0-9_]+]] = dlc.broadcast_to %[[DS1]] : tensor<1xf64> to tensor<3xf64>
// CHECK: %[[DY:[a-z0-9_]+]] = dlc.mul %[[DP]], %[[X]]
// CHECK: %[[DPX:[a-z0-9_]+]] = dlc.mul %[[DP]], %[[Y]]
// CHECK: %[[DX:[a-z0-9_]+]] = dlc.add %[[DSX]], %[[DPX]]
// CHECK: %[[DZ:[a-z0-9_]+]] = dlc.constant dense<0.000000e+00> : tensor<3xf64>
// CHECK: return %[[P]], %[[I]], %[[S]], %[[DX]], %[[DY]], %[[DZ]]
