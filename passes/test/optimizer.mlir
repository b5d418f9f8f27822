// RUN: dlc-opt %s -dlc-optimizer | FileCheck %s --check-prefixes=CHECK,SGD,NOWARM
// RUN: dlc-opt %s '-dlc-optimizer=momentum=0.9 dampening=0.25 weight-decay=0.01' | FileCheck %s --check-prefixes=CHECK,MOM,NOWARM
// RUN: dlc-opt %s '-dlc-optimizer=momentum=0.9 nesterov=true' | FileCheck %s --check-prefixes=CHECK,NEST,NOWARM
// RUN: dlc-opt %s '-dlc-optimizer=optimizer=adam weight-decay=0.1' | FileCheck %s --check-prefixes=CHECK,ADAM,ADAMS,NOWARM
// RUN: dlc-opt %s '-dlc-optimizer=optimizer=adamw betas=0.8,0.99 eps=1e-6 lr=0.01' | FileCheck %s --check-prefixes=CHECK,ADAMW,ADAMS,NOWARM
// RUN: dlc-opt %s -dlc-optimizer=clip-grad-norm=1.5 | FileCheck %s --check-prefixes=CHECK,CLIP,NOWARM
// RUN: dlc-opt %s '-dlc-optimizer=schedule=constant warmup-steps=3' | FileCheck %s --check-prefixes=CHECK,CONST
// RUN: dlc-opt %s '-dlc-optimizer=schedule=linear warmup-steps=2 total-steps=10' | FileCheck %s --check-prefixes=CHECK,LIN
// RUN: dlc-opt %s '-dlc-optimizer=schedule=cosine warmup-steps=2 total-steps=10' | FileCheck %s --check-prefixes=CHECK,COS
// @train_step: @loss_grad's body, then one optimizer step written as
// torch.optim's single-tensor update; the step count, the hyperparameters
// and the optimizer state are new globals and arguments.

// The step, learning rate and weight decay globals (weight decay: 0 for
// sgd and adam by default, 0.01 for adamw), then the optimizer state, all
// right before @train_step.
// CHECK: dlc.global @w
// CHECK: dlc.global @b
// CHECK-LABEL: func.func @loss_grad
// CHECK: dlc.global @dlc.step : tensor<i64> = dense<0> : tensor<i64>
// CHECK: dlc.global @dlc.lr : tensor<f32> = dense<
// SGD-SAME: 1.000000e-03
// ADAMW-SAME: 0.00999999977
// CHECK: dlc.global @dlc.weight_decay : tensor<f32> = dense<
// SGD-SAME: 0.000000e+00
// MOM-SAME: 0.00999999977
// ADAM-SAME: 1.000000e-01
// ADAMW-SAME: 0.00999999977
// MOM: dlc.global @optimizer.w.momentum_buffer : tensor<2xf32> = dense<0.000000e+00> : tensor<2xf32>
// MOM: dlc.global @optimizer.b.momentum_buffer : tensor<f32> = dense<0.000000e+00> : tensor<f32>
// NEST: dlc.global @optimizer.w.momentum_buffer : tensor<2xf32>
// NEST: dlc.global @optimizer.b.momentum_buffer : tensor<f32>
// ADAM: dlc.global @optimizer.w.exp_avg : tensor<2xf32> = dense<0.000000e+00> : tensor<2xf32>
// ADAM: dlc.global @optimizer.w.exp_avg_sq : tensor<2xf32> = dense<0.000000e+00> : tensor<2xf32>
// ADAM: dlc.global @optimizer.b.exp_avg : tensor<f32> = dense<0.000000e+00> : tensor<f32>
// ADAM: dlc.global @optimizer.b.exp_avg_sq : tensor<f32> = dense<0.000000e+00> : tensor<f32>
// ADAMW: dlc.global @optimizer.w.exp_avg : tensor<2xf32>
// ADAMW: dlc.global @optimizer.w.exp_avg_sq : tensor<2xf32>
// ADAMW: dlc.global @optimizer.b.exp_avg : tensor<f32>
// ADAMW: dlc.global @optimizer.b.exp_avg_sq : tensor<f32>
// CHECK-NOT: dlc.global
dlc.global @w : tensor<2xf32> = dense<0.5> : tensor<2xf32>
dlc.global @b : tensor<f32> = dense<0.0> : tensor<f32>
func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %b: tensor<f32> {dlc.name = "b", dlc.role = "param"}, %s: tensor<f32> {dlc.name = "count", dlc.role = "state"}, %x: tensor<2xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<f32> {dlc.name = "count", dlc.role = "state"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}, tensor<f32> {dlc.name = "b", dlc.role = "gradient"}) {
  %0 = dlc.mul %w, %x : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %1 = dlc.reduce_sum %0 axes [0] : tensor<2xf32> -> tensor<f32>
  %2 = dlc.add %1, %b : tensor<f32>, tensor<f32> -> tensor<f32>
  %3 = dlc.exp %x : tensor<2xf32>
  %4 = dlc.neg %b : tensor<f32>
  return %2, %s, %3, %4 : tensor<f32>, tensor<f32>, tensor<2xf32>, tensor<f32>
}

