// RUN: dlc-opt %s -split-input-file -dlc-horizontal-fusion -verify-diagnostics
// RUN: dlc-opt %s -split-input-file -dlc-name-kernels -verify-diagnostics

// Both passes run on a plan, which records its target.
// expected-error @+1 {{needs an execution plan; run dlc-lower-to-plan first}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
