// RUN: dlc-opt %s -split-input-file -verify-diagnostics
// Every error the cross-entropy ops' verifiers emit.

func.func @shapes(%x: tensor<4x5xf32>, %l: tensor<5xi64>) {
  // expected-error@+1 {{expects logits [..., C] with C > 0 and labels [...], got 'tensor<4x5xf32>' and 'tensor<5xi64>'}}
  %loss, %lse = dlc.cross_entropy %x, %l ignore_index -100 label_smoothing 0.0 : tensor<4x5xf32>, tensor<5xi64> -> tensor<5xf32>, tensor<5xf32>
  return
}

// -----

func.func @no_classes(%x: tensor<4x0xf32>, %l: tensor<4xi64>) {
  // expected-error@+1 {{expects logits [..., C] with C > 0 and labels [...]}}
  %loss, %lse = dlc.cross_entropy %x, %l ignore_index -100 label_smoothing 0.0 : tensor<4x0xf32>, tensor<4xi64> -> tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @smoothing(%x: tensor<4x5xf32>, %l: tensor<4xi64>) {
  // expected-error@+1 {{expects a label smoothing in [0, 1], got 1.500000e+00}}
  %loss, %lse = dlc.cross_entropy %x, %l ignore_index -100 label_smoothing 1.5 : tensor<4x5xf32>, tensor<4xi64> -> tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @lse_type(%x: tensor<4x5xf32>, %l: tensor<4xi64>) {
  // expected-error@+1 {{expects lse of type 'tensor<4xf32>', got 'tensor<4xf64>'}}
  %loss, %lse = dlc.cross_entropy %x, %l ignore_index -100 label_smoothing 0.0 : tensor<4x5xf32>, tensor<4xi64> -> tensor<4xf32>, tensor<4xf64>
  return
}

// -----

func.func @loss_type(%x: tensor<4x5xf32>, %l: tensor<4xi64>) {
  // expected-error@+1 {{expects loss of type 'tensor<4xf32>', got 'tensor<4x1xf32>'}}
  %loss, %lse = dlc.cross_entropy %x, %l ignore_index -100 label_smoothing 0.0 : tensor<4x5xf32>, tensor<4xi64> -> tensor<4x1xf32>, tensor<4xf32>
  return
}

// -----

func.func @float_labels(%x: tensor<4x5xf32>, %l: tensor<4xf32>) {
  // expected-error@+1 {{operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %loss, %lse = dlc.cross_entropy %x, %l ignore_index -100 label_smoothing 0.0 : tensor<4x5xf32>, tensor<4xf32> -> tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @grad_types(%x: tensor<4x5xf32>, %l: tensor<4xi64>, %lse: tensor<4xf32>, %g: tensor<4xf64>) {
  // expected-error@+1 {{all of {lse, grad_loss} have same type}}
  %d = dlc.cross_entropy_grad %x, %l, %lse, %g ignore_index -100 label_smoothing 0.0 : tensor<4x5xf32>, tensor<4xi64>, tensor<4xf32>, tensor<4xf64> -> tensor<4x5xf32>
  return
}

// -----

func.func @grad_lse(%x: tensor<4x5xf32>, %l: tensor<4xi64>, %lse: tensor<5xf32>, %g: tensor<5xf32>) {
  // expected-error@+1 {{expects lse of type 'tensor<4xf32>', got 'tensor<5xf32>'}}
  %d = dlc.cross_entropy_grad %x, %l, %lse, %g ignore_index -100 label_smoothing 0.0 : tensor<4x5xf32>, tensor<4xi64>, tensor<5xf32>, tensor<5xf32> -> tensor<4x5xf32>
  return
}