// Arguments: @loss_grad's, the step, the hyperparameters, the optimizer
// state by parameter. Results: the loss, the metrics, per parameter its
// optimizer state then its new value, the model's state, the step count.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[W:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %[[B:[a-z0-9_]+]]: tensor<f32> {dlc.name = "b", dlc.role = "param"}, %[[S:[a-z0-9_]+]]: tensor<f32> {dlc.name = "count", dlc.role = "state"}, %[[X:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "x", dlc.role = "input"}, %[[STEP:[a-z0-9_]+]]: tensor<i64> {dlc.name = "dlc.step", dlc.role = "step"}, %[[LR:[a-z0-9_]+]]: tensor<f32> {dlc.name = "dlc.lr", dlc.role = "hyperparameter"}, %[[WD:[a-z0-9_]+]]: tensor<f32> {dlc.name = "dlc.weight_decay", dlc.role = "hyperparameter"}
// SGD-SAME: ) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<f32> {dlc.name = "lr", dlc.role = "metric"}, tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, tensor<f32> {dlc.name = "b", dlc.role = "param"}, tensor<f32> {dlc.name = "count", dlc.role = "state"}, tensor<i64> {dlc.name = "dlc.step", dlc.role = "step"})
// MOM-SAME: , %[[BUFW:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "optimizer.w.momentum_buffer", dlc.role = "optimizer_state"}, %[[BUFB:[a-z0-9_]+]]: tensor<f32> {dlc.name = "optimizer.b.momentum_buffer", dlc.role = "optimizer_state"})
// MOM-SAME: -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<f32> {dlc.name = "lr", dlc.role = "metric"}, tensor<2xf32> {dlc.name = "optimizer.w.momentum_buffer", dlc.role = "optimizer_state"}, tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, tensor<f32> {dlc.name = "optimizer.b.momentum_buffer", dlc.role = "optimizer_state"}, tensor<f32> {dlc.name = "b", dlc.role = "param"}, tensor<f32> {dlc.name = "count", dlc.role = "state"}, tensor<i64> {dlc.name = "dlc.step", dlc.role = "step"})
// NEST-SAME: , %[[BUFW:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "optimizer.w.momentum_buffer", dlc.role = "optimizer_state"}
// ADAM-SAME: , %[[MW:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "optimizer.w.exp_avg", dlc.role = "optimizer_state"}, %[[VW:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "optimizer.w.exp_avg_sq", dlc.role = "optimizer_state"}, %{{.*}}: tensor<f32> {dlc.name = "optimizer.b.exp_avg", dlc.role = "optimizer_state"}, %{{.*}}: tensor<f32> {dlc.name = "optimizer.b.exp_avg_sq", dlc.role = "optimizer_state"})
// ADAM-SAME: -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<f32> {dlc.name = "lr", dlc.role = "metric"}, tensor<2xf32> {dlc.name = "optimizer.w.exp_avg", dlc.role = "optimizer_state"}, tensor<2xf32> {dlc.name = "optimizer.w.exp_avg_sq", dlc.role = "optimizer_state"}, tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, tensor<f32> {dlc.name = "optimizer.b.exp_avg", dlc.role = "optimizer_state"}, tensor<f32> {dlc.name = "optimizer.b.exp_avg_sq", dlc.role = "optimizer_state"}, tensor<f32> {dlc.name = "b", dlc.role = "param"}, tensor<f32> {dlc.name = "count", dlc.role = "state"}, tensor<i64> {dlc.name = "dlc.step", dlc.role = "step"})
// ADAMW-SAME: , %[[MW:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "optimizer.w.exp_avg", dlc.role = "optimizer_state"}, %[[VW:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "optimizer.w.exp_avg_sq", dlc.role = "optimizer_state"}
// CLIP-SAME: ) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<f32> {dlc.name = "lr", dlc.role = "metric"}, tensor<f32> {dlc.name = "grad_norm", dlc.role = "metric"}, tensor<2xf32> {dlc.name = "w", dlc.role = "param"}
// CHECK: %[[LOSS:[a-z0-9_]+]] = dlc.add %{{.*}}, %[[B]]
// CHECK: %[[GW:[a-z0-9_]+]] = dlc.exp %[[X]]
// CHECK: %[[GB:[a-z0-9_]+]] = dlc.neg %[[B]]
// With a schedule, s as f64 (without one the cast is dead and removed).
// CONST: %[[S64:[a-z0-9_]+]] = dlc.cast %[[STEP]] : tensor<i64> to tensor<f64>
// LIN: %[[S64:[a-z0-9_]+]] = dlc.cast %[[STEP]] : tensor<i64> to tensor<f64>
// COS: %[[S64:[a-z0-9_]+]] = dlc.cast %[[STEP]] : tensor<i64> to tensor<f64>

