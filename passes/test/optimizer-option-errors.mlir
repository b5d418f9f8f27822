// The errors of dlc-optimizer's options, one run each (-verify-diagnostics
// takes one set of pass options per file; these are reported on the module,
// except a word that is no optimizer or schedule, which the option parser
// refuses).
// RUN: not dlc-opt %s -dlc-optimizer=optimizer=rmsprop 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// RUN: not dlc-opt %s -dlc-optimizer=schedule=step 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not dlc-opt %s -dlc-optimizer=warmup-steps=-1 2>&1 | FileCheck %s --check-prefix=WARMUP
// RUN: not dlc-opt %s -dlc-optimizer=schedule=cosine 2>&1 | FileCheck %s --check-prefix=TOTAL0
// RUN: not dlc-opt %s '-dlc-optimizer=schedule=linear warmup-steps=10 total-steps=10' 2>&1 | FileCheck %s --check-prefix=TOTAL
// RUN: not dlc-opt %s -dlc-optimizer=lr=-0.1 2>&1 | FileCheck %s --check-prefix=LR
// RUN: not dlc-opt %s -dlc-optimizer=lr=nan 2>&1 | FileCheck %s --check-prefix=LR-NAN
// RUN: not dlc-opt %s -dlc-optimizer=momentum=-0.9 2>&1 | FileCheck %s --check-prefix=MOMENTUM
// RUN: not dlc-opt %s -dlc-optimizer=momentum=nan 2>&1 | FileCheck %s --check-prefix=MOMENTUM-NAN
// RUN: not dlc-opt %s '-dlc-optimizer=momentum=0.9 dampening=-0.1' 2>&1 | FileCheck %s --check-prefix=DAMPENING-NEGATIVE
// RUN: not dlc-opt %s '-dlc-optimizer=momentum=0.9 dampening=1.5' 2>&1 | FileCheck %s --check-prefix=DAMPENING-LARGE
// RUN: not dlc-opt %s -dlc-optimizer=dampening=nan 2>&1 | FileCheck %s --check-prefix=DAMPENING-NAN
// RUN: not dlc-opt %s -dlc-optimizer=nesterov=true 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not dlc-opt %s '-dlc-optimizer=nesterov=true momentum=0.9 dampening=0.1' 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not dlc-opt %s '-dlc-optimizer=optimizer=adam betas=0.9' 2>&1 | FileCheck %s --check-prefix=BETAS-COUNT
// RUN: not dlc-opt %s '-dlc-optimizer=optimizer=adam betas=0.9,0.99,0.999' 2>&1 | FileCheck %s --check-prefix=BETAS-COUNT
// RUN: not dlc-opt %s '-dlc-optimizer=optimizer=adamw betas=0.9,1.0' 2>&1 | FileCheck %s --check-prefix=BETAS-RANGE
// RUN: not dlc-opt %s '-dlc-optimizer=optimizer=adamw betas=-0.1,0.9' 2>&1 | FileCheck %s --check-prefix=BETAS-NEGATIVE
// RUN: not dlc-opt %s '-dlc-optimizer=optimizer=adam eps=-1e-8' 2>&1 | FileCheck %s --check-prefix=EPS
// RUN: not dlc-opt %s '-dlc-optimizer=optimizer=adam eps=nan' 2>&1 | FileCheck %s --check-prefix=EPS-NAN
// RUN: not dlc-opt %s -dlc-optimizer=clip-grad-norm=-1 2>&1 | FileCheck %s --check-prefix=CLIP
// RUN: not dlc-opt %s -dlc-optimizer=clip-grad-norm=nan 2>&1 | FileCheck %s --check-prefix=CLIP-NAN
// RUN: not dlc-opt %s '-dlc-optimizer=optimizer=adamw weight-decay=nan' 2>&1 | FileCheck %s --check-prefix=DECAY
// RUN: not dlc-opt %s -dlc-optimizer=function=grads 2>&1 | FileCheck %s --check-prefix=FUNCTION
// RUN: not dlc-opt %s -dlc-optimizer=momentum=0.9 2>&1 | FileCheck %s --check-prefix=MOMENTUM-BUFFER
// RUN: not dlc-opt %s -dlc-optimizer=optimizer=adam 2>&1 | FileCheck %s --check-prefix=EXP-AVG
// RUN: not dlc-opt %s -dlc-optimizer=optimizer=adamw 2>&1 | FileCheck %s --check-prefix=EXP-AVG

// OPTIMIZER: for the --optimizer option: Cannot find option named 'rmsprop'!
// SCHEDULE: for the --schedule option: Cannot find option named 'step'!
// WARMUP: error: dlc-optimizer: warmup-steps -1 is negative
// TOTAL0: error: dlc-optimizer: schedule cosine needs total-steps (0) greater than warmup-steps (0)
// TOTAL: error: dlc-optimizer: schedule linear needs total-steps (10) greater than warmup-steps (10)
// LR: error: dlc-optimizer: lr -1.000000e-01 is not a number >= 0
// LR-NAN: error: dlc-optimizer: lr nan is not a number >= 0
// MOMENTUM: error: dlc-optimizer: momentum -9.000000e-01 is not a number >= 0
// MOMENTUM-NAN: error: dlc-optimizer: momentum nan is not a number >= 0
// DAMPENING-NEGATIVE: error: dlc-optimizer: dampening -1.000000e-01 is not in [0, 1]
// DAMPENING-LARGE: error: dlc-optimizer: dampening 1.500000e+00 is not in [0, 1]
// DAMPENING-NAN: error: dlc-optimizer: dampening nan is not in [0, 1]
// NESTEROV: error: dlc-optimizer: nesterov needs a positive momentum and zero dampening
// BETAS-COUNT: error: dlc-optimizer: betas takes two values, beta1,beta2
// BETAS-RANGE: error: dlc-optimizer: betas 9.000000e-01,1.000000e+00 must be in [0, 1)
// BETAS-NEGATIVE: error: dlc-optimizer: betas -1.000000e-01,9.000000e-01 must be in [0, 1)
// EPS: error: dlc-optimizer: eps -1.000000e-08 is not a number >= 0
// EPS-NAN: error: dlc-optimizer: eps nan is not a number >= 0
// CLIP: error: dlc-optimizer: clip-grad-norm -1.000000e+00 is not a number >= 0
// CLIP-NAN: error: dlc-optimizer: clip-grad-norm nan is not a number >= 0
// (A negative weight decay means the optimizer's default; NaN is refused.)
// DECAY: error: dlc-optimizer: weight-decay is not a number
// FUNCTION: error: dlc-optimizer: no function @grads with a one-block body
// The optimizer state train_step would add for @w clashes with a global of
// the module: sgd's with momentum, adam's and adamw's. (The other runs fail
// before this check.)
// MOMENTUM-BUFFER: error: dlc-optimizer: the module already has a symbol @"optimizer.w.momentum_buffer", which train_step adds
// EXP-AVG: error: dlc-optimizer: the module already has a symbol @"optimizer.w.exp_avg", which train_step adds
dlc.global @optimizer.w.momentum_buffer : tensor<2xf32> = dense<0.0> : tensor<2xf32>
dlc.global @optimizer.w.exp_avg : tensor<2xf32> = dense<0.0> : tensor<2xf32>
func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
  %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
  return %0, %w : tensor<f32>, tensor<2xf32>
}
