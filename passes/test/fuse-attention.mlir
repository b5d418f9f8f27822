// RUN: dlc-opt %s -split-input-file -dlc-fuse-attention | FileCheck %s
// dlc-fuse-attention forms dlc.attention from what exporters emit, and
// leaves everything else alone.

// nanoGPT: scores scaled by a multiplication, a causal masked_fill
// (select(mask, -inf, scores)), the importer's softmax. The mask becomes a
// bias of 0 and -inf (folded into a constant here); k arrives transposed.
// CHECK-LABEL: func.func @masked_fill
// CHECK-DAG: %[[BIAS:.*]] = dlc.constant dense<{{\[\[\[}}0.000000e+00, 0xFF800000
// CHECK-DAG: %[[K:.*]] = dlc.transpose %arg1 [0, 2, 1]
// CHECK: %[[OUT:.*]], %{{.*}} = dlc.attention %arg0, %[[K]], %arg2 bias %[[BIAS]] scale 5.000000e-01 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x5xf32>, tensor<1x3x3xf32>
// CHECK-NOT: dlc.exp
// CHECK: return %[[OUT]]
func.func @masked_fill(%q: tensor<2x3x4xf32>, %kt: tensor<2x4x3xf32>, %v: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  %s = dlc.matmul %q, %kt : tensor<2x3x4xf32>, tensor<2x4x3xf32> -> tensor<2x3x3xf32>
  %c = dlc.constant dense<5.000000e-01> : tensor<f32>
  %y = dlc.mul %s, %c : tensor<2x3x3xf32>, tensor<f32> -> tensor<2x3x3xf32>
  %mask = dlc.constant dense<[[[false, true, true], [false, false, true], [false, false, false]]]> : tensor<1x3x3xi1>
  %inf = dlc.constant dense<0xFF800000> : tensor<f32>
  %x = dlc.select %mask, %inf, %y : tensor<1x3x3xi1>, tensor<f32>, tensor<2x3x3xf32> -> tensor<2x3x3xf32>
  %m = dlc.reduce_max %x axes [2] keep_dims : tensor<2x3x3xf32> -> tensor<2x3x1xf32>
  %d = dlc.sub %x, %m : tensor<2x3x3xf32>, tensor<2x3x1xf32> -> tensor<2x3x3xf32>
  %e = dlc.exp %d : tensor<2x3x3xf32>
  %z = dlc.reduce_sum %e axes [2] keep_dims : tensor<2x3x3xf32> -> tensor<2x3x1xf32>
  %p = dlc.div %e, %z : tensor<2x3x3xf32>, tensor<2x3x1xf32> -> tensor<2x3x3xf32>
  %o = dlc.matmul %p, %v : tensor<2x3x3xf32>, tensor<2x3x5xf32> -> tensor<2x3x5xf32>
  return %o : tensor<2x3x5xf32>
}

// -----

// A position bias under a mask (ALiBi with a band): the bias keeps its
// values where the mask keeps the scores, -inf elsewhere.
// CHECK-LABEL: func.func @biased_mask
// CHECK-DAG: %[[ALIBI:.*]] = dlc.constant dense<{{\[\[}}0.000000e+00, -5.000000e-01], [-5.000000e-01, 0.000000e+00]]>
// CHECK-DAG: %[[INF:.*]] = dlc.constant dense<0xFF800000>
// CHECK: %[[BIAS:.*]] = dlc.select %{{.*}}, %[[ALIBI]], %[[INF]]
// CHECK: dlc.attention %arg0, %{{.*}}, %arg2 bias %[[BIAS]] scale 1.000000e+00
// CHECK-NOT: dlc.exp
func.func @biased_mask(%q: tensor<2x4xf32>, %kt: tensor<4x2xf32>, %v: tensor<2x3xf32>, %keep: tensor<2x2xi1>) -> tensor<2x3xf32> {
  %s = dlc.matmul %q, %kt : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  %alibi = dlc.constant dense<[[0.0, -0.5], [-0.5, 0.0]]> : tensor<2x2xf32>
  %y = dlc.add %s, %alibi : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %inf = dlc.constant dense<0xFF800000> : tensor<f32>
  %x = dlc.select %keep, %y, %inf : tensor<2x2xi1>, tensor<2x2xf32>, tensor<f32> -> tensor<2x2xf32>
  %m = dlc.reduce_max %x axes [1] keep_dims : tensor<2x2xf32> -> tensor<2x1xf32>
  %d = dlc.sub %x, %m : tensor<2x2xf32>, tensor<2x1xf32> -> tensor<2x2xf32>
  %e = dlc.exp %d : tensor<2x2xf32>
  %z = dlc.reduce_sum %e axes [1] keep_dims : tensor<2x2xf32> -> tensor<2x1xf32>
  %p = dlc.div %e, %z : tensor<2x2xf32>, tensor<2x1xf32> -> tensor<2x2xf32>
  %o = dlc.matmul %p, %v : tensor<2x2xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return %o : tensor<2x3xf32>
}

