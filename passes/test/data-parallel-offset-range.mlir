// RUN: dlc-opt %s -verify-diagnostics -dlc-data-parallel=ranks=16384
// A rank's counter offset passes through float64 (dlc.rank_shard's types),
// exact below 2^53: 2^40 elements on each of 2^14 ranks is past it.

func.func @loss_grad(%seed: tensor<i64> {dlc.name = "dlc.rng_seed", dlc.role = "state"}, %w: tensor<4xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<4xf32> {dlc.name = "w", dlc.role = "gradient"}, tensor<1099511627776xf32> {dlc.name = "u", dlc.role = "output"}) {
  // expected-error@below {{'dlc.random_uniform' op draws 1099511627776 elements on each of 16384 ranks, past the 2^53 counters a rank's offset can address}}
  %u = dlc.random_uniform %seed {stream = 0 : i64} : tensor<i64> -> tensor<1099511627776xf32>
  return %w, %u : tensor<4xf32>, tensor<1099511627776xf32>
}