// The schedule's factor in f64, at s = the number of steps done.
// Constant without warmup: 1.
// NOWARM: %[[ONE:[a-z0-9_]+]] = dlc.constant dense<1.000000e+00> : tensor<f64>
// NOWARM: %[[LR64:[a-z0-9_]+]] = dlc.cast %[[LR]] : tensor<f32> to tensor<f64>
// NOWARM: %[[LRS:[a-z0-9_]+]] = dlc.mul %[[LR64]], %[[ONE]]
// CONST: %[[ONE:[a-z0-9_]+]] = dlc.constant dense<1.000000e+00> : tensor<f64>
// CONST: %[[W3:[a-z0-9_]+]] = dlc.constant dense<3.000000e+00> : tensor<f64>
// CONST: %[[IN:[a-z0-9_]+]] = dlc.compare lt, %[[S64]], %[[W3]] : tensor<f64>, tensor<f64> -> tensor<i1>
// CONST: %[[RAMP:[a-z0-9_]+]] = dlc.div %[[S64]], %{{.*}}
// CONST: %[[F:[a-z0-9_]+]] = dlc.select %[[IN]], %[[RAMP]], %[[ONE]]
// CONST: %[[LR64:[a-z0-9_]+]] = dlc.cast %[[LR]] : tensor<f32> to tensor<f64>
// CONST: %[[LRS:[a-z0-9_]+]] = dlc.mul %[[LR64]], %[[F]]
// Linear: (total - min(s, total)) / (total - warmup), HuggingFace's
// (total - s) / (total - warmup) held at 0 after total-steps.
// LIN: %[[SPAN:[a-z0-9_]+]] = dlc.constant dense<8.000000e+00> : tensor<f64>
// LIN: %[[T10:[a-z0-9_]+]] = dlc.constant dense<1.000000e+01> : tensor<f64>
// LIN: %[[SC:[a-z0-9_]+]] = dlc.min %[[S64]], %[[T10]]
// LIN: %[[T10B:[a-z0-9_]+]] = dlc.constant dense<1.000000e+01> : tensor<f64>
// LIN: %[[LEFT:[a-z0-9_]+]] = dlc.sub %[[T10B]], %[[SC]]
// LIN: %[[AFTER:[a-z0-9_]+]] = dlc.div %[[LEFT]], %[[SPAN]]
// LIN: %[[W2:[a-z0-9_]+]] = dlc.constant dense<2.000000e+00> : tensor<f64>
// LIN: %[[IN:[a-z0-9_]+]] = dlc.compare lt, %[[S64]], %[[W2]]
// LIN: %[[RAMP:[a-z0-9_]+]] = dlc.div %[[S64]], %{{.*}}
// LIN: %[[F:[a-z0-9_]+]] = dlc.select %[[IN]], %[[RAMP]], %[[AFTER]]
// LIN: %[[LRS:[a-z0-9_]+]] = dlc.mul %{{.*}}, %[[F]]
// Cosine: 0.5 (1 + cos(pi min(progress, 1))).
// COS: %[[SW:[a-z0-9_]+]] = dlc.sub %[[S64]], %{{.*}}
// COS: %[[P0:[a-z0-9_]+]] = dlc.div %[[SW]], %{{.*}}
// COS: %[[P:[a-z0-9_]+]] = dlc.min %[[P0]], %{{.*}}
// COS: %[[PI:[a-z0-9_]+]] = dlc.constant dense<3.1415926535897931> : tensor<f64>
// COS: %[[ANGLE:[a-z0-9_]+]] = dlc.mul %[[PI]], %[[P]]
// COS: %[[COSV:[a-z0-9_]+]] = dlc.cos %[[ANGLE]]
// COS: %[[SUM:[a-z0-9_]+]] = dlc.add %{{.*}}, %[[COSV]]
// COS: %[[HALF:[a-z0-9_]+]] = dlc.constant dense<5.000000e-01> : tensor<f64>
// COS: %[[AFTER:[a-z0-9_]+]] = dlc.mul %[[HALF]], %[[SUM]]
// COS: %[[W2:[a-z0-9_]+]] = dlc.constant dense<2.000000e+00> : tensor<f64>
// COS: %[[IN:[a-z0-9_]+]] = dlc.compare lt, %[[S64]], %[[W2]]
// COS: %[[RAMP:[a-z0-9_]+]] = dlc.div %[[S64]], %{{.*}}
// COS: %[[F:[a-z0-9_]+]] = dlc.select %[[IN]], %[[RAMP]], %[[AFTER]]
// COS: %[[LRS:[a-z0-9_]+]] = dlc.mul %{{.*}}, %[[F]]
// AdamW's weight decay in f64, for 1 - lr wd.
// ADAMW: %[[WD64:[a-z0-9_]+]] = dlc.cast %[[WD]] : tensor<f32> to tensor<f64>
// CHECK: %[[LRMETRIC:[a-z0-9_]+]] = dlc.cast %[[LRS]] : tensor<f64> to tensor<f32>