// -----

// ViT: a division by sqrt(d), no mask; a constant additive bias elsewhere.
// CHECK-LABEL: func.func @divided
// CHECK: dlc.attention %arg0, %{{.*}}, %arg2 scale 2.500000e-01 : tensor<3x8xf64>, tensor<6x8xf64>, tensor<6x2xf64> -> tensor<3x2xf64>, tensor<3xf64>
// CHECK-LABEL: func.func @additive_bias
// CHECK: %[[B:.*]] = dlc.constant dense<[0.000000e+00, -1.000000e+00, -2.000000e+00]>
// CHECK: dlc.attention %arg0, %{{.*}}, %arg2 bias %[[B]] scale 1.000000e+00
func.func @divided(%q: tensor<3x8xf64>, %kt: tensor<8x6xf64>, %v: tensor<6x2xf64>) -> tensor<3x2xf64> {
  %s = dlc.matmul %q, %kt : tensor<3x8xf64>, tensor<8x6xf64> -> tensor<3x6xf64>
  %c = dlc.constant dense<4.000000e+00> : tensor<f64>
  %x = dlc.div %s, %c : tensor<3x6xf64>, tensor<f64> -> tensor<3x6xf64>
  %m = dlc.reduce_max %x axes [1] keep_dims : tensor<3x6xf64> -> tensor<3x1xf64>
  %d = dlc.sub %x, %m : tensor<3x6xf64>, tensor<3x1xf64> -> tensor<3x6xf64>
  %e = dlc.exp %d : tensor<3x6xf64>
  %z = dlc.reduce_sum %e axes [1] keep_dims : tensor<3x6xf64> -> tensor<3x1xf64>
  %p = dlc.div %e, %z : tensor<3x6xf64>, tensor<3x1xf64> -> tensor<3x6xf64>
  %o = dlc.matmul %p, %v : tensor<3x6xf64>, tensor<6x2xf64> -> tensor<3x2xf64>
  return %o : tensor<3x2xf64>
}
func.func @additive_bias(%q: tensor<2x4xf64>, %kt: tensor<4x3xf64>, %v: tensor<3x2xf64>) -> tensor<2x2xf64> {
  %s = dlc.matmul %q, %kt : tensor<2x4xf64>, tensor<4x3xf64> -> tensor<2x3xf64>
  %b = dlc.constant dense<[0.0, -1.0, -2.0]> : tensor<3xf64>
  %x = dlc.add %b, %s : tensor<3xf64>, tensor<2x3xf64> -> tensor<2x3xf64>
  %m = dlc.reduce_max %x axes [1] keep_dims : tensor<2x3xf64> -> tensor<2x1xf64>
  %d = dlc.sub %x, %m : tensor<2x3xf64>, tensor<2x1xf64> -> tensor<2x3xf64>
  %e = dlc.exp %d : tensor<2x3xf64>
  %z = dlc.reduce_sum %e axes [1] keep_dims : tensor<2x3xf64> -> tensor<2x1xf64>
  %p = dlc.div %e, %z : tensor<2x3xf64>, tensor<2x1xf64> -> tensor<2x3xf64>
  %o = dlc.matmul %p, %v : tensor<2x3xf64>, tensor<3x2xf64> -> tensor<2x2xf64>
  return %o : tensor<2x2xf64>
}

