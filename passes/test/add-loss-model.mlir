// RUN: dlc-opt %s '-dlc-add-loss=loss=model function=net output=total' | FileCheck %s
// loss=model: the chosen output is the loss, reshaped to a scalar; no label
// argument; the other outputs are dropped.
func.func @net(%x: tensor<1x1xf32> {dlc.name = "x", dlc.role = "input"}, %s: tensor<3xf32> {dlc.name = "bn.mean", dlc.role = "state"}) -> (tensor<2xf32> {dlc.name = "aux", dlc.role = "output"}, tensor<3xf32> {dlc.name = "bn.mean", dlc.role = "state"}, tensor<1x1xf32> {dlc.name = "total", dlc.role = "output"}) {
  %0 = dlc.constant dense<1.0> : tensor<2xf32>
  return %0, %s, %x : tensor<2xf32>, tensor<3xf32>, tensor<1x1xf32>
}

// CHECK-LABEL: func.func @net
// CHECK-LABEL: func.func @loss
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<1x1xf32> {dlc.name = "x", dlc.role = "input"}, %[[S:[a-z0-9_]+]]: tensor<3xf32> {dlc.name = "bn.mean", dlc.role = "state"})
// CHECK-SAME: -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<3xf32> {dlc.name = "bn.mean", dlc.role = "state"})
// CHECK: %[[L:[a-z0-9_]+]] = dlc.reshape %[[X]] : tensor<1x1xf32> to tensor<f32>
// CHECK: return %[[L]], %[[S]] : tensor<f32>, tensor<3xf32>