// Clipping: total = sqrt(sum of squares); g *= min(max / (total + 1e-6), 1).
// CLIP: %[[SQW:[a-z0-9_]+]] = dlc.mul %[[GW]], %[[GW]]
// CLIP: %[[SSW:[a-z0-9_]+]] = dlc.reduce_sum %[[SQW]] axes [0]
// CLIP: %[[SQB:[a-z0-9_]+]] = dlc.mul %[[GB]], %[[GB]]
// CLIP: %[[SS:[a-z0-9_]+]] = dlc.add %[[SSW]], %[[SQB]]
// CLIP: %[[NORM:[a-z0-9_]+]] = dlc.sqrt %[[SS]]
// CLIP: %[[EPS:[a-z0-9_]+]] = dlc.constant dense<9.99999997E-7> : tensor<f32>
// CLIP: %[[DEN:[a-z0-9_]+]] = dlc.add %[[NORM]], %[[EPS]]
// CLIP: %[[MAX:[a-z0-9_]+]] = dlc.constant dense<1.500000e+00> : tensor<f32>
// CLIP: %[[RATIO:[a-z0-9_]+]] = dlc.div %[[MAX]], %[[DEN]]
// CLIP: %[[COEF:[a-z0-9_]+]] = dlc.min %[[RATIO]], %{{.*}}
// CLIP: %[[CGW:[a-z0-9_]+]] = dlc.mul %[[GW]], %[[COEF]]
// CLIP: %[[CGB:[a-z0-9_]+]] = dlc.mul %[[GB]], %[[COEF]]

