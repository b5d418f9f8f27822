// RUN: dlc-opt %s -split-input-file -verify-diagnostics -dlc-tensor-parallel=ranks=2
// RUN: not dlc-opt %s -split-input-file -dlc-tensor-parallel=ranks=0 2>&1 | FileCheck %s --check-prefix=RANKS
// RANKS: error: dlc-tensor-parallel: ranks must be at least 1, got 0

// expected-error@below {{dlc-tensor-parallel: the module is already partitioned for 2 tensor-parallel ranks}}
module attributes {dlc.tensor_parallel = 2 : i64} {
  func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}

// -----

// expected-error@below {{'func.func' op takes global 'w' as an argument: dlc-tensor-parallel runs before dlc-functionalize, on dlc.global_load}}
func.func @loss(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> tensor<2xf32> {
  return %w : tensor<2xf32>
}
