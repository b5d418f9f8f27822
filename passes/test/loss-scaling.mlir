// RUN: dlc-opt %s -dlc-autodiff=loss-scale=true | FileCheck %s --check-prefix=GRAD
// RUN: dlc-opt %s -dlc-autodiff=loss-scale=true '-dlc-optimizer=momentum=0.9 init-scale=1024 growth-factor=4 backoff-factor=0.25 growth-interval=3' | FileCheck %s
// RUN: dlc-opt %s -dlc-autodiff=loss-scale=true '-dlc-optimizer=optimizer=adam clip-grad-norm=1.0' | FileCheck %s --check-prefix=ADAM
// Dynamic loss scaling, GradScaler's: dlc-autodiff starts the loss
// gradient from a loss-scale argument; dlc-optimizer unscales the
// gradients, skips the update of a step whose gradients hold an inf or
// NaN, and updates the scale.

dlc.global @w : tensor<2xf32> = dense<0.5> : tensor<2xf32>
func.func @loss(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %count: tensor<f32> {dlc.name = "count", dlc.role = "state"}, %x: tensor<2xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<f32> {dlc.name = "count", dlc.role = "state"}) {
  %0 = dlc.mul %w, %x : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %1 = dlc.reduce_sum %0 axes [0] : tensor<2xf32> -> tensor<f32>
  %one = dlc.constant dense<1.0> : tensor<f32>
  %2 = dlc.add %count, %one : tensor<f32>, tensor<f32> -> tensor<f32>
  return %1, %2 : tensor<f32>, tensor<f32>
}

// The scale is the last argument; the loss gradient (x times the seed,
// broadcast) starts from it instead of 1.
// GRAD-LABEL: func.func @loss_grad
// GRAD-SAME: %[[X:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "x", dlc.role = "input"}, %[[SCALE:[a-z0-9_]+]]: tensor<f32> {dlc.name = "dlc.loss_scale", dlc.role = "loss_scale"})
// GRAD: %[[SEED:.+]] = dlc.reshape %[[SCALE]] : tensor<f32> to tensor<1xf32>
// GRAD: %[[B:.+]] = dlc.broadcast_to %[[SEED]] : tensor<1xf32> to tensor<2xf32>
// GRAD: %[[G:.+]] = dlc.mul %[[B]], %[[X]]
// GRAD: return {{.*}}, %[[G]]

