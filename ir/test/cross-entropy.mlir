// RUN: dlc-opt %s | dlc-opt | FileCheck %s
// dlc.cross_entropy and dlc.cross_entropy_grad parse, verify and print back.

// CHECK-LABEL: func.func @cross_entropy
func.func @cross_entropy(%x: tensor<2x3x7xf32>, %l: tensor<2x3xi64>, %g: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3x7xf32>) {
  // CHECK: %[[LOSS:.*]], %[[LSE:.*]] = dlc.cross_entropy %{{.*}}, %{{.*}} ignore_index -100 label_smoothing 1.000000e-01 : tensor<2x3x7xf32>, tensor<2x3xi64> -> tensor<2x3xf32>, tensor<2x3xf32>
  %loss, %lse = dlc.cross_entropy %x, %l ignore_index -100 label_smoothing 0.1 : tensor<2x3x7xf32>, tensor<2x3xi64> -> tensor<2x3xf32>, tensor<2x3xf32>
  // CHECK: dlc.cross_entropy_grad %{{.*}}, %{{.*}}, %[[LSE]], %{{.*}} ignore_index -100 label_smoothing 1.000000e-01 : tensor<2x3x7xf32>, tensor<2x3xi64>, tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3x7xf32>
  %d = dlc.cross_entropy_grad %x, %l, %lse, %g ignore_index -100 label_smoothing 0.1 : tensor<2x3x7xf32>, tensor<2x3xi64>, tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3x7xf32>
  return %loss, %d : tensor<2x3xf32>, tensor<2x3x7xf32>
}