// What only some optimizers use is built only for them (or removed as
// dead): the first-step test for momentum, the step count t for Adam.
// MOM: %[[FIRST:[a-z0-9_]+]] = dlc.compare eq, %[[STEP]], %{{.*}} : tensor<i64>, tensor<i64> -> tensor<i1>
// NEST: %[[FIRST:[a-z0-9_]+]] = dlc.compare eq, %[[STEP]], %{{.*}} : tensor<i64>, tensor<i64> -> tensor<i1>
// SGD-NOT: dlc.compare eq
// SGD-NOT: dlc.pow
// ADAMS: %[[T:[a-z0-9_]+]] = dlc.add %[[STEP]], %{{.*}} : tensor<i64>, tensor<i64> -> tensor<i64>
// ADAMS: %[[T64:[a-z0-9_]+]] = dlc.cast %[[T]] : tensor<i64> to tensor<f64>
// Adam's bias corrections, once for all parameters, in f64 at t = step + 1:
// bc1 = 1 - beta1^t, bc2 = 1 - beta2^t.
// ADAM: %[[B1T:[a-z0-9_]+]] = dlc.constant dense<9.000000e-01> : tensor<f64>
// ADAMW: %[[B1T:[a-z0-9_]+]] = dlc.constant dense<8.000000e-01> : tensor<f64>
// ADAMS: %[[P1:[a-z0-9_]+]] = dlc.pow %[[B1T]], %[[T64]]
// ADAMS: %[[ONE1:[a-z0-9_]+]] = dlc.constant dense<1.000000e+00> : tensor<f64>
// ADAMS: %[[BC1:[a-z0-9_]+]] = dlc.sub %[[ONE1]], %[[P1]]
// ADAM: %[[B2T:[a-z0-9_]+]] = dlc.constant dense<0.99899999999999999> : tensor<f64>
// ADAMW: %[[B2T:[a-z0-9_]+]] = dlc.constant dense<0.98999999999999999> : tensor<f64>
// ADAMS: %[[P2:[a-z0-9_]+]] = dlc.pow %[[B2T]], %[[T64]]
// ADAMS: %[[ONE2:[a-z0-9_]+]] = dlc.constant dense<1.000000e+00> : tensor<f64>
// ADAMS: %[[BC2:[a-z0-9_]+]] = dlc.sub %[[ONE2]], %[[P2]]
// SGD's rate in the parameters' type (Adam folds it into its step size).
// SGD: %[[LRW:[a-z0-9_]+]] = dlc.cast %[[LRS]] : tensor<f64> to tensor<f32>
// MOM: %[[LRW:[a-z0-9_]+]] = dlc.cast %[[LRS]] : tensor<f64> to tensor<f32>
// NEST: %[[LRW:[a-z0-9_]+]] = dlc.cast %[[LRS]] : tensor<f64> to tensor<f32>
// CLIP: %[[LRW:[a-z0-9_]+]] = dlc.cast %[[LRS]] : tensor<f64> to tensor<f32>
// CONST: %[[LRW:[a-z0-9_]+]] = dlc.cast %[[LRS]] : tensor<f64> to tensor<f32>
// LIN: %[[LRW:[a-z0-9_]+]] = dlc.cast %[[LRS]] : tensor<f64> to tensor<f32>
// COS: %[[LRW:[a-z0-9_]+]] = dlc.cast %[[LRS]] : tensor<f64> to tensor<f32>

// Plain sgd: g + wd p, then p - lr g.
// SGD: %[[DW:[a-z0-9_]+]] = dlc.mul %[[W]], %[[WD]]
// SGD: %[[G:[a-z0-9_]+]] = dlc.add %[[GW]], %[[DW]]
// SGD: %[[STEPW:[a-z0-9_]+]] = dlc.mul %[[G]], %[[LRW]]
// SGD: %[[NEWW:[a-z0-9_]+]] = dlc.sub %[[W]], %[[STEPW]]
// SGD: %[[NEWB:[a-z0-9_]+]] = dlc.sub %[[B]], %{{.*}} : tensor<f32>
// SGD: %[[NEXT:[a-z0-9_]+]] = dlc.add %[[STEP]], %{{.*}} : tensor<i64>
// SGD: return %[[LOSS]], %[[LRMETRIC]], %[[NEWW]], %[[NEWB]], %[[S]], %[[NEXT]]
// CLIP: %[[DW:[a-z0-9_]+]] = dlc.mul %[[W]], %[[WD]]
// CLIP: %[[G:[a-z0-9_]+]] = dlc.add %[[CGW]], %[[DW]]
// CLIP: return %[[LOSS]], %[[LRMETRIC]], %[[NORM]],

