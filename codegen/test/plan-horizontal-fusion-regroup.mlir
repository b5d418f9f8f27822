// RUN: dlc-opt %s -dlc-horizontal-fusion | FileCheck %s

// Launches that are groups already (a group's member may read an argument
// through a view of its own shape) join a group whole: views and all.
// CHECK-LABEL: func.func @regroup
// CHECK: %[[G:.*]]:4 = dlc.plan.launch(%arg0, %arg1, %arg2)
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<8xf32>, %[[C:.*]]: tensor<8xf32>, %[[D:.*]]: tensor<8xf32>):
// CHECK-NEXT: %[[V:.*]] = dlc.reshape %[[A]] : tensor<8xf32> to tensor<2x4xf32>
// CHECK-NEXT: dlc.fusion %[[A]]
// CHECK: dlc.fusion %[[V]]
// CHECK: dlc.fusion %[[C]]
// CHECK: dlc.fusion %[[D]]
// CHECK-NOT: dlc.plan.launch
// CHECK: return %[[G]]#0, %[[G]]#1, %[[G]]#2, %[[G]]#3
module attributes {dlc.plan_target = "cuda"} {
  func.func @regroup(%a: tensor<8xf32>, %c: tensor<8xf32>, %d: tensor<8xf32>) -> (tensor<8xf32>, tensor<2x4xf32>, tensor<8xf32>, tensor<8xf32>) attributes {dlc.arena_size = 0 : i64} {
    %0:2 = dlc.plan.launch(%a) iterations 4 grain 1 threads 1 : (tensor<8xf32>) -> (tensor<8xf32>, tensor<2x4xf32>) {
    ^bb0(%x: tensor<8xf32>):
      %v = dlc.reshape %x : tensor<8xf32> to tensor<2x4xf32>
      %1 = dlc.fusion %x : (tensor<8xf32>) -> tensor<8xf32> {
      ^bb0(%y: tensor<8xf32>):
        %e = dlc.exp %y : tensor<8xf32>
        dlc.yield %e : tensor<8xf32>
      }
      %2 = dlc.fusion %v : (tensor<2x4xf32>) -> tensor<2x4xf32> {
      ^bb0(%y: tensor<2x4xf32>):
        %n = dlc.neg %y : tensor<2x4xf32>
        dlc.yield %n : tensor<2x4xf32>
      }
      dlc.plan.yield %1, %2 : tensor<8xf32>, tensor<2x4xf32>
    }
    %3:2 = dlc.plan.launch(%c, %d) iterations 4 grain 1 threads 1 : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
    ^bb0(%x: tensor<8xf32>, %z: tensor<8xf32>):
      %1 = dlc.fusion %x : (tensor<8xf32>) -> tensor<8xf32> {
      ^bb0(%y: tensor<8xf32>):
        %e = dlc.exp %y : tensor<8xf32>
        dlc.yield %e : tensor<8xf32>
      }
      %2 = dlc.fusion %z : (tensor<8xf32>) -> tensor<8xf32> {
      ^bb0(%y: tensor<8xf32>):
        %n = dlc.neg %y : tensor<8xf32>
        dlc.yield %n : tensor<8xf32>
      }
      dlc.plan.yield %1, %2 : tensor<8xf32>, tensor<8xf32>
    }
    return %0#0, %0#1, %3#0, %3#1 : tensor<8xf32>, tensor<2x4xf32>, tensor<8xf32>, tensor<8xf32>
  }
}
