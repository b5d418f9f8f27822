// RUN: dlc-opt %s -split-input-file -dlc-add-loss=loss=cross_entropy | FileCheck %s --check-prefix=CE
// RUN: dlc-opt %s -split-input-file '-dlc-add-loss=loss=cross_entropy ignore-index=1 label-smoothing=0.1 label=targets' | FileCheck %s --check-prefix=CES
// RUN: dlc-opt %s -split-input-file -dlc-add-loss=loss=mse | FileCheck %s --check-prefix=MSE
// RUN: dlc-opt %s -split-input-file -dlc-add-loss=loss=l1 | FileCheck %s --check-prefix=L1
// RUN: dlc-opt %s -split-input-file -dlc-add-loss=loss=bce_with_logits | FileCheck %s --check-prefix=BCE
// @loss is the model function's copy with a label argument, returning the
// loss and then the model's state; the model function stays as it was.

func.func @forward_train(%w: tensor<5xf32> {dlc.name = "w", dlc.role = "param"}, %s: tensor<f32> {dlc.name = "s", dlc.role = "state"}, %x: tensor<4x5xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<4x5xf32> {dlc.name = "logits", dlc.role = "output"}, tensor<f32> {dlc.name = "s", dlc.role = "state"}) {
  %0 = dlc.mul %x, %w : tensor<4x5xf32>, tensor<5xf32> -> tensor<4x5xf32>
  return %0, %s : tensor<4x5xf32>, tensor<f32>
}

// The model function is kept.
// CE-LABEL: func.func @forward_train
// CE: return %{{.*}}, %{{.*}} : tensor<4x5xf32>, tensor<f32>

// Log-softmax over the last axis, shifted by the maximum; the picked
// log-probabilities of valid labels, summed and divided by their count.
// CE-LABEL: func.func @loss
// CE-SAME: (%[[W:.*]]: tensor<5xf32> {dlc.name = "w", dlc.role = "param"}, %[[S:.*]]: tensor<f32> {dlc.name = "s", dlc.role = "state"}, %[[X:.*]]: tensor<4x5xf32> {dlc.name = "x", dlc.role = "input"}, %[[L:.*]]: tensor<4xi64> {dlc.name = "labels", dlc.role = "label"})
// CE-SAME: -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<f32> {dlc.name = "s", dlc.role = "state"})
// CE: %[[Y:.*]] = dlc.mul %[[X]], %[[W]]
// CE: %[[MAX:.*]] = dlc.reduce_max %[[Y]] axes [1] keep_dims
// CE: %[[SH:.*]] = dlc.sub %[[Y]], %[[MAX]]
// CE: %[[E:.*]] = dlc.exp %[[SH]]
// CE: %[[SE:.*]] = dlc.reduce_sum %[[E]] axes [1] keep_dims
// CE: %[[LSE:.*]] = dlc.log %[[SE]]
// CE: %[[LP:.*]] = dlc.sub %[[SH]], %[[LSE]]
// CE: %[[IGN:.*]] = dlc.constant dense<-100> : tensor<4xi64>
// CE: %[[VALID:.*]] = dlc.compare ne, %[[L]], %[[IGN]]
// CE: %[[SAFE:.*]] = dlc.select %[[VALID]], %[[L]], %{{.*}}
// CE: %[[IDX:.*]] = dlc.reshape %[[SAFE]] : tensor<4xi64> to tensor<4x1xi64>
// CE: %[[PICK:.*]] = dlc.gather_elements %[[LP]][%[[IDX]]] {axis = 1 : i64}
// CE: %[[PICK1:.*]] = dlc.reshape %[[PICK]] : tensor<4x1xf32> to tensor<4xf32>
// CE: %[[NLL:.*]] = dlc.neg %[[PICK1]]
// CE-NOT: dlc.constant dense<0.899999976>
// CE: %[[MASKED:.*]] = dlc.select %[[VALID]], %[[NLL]], %{{.*}}
// CE: %[[CNT:.*]] = dlc.cast %[[VALID]] : tensor<4xi1> to tensor<4xf32>
// CE: %[[N:.*]] = dlc.reduce_sum %[[CNT]] axes [0]
// CE: %[[SUM:.*]] = dlc.reduce_sum %[[MASKED]] axes [0]
// CE: %[[LOSS:.*]] = dlc.div %[[SUM]], %[[N]] : tensor<f32>, tensor<f32> -> tensor<f32>
// CE: return %[[LOSS]], %[[S]] : tensor<f32>, tensor<f32>

// Label smoothing: (1 - e) nll + e * (mean over classes of -log p).
// CES-LABEL: func.func @loss
// CES-SAME: %{{.*}}: tensor<4xi64> {dlc.name = "targets", dlc.role = "label"}
// CES: %[[LP:.*]] = dlc.sub %{{.*}}, %{{.*}} : tensor<4x5xf32>, tensor<4x1xf32>
// CES: %[[IGN:.*]] = dlc.constant dense<1> : tensor<4xi64>
// CES: %[[VALID:.*]] = dlc.compare ne, %{{.*}}, %[[IGN]]
// CES: %[[NLL:.*]] = dlc.neg %{{.*}} : tensor<4xf32>
// CES: %[[C:.*]] = dlc.constant dense<5.000000e+00> : tensor<f32>
// CES: %[[ALL:.*]] = dlc.reduce_sum %[[LP]] axes [1] : tensor<4x5xf32> -> tensor<4xf32>
// CES: %[[NALL:.*]] = dlc.neg %[[ALL]]
// CES: %[[UNI:.*]] = dlc.div %[[NALL]], %[[C]]
// CES: %[[E:.*]] = dlc.constant dense<1.000000e-01> : tensor<f32>
// CES: %[[UNIE:.*]] = dlc.mul %[[UNI]], %[[E]]
// CES: %[[KEEP:.*]] = dlc.constant dense<0.899999976> : tensor<f32>
// CES: %[[NLLK:.*]] = dlc.mul %[[NLL]], %[[KEEP]]
// CES: %[[MIX:.*]] = dlc.add %[[NLLK]], %[[UNIE]]
// CES: dlc.select %[[VALID]], %[[MIX]], %{{.*}}

