// RUN: dlc-opt %s -split-input-file -dlc-add-loss=loss=cross_entropy -verify-diagnostics
// RUN: not dlc-opt %s -split-input-file -dlc-add-loss=loss=mse 2>&1 | FileCheck %s --check-prefix=MSE
// Class scores dlc-tensor-parallel left split by their classes
// (dlc.tp_split on the output) are read by a cross-entropy over their last
// axis alone, in a module partitioned for tensor parallelism: the
// vocabulary-parallel loss of tensor-parallel-classes.mlir.

// Valid for cross_entropy; any other loss would read each rank's classes
// as the whole output.
// MSE: error: dlc-add-loss: output 'logits' is split over tensor-parallel ranks (dlc.tp_split); only cross_entropy over its last axis reads it so
module attributes {dlc.tensor_parallel = 2 : i64} {
  func.func @forward_train(%x: tensor<4x5xf32>) -> (tensor<4x5xf32> {dlc.name = "logits", dlc.role = "output", dlc.tp_split = 1 : i64}) {
    return %x : tensor<4x5xf32>
  }
}

// -----

// expected-error@+1 {{dlc-add-loss: output 'logits' is split over tensor-parallel ranks (dlc.tp_split); only cross_entropy over its last axis reads it so}}
module {
  func.func @forward_train(%x: tensor<4x5xf32>) -> (tensor<4x5xf32> {dlc.name = "logits", dlc.role = "output", dlc.tp_split = 1 : i64}) {
    return %x : tensor<4x5xf32>
  }
}

// -----

// expected-error@+1 {{dlc-add-loss: output 'logits' is split over tensor-parallel ranks (dlc.tp_split); only cross_entropy over its last axis reads it so}}
module attributes {dlc.tensor_parallel = 2 : i64} {
  func.func @forward_train(%x: tensor<4x5xf32>) -> (tensor<4x5xf32> {dlc.name = "logits", dlc.role = "output", dlc.tp_split = 0 : i64}) {
    return %x : tensor<4x5xf32>
  }
}
