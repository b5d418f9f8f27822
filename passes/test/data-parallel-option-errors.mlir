// dlc-data-parallel's option errors, reported on the module (one run each).
// RUN: not dlc-opt %s -dlc-data-parallel=ranks=0 2>&1 | FileCheck %s --check-prefix=RANKS
// RUN: not dlc-opt %s '-dlc-data-parallel=ranks=2 bucket-mb=0' 2>&1 | FileCheck %s --check-prefix=BUCKET
// RUN: not dlc-opt %s '-dlc-data-parallel=ranks=2 bucket-mb=nan' 2>&1 | FileCheck %s --check-prefix=BUCKET-NAN
// RUN: not dlc-opt %s '-dlc-data-parallel=ranks=2 zero=2' 2>&1 | FileCheck %s --check-prefix=ZERO
// RANKS: error: dlc-data-parallel: ranks must be at least 1, got 0
// BUCKET: error: dlc-data-parallel: bucket-mb must be a positive number of MiB, got 0
// BUCKET-NAN: error: dlc-data-parallel: bucket-mb must be a positive number of MiB, got nan
// ZERO: error: dlc-data-parallel: zero must be 0 or 1 (ZeRO stage 1 shards the optimizer state), got 2
func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
  return %w : tensor<2xf32>
}
