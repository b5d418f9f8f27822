// RUN: dlc-opt %s -dlc-horizontal-fusion | FileCheck %s

// An empty value has no bytes, yet its reader must stay after its writer
// (it is the reader's operand): the concat cannot move up into the first
// launch's group past the launch that makes the empty tensor.
// CHECK-LABEL: func.func @empty
// CHECK: dlc.plan.launch(%arg0) iterations
// CHECK: %[[E:.*]] = dlc.plan.launch(%arg1) iterations 0
// CHECK: dlc.plan.launch(%arg2, %[[E]]) iterations
module attributes {dlc.plan_target = "cuda"} {
  func.func @empty(%a: tensor<8xf32>, %z: tensor<4x0xf32>, %b: tensor<2x4xf32>) -> (tensor<8xf32>, tensor<2x4xf32>) attributes {dlc.arena_size = 64 : i64} {
    %0 = dlc.plan.launch(%a) iterations 2 grain 1 threads 1 : (tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%x: tensor<8xf32>):
      %1 = dlc.fusion %x : (tensor<8xf32>) -> tensor<8xf32> {
      ^bb0(%y: tensor<8xf32>):
        %n = dlc.neg %y : tensor<8xf32>
        dlc.yield %n : tensor<8xf32>
      }
      dlc.plan.yield %1 : tensor<8xf32>
    }
    %2 = dlc.plan.launch(%z) iterations 0 grain 1 threads 1 {dlc.arena_offsets = array<i64: 0>} : (tensor<4x0xf32>) -> tensor<0x4xf32> {
    ^bb0(%x: tensor<4x0xf32>):
      %1 = dlc.fusion %x : (tensor<4x0xf32>) -> tensor<0x4xf32> {
      ^bb0(%y: tensor<4x0xf32>):
        %t = dlc.transpose %y [1, 0] : tensor<4x0xf32> -> tensor<0x4xf32>
        dlc.yield %t : tensor<0x4xf32>
      }
      dlc.plan.yield %1 : tensor<0x4xf32>
    }
    %3 = dlc.plan.launch(%b, %2) iterations 2 grain 1 threads 1 : (tensor<2x4xf32>, tensor<0x4xf32>) -> tensor<2x4xf32> {
    ^bb0(%x: tensor<2x4xf32>, %w: tensor<0x4xf32>):
      %1 = dlc.fusion %x, %w : (tensor<2x4xf32>, tensor<0x4xf32>) -> tensor<2x4xf32> {
      ^bb0(%y: tensor<2x4xf32>, %v: tensor<0x4xf32>):
        %c = dlc.concat %y, %v {axis = 0 : i64} : tensor<2x4xf32>, tensor<0x4xf32> -> tensor<2x4xf32>
        dlc.yield %c : tensor<2x4xf32>
      }
      dlc.plan.yield %1 : tensor<2x4xf32>
    }
    return %0, %3 : tensor<8xf32>, tensor<2x4xf32>
  }
}
