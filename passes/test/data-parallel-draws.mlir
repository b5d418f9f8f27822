// RUN: dlc-opt %s -dlc-data-parallel=ranks=2 | FileCheck %s --check-prefixes=CHECK,TWO
// RUN: dlc-opt %s -dlc-data-parallel=ranks=4 | FileCheck %s --check-prefixes=CHECK,FOUR
// RUN: dlc-opt %s -dlc-data-parallel | FileCheck %s --check-prefix=ONE
// Each rank's random draws over its rows start at rank * (the draw's
// element count): the offsets of every rank, one table per count, through
// dlc.rank_shard at the function's start. The input's dropout (8 elements
// a rank) and the per-sample draw (2) get theirs; two draws of 8 share a
// table; the dropout of a parameter (every rank holds it alike) draws one
// mask everywhere, as one process does. One rank draws as it did.

// CHECK-LABEL: func.func @loss_grad
// TWO: %[[T2:.+]] = dlc.constant dense<[0.000000e+00, 2.000000e+00]> : tensor<2xf64>
// TWO-NEXT: %[[S2:.+]] = dlc.rank_shard ranks 2 %[[T2]] : tensor<2xf64>
// FOUR: %[[T2:.+]] = dlc.constant dense<[0.000000e+00, 2.000000e+00, 4.000000e+00, 6.000000e+00]> : tensor<4xf64>
// FOUR-NEXT: %[[S2:.+]] = dlc.rank_shard ranks 4 %[[T2]] : tensor<4xf64>
// CHECK-NEXT: %[[C2:.+]] = dlc.cast %[[S2]] : tensor<1xf64> to tensor<1xi64>
// CHECK-NEXT: %[[O2:.+]] = dlc.reshape %[[C2]] : tensor<1xi64> to tensor<i64>
// TWO-NEXT: %[[T8:.+]] = dlc.constant dense<[0.000000e+00, 8.000000e+00]> : tensor<2xf64>
// TWO-NEXT: %[[S8:.+]] = dlc.rank_shard ranks 2 %[[T8]] : tensor<2xf64>
// FOUR-NEXT: %[[T8:.+]] = dlc.constant dense<[0.000000e+00, 8.000000e+00, 1.600000e+01, 2.400000e+01]> : tensor<4xf64>
// FOUR-NEXT: %[[S8:.+]] = dlc.rank_shard ranks 4 %[[T8]] : tensor<4xf64>
// CHECK-NEXT: %[[C8:.+]] = dlc.cast %[[S8]] : tensor<1xf64> to tensor<1xi64>
// CHECK-NEXT: %[[O8:.+]] = dlc.reshape %[[C8]] : tensor<1xi64> to tensor<i64>
// CHECK-NEXT: dlc.dropout %arg0, %arg2 offset %[[O8]] {ratio = 5.000000e-01 : f64, stream = 0 : i64} : tensor<2x4xf32>, tensor<i64>, tensor<i64> -> tensor<2x4xi1>
// CHECK-NEXT: dlc.dropout %arg1, %arg2 {ratio = 5.000000e-01 : f64, stream = 1 : i64} : tensor<4xf32>, tensor<i64> -> tensor<4xi1>
// CHECK: dlc.random_uniform %arg2 offset %[[O2]] {stream = 2 : i64} : tensor<i64>, tensor<i64> -> tensor<2x1xf32>
// CHECK: dlc.dropout %{{.+}}, %arg2 offset %[[O8]] {ratio = 2.500000e-01 : f64, stream = 3 : i64} : tensor<2x4xf32>, tensor<i64>, tensor<i64> -> tensor<2x4xi1>
// A parameter broadcast over the batch (2 rows a rank) has a mask row per
// sample: it draws per rank.
// CHECK: dlc.dropout %{{.+}}, %arg2 offset %[[O8]] {ratio = 5.000000e-01 : f64, stream = 4 : i64} : tensor<2x4xf32>, tensor<i64>, tensor<i64> -> tensor<2x4xi1>
// ONE-NOT: offset
// ONE-NOT: dlc.rank_shard
func.func @loss_grad(%x: tensor<2x4xf32> {dlc.name = "x", dlc.role = "input"},
                     %w: tensor<4xf32> {dlc.name = "w", dlc.role = "param"},
                     %seed: tensor<i64> {dlc.name = "dlc.rng_seed", dlc.role = "state"})
    -> (tensor<4xf32> {dlc.name = "w", dlc.role = "gradient"},
        tensor<2x4xf32> {dlc.name = "y", dlc.role = "output"}) {
  %y, %m = dlc.dropout %x, %seed {ratio = 0.5 : f64, stream = 0 : i64} : tensor<2x4xf32>, tensor<i64> -> tensor<2x4xi1>
  %v, %n = dlc.dropout %w, %seed {ratio = 0.5 : f64, stream = 1 : i64} : tensor<4xf32>, tensor<i64> -> tensor<4xi1>
  %u = dlc.random_uniform %seed {stream = 2 : i64} : tensor<i64> -> tensor<2x1xf32>
  %s = dlc.mul %y, %u : tensor<2x4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
  %z, %k = dlc.dropout %s, %seed {ratio = 0.25 : f64, stream = 3 : i64} : tensor<2x4xf32>, tensor<i64> -> tensor<2x4xi1>
  %b = dlc.broadcast_to %w : tensor<4xf32> to tensor<2x4xf32>
  %bz, %bk = dlc.dropout %b, %seed {ratio = 0.5 : f64, stream = 4 : i64} : tensor<2x4xf32>, tensor<i64> -> tensor<2x4xi1>
  %sum = dlc.add %z, %bz : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  return %v, %sum : tensor<4xf32>, tensor<2x4xf32>
}

// A function without gradients draws per rank as well: it runs on the
// rank's rows too.
// CHECK-LABEL: func.func @forward
// TWO: dlc.constant dense<[0.000000e+00, 8.000000e+00]> : tensor<2xf64>
// CHECK: dlc.dropout %arg0, %arg1 offset
func.func @forward(%x: tensor<2x4xf32> {dlc.name = "x", dlc.role = "input"},
                   %seed: tensor<i64> {dlc.name = "dlc.rng_seed", dlc.role = "state"})
    -> (tensor<2x4xf32> {dlc.name = "y", dlc.role = "output"}) {
  %y, %m = dlc.dropout %x, %seed {ratio = 0.5 : f64, stream = 0 : i64} : tensor<2x4xf32>, tensor<i64> -> tensor<2x4xi1>
  return %y : tensor<2x4xf32>
}
