// The errors of dlc-add-loss's options, one run each (-verify-diagnostics
// takes one set of pass options per file; these are reported on the module,
// except a word that is no loss, which the option parser refuses).
// RUN: not dlc-opt %s -dlc-add-loss=loss=hinge 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not dlc-opt %s '-dlc-add-loss=loss=cross_entropy label-smoothing=1.5' 2>&1 | FileCheck %s --check-prefix=SMOOTH-HIGH
// RUN: not dlc-opt %s '-dlc-add-loss=loss=cross_entropy label-smoothing=-0.1' 2>&1 | FileCheck %s --check-prefix=SMOOTH-LOW
// RUN: not dlc-opt %s '-dlc-add-loss=loss=mse output=probs' 2>&1 | FileCheck %s --check-prefix=OUTPUT
// RUN: not dlc-opt %s '-dlc-add-loss=loss=mse function=predict' 2>&1 | FileCheck %s --check-prefix=FUNCTION
// RUN: not dlc-opt %s '-dlc-add-loss=loss=mse label=x' 2>&1 | FileCheck %s --check-prefix=LABEL
// RUN: not dlc-opt %s -dlc-add-loss=loss=model 2>&1 | FileCheck %s --check-prefix=MODEL

// UNKNOWN: for the --loss option: Cannot find option named 'hinge'!
// SMOOTH-HIGH: error: dlc-add-loss: label-smoothing 1.500000e+00 is outside [0, 1]
// SMOOTH-LOW: error: dlc-add-loss: label-smoothing -1.000000e-01 is outside [0, 1]
// OUTPUT: error: dlc-add-loss: the model has no output 'probs'; the outputs are: logits
// FUNCTION: error: dlc-add-loss: no function @predict with a body
// LABEL: error: dlc-add-loss: the label name 'x' is already an input of the model
// MODEL: error: dlc-add-loss: loss=model needs a one-element output; the output is 'tensor<4x5xf32>'
func.func @forward_train(%x: tensor<4x5xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<4x5xf32> {dlc.name = "logits", dlc.role = "output"}) {
  return %x : tensor<4x5xf32>
}