// MSE-LABEL: func.func @loss
// MSE-SAME: %[[L:.*]]: tensor<4x5xf32> {dlc.name = "labels", dlc.role = "label"})
// MSE: %[[Y:.*]] = dlc.mul
// MSE: %[[D:.*]] = dlc.sub %[[Y]], %[[L]]
// MSE: %[[SQ:.*]] = dlc.mul %[[D]], %[[D]]
// MSE: %[[N:.*]] = dlc.constant dense<2.000000e+01> : tensor<f32>
// MSE: %[[SUM:.*]] = dlc.reduce_sum %[[SQ]] axes [0, 1]
// MSE: %[[LOSS:.*]] = dlc.div %[[SUM]], %[[N]]
// MSE: return %[[LOSS]], %{{.*}} : tensor<f32>, tensor<f32>

// L1-LABEL: func.func @loss
// L1: %[[D:.*]] = dlc.sub %{{.*}}, %{{.*}} : tensor<4x5xf32>, tensor<4x5xf32>
// L1: %[[A:.*]] = dlc.abs %[[D]]
// L1: %[[N:.*]] = dlc.constant dense<2.000000e+01> : tensor<f32>
// L1: %[[SUM:.*]] = dlc.reduce_sum %[[A]] axes [0, 1]
// L1: dlc.div %[[SUM]], %[[N]]

// max(x, 0) - x t + log(1 + exp(-|x|)), averaged.
// BCE-LABEL: func.func @loss
// BCE-SAME: %[[T:.*]]: tensor<4x5xf32> {dlc.name = "labels", dlc.role = "label"})
// BCE: %[[X:.*]] = dlc.mul
// BCE: %[[ZERO:.*]] = dlc.constant dense<0.000000e+00> : tensor<f32>
// BCE: %[[ONE:.*]] = dlc.constant dense<1.000000e+00> : tensor<f32>
// BCE: %[[ABS:.*]] = dlc.abs %[[X]]
// BCE: %[[NABS:.*]] = dlc.neg %[[ABS]]
// BCE: %[[EXP:.*]] = dlc.exp %[[NABS]]
// BCE: %[[ONEP:.*]] = dlc.add %[[ONE]], %[[EXP]]
// BCE: %[[SP:.*]] = dlc.log %[[ONEP]]
// BCE: %[[XT:.*]] = dlc.mul %[[X]], %[[T]]
// BCE: %[[RELU:.*]] = dlc.max %[[X]], %[[ZERO]]
// BCE: %[[LIN:.*]] = dlc.sub %[[RELU]], %[[XT]]
// BCE: %[[ALL:.*]] = dlc.add %[[LIN]], %[[SP]]
// BCE: %[[SUM:.*]] = dlc.reduce_sum %[[ALL]] axes [0, 1]
// BCE: dlc.div %[[SUM]], %{{.*}}

// -----

// Class scores on the last axis of a rank-3 output: labels of shape 2x3;
// the element type follows the output's.
func.func @forward_train(%x: tensor<2x3x4xf64> {dlc.name = "x", dlc.role = "input"}) -> (tensor<2x3x4xf64> {dlc.name = "y", dlc.role = "output"}) {
  return %x : tensor<2x3x4xf64>
}

// CE-LABEL: func.func @loss
// CE-SAME: %[[L:.*]]: tensor<2x3xi64> {dlc.name = "labels", dlc.role = "label"})
// CE-SAME: -> (tensor<f64> {dlc.name = "loss", dlc.role = "loss"})
// CE: dlc.reduce_max %{{.*}} axes [2] keep_dims : tensor<2x3x4xf64> -> tensor<2x3x1xf64>
// CE: dlc.reshape %{{.*}} : tensor<2x3xi64> to tensor<2x3x1xi64>
// CE: dlc.gather_elements %{{.*}} {axis = 2 : i64}
// CE: dlc.reduce_sum %{{.*}} axes [0, 1] : tensor<2x3xf64> -> tensor<f64>
// CE: return %{{.*}} : tensor<f64>

// CES-LABEL: func.func @loss
// CES-SAME: %{{.*}}: tensor<2x3xi64> {dlc.name = "targets", dlc.role = "label"})
// CES: dlc.constant dense<4.000000e+00> : tensor<f64>
// CES: dlc.reduce_sum %{{.*}} axes [2] : tensor<2x3x4xf64> -> tensor<2x3xf64>
// CES: dlc.constant dense<1.000000e-01> : tensor<f64>
// CES: dlc.constant dense<9.000000e-01> : tensor<f64>

// MSE-LABEL: func.func @loss
// MSE-SAME: %{{.*}}: tensor<2x3x4xf64> {dlc.name = "labels", dlc.role = "label"})
// MSE: dlc.constant dense<2.400000e+01> : tensor<f64>
// MSE: dlc.reduce_sum %{{.*}} axes [0, 1, 2] : tensor<2x3x4xf64> -> tensor<f64>
