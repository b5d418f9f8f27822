// RUN: dlc-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect -dlc-data-parallel=ranks=2

// expected-error@below {{dlc-data-parallel: the module is already partitioned for 2 data-parallel ranks}}
module attributes {dlc.data_parallel = 2 : i64} {
  func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
    return %w : tensor<2xf32>
  }
}

// -----

// expected-error@below {{dlc-data-parallel: no function returns gradients (dlc.role = "gradient"); run dlc-autodiff first}}
module {
  func.func @forward(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<2xf32> {dlc.name = "y", dlc.role = "output"}) {
    return %w : tensor<2xf32>
  }
}

// -----

// expected-error@below {{'func.func' op already updates the parameters (argument 'dlc.step' is optimizer state): dlc-data-parallel runs before dlc-optimizer, so that the update reads reduced gradients}}
func.func @train_step(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %step: tensor<i64> {dlc.name = "dlc.step", dlc.role = "step"}) -> (tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) {
  return %w : tensor<2xf32>
}

// -----

// expected-error@below {{'func.func' op returns gradient 'n' (result #1) of 'tensor<2xi64>'; only statically shaped float16, bfloat16, float32 or float64 tensors can be all-reduced}}
func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %n: tensor<2xi64> {dlc.name = "n", dlc.role = "input"}) -> (tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}, tensor<2xi64> {dlc.name = "n", dlc.role = "gradient"}) {
  return %w, %n : tensor<2xf32>, tensor<2xi64>
}

// -----

// expected-error@below {{'func.func' op returns gradient 's' (result #0) of 'f32'; only statically shaped float16, bfloat16, float32 or float64 tensors can be all-reduced}}
func.func @loss_grad(%s: f32 {dlc.name = "s", dlc.role = "param"}) -> (f32 {dlc.name = "s", dlc.role = "gradient"}) {
  return %s : f32
}

// -----

// expected-error@below {{'func.func' op has more than one block; dlc-data-parallel partitions single-block functions}}
func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
  "test.br"()[^next] : () -> ()
^next:
  return %w : tensor<2xf32>
}

// -----

func.func @loss_grad(%x: tensor<4xf32> {dlc.name = "x", dlc.role = "input"}, %seed: tensor<i64> {dlc.name = "dlc.rng_seed", dlc.role = "state"}, %o: tensor<i64> {dlc.name = "o", dlc.role = "input"}) -> (tensor<4xf32> {dlc.name = "x", dlc.role = "gradient"}) {
  // expected-error@below {{'dlc.dropout' op already has a counter offset; dlc-data-parallel gives each rank's draws theirs}}
  %y, %mask = dlc.dropout %x, %seed offset %o {ratio = 0.5 : f64, stream = 0 : i64} : tensor<4xf32>, tensor<i64>, tensor<i64> -> tensor<4xi1>
  return %y : tensor<4xf32>
}

// -----

func.func @loss_grad(%x: tensor<4xf32> {dlc.name = "x", dlc.role = "input"}, %seed: tensor<i64> {dlc.name = "dlc.rng_seed", dlc.role = "state"}) -> (tensor<4xf32> {dlc.name = "x", dlc.role = "gradient"}) {
  %0 = dlc.fusion %x, %seed : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %s: tensor<i64>):
    // expected-error@below {{'dlc.dropout' op draws random numbers inside an isolated body; dlc-data-parallel gives each rank its own draws before fusion}}
    %y, %mask = dlc.dropout %a, %s {ratio = 0.5 : f64, stream = 0 : i64} : tensor<4xf32>, tensor<i64> -> tensor<4xi1>
    dlc.yield %y : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// expected-error@below {{'func.func' op has more than one block; dlc-data-parallel gives the draws of single-block functions each rank's offsets}}
func.func @forward(%x: tensor<4xf32> {dlc.name = "x", dlc.role = "input"}, %seed: tensor<i64> {dlc.name = "dlc.rng_seed", dlc.role = "state"}) -> (tensor<4xf32> {dlc.name = "y", dlc.role = "output"}) {
  "test.br"()[^next] : () -> ()
^next:
  %y, %mask = dlc.dropout %x, %seed {ratio = 0.5 : f64, stream = 0 : i64} : tensor<4xf32>, tensor<i64> -> tensor<4xi1>
  return %y : tensor<4xf32>
}

func.func @loss_grad(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}) -> (tensor<2xf32> {dlc.name = "w", dlc.role = "gradient"}) {
  return %w : tensor<2xf32>
}