// The scale becomes optimizer state with the init-scale, next to a growth
// tracker and a count of skipped steps.
// CHECK: dlc.global @dlc.loss_scale : tensor<f32> = dense<1.024000e+03> : tensor<f32>
// CHECK: dlc.global @dlc.loss_scale_growth_tracker : tensor<i64> = dense<0> : tensor<i64>
// CHECK: dlc.global @dlc.skipped_steps : tensor<i64> = dense<0> : tensor<i64>
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}
// CHECK-SAME: %[[SCALE:[a-z0-9_]+]]: tensor<f32> {dlc.name = "dlc.loss_scale", dlc.role = "optimizer_state"}
// CHECK-SAME: %[[STEP:[a-z0-9_]+]]: tensor<i64> {dlc.name = "dlc.step", dlc.role = "step"}
// CHECK-SAME: %[[TRACKER:[a-z0-9_]+]]: tensor<i64> {dlc.name = "dlc.loss_scale_growth_tracker", dlc.role = "optimizer_state"}
// CHECK-SAME: %[[SKIPPED:[a-z0-9_]+]]: tensor<i64> {dlc.name = "dlc.skipped_steps", dlc.role = "optimizer_state"}
// CHECK-SAME: %[[BUF:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "optimizer.w.momentum_buffer", dlc.role = "optimizer_state"}
// CHECK-SAME: -> ({{.*}}{dlc.name = "loss", dlc.role = "loss"}, {{.*}}{dlc.name = "lr", dlc.role = "metric"}, {{.*}}{dlc.name = "optimizer.w.momentum_buffer", dlc.role = "optimizer_state"}, {{.*}}{dlc.name = "w", dlc.role = "param"}, {{.*}}{dlc.name = "count", dlc.role = "state"}, tensor<f32> {dlc.name = "dlc.loss_scale", dlc.role = "optimizer_state"}, tensor<i64> {dlc.name = "dlc.loss_scale_growth_tracker", dlc.role = "optimizer_state"}, tensor<i64> {dlc.name = "dlc.skipped_steps", dlc.role = "optimizer_state"}, tensor<f32> {dlc.name = "loss_scale", dlc.role = "metric"}, tensor<i64> {dlc.name = "skipped_steps", dlc.role = "metric"}, tensor<i64> {dlc.name = "dlc.step", dlc.role = "step"})
// 1 / scale in f64, rounded to f32 as torch does; the probe for inf/NaN
// sums the gradient times 0 (0 unless an element is inf or NaN), then the
// gradient is unscaled.
// CHECK: %[[SCALE64:.+]] = dlc.cast %[[SCALE]] : tensor<f32> to tensor<f64>
// CHECK: %[[INV64:.+]] = dlc.div %{{.+}}, %[[SCALE64]] : tensor<f64>, tensor<f64> -> tensor<f64>
// CHECK: %[[INV:.+]] = dlc.cast %[[INV64]] : tensor<f64> to tensor<f32>
// CHECK: %[[ZERO:.+]] = dlc.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[PROBE:.+]] = dlc.mul %[[G:.+]], %[[ZERO]] : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
// CHECK: %[[SUM:.+]] = dlc.reduce_sum %[[PROBE]] axes [0]
// CHECK: %[[UNSCALED:.+]] = dlc.mul %[[G]], %[[INV]]
// CHECK: %[[FOUND:.+]] = dlc.compare ne, %[[SUM]], %{{.+}} : tensor<f32>, tensor<f32> -> tensor<i1>
// SGD's first step is the first one not skipped.
// CHECK: %[[APPLIED:.+]] = dlc.sub %[[STEP]], %[[SKIPPED]] : tensor<i64>
// CHECK: dlc.compare eq, %[[APPLIED]]
// CHECK: %[[NEWBUF:.+]] = dlc.select %[[FOUND]], %[[BUF]], %{{.+}} : tensor<i1>, tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
// CHECK: %[[NEWW:.+]] = dlc.select %[[FOUND]], %[[W]], %{{.+}} : tensor<i1>, tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
// The model state changes whether or not the step is skipped.
// CHECK-NOT: dlc.select %[[FOUND]], %{{.+}}, %{{.+}} : tensor<i1>, tensor<f32>, tensor<f32>
// CHECK: %[[CLEAN:.+]] = dlc.add %[[TRACKER]], %{{.+}} : tensor<i64>
// CHECK: %[[INTERVAL:.+]] = dlc.constant dense<3> : tensor<i64>
// CHECK: %[[GROW:.+]] = dlc.compare eq, %[[CLEAN]], %[[INTERVAL]]
// CHECK: dlc.constant dense<4.000000e+00> : tensor<f64>
// CHECK: %[[GROWN:.+]] = dlc.cast %{{.+}} : tensor<f64> to tensor<f32>
// CHECK: dlc.constant dense<0x7F800000> : tensor<f32>
// CHECK: %[[FINITE:.+]] = dlc.compare lt
// CHECK: %[[KEPT:.+]] = dlc.select %[[FINITE]], %[[GROWN]], %[[SCALE]]
// CHECK: %[[AFTERCLEAN:.+]] = dlc.select %[[GROW]], %[[KEPT]], %[[SCALE]]
// CHECK: dlc.constant dense<2.500000e-01> : tensor<f64>
// CHECK: %[[BACKEDOFF:.+]] = dlc.cast %{{.+}} : tensor<f64> to tensor<f32>
// CHECK: %[[NEWSCALE:.+]] = dlc.select %[[FOUND]], %[[BACKEDOFF]], %[[AFTERCLEAN]]
// CHECK: %[[TRACKED:.+]] = dlc.select %[[GROW]], %{{.+}}, %[[CLEAN]]
// CHECK: %[[NEWTRACKER:.+]] = dlc.select %[[FOUND]], %{{.+}}, %[[TRACKED]]
// CHECK: %[[ONESKIP:.+]] = dlc.cast %[[FOUND]] : tensor<i1> to tensor<i64>
// CHECK: %[[NEWSKIPPED:.+]] = dlc.add %[[SKIPPED]], %[[ONESKIP]]
// dlc.step counts every call.
// CHECK: %[[NEWSTEP:.+]] = dlc.add %[[STEP]], %{{.+}} : tensor<i64>
// CHECK: return %{{.+}}, %{{.+}}, %[[NEWBUF]], %[[NEWW]], %{{.+}}, %[[NEWSCALE]], %[[NEWTRACKER]], %[[NEWSKIPPED]], %[[SCALE]], %[[NEWSKIPPED]], %[[NEWSTEP]]

// Adam: the bias corrections count the steps not skipped; the gradients
// are unscaled before clipping, and the defaults are GradScaler's.
// ADAM: dlc.global @dlc.loss_scale : tensor<f32> = dense<6.553600e+04> : tensor<f32>
// ADAM-LABEL: func.func @train_step
// ADAM-SAME: %[[SCALE:[a-z0-9_]+]]: tensor<f32> {dlc.name = "dlc.loss_scale", dlc.role = "optimizer_state"}
// ADAM-SAME: %[[STEP:[a-z0-9_]+]]: tensor<i64> {dlc.name = "dlc.step", dlc.role = "step"}
// ADAM-SAME: %[[SKIPPED:[a-z0-9_]+]]: tensor<i64> {dlc.name = "dlc.skipped_steps", dlc.role = "optimizer_state"}
// ADAM: = dlc.mul %[[G:.+]], %{{.+}} : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
// ADAM: %[[UNSCALED:.+]] = dlc.mul %[[G]], %{{.+}} : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
// ADAM: dlc.mul %[[UNSCALED]], %[[UNSCALED]]
// ADAM: dlc.sqrt
// ADAM: %[[APPLIED:.+]] = dlc.sub %[[STEP]], %[[SKIPPED]] : tensor<i64>
// ADAM: %[[T:.+]] = dlc.add %[[APPLIED]], %{{.+}} : tensor<i64>
// ADAM: dlc.constant dense<2000> : tensor<i64>
// ADAM: dlc.constant dense<2.000000e+00> : tensor<f64>
// ADAM: dlc.constant dense<5.000000e-01> : tensor<f64>