// -----

// Not formed: the probabilities are also returned; the bias depends on a
// float argument (it would need a gradient); the softmax runs over another
// axis.
// CHECK-LABEL: func.func @probabilities_used
// CHECK-NOT: dlc.attention
// CHECK: dlc.exp
// CHECK-LABEL: func.func @argument_bias
// CHECK-NOT: dlc.attention
// CHECK: dlc.exp
// CHECK-LABEL: func.func @other_axis
// CHECK-NOT: dlc.attention
// CHECK: dlc.exp
func.func @probabilities_used(%q: tensor<3x4xf32>, %kt: tensor<4x3xf32>, %v: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x3xf32>) {
  %x = dlc.matmul %q, %kt : tensor<3x4xf32>, tensor<4x3xf32> -> tensor<3x3xf32>
  %m = dlc.reduce_max %x axes [1] keep_dims : tensor<3x3xf32> -> tensor<3x1xf32>
  %d = dlc.sub %x, %m : tensor<3x3xf32>, tensor<3x1xf32> -> tensor<3x3xf32>
  %e = dlc.exp %d : tensor<3x3xf32>
  %z = dlc.reduce_sum %e axes [1] keep_dims : tensor<3x3xf32> -> tensor<3x1xf32>
  %p = dlc.div %e, %z : tensor<3x3xf32>, tensor<3x1xf32> -> tensor<3x3xf32>
  %o = dlc.matmul %p, %v : tensor<3x3xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  return %o, %p : tensor<3x2xf32>, tensor<3x3xf32>
}
func.func @argument_bias(%q: tensor<3x4xf32>, %kt: tensor<4x3xf32>, %v: tensor<3x2xf32>, %b: tensor<3x3xf32>) -> tensor<3x2xf32> {
  %s = dlc.matmul %q, %kt : tensor<3x4xf32>, tensor<4x3xf32> -> tensor<3x3xf32>
  %x = dlc.add %s, %b : tensor<3x3xf32>, tensor<3x3xf32> -> tensor<3x3xf32>
  %m = dlc.reduce_max %x axes [1] keep_dims : tensor<3x3xf32> -> tensor<3x1xf32>
  %d = dlc.sub %x, %m : tensor<3x3xf32>, tensor<3x1xf32> -> tensor<3x3xf32>
  %e = dlc.exp %d : tensor<3x3xf32>
  %z = dlc.reduce_sum %e axes [1] keep_dims : tensor<3x3xf32> -> tensor<3x1xf32>
  %p = dlc.div %e, %z : tensor<3x3xf32>, tensor<3x1xf32> -> tensor<3x3xf32>
  %o = dlc.matmul %p, %v : tensor<3x3xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  return %o : tensor<3x2xf32>
}
func.func @other_axis(%q: tensor<3x4xf32>, %kt: tensor<4x3xf32>, %v: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %x = dlc.matmul %q, %kt : tensor<3x4xf32>, tensor<4x3xf32> -> tensor<3x3xf32>
  %m = dlc.reduce_max %x axes [0] keep_dims : tensor<3x3xf32> -> tensor<1x3xf32>
  %d = dlc.sub %x, %m : tensor<3x3xf32>, tensor<1x3xf32> -> tensor<3x3xf32>
  %e = dlc.exp %d : tensor<3x3xf32>
  %z = dlc.reduce_sum %e axes [0] keep_dims : tensor<3x3xf32> -> tensor<1x3xf32>
  %p = dlc.div %e, %z : tensor<3x3xf32>, tensor<1x3xf32> -> tensor<3x3xf32>
  %o = dlc.matmul %p, %v : tensor<3x3xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  return %o : tensor<3x2xf32>
}

// -----

