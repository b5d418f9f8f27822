// RUN: dlc-opt %s -dlc-functionalize '-dlc-add-loss=loss=mse label=target' -dlc-autodiff '-dlc-optimizer=optimizer=adamw clip-grad-norm=1.0' | FileCheck %s
// The four training passes in a row, on a model with parameters and a
// running state: each function the passes add, with its signature.

dlc.global @w : tensor<3x2xf32> = dense<0.5> : tensor<3x2xf32>
dlc.global @b : tensor<2xf32> = dense<0.0> : tensor<2xf32>
dlc.global @count : tensor<f32> = dense<0.0> : tensor<f32>

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

func.func @forward_eval(%x: tensor<4x3xf32> {dlc.name = "x"}) -> (tensor<4x2xf32> {dlc.name = "y"}) {
  %w = dlc.global_load @w : tensor<3x2xf32>
  %0 = dlc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// CHECK-LABEL: func.func @forward_train
// CHECK-SAME: (%{{.*}}: tensor<3x2xf32> {dlc.name = "w", dlc.role = "param"}, %{{.*}}: tensor<2xf32> {dlc.name = "b", dlc.role = "param"}, %{{.*}}: tensor<f32> {dlc.name = "count", dlc.role = "state"}, %{{.*}}: tensor<4x3xf32> {dlc.name = "x", dlc.role = "input"})
// CHECK-SAME: -> (tensor<4x2xf32> {dlc.name = "y", dlc.role = "output"}, tensor<f32> {dlc.name = "count", dlc.role = "state"})

// CHECK-LABEL: func.func @loss
// CHECK-SAME: %{{.*}}: tensor<4x2xf32> {dlc.name = "target", dlc.role = "label"})
// CHECK-SAME: -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<f32> {dlc.name = "count", dlc.role = "state"})

// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<f32> {dlc.name = "count", dlc.role = "state"}, tensor<3x2xf32> {dlc.name = "w", dlc.role = "gradient"}, tensor<2xf32> {dlc.name = "b", dlc.role = "gradient"})

// CHECK: dlc.global @dlc.step : tensor<i64> = dense<0>
// CHECK: dlc.global @dlc.lr : tensor<f32> = dense<1.000000e-03>
// CHECK: dlc.global @dlc.weight_decay : tensor<f32> = dense<0.00999999977>
// CHECK: dlc.global @optimizer.w.exp_avg : tensor<3x2xf32>
// CHECK: dlc.global @optimizer.w.exp_avg_sq : tensor<3x2xf32>
// CHECK: dlc.global @optimizer.b.exp_avg : tensor<2xf32>
// CHECK: dlc.global @optimizer.b.exp_avg_sq : tensor<2xf32>

// The runtime binds every argument and result by dlc.name; what train_step
// returns under a name is the next value of the argument of that name.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: ({{.*}}{dlc.name = "w", dlc.role = "param"}, {{.*}}{dlc.name = "b", dlc.role = "param"}, {{.*}}{dlc.name = "count", dlc.role = "state"}, {{.*}}{dlc.name = "x", dlc.role = "input"}, {{.*}}{dlc.name = "target", dlc.role = "label"}, {{.*}}{dlc.name = "dlc.step", dlc.role = "step"}, {{.*}}{dlc.name = "dlc.lr", dlc.role = "hyperparameter"}, {{.*}}{dlc.name = "dlc.weight_decay", dlc.role = "hyperparameter"}, {{.*}}{dlc.name = "optimizer.w.exp_avg", dlc.role = "optimizer_state"}, {{.*}}{dlc.name = "optimizer.w.exp_avg_sq", dlc.role = "optimizer_state"}, {{.*}}{dlc.name = "optimizer.b.exp_avg", dlc.role = "optimizer_state"}, {{.*}}{dlc.name = "optimizer.b.exp_avg_sq", dlc.role = "optimizer_state"})
// CHECK-SAME: -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<f32> {dlc.name = "lr", dlc.role = "metric"}, tensor<f32> {dlc.name = "grad_norm", dlc.role = "metric"}, tensor<3x2xf32> {dlc.name = "optimizer.w.exp_avg", dlc.role = "optimizer_state"}, tensor<3x2xf32> {dlc.name = "optimizer.w.exp_avg_sq", dlc.role = "optimizer_state"}, tensor<3x2xf32> {dlc.name = "w", dlc.role = "param"}, tensor<2xf32> {dlc.name = "optimizer.b.exp_avg", dlc.role = "optimizer_state"}, tensor<2xf32> {dlc.name = "optimizer.b.exp_avg_sq", dlc.role = "optimizer_state"}, tensor<2xf32> {dlc.name = "b", dlc.role = "param"}, tensor<f32> {dlc.name = "count", dlc.role = "state"}, tensor<i64> {dlc.name = "dlc.step", dlc.role = "step"})

// The evaluation function only gains its parameter.
// CHECK-LABEL: func.func @forward_eval
// CHECK-SAME: (%{{.*}}: tensor<3x2xf32> {dlc.name = "w", dlc.role = "param"}, %{{.*}}: tensor<4x3xf32> {dlc.name = "x", dlc.role = "input"})
