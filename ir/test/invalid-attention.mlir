// RUN: dlc-opt %s -split-input-file -verify-diagnostics
// Every error the attention ops' verifiers emit.

func.func @element_types(%q: tensor<4x8xf32>, %k: tensor<4x8xf64>, %v: tensor<4x8xf32>) {
  // expected-error@+1 {{expects q, k, v and bias of one element type, got 'tensor<4x8xf32>', 'tensor<4x8xf64>', 'tensor<4x8xf32>'}}
  %out, %lse = dlc.attention %q, %k, %v scale 1.0 : tensor<4x8xf32>, tensor<4x8xf64>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @ranks(%q: tensor<8xf32>, %k: tensor<8xf32>, %v: tensor<8xf32>) {
  // expected-error@+1 {{expects q, k and v of one rank of at least 2}}
  %out, %lse = dlc.attention %q, %k, %v scale 1.0 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>, tensor<f32>
  return
}

// -----

func.func @leading(%q: tensor<2x4x8xf32>, %k: tensor<3x4x8xf32>, %v: tensor<3x4x8xf32>) {
  // expected-error@+1 {{expects q, k and v with the same leading dimensions}}
  %out, %lse = dlc.attention %q, %k, %v scale 1.0 : tensor<2x4x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @head_size(%q: tensor<4x8xf32>, %k: tensor<4x6xf32>, %v: tensor<4x8xf32>) {
  // expected-error@+1 {{expects q and k with the same last dimension, got 8 and 6}}
  %out, %lse = dlc.attention %q, %k, %v scale 1.0 : tensor<4x8xf32>, tensor<4x6xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @keys(%q: tensor<4x8xf32>, %k: tensor<5x8xf32>, %v: tensor<4x8xf32>) {
  // expected-error@+1 {{expects k and v with the same number of keys, got 5 and 4}}
  %out, %lse = dlc.attention %q, %k, %v scale 1.0 : tensor<4x8xf32>, tensor<5x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @bias(%q: tensor<4x8xf32>, %k: tensor<5x8xf32>, %v: tensor<5x8xf32>, %b: tensor<4x4xf32>) {
  // expected-error@+1 {{expects a bias broadcastable to the scores [4, 5], got 'tensor<4x4xf32>'}}
  %out, %lse = dlc.attention %q, %k, %v bias %b scale 1.0 : tensor<4x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>, tensor<4x4xf32> -> tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @scale(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<4x8xf32>) {
  // expected-error@+1 {{expects a positive finite scale, got 0.000000e+00}}
  %out, %lse = dlc.attention %q, %k, %v scale 0.0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @out_type(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<4x2xf32>) {
  // expected-error@+1 {{expects out of type 'tensor<4x2xf32>', got 'tensor<4x8xf32>'}}
  %out, %lse = dlc.attention %q, %k, %v scale 1.0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x2xf32> -> tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @lse_type(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<4x8xf32>) {
  // expected-error@+1 {{expects lse of type 'tensor<4xf32>', got 'tensor<4x1xf32>'}}
  %out, %lse = dlc.attention %q, %k, %v scale 1.0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4x1xf32>
  return
}

// -----

func.func @grad_out_type(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<4x8xf32>, %out: tensor<4x8xf32>, %lse: tensor<4xf32>, %dout: tensor<4x2xf32>) {
  // expected-error@+1 {{all of {out, grad_out} have same type}}
  %dq, %dk, %dv = dlc.attention_grad %q, %k, %v, %out, %lse, %dout scale 1.0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4x2xf32> -> tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @grad_lse(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<4x8xf32>, %out: tensor<4x8xf32>, %lse: tensor<8xf32>, %dout: tensor<4x8xf32>) {
  // expected-error@+1 {{expects lse of type 'tensor<4xf32>', got 'tensor<8xf32>'}}
  %dq, %dk, %dv = dlc.attention_grad %q, %k, %v, %out, %lse, %dout scale 1.0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return
}
