// RUN: dlc-opt %s -dlc-horizontal-fusion -verify-diagnostics

// The CPU runs each kernel over its threads alone: no group kernels.
// expected-error @+1 {{dlc-horizontal-fusion groups CUDA kernels; this plan is for the CPU, whose kernels run alone}}
module attributes {dlc.plan_target = "cpu"} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
