// RUN: dlc-opt %s -split-input-file -dlc-sort-scatters | FileCheck %s
// dlc-sort-scatters turns the scatter-add of an embedding's gradient into
// a sort of its ids by counting and a dlc.segment_sum, and leaves every
// other scatter alone.

// The gradient rule of dlc.gather: 20 token rows of 3 into 10 rows.
// CHECK-LABEL: func.func @embedding_gradient
// The scatter's reading of the ids (negative from the end, then clamped).
// CHECK: %[[WRAPPED:.*]] = dlc.select
// CHECK: %[[MAX:.*]] = dlc.max %[[WRAPPED]]
// CHECK: %[[ID:.*]] = dlc.min %[[MAX]]
// key = id * 20 + t, ranked by counting the smaller keys.
// CHECK: %[[KEY:.*]] = dlc.add %{{.*}}, %[[T:.*]] : tensor<20xi64>, tensor<20xi64>
// CHECK: %[[LESS:.*]] = dlc.compare lt, %{{.*}}, %{{.*}} : tensor<1x20xi64>, tensor<20x1xi64>
// CHECK: %[[COUNTS:.*]] = dlc.cast %[[LESS]] : tensor<20x20xi1> to tensor<20x20xi64>
// CHECK: %[[RANK:.*]] = dlc.reduce_sum %[[COUNTS]] axes [1] : tensor<20x20xi64> -> tensor<20xi64>
// order[p] = the t whose rank is p.
// CHECK: dlc.compare eq
// CHECK: %[[ORDER:.*]] = dlc.reduce_sum %{{.*}} axes [1] : tensor<20x20xi64> -> tensor<20xi64>
// Each id's first sorted position: a min-scatter into 20 (= no rows).
// CHECK: %[[SORTED:.*]] = dlc.gather %[[ID]][%[[ORDER]]] {axis = 0 : i64}
// CHECK: %[[STARTS:.*]] = dlc.scatter_elements %{{.*}}[%[[SORTED]]], %{{.*}} {axis = 0 : i64} reduction min : tensor<10xi64>, tensor<20xi64>, tensor<20xi64>
// CHECK: %[[SUMS:.*]] = dlc.segment_sum %arg1[%[[ID]], %[[ORDER]], %[[STARTS]]] : tensor<20x3xf32>, tensor<20xi64>, tensor<20xi64>, tensor<10xi64> -> tensor<10x3xf32>
// CHECK-NOT: reduction add
// CHECK: return %[[SUMS]]
func.func @embedding_gradient(%ids: tensor<4x5xi64>, %g: tensor<20x3xf32>) -> tensor<10x3xf32> {
  %zeros = dlc.constant dense<0.0> : tensor<10x3xf32>
  %column = dlc.reshape %ids : tensor<4x5xi64> to tensor<20x1xi64>
  %indices = dlc.broadcast_to %column : tensor<20x1xi64> to tensor<20x3xi64>
  %s = dlc.scatter_elements %zeros[%indices], %g {axis = 0 : i64} reduction add : tensor<10x3xf32>, tensor<20x3xi64>, tensor<20x3xf32>
  return %s : tensor<10x3xf32>
}

// -----

// Into data that is not zeros the scatter stays: it adds each row to the
// data in turn, which sums added afterwards would round differently.
// CHECK-LABEL: func.func @into_data
// CHECK-NOT: dlc.segment_sum
// CHECK: dlc.scatter_elements
func.func @into_data(%ids: tensor<20x1xi32>, %g: tensor<20x3xf32>, %data: tensor<10x3xf32>) -> tensor<10x3xf32> {
  %indices = dlc.broadcast_to %ids : tensor<20x1xi32> to tensor<20x3xi32>
  %s = dlc.scatter_elements %data[%indices], %g {axis = 0 : i64} reduction add : tensor<10x3xf32>, tensor<20x3xi32>, tensor<20x3xf32>
  return %s : tensor<10x3xf32>
}

// -----

// Left alone: 16 rows (gathered per element already), another reduction,
// another axis, and indices that are not one id a row.
// CHECK-LABEL: func.func @unsorted
// CHECK-NOT: dlc.segment_sum
// CHECK-COUNT-4: dlc.scatter_elements
func.func @unsorted(%ids16: tensor<16x1xi64>, %g16: tensor<16x3xf32>, %ids: tensor<20x1xi64>, %g: tensor<20x3xf32>, %idx: tensor<20x3xi64>, %h: tensor<3x20xf32>, %idt: tensor<3x20xi64>) -> (tensor<10x3xf32>, tensor<10x3xf32>, tensor<10x3xf32>, tensor<3x10xf32>) {
  %zeros = dlc.constant dense<0.0> : tensor<10x3xf32>
  %i16 = dlc.broadcast_to %ids16 : tensor<16x1xi64> to tensor<16x3xi64>
  %a = dlc.scatter_elements %zeros[%i16], %g16 {axis = 0 : i64} reduction add : tensor<10x3xf32>, tensor<16x3xi64>, tensor<16x3xf32>
  %i = dlc.broadcast_to %ids : tensor<20x1xi64> to tensor<20x3xi64>
  %b = dlc.scatter_elements %zeros[%i], %g {axis = 0 : i64} reduction max : tensor<10x3xf32>, tensor<20x3xi64>, tensor<20x3xf32>
  %c = dlc.scatter_elements %zeros[%idx], %g {axis = 0 : i64} reduction add : tensor<10x3xf32>, tensor<20x3xi64>, tensor<20x3xf32>
  %zt = dlc.constant dense<0.0> : tensor<3x10xf32>
  %d = dlc.scatter_elements %zt[%idt], %h {axis = 1 : i64} reduction add : tensor<3x10xf32>, tensor<3x20xi64>, tensor<3x20xf32>
  return %a, %b, %c, %d : tensor<10x3xf32>, tensor<10x3xf32>, tensor<10x3xf32>, tensor<3x10xf32>
}