// Momentum: buf = momentum buf + (1 - dampening) g, the gradient itself
// on the first step.
// MOM: %[[DW:[a-z0-9_]+]] = dlc.mul %[[W]], %[[WD]]
// MOM: %[[G:[a-z0-9_]+]] = dlc.add %[[GW]], %[[DW]]
// MOM: %[[D:[a-z0-9_]+]] = dlc.constant dense<7.500000e-01> : tensor<f32>
// MOM: %[[GD:[a-z0-9_]+]] = dlc.mul %[[G]], %[[D]]
// MOM: %[[M:[a-z0-9_]+]] = dlc.constant dense<0.899999976> : tensor<f32>
// MOM: %[[BM:[a-z0-9_]+]] = dlc.mul %[[BUFW]], %[[M]]
// MOM: %[[BUF1:[a-z0-9_]+]] = dlc.add %[[BM]], %[[GD]]
// MOM: %[[BUF:[a-z0-9_]+]] = dlc.select %[[FIRST]], %[[G]], %[[BUF1]]
// MOM: %[[STEPW:[a-z0-9_]+]] = dlc.mul %[[BUF]], %[[LRW]]
// MOM: %[[NEWW:[a-z0-9_]+]] = dlc.sub %[[W]], %[[STEPW]]
// MOM: %[[BUFBNEW:[a-z0-9_]+]] = dlc.select %[[FIRST]]
// MOM: %[[NEWB:[a-z0-9_]+]] = dlc.sub %[[B]],
// MOM: return %[[LOSS]], %[[LRMETRIC]], %[[BUF]], %[[NEWW]], %[[BUFBNEW]], %[[NEWB]], %[[S]], %{{.*}} :

// Nesterov: the step is g + momentum buf.
// NEST: %[[G:[a-z0-9_]+]] = dlc.add %[[GW]], %{{.*}}
// NEST: %[[BUF:[a-z0-9_]+]] = dlc.select %[[FIRST]], %[[G]], %{{.*}}
// NEST: %[[M:[a-z0-9_]+]] = dlc.constant dense<0.899999976> : tensor<f32>
// NEST: %[[BM:[a-z0-9_]+]] = dlc.mul %[[BUF]], %[[M]]
// NEST: %[[LOOK:[a-z0-9_]+]] = dlc.add %[[G]], %[[BM]]
// NEST: %[[STEPW:[a-z0-9_]+]] = dlc.mul %[[LOOK]], %[[LRW]]
// NEST: %[[NEWW:[a-z0-9_]+]] = dlc.sub %[[W]], %[[STEPW]]

// Adam: L2 weight decay on the gradient; m.lerp_(g, 1 - beta1);
// v = beta2 v + (1 - beta2) g^2; p - (m / (sqrt(v) / sqrt(bc2) + eps))
// (lr / bc1), with the step size and sqrt(bc2) in f64.
// ADAM: %[[DW:[a-z0-9_]+]] = dlc.mul %[[W]], %[[WD]]
// ADAM: %[[G:[a-z0-9_]+]] = dlc.add %[[GW]], %[[DW]]
// m.lerp_(g, 0.1) = m + 0.1 (g - m); v.mul_(beta2).addcmul_(g, g, 1 - beta2).
// ADAM: %[[GM:[a-z0-9_]+]] = dlc.sub %[[G]], %[[MW]]
// ADAM: %[[C1:[a-z0-9_]+]] = dlc.constant dense<1.000000e-01> : tensor<f32>
// ADAM: %[[GMS:[a-z0-9_]+]] = dlc.mul %[[C1]], %[[GM]]
// ADAM: %[[M1:[a-z0-9_]+]] = dlc.add %[[MW]], %[[GMS]]
// ADAM: %[[C2:[a-z0-9_]+]] = dlc.constant dense<1.000000e-03> : tensor<f32>
// ADAM: %[[G2S0:[a-z0-9_]+]] = dlc.mul %[[C2]], %[[G]]
// ADAM: %[[G2S:[a-z0-9_]+]] = dlc.mul %[[G2S0]], %[[G]]
// ADAM: %[[B2:[a-z0-9_]+]] = dlc.constant dense<9.990000e-01> : tensor<f32>
// ADAM: %[[VB:[a-z0-9_]+]] = dlc.mul %[[VW]], %[[B2]]
// ADAM: %[[V1:[a-z0-9_]+]] = dlc.add %[[VB]], %[[G2S]]
// p.addcdiv_(m, sqrt(v) / sqrt(bc2) + eps, -lr / bc1)
// ADAM: %[[SS:[a-z0-9_]+]] = dlc.div %[[LRS]], %[[BC1]]
// ADAM: %[[NSS:[a-z0-9_]+]] = dlc.neg %[[SS]]
// ADAM: %[[SS32:[a-z0-9_]+]] = dlc.cast %[[NSS]] : tensor<f64> to tensor<f32>
// ADAM: %[[BC2S:[a-z0-9_]+]] = dlc.sqrt %[[BC2]]
// ADAM: %[[BC2S32:[a-z0-9_]+]] = dlc.cast %[[BC2S]] : tensor<f64> to tensor<f32>
// ADAM: %[[EPS:[a-z0-9_]+]] = dlc.constant dense<9.99999993E-9> : tensor<f32>
// ADAM: %[[SV:[a-z0-9_]+]] = dlc.sqrt %[[V1]]
// ADAM: %[[SVC:[a-z0-9_]+]] = dlc.div %[[SV]], %[[BC2S32]]
// ADAM: %[[DEN:[a-z0-9_]+]] = dlc.add %[[SVC]], %[[EPS]]
// ADAM: %[[SM:[a-z0-9_]+]] = dlc.mul %[[SS32]], %[[M1]]
// ADAM: %[[UPD:[a-z0-9_]+]] = dlc.div %[[SM]], %[[DEN]]
// ADAM: %[[NEWW:[a-z0-9_]+]] = dlc.add %[[W]], %[[UPD]]
// The bias is updated with the same bias corrections.
// ADAM: dlc.div %[[LRS]], %[[BC1]] : tensor<f64>
// ADAM: dlc.sqrt %[[BC2]] : tensor<f64>
// ADAM: %[[NEWB:[a-z0-9_]+]] = dlc.add %[[B]], %{{.*}} : tensor<f32>
// ADAM: return %[[LOSS]], %[[LRMETRIC]], %[[M1]], %[[V1]], %[[NEWW]], %{{.*}}, %{{.*}}, %[[NEWB]], %[[S]],

