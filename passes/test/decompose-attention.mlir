// RUN: dlc-opt %s -split-input-file -dlc-decompose-attention | FileCheck %s
// dlc-decompose-attention: the forward as the importer's softmax (the
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
