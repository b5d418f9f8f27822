// RUN: dlc-opt %s -split-input-file -dlc-fold-epilogues -verify-diagnostics | FileCheck %s

// Folds are decided on the plan as it is, then applied: the second matmul's
// bias is the first one's epilogue result, which the first fold makes the
// first matmul's own result (the same buffer, at 64).
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %[[Y:.*]] = dlc.plan.matmul %arg0, %arg1 bias %arg2 epilogue bias {dlc.arena_offsets = array<i64: 64>}
// CHECK-NEXT: %[[Z:.*]] = dlc.plan.matmul %arg3, %arg4 bias %[[Y]] epilogue bias :
// CHECK-NEXT: return %[[Z]]
module attributes {dlc.plan_target = "cuda"} {
  func.func @chain(%x1: tensor<1x8xf32>, %w1: tensor<8x4xf32>, %b1: tensor<4xf32>, %x2: tensor<2x8xf32>, %w2: tensor<8x4xf32>) -> tensor<2x4xf32> attributes {dlc.arena_size = 256 : i64} {
    %m1 = dlc.plan.matmul %x1, %w1 {dlc.arena_offsets = array<i64: 0>, dlc.epilogue = "bias"} : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
    %y = dlc.plan.launch(%m1, %b1) iterations 1 grain 1 threads 1 {dlc.arena_offsets = array<i64: 64>} : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32> {
    ^bb0(%a: tensor<1x4xf32>, %b: tensor<4xf32>):
      %f = dlc.fusion %a, %b : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32> {
      ^bb0(%c: tensor<1x4xf32>, %d: tensor<4xf32>):
        %s = dlc.add %c, %d : tensor<1x4xf32>, tensor<4xf32> -> tensor<1x4xf32>
        dlc.yield %s : tensor<1x4xf32>
      }
      dlc.plan.yield %f : tensor<1x4xf32>
    }
    %m2 = dlc.plan.matmul %x2, %w2 {dlc.arena_offsets = array<i64: 128>, dlc.epilogue = "bias"} : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
    %z = dlc.plan.launch(%m2, %y) iterations 2 grain 1 threads 1 : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32> {
    ^bb0(%a: tensor<2x4xf32>, %b: tensor<1x4xf32>):
      %f = dlc.fusion %a, %b : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32> {
      ^bb0(%c: tensor<2x4xf32>, %d: tensor<1x4xf32>):
        %s = dlc.add %c, %d : tensor<2x4xf32>, tensor<1x4xf32> -> tensor<2x4xf32>
        dlc.yield %s : tensor<2x4xf32>
      }
      dlc.plan.yield %f : tensor<2x4xf32>
    }
    return %z : tensor<2x4xf32>
  }
}

// -----

// A plan pass reads compiled functions only.
module attributes {dlc.plan_target = "cuda"} {
  // expected-error @+1 {{is a declaration; compiled functions have a body}}
  func.func private @declared(tensor<4xf32>) -> tensor<4xf32>
}

// -----

// expected-error @+1 {{dlc-fold-epilogues needs an execution plan; run dlc-lower-to-plan first}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
