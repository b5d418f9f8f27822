// RUN: dlc-opt %s -split-input-file -dlc-add-loss=loss=cross_entropy | FileCheck %s --check-prefix=CE
// The default loss is cross_entropy, as the training pipeline's.
// RUN: dlc-opt %s -split-input-file -dlc-add-loss | FileCheck %s --check-prefix=CE
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

// dlc.cross_entropy's per-position losses (0 where the label is ignored),
// summed and divided by the count of valid labels.
// CE-LABEL: func.func @loss
// CE-SAME: (%[[W:[a-z0-9_]+]]: tensor<5xf32> {dlc.name = "w", dlc.role = "param"}, %[[S:[a-z0-9_]+]]: tensor<f32> {dlc.name = "s", dlc.role = "state"}, %[[X:[a-z0-9_]+]]: tensor<4x5xf32> {dlc.name = "x", dlc.role = "input"}, %[[L:[a-z0-9_]+]]: tensor<4xi64> {dlc.ignore_index = -100 : i64, dlc.name = "labels", dlc.num_classes = 5 : i64, dlc.role = "label"})
// CE-SAME: -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<f32> {dlc.name = "s", dlc.role = "state"})
// CE: %[[Y:[a-z0-9_]+]] = dlc.mul %[[X]], %[[W]]
// CE: %[[NLL:[a-z0-9_]+]], %{{.*}} = dlc.cross_entropy %[[Y]], %[[L]] ignore_index -100 label_smoothing 0.000000e+00 : tensor<4x5xf32>, tensor<4xi64> -> tensor<4xf32>, tensor<4xf32>
// CE: %[[IGN:[a-z0-9_]+]] = dlc.constant dense<-100> : tensor<4xi64>
// CE: %[[VALID:[a-z0-9_]+]] = dlc.compare ne, %[[L]], %[[IGN]]
// CE: %[[CNT:[a-z0-9_]+]] = dlc.cast %[[VALID]] : tensor<4xi1> to tensor<4xf32>
// CE: %[[N:[a-z0-9_]+]] = dlc.reduce_sum %[[CNT]] axes [0]
// CE: %[[SUM:[a-z0-9_]+]] = dlc.reduce_sum %[[NLL]] axes [0]
// CE: %[[LOSS:[a-z0-9_]+]] = dlc.div %[[SUM]], %[[N]] : tensor<f32>, tensor<f32> -> tensor<f32>
// CE: return %[[LOSS]], %[[S]] : tensor<f32>, tensor<f32>

// The ignore index and label smoothing go to the op.
// CES-LABEL: func.func @loss
// CES-SAME: %{{.*}}: tensor<4xi64> {dlc.ignore_index = 1 : i64, dlc.name = "targets", dlc.num_classes = 5 : i64, dlc.role = "label"}
// CES: dlc.cross_entropy %{{.*}}, %{{.*}} ignore_index 1 label_smoothing 1.000000e-01
// CES: %[[IGN:[a-z0-9_]+]] = dlc.constant dense<1> : tensor<4xi64>
// CES: dlc.compare ne, %{{.*}}, %[[IGN]]

// MSE-LABEL: func.func @loss
// MSE-SAME: %[[L:[a-z0-9_]+]]: tensor<4x5xf32> {dlc.name = "labels", dlc.role = "label"})
// MSE: %[[Y:[a-z0-9_]+]] = dlc.mul
// MSE: %[[D:[a-z0-9_]+]] = dlc.sub %[[Y]], %[[L]]
// MSE: %[[SQ:[a-z0-9_]+]] = dlc.mul %[[D]], %[[D]]
// MSE: %[[N:[a-z0-9_]+]] = dlc.constant dense<2.000000e+01> : tensor<f32>
// MSE: %[[SUM:[a-z0-9_]+]] = dlc.reduce_sum %[[SQ]] axes [0, 1]
// MSE: %[[LOSS:[a-z0-9_]+]] = dlc.div %[[SUM]], %[[N]]
// MSE: return %[[LOSS]], %{{.*}} : tensor<f32>, tensor<f32>

