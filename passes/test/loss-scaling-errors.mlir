// The errors of loss scaling. Options, one run each (reported on the
// module); then the module's, with -verify-diagnostics.
// RUN: not dlc-opt %s '-dlc-autodiff=loss-scale=true vjp=true' 2>&1 | FileCheck %s --check-prefix=VJP
// RUN: not dlc-opt %s -dlc-optimizer=init-scale=0 2>&1 | FileCheck %s --check-prefix=INIT
// RUN: not dlc-opt %s -dlc-optimizer=init-scale=inf 2>&1 | FileCheck %s --check-prefix=INIT-INF
// float32 holds the scale: 1e39 is inf there, 1e-40 subnormal (its
// reciprocal inf).
// RUN: not dlc-opt %s -dlc-optimizer=init-scale=1e39 2>&1 | FileCheck %s --check-prefix=INIT-BIG
// RUN: not dlc-opt %s -dlc-optimizer=init-scale=1e-40 2>&1 | FileCheck %s --check-prefix=INIT-SMALL
// RUN: not dlc-opt %s -dlc-optimizer=growth-factor=1 2>&1 | FileCheck %s --check-prefix=GROWTH
// RUN: not dlc-opt %s -dlc-optimizer=growth-factor=nan 2>&1 | FileCheck %s --check-prefix=GROWTH-NAN
// RUN: not dlc-opt %s -dlc-optimizer=backoff-factor=1 2>&1 | FileCheck %s --check-prefix=BACKOFF
// RUN: not dlc-opt %s -dlc-optimizer=backoff-factor=0 2>&1 | FileCheck %s --check-prefix=BACKOFF-ZERO
// RUN: not dlc-opt %s -dlc-optimizer=growth-interval=0 2>&1 | FileCheck %s --check-prefix=INTERVAL
// VJP: error: dlc-autodiff: loss-scale applies to a loss gradient, not to vjp
// INIT: error: dlc-optimizer: init-scale 0.000000e+00 is not a float32 number > 0 whose reciprocal is finite
// INIT-INF: error: dlc-optimizer: init-scale INF is not a float32 number > 0 whose reciprocal is finite
// INIT-BIG: error: dlc-optimizer: init-scale 1.000000e+39 is not a float32 number > 0 whose reciprocal is finite
// INIT-SMALL: error: dlc-optimizer: init-scale 1.000000e-40 is not a float32 number > 0 whose reciprocal is finite
// GROWTH: error: dlc-optimizer: growth-factor 1.000000e+00 is not a finite number > 1
// GROWTH-NAN: error: dlc-optimizer: growth-factor nan is not a finite number > 1
// BACKOFF: error: dlc-optimizer: backoff-factor 1.000000e+00 is not in (0, 1)
// BACKOFF-ZERO: error: dlc-optimizer: backoff-factor 0.000000e+00 is not in (0, 1)
// INTERVAL: error: dlc-optimizer: growth-interval 0 is not >= 1

// RUN: dlc-opt %s -split-input-file -dlc-autodiff=loss-scale=true -verify-diagnostics

module {
  // expected-error@+1 {{dlc-autodiff: @loss already has an argument named 'dlc.loss_scale', which loss-scale adds}}
  func.func @loss(%w: tensor<2xf32> {dlc.name = "w", dlc.role = "param"}, %s: tensor<f32> {dlc.name = "dlc.loss_scale", dlc.role = "input"}) -> tensor<f32> {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf32> -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// A float16 loss cannot hold the scale (2^16 at first).
module {
  // expected-error@+1 {{dlc-autodiff: loss-scale needs a float32 or float64 loss; @loss returns 'f16'}}
  func.func @loss(%w: tensor<2xf16> {dlc.name = "w", dlc.role = "param"}) -> tensor<f16> {
    %0 = dlc.reduce_sum %w axes [0] : tensor<2xf16> -> tensor<f16>
    return %0 : tensor<f16>
  }
}
