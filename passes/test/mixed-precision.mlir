// RUN: dlc-opt %S/Inputs/mixed-precision-model.mlir --dlc-mixed-precision | FileCheck %s
// RUN: dlc-opt %S/Inputs/mixed-precision-model.mlir --dlc-mixed-precision --dlc-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: dlc-opt %s -split-input-file '--dlc-mixed-precision=precision=fp16 low-ops=dlc.tanh fp32-ops=dlc.matmul' | FileCheck %s --check-prefix=LISTS
// RUN: dlc-opt %s -split-input-file --dlc-mixed-precision | FileCheck %s --check-prefix=KEPT

// The policy on a small language model (Inputs/mixed-precision-model.mlir).
// The signature is unchanged: parameters stay float32 (master weights).
// CHECK: func.func @loss(%[[EMB:[a-z0-9]+]]: tensor<16x8xf32> {{.*}}, %[[W:[a-z0-9]+]]: tensor<8x8xf32> {{.*}}, %[[B:[a-z0-9]+]]: tensor<8xf32> {{.*}}, %[[G:[a-z0-9]+]]: tensor<8xf32> {{.*}}, %{{.*}}: tensor<4xi64> {{.*}}, %{{.*}}: tensor<4x16xf32> {{.*}}) -> (tensor<f32>
// The embedding is gathered in float32 (a view of a parameter); the matmul
// casts its operands to bfloat16, each parameter at its use.
// CHECK: %[[X:.*]] = dlc.gather %[[EMB]]{{.*}} -> tensor<4x8xf32>
// CHECK: %[[XL:.*]] = dlc.cast %[[X]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK: %[[WL:.*]] = dlc.cast %[[W]] : tensor<8x8xf32> to tensor<8x8xbf16>
// CHECK: %[[H:.*]] = dlc.matmul %[[XL]], %[[WL]] : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xbf16>
// The bias broadcasts: cast down, the add stays low, so does tanh.
// CHECK: %[[BL:.*]] = dlc.cast %[[B]] : tensor<8xf32> to tensor<8xbf16>
// CHECK: %[[HB:.*]] = dlc.add %[[H]], %[[BL]] : tensor<4x8xbf16>, tensor<8xbf16> -> tensor<4x8xbf16>
// CHECK: %[[T:.*]] = dlc.tanh %[[HB]] : tensor<4x8xbf16>
// The residual add of the full-size float32 embedding is float32.
// CHECK: %[[TF:.*]] = dlc.cast %[[T]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK: %[[R:.*]] = dlc.add %[[TF]], %[[X]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// LayerNorm: statistics and normalization in float32.
// CHECK: dlc.reduce_sum %[[R]] axes [1] keep_dims : tensor<4x8xf32>
// CHECK: dlc.rsqrt %{{.*}} : tensor<4x1xf32>
// CHECK: %[[Y:.*]] = dlc.mul %{{.*}}, %[[G]] : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// The tied projection: the transposed table (a view) is cast at its
// source, the table itself, and transposed in bfloat16: every use casts the
// parameter, so the casts are one after CSE.
// CHECK: %[[YL:.*]] = dlc.cast %[[Y]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK: %[[EL:.*]] = dlc.cast %[[EMB]] : tensor<16x8xf32> to tensor<16x8xbf16>
// CHECK: %[[ETL:.*]] = dlc.transpose %[[EL]] [1, 0] : tensor<16x8xbf16> -> tensor<8x16xbf16>
// CHECK: %[[LOGITS:.*]] = dlc.matmul %[[YL]], %[[ETL]] : {{.*}} -> tensor<4x16xbf16>
// The softmax: its maximum is float32, so everything after it is.
// CHECK: %[[LF:.*]] = dlc.cast %[[LOGITS]] : tensor<4x16xbf16> to tensor<4x16xf32>
// CHECK: %[[M:.*]] = dlc.reduce_max %[[LF]] axes [1] keep_dims : tensor<4x16xf32>
// CHECK: dlc.sub %[[LF]], %[[M]] : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
// CHECK: dlc.exp %{{.*}} : tensor<4x16xf32>
// CHECK: return %{{.*}} : tensor<f32>

