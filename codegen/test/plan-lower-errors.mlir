// RUN: dlc-opt %s -split-input-file -dlc-lower-to-plan -verify-diagnostics

// expected-error @+1 {{has no memory plan; run dlc-plan-memory before codegen}}
func.func @unplanned(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

dlc.global @w : tensor<4xf32>
func.func @global() -> tensor<4xf32> attributes {dlc.arena_size = 0 : i64} {
  // expected-error @+1 {{reads or writes a global; compiled functions take globals as arguments (run dlc-functionalize)}}
  %w = dlc.global_load @w : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

// Every op without a compiled path, in one error.
// expected-error @+1 {{has 3 ops without a compiled path on the CPU: }}
func.func @refused(%a: tensor<2x3xi32>, %b: tensor<3x2xi32>, %c: tensor<2x0xf32>, %d: tensor<0x2xf32>, %e: tensor<2x3x2x3xf32>, %f: tensor<3x3x2xf32>) -> (tensor<2x2xi32>, tensor<2x2xf32>, tensor<2x3x2x2xf32>) attributes {dlc.arena_size = 0 : i64} {
  %m = dlc.matmul %a, %b : tensor<2x3xi32>, tensor<3x2xi32> -> tensor<2x2xi32>
  %k = dlc.matmul %c, %d : tensor<2x0xf32>, tensor<0x2xf32> -> tensor<2x2xf32>
  %g = dlc.matmul %e, %f : tensor<2x3x2x3xf32>, tensor<3x3x2xf32> -> tensor<2x3x2x2xf32>
  return %m, %k, %g : tensor<2x2xi32>, tensor<2x2xf32>, tensor<2x3x2x2xf32>
}

// -----

// expected-error @+1 {{has 1 op without a compiled path on the CPU: }}
func.func @unfused(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dlc.arena_size = 0 : i64} {
  %y = dlc.exp %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A plan is not lowered twice.
// expected-error-re @+1 {{has 1 op without a compiled path on the CPU: {{.*}}'dlc.plan.copy' op is lowered to the execution plan already; dlc-lower-to-plan takes memory-planned dlc IR (dlc-compile --emit=fused)}}
func.func @lowered(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dlc.arena_size = 0 : i64} {
  %y = dlc.plan.copy %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