// AdamW: decoupled weight decay, p (1 - lr wd) with 1 - lr wd in f64 from
// the scheduled rate, on the raw gradient.
// ADAMW: %[[LWD:[a-z0-9_]+]] = dlc.mul %[[LRS]], %[[WD64]] : tensor<f64>, tensor<f64> -> tensor<f64>
// ADAMW: %[[ONE:[a-z0-9_]+]] = dlc.constant dense<1.000000e+00> : tensor<f64>
// ADAMW: %[[KEEP:[a-z0-9_]+]] = dlc.sub %[[ONE]], %[[LWD]] : tensor<f64>, tensor<f64> -> tensor<f64>
// ADAMW: %[[KEEP32:[a-z0-9_]+]] = dlc.cast %[[KEEP]] : tensor<f64> to tensor<f32>
// ADAMW: %[[PD:[a-z0-9_]+]] = dlc.mul %[[W]], %[[KEEP32]]
// ADAMW: %[[GM:[a-z0-9_]+]] = dlc.sub %[[GW]], %[[MW]]
// ADAMW: %[[C1:[a-z0-9_]+]] = dlc.constant dense<2.000000e-01> : tensor<f32>
// ADAMW: dlc.mul %[[C1]], %[[GM]]
// ADAMW: %[[C2:[a-z0-9_]+]] = dlc.constant dense<0.00999999977> : tensor<f32>
// ADAMW: %[[G2S0:[a-z0-9_]+]] = dlc.mul %[[C2]], %[[GW]]
// ADAMW: dlc.mul %[[G2S0]], %[[GW]]
// ADAMW: dlc.constant dense<9.900000e-01> : tensor<f32>
// ADAMW: dlc.div %[[LRS]], %[[BC1]] : tensor<f64>
// ADAMW: dlc.sqrt %[[BC2]] : tensor<f64>
// ADAMW: dlc.constant dense<9.99999997E-7> : tensor<f32>
// ADAMW: %[[SM:[a-z0-9_]+]] = dlc.mul %{{.*}}, %{{.*}} : tensor<f32>, tensor<2xf32>
// ADAMW: %[[UPD:[a-z0-9_]+]] = dlc.div %[[SM]], %{{.*}} : tensor<2xf32>, tensor<2xf32>
// ADAMW: %[[NEWW:[a-z0-9_]+]] = dlc.add %[[PD]], %[[UPD]]