// Backward follows the forward's types: low products, and each gradient
// cast back to float32 at the cast the forward made. The tied table's two
// gradients (through the projection and through the gather) are summed in
// float32.
// GRAD-LABEL: func.func @loss_grad
// GRAD: %[[DW:.*]] = dlc.matmul %{{.*}}, %{{.*}} : tensor<8x4xbf16>, tensor<4x8xbf16> -> tensor<8x8xbf16>
// GRAD: %[[DWF:.*]] = dlc.cast %[[DW]] : tensor<8x8xbf16> to tensor<8x8xf32>
// GRAD: %[[SCATTER:.*]] = dlc.scatter_elements {{.*}} : tensor<16x8xf32>, tensor<4x8xi64>, tensor<4x8xf32>
// GRAD: %[[DEMB:.*]] = dlc.add %{{.*}}, %[[SCATTER]] : tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
// GRAD: return %{{.*}}, %[[DEMB]], %[[DWF]], %{{.*}}, %{{.*}} : tensor<f32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>

func.func @lists(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %h = dlc.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %t = dlc.tanh %h : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// The lists are options: float16, tanh low, matmul float32; the result is
// cast back to the declared type.
// LISTS-LABEL: func.func @lists
// LISTS: %[[H:.*]] = dlc.matmul %arg0, %arg1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
// LISTS: %[[HL:.*]] = dlc.cast %[[H]] : tensor<4x8xf32> to tensor<4x8xf16>
// LISTS: %[[T:.*]] = dlc.tanh %[[HL]] : tensor<4x8xf16>
// LISTS: %[[TF:.*]] = dlc.cast %[[T]] : tensor<4x8xf16> to tensor<4x8xf32>
// LISTS: return %[[TF]] : tensor<4x8xf32>

// -----

// float64 programs, and ops with no float operand, are left as they are.
// KEPT-LABEL: func.func @kept
// KEPT-NOT: dlc.cast
// KEPT: dlc.matmul %arg0, %arg1 : tensor<4x8xf64>, tensor<8x8xf64> -> tensor<4x8xf64>
// KEPT: dlc.add %arg2, %arg2 : tensor<4xi64>
// KEPT-NOT: dlc.cast
func.func @kept(%x: tensor<4x8xf64>, %w: tensor<8x8xf64>, %i: tensor<4xi64>) -> (tensor<4x8xf64>, tensor<4xi64>) {
  %h = dlc.matmul %x, %w : tensor<4x8xf64>, tensor<8x8xf64> -> tensor<4x8xf64>
  %j = dlc.add %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  return %h, %j : tensor<4x8xf64>, tensor<4xi64>
}

// -----

// Before dlc-functionalize (an inference import), parameters are global
// loads: cast down where they broadcast, as arguments are; a global's
// store keeps the global's type.
// KEPT-LABEL: func.func @globals
// KEPT: %[[B:.*]] = dlc.global_load @b : tensor<8xf32>
// KEPT: %[[H:.*]] = dlc.matmul {{.*}} -> tensor<4x8xbf16>
// KEPT: %[[BL:.*]] = dlc.cast %[[B]] : tensor<8xf32> to tensor<8xbf16>
// KEPT: %[[HB:.*]] = dlc.add %[[H]], %[[BL]] : tensor<4x8xbf16>, tensor<8xbf16> -> tensor<4x8xbf16>
// KEPT: %[[T:.*]] = dlc.tanh %[[HB]] : tensor<4x8xbf16>
// KEPT: %[[TF:.*]] = dlc.cast %[[T]] : tensor<4x8xbf16> to tensor<4x8xf32>
// KEPT: dlc.global_store @s, %[[TF]] : tensor<4x8xf32>
// KEPT: return %[[TF]] : tensor<4x8xf32>
dlc.global @w : tensor<8x8xf32> = dense<0.5> : tensor<8x8xf32>
dlc.global @b : tensor<8xf32> = dense<0.25> : tensor<8xf32>
dlc.global @s : tensor<4x8xf32> = dense<0.0> : tensor<4x8xf32>
func.func @globals(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = dlc.global_load @w : tensor<8x8xf32>
  %b = dlc.global_load @b : tensor<8xf32>
  %h = dlc.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %hb = dlc.add %h, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %t = dlc.tanh %hb : tensor<4x8xf32>
  dlc.global_store @s, %t : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}
