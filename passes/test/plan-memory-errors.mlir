// RUN: dlc-opt %s -dlc-plan-memory -verify-diagnostics -allow-unregistered-dialect

// expected-error@+1 {{has more than one block; dlc-plan-memory plans single-block functions}}
func.func @branches(%x: tensor<3xf32>) -> tensor<3xf32> {
  "test.br"() [^next] : () -> ()
^next:
  return %x : tensor<3xf32>
}