// Not formed: a bias read from a global is a parameter before
// dlc-functionalize (a learned position bias), which must get a gradient.
dlc.global @pos_bias : tensor<3x3xf32> = dense<0.0> : tensor<3x3xf32>
// CHECK-LABEL: func.func @global_bias
// CHECK-NOT: dlc.attention
// CHECK: dlc.exp
func.func @global_bias(%q: tensor<3x4xf32>, %kt: tensor<4x3xf32>, %v: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %b = dlc.global_load @pos_bias : tensor<3x3xf32>
  %s = dlc.matmul %q, %kt : tensor<3x4xf32>, tensor<4x3xf32> -> tensor<3x3xf32>
  %x = dlc.add %s, %b : tensor<3x3xf32>, tensor<3x3xf32> -> tensor<3x3xf32>
  %m = dlc.reduce_max %x axes [1] keep_dims : tensor<3x3xf32> -> tensor<3x1xf32>
  %d = dlc.sub %x, %m : tensor<3x3xf32>, tensor<3x1xf32> -> tensor<3x3xf32>
  %e = dlc.exp %d : tensor<3x3xf32>
  %z = dlc.reduce_sum %e axes [1] keep_dims : tensor<3x3xf32> -> tensor<3x1xf32>
  %p = dlc.div %e, %z : tensor<3x3xf32>, tensor<3x1xf32> -> tensor<3x3xf32>
  %o = dlc.matmul %p, %v : tensor<3x3xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  return %o : tensor<3x2xf32>
}

// -----

// Formed: a padding mask from an input and a mask compared from a float
// global (nanoGPT's registered tril buffer): booleans carry no gradient.
dlc.global @tril : tensor<3x3xf32> = dense<1.0> : tensor<3x3xf32>
// CHECK-LABEL: func.func @masks
// CHECK: dlc.attention
// CHECK: dlc.attention
// CHECK-NOT: dlc.exp
func.func @masks(%q: tensor<3x4xf32>, %kt: tensor<4x3xf32>, %v: tensor<3x2xf32>, %pad: tensor<3x3xi1>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %inf = dlc.constant dense<0xFF800000> : tensor<f32>
  %s = dlc.matmul %q, %kt : tensor<3x4xf32>, tensor<4x3xf32> -> tensor<3x3xf32>
  %x = dlc.select %pad, %inf, %s : tensor<3x3xi1>, tensor<f32>, tensor<3x3xf32> -> tensor<3x3xf32>
  %m = dlc.reduce_max %x axes [1] keep_dims : tensor<3x3xf32> -> tensor<3x1xf32>
  %d = dlc.sub %x, %m : tensor<3x3xf32>, tensor<3x1xf32> -> tensor<3x3xf32>
  %e = dlc.exp %d : tensor<3x3xf32>
  %z = dlc.reduce_sum %e axes [1] keep_dims : tensor<3x3xf32> -> tensor<3x1xf32>
  %p = dlc.div %e, %z : tensor<3x3xf32>, tensor<3x1xf32> -> tensor<3x3xf32>
  %o = dlc.matmul %p, %v : tensor<3x3xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  %t = dlc.global_load @tril : tensor<3x3xf32>
  %zero = dlc.constant dense<0.0> : tensor<f32>
  %keep = dlc.compare ne, %t, %zero : tensor<3x3xf32>, tensor<f32> -> tensor<3x3xi1>
  %s2 = dlc.matmul %q, %kt : tensor<3x4xf32>, tensor<4x3xf32> -> tensor<3x3xf32>
  %x2 = dlc.select %keep, %s2, %inf : tensor<3x3xi1>, tensor<3x3xf32>, tensor<f32> -> tensor<3x3xf32>
  %m2 = dlc.reduce_max %x2 axes [1] keep_dims : tensor<3x3xf32> -> tensor<3x1xf32>
  %d2 = dlc.sub %x2, %m2 : tensor<3x3xf32>, tensor<3x1xf32> -> tensor<3x3xf32>
  %e2 = dlc.exp %d2 : tensor<3x3xf32>
  %z2 = dlc.reduce_sum %e2 axes [1] keep_dims : tensor<3x3xf32> -> tensor<3x1xf32>
  %p2 = dlc.div %e2, %z2 : tensor<3x3xf32>, tensor<3x1xf32> -> tensor<3x3xf32>
  %o2 = dlc.matmul %p2, %v : tensor<3x3xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  return %o, %o2 : tensor<3x2xf32>, tensor<3x2xf32>
}
