// RUN: dlc-opt %s -split-input-file -dlc-plan-memory | FileCheck %s

// Four 4 KiB intermediates in a chain: each dies at its consumer, so the
// arena holds two at a time (an op never writes where it reads). The
// returned value is computed in its result's buffer (offset -1: not in the
// arena), the reshape is a view (no buffer of its own).
// CHECK-LABEL: func.func @chain
// CHECK-SAME: dlc.arena_size = 8192 : i64
// CHECK-SAME: dlc.intermediate_bytes = 16384 : i64
// CHECK: dlc.neg %arg0 {dlc.arena_offsets = array<i64: [[A:0|4096]]>}
// CHECK: dlc.abs %{{.*}} {dlc.arena_offsets = array<i64: [[B:0|4096]]>}
// CHECK: dlc.neg %{{.*}} {dlc.arena_offsets = array<i64: [[A]]>}
// CHECK: dlc.reshape
// CHECK-NOT: arena_offsets
// CHECK: dlc.abs %{{.*}} {dlc.arena_offsets = array<i64: [[B]]>}
// CHECK: dlc.exp %{{[0-9]+}} : tensor<32x32xf32>
func.func @chain(%x: tensor<1024xf32>) -> tensor<32x32xf32> {
  %0 = dlc.neg %x : tensor<1024xf32>
  %1 = dlc.abs %0 : tensor<1024xf32>
  %2 = dlc.neg %1 : tensor<1024xf32>
  %3 = dlc.reshape %2 : tensor<1024xf32> to tensor<32x32xf32>
  %4 = dlc.abs %3 : tensor<32x32xf32>
  %5 = dlc.exp %4 : tensor<32x32xf32>
  return %5 : tensor<32x32xf32>
}

// -----

// A value read through a view stays live until the view's last reader; a
// value returned twice is computed into the first result (the second is a
// dlc.plan.copy dlc-lower-to-plan adds); sizes round up to 64 bytes.
// CHECK-LABEL: func.func @views
// CHECK-SAME: dlc.arena_size = 128 : i64
// CHECK: %[[A:.*]] = dlc.neg %arg0 {dlc.arena_offsets = array<i64: 0>}
// CHECK: dlc.reshape %[[A]]
// CHECK: dlc.abs %arg0 {dlc.arena_offsets = array<i64: 64>}
// CHECK: dlc.add %{{[0-9]+}}, %{{[0-9]+}} : tensor<3xf32>
func.func @views(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = dlc.neg %x : tensor<3xf32>
  %1 = dlc.reshape %0 : tensor<3xf32> to tensor<1x3xf32>
  %2 = dlc.abs %x : tensor<3xf32>
  %3 = dlc.reshape %1 : tensor<1x3xf32> to tensor<3xf32>
  %4 = dlc.add %3, %2 : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return %4, %4 : tensor<3xf32>, tensor<3xf32>
}

// -----

// Arguments and constants keep their own storage.
// CHECK-LABEL: func.func @passthrough
// CHECK-SAME: dlc.arena_size = 0 : i64
// CHECK-NOT: arena_offsets
func.func @passthrough(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<2xf32>) {
  %c = dlc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %x, %c : tensor<3xf32>, tensor<2xf32>
}

// -----

// A fusion that only swaps the last two dimensions for matmuls is a view of
// its input (the plan reads it transposed), so that input stays live until
// the matmul and the matmul's result cannot take its place.
// CHECK-LABEL: func.func @transposed_operand
// CHECK: %[[N:.*]] = dlc.neg %arg1 {dlc.arena_offsets = array<i64: 0>}
// CHECK: dlc.fusion %[[N]] : (tensor<8x4xf32>) -> tensor<4x8xf32> {
// CHECK-NOT: arena_offsets
// CHECK: dlc.matmul {{.*}} {dlc.arena_offsets = array<i64: 128>}
func.func @transposed_operand(%x: tensor<2x4xf32>, %w: tensor<8x4xf32>) -> tensor<2x8xf32> {
  %n = dlc.neg %w : tensor<8x4xf32>
  %t = dlc.fusion %n : (tensor<8x4xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    %0 = dlc.transpose %a [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
    dlc.yield %0 : tensor<4x8xf32>
  }
  %m = dlc.matmul %x, %t : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
  %r = dlc.abs %m : tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

// A collective writes its results from the communication thread until the
// first step that reads one waits for it (a view is no step); an unread
// result is waited for at the function's end, so it stays live until then
// and the later intermediates go elsewhere. A read result dies at its reader.
// CHECK-LABEL: func.func @collectives
// CHECK-SAME: dlc.arena_size = 192 : i64
// CHECK: dlc.all_reduce mean bucket 0 %{{.*}} {dlc.arena_offsets = array<i64: [[R:0|64|128]]>}
// CHECK: dlc.all_reduce mean bucket 1 %{{.*}} {dlc.arena_offsets = array<i64: [[S:0|64|128]]>}
// CHECK: dlc.neg %{{.*}} {dlc.arena_offsets
// CHECK-NEXT: dlc.abs %{{.*}} {dlc.arena_offsets = array<i64: [[S]]>}
// CHECK-NOT: array<i64: [[R]]>
// CHECK: return
func.func @collectives(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = dlc.abs %x : tensor<3xf32>
  %1 = dlc.all_reduce mean bucket 0 %0 : tensor<3xf32>
  %2 = dlc.reshape %1 : tensor<3xf32> to tensor<1x3xf32>
  %3 = dlc.all_reduce mean bucket 1 %x : tensor<3xf32>
  %4 = dlc.neg %3 : tensor<3xf32>
  %5 = dlc.abs %4 : tensor<3xf32>
  %6 = dlc.neg %5 : tensor<3xf32>
  return %6 : tensor<3xf32>
}
