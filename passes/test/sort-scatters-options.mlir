// RUN: dlc-opt %s -dlc-sort-scatters=max-rows=19 | FileCheck %s
// RUN: not dlc-opt %s -dlc-sort-scatters=max-rows=-1 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// Beyond max-rows the scatter stays (sorting by counting costs rows^2).
// CHECK-NOT: dlc.segment_sum
// NEGATIVE: error: dlc-sort-scatters: max-rows must not be negative (got -1)
func.func @f(%ids: tensor<20x1xi64>, %g: tensor<20x3xf32>) -> tensor<10x3xf32> {
  %zeros = dlc.constant dense<0.0> : tensor<10x3xf32>
  %i = dlc.broadcast_to %ids : tensor<20x1xi64> to tensor<20x3xi64>
  %s = dlc.scatter_elements %zeros[%i], %g {axis = 0 : i64} reduction add : tensor<10x3xf32>, tensor<20x3xi64>, tensor<20x3xf32>
  return %s : tensor<10x3xf32>
}
