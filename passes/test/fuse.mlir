// RUN: dlc-opt %s -split-input-file -dlc-fuse | FileCheck %s
// Running it again finds nothing left to group.
// RUN: dlc-opt %s -split-input-file -dlc-fuse -dlc-fuse | FileCheck %s

// An elementwise chain with a broadcast bias becomes one kernel; the matmul
// stays outside (a library call), the splat constant is cloned inside.
// CHECK-LABEL: func.func @bias_gelu
// CHECK: %[[MM:.*]] = dlc.matmul
// CHECK-NEXT: %[[F:.*]] = dlc.fusion %[[MM]], %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK: dlc.constant dense<5.000000e-01>
// CHECK: dlc.add
// CHECK: dlc.erf
// CHECK: dlc.mul
// CHECK: dlc.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @bias_gelu(%x: tensor<4x3xf32>, %w: tensor<3x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %half = dlc.constant dense<0.5> : tensor<f32>
  %0 = dlc.matmul %x, %w : tensor<4x3xf32>, tensor<3x8xf32> -> tensor<4x8xf32>
  %1 = dlc.add %0, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %2 = dlc.erf %1 : tensor<4x8xf32>
  %3 = dlc.mul %2, %half : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// Softmax: the max and the sum are read through broadcasts, so each
// reduction is the root of its own kernel; the exponential is read by the
// sum's loop and by the division at different iteration spaces, so it is
// stored once (its kernel ends there) rather than recomputed.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[MAX:.*]] = dlc.fusion %arg0 : (tensor<2x5xf32>) -> tensor<2x1xf32>
// CHECK: dlc.reduce_max
// CHECK: %[[EXP:.*]] = dlc.fusion %arg0, %[[MAX]] : (tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
// CHECK: dlc.sub
// CHECK: dlc.exp
// CHECK: %[[SUM:.*]] = dlc.fusion %[[EXP]] : (tensor<2x5xf32>) -> tensor<2x1xf32>
// CHECK: dlc.reduce_sum
// CHECK: %[[Y:.*]] = dlc.fusion %[[EXP]], %[[SUM]] : (tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
// CHECK: dlc.div
// CHECK: return %[[Y]]
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %m = dlc.reduce_max %x axes [1] keep_dims : tensor<2x5xf32> -> tensor<2x1xf32>
  %d = dlc.sub %x, %m : tensor<2x5xf32>, tensor<2x1xf32> -> tensor<2x5xf32>
  %e = dlc.exp %d : tensor<2x5xf32>
  %s = dlc.reduce_sum %e axes [1] keep_dims : tensor<2x5xf32> -> tensor<2x1xf32>
  %y = dlc.div %e, %s : tensor<2x5xf32>, tensor<2x1xf32> -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// An optimizer update: the new momentum is returned and also feeds the new
// parameter, so both come out of one kernel (multi-output fusion).
// CHECK-LABEL: func.func @momentum_update
// CHECK: %[[F:.*]]:2 = dlc.fusion %arg1, %arg2, %arg3, %arg0 : (tensor<16xf32>, tensor<16xf32>, tensor<f32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>)
// CHECK-COUNT-4: dlc.{{mul|add|sub}}
// CHECK: dlc.yield
// CHECK: return %[[F]]#1, %[[F]]#0
func.func @momentum_update(%p: tensor<16xf32>, %m: tensor<16xf32>, %g: tensor<16xf32>, %lr: tensor<f32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %beta = dlc.constant dense<0.9> : tensor<f32>
  %0 = dlc.mul %m, %beta : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
  %m1 = dlc.add %0, %g : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  %1 = dlc.mul %m1, %lr : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
  %p1 = dlc.sub %p, %1 : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  return %p1, %m1 : tensor<16xf32>, tensor<16xf32>
}

// -----

