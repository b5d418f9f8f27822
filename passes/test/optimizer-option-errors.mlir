// The errors of dlc-optimizer's options, one run each (-verify-diagnostics
// takes one set of pass options per file; these are reported on the module).
// RUN: not dlc-opt %s -dlc-optimizer=optimizer=rmsprop 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// RUN: not dlc-opt %s -dlc-optimizer=schedule=step 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not dlc-opt %s -dlc-optimizer=warmup-steps=-1 2>&1 | FileCheck %s --check-prefix=WARMUP
// RUN: not dlc-opt %s -dlc-optimizer=schedule=cosine 2>&1 | FileCheck %s --check-prefix=TOTAL0
// RUN: not dlc-opt %s '-dlc-optimizer=schedule=linear warmup-steps=10 total-steps=10' 2>&1 | FileCheck %s --check-prefix=TOTAL
// RUN: not dlc-opt %s -dlc-optimizer=lr=-0.1 2>&1 | FileCheck %s --check-prefix=LR
// RUN: not dlc-opt %s -dlc-optimizer=momentum=-0.9 2>&1 | FileCheck %s --check-prefix=MOMENTUM
// RUN: not dlc-opt %s -dlc-optimizer=nesterov=true 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not dlc-opt %s '-dlc-optimizer=nesterov=true momentum=0.9 dampening=0.1' 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not dlc-opt %s '-dlc-optimizer=optimizer=adam betas=0.9' 2>&1 | FileCheck %s --check-prefix=BETAS-COUNT
// RUN: not dlc-opt %s '-dlc-optimizer=optimizer=adam betas=0.9,0.99,0.999' 2>&1 | FileCheck %s --check-prefix=BETAS-COUNT
// RUN: not dlc-opt %s '-dlc-optimizer=optimizer=adamw betas=0.9,1.0' 2>&1 | FileCheck %s --check-prefix=BETAS-RANGE
// RUN: not dlc-opt %s '-dlc-optimizer=optimizer=adamw betas=-0.1,0.9' 2>&1 | FileCheck %s --check-prefix=BETAS-NEGATIVE
// RUN: not dlc-opt %s '-dlc-optimizer=optimizer=adam eps=-1e-8' 2>&1 | FileCheck %s --check-prefix=EPS
// RUN: not dlc-opt %s -dlc-optimizer=clip-grad-norm=-1 2>&1 | FileCheck %s --check-prefix=CLIP
// RUN: not dlc-opt %s -dlc-optimizer=function=grads 2>&1 | FileCheck %s --check-prefix=FUNCTION

// OPTIMIZER: error: dlc-optimizer: unknown optimizer 'rmsprop'; the optimizers are: sgd, adam, adamw
// SCHEDULE: error: dlc-optimizer: unknown schedule 'step'; the schedules are: constant, linear, cosine
// WARMUP: error: dlc-optimizer: warmup-steps -1 is negative
// TOTAL0: error: dlc-optimizer: schedule cosine needs total-steps (0) greater than warmup-steps (0)
// TOTAL: error: dlc-optimizer: schedule linear needs total-steps (10) greater than warmup-steps (10)
// LR: error: dlc-optimizer: lr -1.000000e-01 is not a number >= 0
// MOMENTUM: error: dlc-optimizer: momentum -9.000000e-01 is negative
// NESTEROV: error: dlc-optimizer: nesterov needs a positive momentum and zero dampening
// BETAS-COUNT: error: dlc-optimizer: betas takes two values, beta1,beta2
// BETAS-RANGE: error: dlc-optimizer: betas 9.000000e-01,1.000000e+00 must be in [0, 1)
// BETAS-NEGATIVE: error: dlc-optimizer: betas -1.000000e-01,9.000000e-01 must be in [0, 1)
// EPS: error: dlc-optimizer: eps -1.000000e-08 is negative
// CLIP: error: dlc-optimizer: clip-grad-norm -1.000000e+00 is negative
// FUNCTION: error: dlc-optimizer: no function @grads with a body
func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
  %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
  return %0, %w : tensor<f32>, tensor<2xf32>
}
