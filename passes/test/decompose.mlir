// RUN: dlc-opt %s -split-input-file -dlc-decompose | FileCheck %s
// dlc-decompose on attention: the forward as the importer's softmax (the
// log-sum-exp only where it is read), the gradient recomputing the
// probabilities from it.

// CHECK-LABEL: func.func @forward
// CHECK: %[[KT:.*]] = dlc.transpose %arg1 [1, 0]
// CHECK: %[[S:.*]] = dlc.matmul %arg0, %[[KT]]
// CHECK: %[[SCALED:.*]] = dlc.mul %[[S]], %{{.*}}
// CHECK: %[[X:.*]] = dlc.add %[[SCALED]], %arg3
// CHECK: %[[M:.*]] = dlc.reduce_max %[[X]] axes [1] keep_dims
// CHECK: %[[D:.*]] = dlc.sub %[[X]], %[[M]]
// CHECK: %[[E:.*]] = dlc.exp %[[D]]
// CHECK: %[[Z:.*]] = dlc.reduce_sum %[[E]] axes [1] keep_dims
// CHECK: %[[P:.*]] = dlc.div %[[E]], %[[Z]]
// CHECK: %[[O:.*]] = dlc.matmul %[[P]], %arg2
// CHECK-NOT: dlc.log
// CHECK: return %[[O]]
func.func @forward(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %v: tensor<5x2xf32>, %b: tensor<5xf32>) -> tensor<3x2xf32> {
  %out, %lse = dlc.attention %q, %k, %v bias %b scale 0.5 : tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x2xf32>, tensor<5xf32> -> tensor<3x2xf32>, tensor<3xf32>
  return %out : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @with_lse
// CHECK: %[[M:.*]] = dlc.reduce_max
// CHECK: %[[Z:.*]] = dlc.reduce_sum
// CHECK: %[[L:.*]] = dlc.log %[[Z]]
// CHECK: %[[LSE:.*]] = dlc.add %[[M]], %[[L]]
// CHECK: dlc.reshape %[[LSE]] : tensor<3x1xf32> to tensor<3xf32>
func.func @with_lse(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %v: tensor<5x2xf32>) -> tensor<3xf32> {
  %out, %lse = dlc.attention %q, %k, %v scale 1.0 : tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x2xf32> -> tensor<3x2xf32>, tensor<3xf32>
  return %lse : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @grad
// CHECK: %[[S:.*]] = dlc.matmul %arg0, %{{.*}}
// CHECK: %[[LSE:.*]] = dlc.reshape %arg4 : tensor<3xf32> to tensor<3x1xf32>
// CHECK: %[[SHIFT:.*]] = dlc.sub %{{.*}}, %[[LSE]]
// CHECK: %[[P:.*]] = dlc.exp %[[SHIFT]]
// CHECK: %[[VT:.*]] = dlc.transpose %arg2 [1, 0]
// CHECK: %[[DP:.*]] = dlc.matmul %arg5, %[[VT]]
// CHECK: %[[PROD:.*]] = dlc.mul %arg5, %arg3
// CHECK: %[[ROWS:.*]] = dlc.reduce_sum %[[PROD]] axes [1] keep_dims
// CHECK: %[[DIFF:.*]] = dlc.sub %[[DP]], %[[ROWS]]
// CHECK: %[[DS0:.*]] = dlc.mul %[[P]], %[[DIFF]]
// CHECK: %[[DS:.*]] = dlc.mul %[[DS0]], %{{.*}}
// CHECK: %[[DQ:.*]] = dlc.matmul %[[DS]], %arg1
// CHECK: %[[DST:.*]] = dlc.transpose %[[DS]] [1, 0]
// CHECK: %[[DK:.*]] = dlc.matmul %[[DST]], %arg0
// CHECK: %[[PT:.*]] = dlc.transpose %[[P]] [1, 0]
// CHECK: %[[DV:.*]] = dlc.matmul %[[PT]], %arg5
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
func.func @grad(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %v: tensor<5x2xf32>, %out: tensor<3x2xf32>, %lse: tensor<3xf32>, %dout: tensor<3x2xf32>) -> (tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x2xf32>) {
  %dq, %dk, %dv = dlc.attention_grad %q, %k, %v, %out, %lse, %dout scale 0.5 : tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x2xf32>, tensor<3x2xf32>, tensor<3xf32>, tensor<3x2xf32> -> tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x2xf32>
  return %dq, %dk, %dv : tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x2xf32>
}

// -----

// Cross-entropy: the row's log-sum-exp, the picked logit, the smoothing's
// mean, zero where the label is ignored; the gradient one elementwise
// expression against the classes 0..C-1, selected to 0 on ignored rows
// (even where their logits make it NaN).
// CHECK-LABEL: func.func @cross_entropy
// CHECK-DAG: %[[KEEP:.*]] = dlc.constant dense<0.899999976> : tensor<f32>
// CHECK-DAG: %[[IDS:.*]] = dlc.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
// CHECK-DAG: %[[IGN:.*]] = dlc.constant dense<-100> : tensor<3xi64>
// CHECK: %[[M:.*]] = dlc.reduce_max %arg0 axes [1] keep_dims
// CHECK: %[[SH:.*]] = dlc.sub %arg0, %[[M]]
// CHECK: %[[E:.*]] = dlc.exp %[[SH]]
// CHECK: %[[Z:.*]] = dlc.reduce_sum %[[E]] axes [1] keep_dims
// CHECK: %[[LOGZ:.*]] = dlc.log %[[Z]]
// CHECK: %[[LSE:.*]] = dlc.add %[[M]], %[[LOGZ]]
// CHECK: %[[VALID:.*]] = dlc.compare ne, %arg1, %[[IGN]]
// CHECK: %[[PICK:.*]] = dlc.gather_elements %arg0[%{{.*}}] {axis = 1 : i64}
// CHECK: %[[KEPT:.*]] = dlc.mul %[[PICK]], %[[KEEP]]
// CHECK: dlc.sub %[[LSE]], %[[KEPT]]
// CHECK: dlc.reduce_sum %arg0 axes [1] keep_dims
// CHECK: %[[P:.*]] = dlc.exp
// CHECK: %[[HIT:.*]] = dlc.compare eq, %[[IDS]], %{{.*}} : tensor<5xi64>, tensor<3x1xi64> -> tensor<3x5xi1>
// CHECK: %[[T:.*]] = dlc.select %[[HIT]], %[[KEEP]], %{{.*}}
// CHECK: %[[D:.*]] = dlc.sub %[[P]], %[[T]]
// CHECK: %[[DU:.*]] = dlc.sub %[[D]], %{{.*}}
// CHECK: %[[G:.*]] = dlc.reshape %{{.*}} : tensor<3xf32> to tensor<3x1xf32>
// CHECK: %[[PROD:.*]] = dlc.mul %[[DU]], %[[G]]
// CHECK: %[[V:.*]] = dlc.reshape %{{.*}} : tensor<3xi1> to tensor<3x1xi1>
// CHECK: %[[DX:.*]] = dlc.select %[[V]], %[[PROD]], %{{.*}}
// CHECK: return %{{.*}}, %[[DX]]
// CHECK-NOT: dlc.cross_entropy
func.func @cross_entropy(%x: tensor<3x5xf32>, %l: tensor<3xi64>, %g: tensor<3xf32>) -> (tensor<3xf32>, tensor<3x5xf32>) {
  %loss, %lse = dlc.cross_entropy %x, %l ignore_index -100 label_smoothing 0.1 : tensor<3x5xf32>, tensor<3xi64> -> tensor<3xf32>, tensor<3xf32>
  %d = dlc.cross_entropy_grad %x, %l, %lse, %g ignore_index -100 label_smoothing 0.1 : tensor<3x5xf32>, tensor<3xi64>, tensor<3xf32>, tensor<3xf32> -> tensor<3x5xf32>
  return %loss, %d : tensor<3xf32>, tensor<3x5xf32>
}

// -----

// dlc.tp_copy is the identity once autodiff has read it; dlc.tp_reduce
// stays, a collective.
// CHECK-LABEL: func.func @tensor_parallel
// CHECK-NEXT: %[[R:.*]] = dlc.tp_reduce %arg0 : tensor<2x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @tensor_parallel(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %c = dlc.tp_copy %x : tensor<2x4xf32>
  %r = dlc.tp_reduce %c : tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