// A reduction read at the kernel's own index fuses with its epilogue
// (layer-norm's rsqrt of the variance), and cheap producers are recomputed
// under a broadcast, but a transcendental is not: the exp is its own kernel.
// CHECK-LABEL: func.func @epilogue_and_reuse
// CHECK: %[[R:.*]] = dlc.fusion %arg0 : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK: dlc.reduce_sum
// CHECK: dlc.rsqrt
// CHECK: %[[E:.*]] = dlc.fusion %arg1 : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: dlc.exp
// CHECK: %[[Y:.*]] = dlc.fusion %arg1, %[[E]], %arg0, %[[R]] : (tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK: dlc.neg
// CHECK: dlc.reshape
// CHECK: dlc.broadcast_to
func.func @epilogue_and_reuse(%x: tensor<4x8xf32>, %c: tensor<4xf32>) -> tensor<4x8xf32> {
  %s = dlc.reduce_sum %x axes [1] keep_dims : tensor<4x8xf32> -> tensor<4x1xf32>
  %r = dlc.rsqrt %s : tensor<4x1xf32>
  %e = dlc.exp %c : tensor<4xf32>
  %n = dlc.neg %c : tensor<4xf32>
  %en = dlc.add %e, %n : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %er = dlc.reshape %en : tensor<4xf32> to tensor<4x1xf32>
  %b = dlc.broadcast_to %er : tensor<4x1xf32> to tensor<4x8xf32>
  %y0 = dlc.mul %x, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %y = dlc.add %y0, %b : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Library ops, views and scatters stay alone.
// CHECK-LABEL: func.func @alone
// CHECK: dlc.reshape
// CHECK: %[[S:.*]] = dlc.fusion %{{.*}}, %arg1, %arg2 :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: dlc.scatter_elements
// CHECK-NEXT: dlc.yield
func.func @alone(%x: tensor<2x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x1xf32>) -> tensor<2x3xf32> {
  %r = dlc.reshape %x : tensor<2x3xf32> to tensor<6xf32>
  %back = dlc.reshape %r : tensor<6xf32> to tensor<2x3xf32>
  %s = dlc.scatter_elements %back[%i], %u {axis = 1 : i64} reduction add : tensor<2x3xf32>, tensor<2x1xi64>, tensor<2x1xf32>
  return %s : tensor<2x3xf32>
}

// -----

// GEMM and convolution epilogues a library can fuse are marked: a bias per
// output channel, then a ReLU as the importer writes it.
// CHECK-LABEL: func.func @epilogues
// CHECK: dlc.matmul {{.*}} {dlc.epilogue = "bias_relu"}
// CHECK: dlc.conv {{.*}} {dlc.epilogue = "bias"}
// A bias that varies along another dimension is no epilogue.
// CHECK: dlc.matmul
// CHECK-NOT: dlc.epilogue
// CHECK: return
func.func @epilogues(%x: tensor<4x3xf32>, %w: tensor<3x8xf32>, %b: tensor<8xf32>, %img: tensor<1x2x5x5xf32>, %k: tensor<6x2x3x3xf32>, %c: tensor<6x1x1xf32>, %rb: tensor<4x1xf32>) -> (tensor<4x8xf32>, tensor<1x6x3x3xf32>, tensor<4x8xf32>) {
  %zero = dlc.constant dense<0.0> : tensor<f32>
  %0 = dlc.matmul %x, %w : tensor<4x3xf32>, tensor<3x8xf32> -> tensor<4x8xf32>
  %1 = dlc.add %0, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %2 = dlc.compare le, %1, %zero : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xi1>
  %3 = dlc.select %2, %zero, %1 : tensor<4x8xi1>, tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = dlc.conv %img, %k stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] groups 1 : tensor<1x2x5x5xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x3x3xf32>
  %5 = dlc.add %4, %c : tensor<1x6x3x3xf32>, tensor<6x1x1xf32> -> tensor<1x6x3x3xf32>
  %6 = dlc.matmul %x, %w : tensor<4x3xf32>, tensor<3x8xf32> -> tensor<4x8xf32>
  %7 = dlc.add %6, %rb : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  return %3, %5, %7 : tensor<4x8xf32>, tensor<1x6x3x3xf32>, tensor<4x8xf32>
}
