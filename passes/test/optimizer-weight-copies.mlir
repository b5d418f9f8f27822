// RUN: dlc-opt %s '-dlc-optimizer=optimizer=adam' | FileCheck %s
// RUN: dlc-opt %s '-dlc-optimizer=optimizer=adam low-precision-copies=false' | FileCheck %s --check-prefix=CAST
// Under mixed precision train_step reads each parameter's 16-bit copy
// instead of casting the parameter, and the update writes the next copy.

// The copy's initial value is the parameter's rounded to nearest even:
// 1 + 2^-8 lies half way between bfloat16's 1 and 1 + 2^-7 and goes to 1,
// 3 + 2^-6 is 3 + 2^-6 in float16 (11 bits).
// CHECK: dlc.global @"w@bf16" : tensor<2xbf16> = dense<[1.000000e+00, 3.015630e+00]> : tensor<2xbf16> {dlc.copy_of = @w}
// CHECK: dlc.global @"w@fp16" : tensor<2xf16> = dense<[1.003910e+00, 3.015630e+00]> : tensor<2xf16> {dlc.copy_of = @w}
// A parameter without an initial value has a copy without one.
// CHECK: dlc.global @"v@bf16" : tensor<2xbf16> {dlc.copy_of = @v}
// CHECK-NOT: @"d@fp16"
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %[[V:[a-z0-9_]+]]: tensor<2xf32> {dlc.name = "v", dlc.role = "param"}
// CHECK-SAME: %[[WB:[a-z0-9_]+]]: tensor<2xbf16> {dlc.name = "w@bf16", dlc.role = "weight_copy"}
// CHECK-SAME: %[[WH:[a-z0-9_]+]]: tensor<2xf16> {dlc.name = "w@fp16", dlc.role = "weight_copy"}
// CHECK-SAME: %[[VB:[a-z0-9_]+]]: tensor<2xbf16> {dlc.name = "v@bf16", dlc.role = "weight_copy"}
// CHECK-SAME: -> ({{.*}}, tensor<2xbf16> {dlc.name = "w@bf16", dlc.role = "weight_copy"}, tensor<2xf16> {dlc.name = "w@fp16", dlc.role = "weight_copy"}, tensor<2xbf16> {dlc.name = "v@bf16", dlc.role = "weight_copy"}, tensor<i64> {dlc.name = "dlc.step", dlc.role = "step"})
// The step reads the copies; no parameter is cast to 16 bits but the new
// ones.
// CHECK-NOT: dlc.cast %[[W]]
// CHECK: dlc.mul %[[WB]], %{{.+}} : tensor<2xbf16>
// CHECK: dlc.mul %[[WH]], %{{.+}} : tensor<2xf16>
// A float64 parameter keeps its cast: a copy's source is a float32 master
// weight.
// CHECK: dlc.cast %{{.+}} : tensor<2xf64> to tensor<2xf16>
// CHECK: %[[NEWW:.+]] = dlc.add %[[W]], %{{.+}} : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
// CHECK: %[[NEWV:.+]] = dlc.add %[[V]], %{{.+}} : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
// CHECK: %[[NEXTB:.+]] = dlc.cast %[[NEWW]] : tensor<2xf32> to tensor<2xbf16>
// CHECK: %[[NEXTH:.+]] = dlc.cast %[[NEWW]] : tensor<2xf32> to tensor<2xf16>
// CHECK: %[[NEXTV:.+]] = dlc.cast %[[NEWV]] : tensor<2xf32> to tensor<2xbf16>
// CHECK: return {{.*}}, %[[NEXTB]], %[[NEXTH]], %[[NEXTV]], %{{.+}} :


// Without copies, the casts stay.
// CAST-NOT: weight_copy
// CAST: dlc.cast %{{.+}} : tensor<2xf32> to tensor<2xbf16>
// CAST-NOT: weight_copy

dlc.global @w : tensor<2xf32> = dense<[1.00390625, 3.015625]> : tensor<2xf32>
dlc.global @v : tensor<2xf32>
dlc.global @d : tensor<2xf64> = dense<1.0> : tensor<2xf64>
func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %v: tensor<2xf32> {dlc.name = "v", dlc.role = "param"}, %x: tensor<2xbf16> {dlc.name = "x", dlc.role = "input"}, %y: tensor<2xf16> {dlc.name = "y", dlc.role = "input"}, %d: tensor<2xf64> {dlc.name = "d", dlc.role = "param"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}, tensor<2xf32> {dlc.name = "v", dlc.role = "gradient"}, tensor<2xf64> {dlc.name = "d", dlc.role = "gradient"}) {
  // Two uses cast w to bfloat16 (mixed precision casts per use), one to
  // float16.
  %wb = dlc.cast %w : tensor<2xf32> to tensor<2xbf16>
  %wb2 = dlc.cast %w : tensor<2xf32> to tensor<2xbf16>
  %wh = dlc.cast %w : tensor<2xf32> to tensor<2xf16>
  %vb = dlc.cast %v : tensor<2xf32> to tensor<2xbf16>
  %0 = dlc.mul %wb, %x : tensor<2xbf16>, tensor<2xbf16> -> tensor<2xbf16>
  %1 = dlc.mul %wh, %y : tensor<2xf16>, tensor<2xf16> -> tensor<2xf16>
  %2 = dlc.mul %wb2, %vb : tensor<2xbf16>, tensor<2xbf16> -> tensor<2xbf16>
  %3 = dlc.cast %0 : tensor<2xbf16> to tensor<2xf32>
  %4 = dlc.cast %1 : tensor<2xf16> to tensor<2xf32>
  %5 = dlc.cast %2 : tensor<2xbf16> to tensor<2xf32>
  %6 = dlc.add %3, %4 : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %7 = dlc.add %6, %5 : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %dh = dlc.cast %d : tensor<2xf64> to tensor<2xf16>
  %dl = dlc.mul %dh, %y : tensor<2xf16>, tensor<2xf16> -> tensor<2xf16>
  %df = dlc.cast %dl : tensor<2xf16> to tensor<2xf32>
  %8 = dlc.add %7, %df : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %l = dlc.reduce_sum %8 axes [0] : tensor<2xf32> -> tensor<f32>
  %dg = dlc.cast %df : tensor<2xf32> to tensor<2xf64>
  return %l, %3, %4, %dg : tensor<f32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf64>
}