// L1-LABEL: func.func @loss
// L1: %[[D:[a-z0-9_]+]] = dlc.sub %{{.*}}, %{{.*}} : tensor<4x5xf32>, tensor<4x5xf32>
// L1: %[[A:[a-z0-9_]+]] = dlc.abs %[[D]]
// L1: %[[N:[a-z0-9_]+]] = dlc.constant dense<2.000000e+01> : tensor<f32>
// L1: %[[SUM:[a-z0-9_]+]] = dlc.reduce_sum %[[A]] axes [0, 1]
// L1: dlc.div %[[SUM]], %[[N]]

// max(x, 0) - x t + log(1 + exp(-|x|)), averaged.
// BCE-LABEL: func.func @loss
// BCE-SAME: %[[T:[a-z0-9_]+]]: tensor<4x5xf32> {dlc.name = "labels", dlc.role = "label"})
// BCE: %[[X:[a-z0-9_]+]] = dlc.mul
// BCE: %[[ZERO:[a-z0-9_]+]] = dlc.constant dense<0.000000e+00> : tensor<f32>
// BCE: %[[ONE:[a-z0-9_]+]] = dlc.constant dense<1.000000e+00> : tensor<f32>
// BCE: %[[ABS:[a-z0-9_]+]] = dlc.abs %[[X]]
// BCE: %[[NABS:[a-z0-9_]+]] = dlc.neg %[[ABS]]
// BCE: %[[EXP:[a-z0-9_]+]] = dlc.exp %[[NABS]]
// BCE: %[[ONEP:[a-z0-9_]+]] = dlc.add %[[ONE]], %[[EXP]]
// BCE: %[[SP:[a-z0-9_]+]] = dlc.log %[[ONEP]]
// BCE: %[[XT:[a-z0-9_]+]] = dlc.mul %[[X]], %[[T]]
// BCE: %[[RELU:[a-z0-9_]+]] = dlc.max %[[X]], %[[ZERO]]
// BCE: %[[LIN:[a-z0-9_]+]] = dlc.sub %[[RELU]], %[[XT]]
// BCE: %[[ALL:[a-z0-9_]+]] = dlc.add %[[LIN]], %[[SP]]
// BCE: %[[SUM:[a-z0-9_]+]] = dlc.reduce_sum %[[ALL]] axes [0, 1]
// BCE: dlc.div %[[SUM]], %{{.*}}

// -----

// Class scores on the last axis of a rank-3 output: labels of shape 2x3;
// the element type follows the output's.
func.func @forward_train(%x: tensor<2x3x4xf64> {dlc.name = "x", dlc.role = "input"}) -> (tensor<2x3x4xf64> {dlc.name = "y", dlc.role = "output"}) {
  return %x : tensor<2x3x4xf64>
}

// CE-LABEL: func.func @loss
// CE-SAME: %[[L:[a-z0-9_]+]]: tensor<2x3xi64> {dlc.ignore_index = -100 : i64, dlc.name = "labels", dlc.num_classes = 4 : i64, dlc.role = "label"})
// CE-SAME: -> (tensor<f64> {dlc.name = "loss", dlc.role = "loss"})
// CE: dlc.cross_entropy %{{.*}}, %[[L]] ignore_index -100 label_smoothing 0.000000e+00 : tensor<2x3x4xf64>, tensor<2x3xi64> -> tensor<2x3xf64>, tensor<2x3xf64>
// CE: dlc.reduce_sum %{{.*}} axes [0, 1] : tensor<2x3xf64> -> tensor<f64>
// CE: return %{{.*}} : tensor<f64>

// CES-LABEL: func.func @loss
// CES-SAME: %{{.*}}: tensor<2x3xi64> {dlc.ignore_index = 1 : i64, dlc.name = "targets", dlc.num_classes = 4 : i64, dlc.role = "label"})
// CES: dlc.cross_entropy %{{.*}}, %{{.*}} ignore_index 1 label_smoothing 1.000000e-01 : tensor<2x3x4xf64>, tensor<2x3xi64>

// MSE-LABEL: func.func @loss
// MSE-SAME: %{{.*}}: tensor<2x3x4xf64> {dlc.name = "labels", dlc.role = "label"})
// MSE: dlc.constant dense<2.400000e+01> : tensor<f64>
// MSE: dlc.reduce_sum %{{.*}} axes [0, 1, 2] : tensor<2x3x4xf64> -> tensor<f64>
