// RUN: dlc-opt %S/Inputs/language-model.mlir '-dlc-tensor-parallel=ranks=2 class-function=forward_train' | FileCheck %s
// RUN: dlc-opt %S/Inputs/language-model.mlir '-dlc-tensor-parallel=ranks=2 class-function=forward_train report=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: dlc-opt %S/Inputs/language-model.mlir '-dlc-tensor-parallel=ranks=2 report=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-LOSS
// RUN: dlc-opt %S/Inputs/language-model.mlir '-dlc-tensor-parallel=ranks=2 class-function=forward_train' -dlc-functionalize -dlc-add-loss | FileCheck %s --check-prefix=LOSS

// A class head (Inputs/language-model.mlir: a matmul by @wh and a bias, whose 8
// output columns the functions return) is split by its classes: each rank
// holds 4 rows of @wh and of @bh and computes its 4 classes' logits. The
// function a cross-entropy reads returns them so, marked dlc.tp_split; the
// inference function gathers every rank's.
// CHECK: dlc.global @wh : tensor<4x8xf32> = dense<1.000000e-01> : tensor<8x8xf32> {dlc.tp_split = 0 : i64}
// CHECK: dlc.global @bh : tensor<4xf32> = dense<0.000000e+00> : tensor<8xf32> {dlc.tp_split = 0 : i64}
// CHECK-LABEL: func.func @forward_train
// CHECK-SAME: -> (tensor<4x3x4xf32> {dlc.name = "logits", dlc.role = "output", dlc.tp_split = 2 : i64})
// CHECK: %[[EMB:.*]] = dlc.global_load @emb : tensor<8x6xf32>
// Gather's own bounds: negative ids from the end, the rest clamped.
// CHECK: %[[BOUNDED:.*]] = dlc.min
// CHECK: %[[FIRSTS:.*]] = dlc.constant dense<[0, 8]> : tensor<2xi64>
// CHECK-NEXT: %[[FIRST:.*]] = dlc.rank_shard ranks 2 tensor %[[FIRSTS]] : tensor<2xi64>
// CHECK-NEXT: %[[F:.*]] = dlc.reshape %[[FIRST]] : tensor<1xi64> to tensor<i64>
// CHECK-NEXT: %[[LOCAL:.*]] = dlc.sub %[[BOUNDED]], %[[F]]
// CHECK: %[[MINE:.*]] = dlc.and
// CHECK: %[[SAFE:.*]] = dlc.select %[[MINE]], %[[LOCAL]], %{{.*}}
// CHECK-NEXT: %[[ROWS:.*]] = dlc.gather %[[EMB]][%[[SAFE]]] {axis = 0 : i64} : tensor<8x6xf32>, tensor<4x3xi64> -> tensor<4x3x6xf32>
// CHECK-NEXT: %[[M:.*]] = dlc.reshape %[[MINE]] : tensor<4x3xi1> to tensor<4x3x1xi1>
// CHECK: %[[OWN:.*]] = dlc.select %[[M]], %[[ROWS]], %{{.*}}
// CHECK-NEXT: %[[TOK:.*]] = dlc.tp_reduce %[[OWN]] : tensor<4x3x6xf32>
// CHECK: dlc.gather %{{.*}}[%{{.*}}] {axis = 0 : i64} : tensor<3x6xf32>, tensor<3xi64> -> tensor<3x6xf32>
// CHECK: dlc.add %[[TOK]], %{{.*}} : tensor<4x3x6xf32>, tensor<3x6xf32> -> tensor<4x3x6xf32>
// CHECK: %[[X:.*]] = dlc.tp_copy %{{.*}} : tensor<4x3x8xf32>
// CHECK: %[[L:.*]] = dlc.matmul %[[X]], %{{.*}} : tensor<4x3x8xf32>, tensor<8x4xf32> -> tensor<4x3x4xf32>
// CHECK: %[[LB:.*]] = dlc.add %[[L]], %{{.*}} : tensor<4x3x4xf32>, tensor<4xf32> -> tensor<4x3x4xf32>
// CHECK-NEXT: return %[[LB]] : tensor<4x3x4xf32>
// CHECK-LABEL: func.func @forward
// CHECK-SAME: -> (tensor<4x3x8xf32> {dlc.name = "logits", dlc.role = "output"})
// CHECK: %[[LB:.*]] = dlc.add %{{.*}}, %{{.*}} : tensor<4x3x4xf32>, tensor<4xf32> -> tensor<4x3x4xf32>
// Every rank's block of rows x classes joined, and each row's classes put
// together in rank order.
// CHECK-NEXT: %[[FLAT:.*]] = dlc.reshape %[[LB]] : tensor<4x3x4xf32> to tensor<48xf32>
// CHECK-NEXT: %[[ALL:.*]] = dlc.all_gather ranks 2 tensor bucket 0 %[[FLAT]] : tensor<48xf32> -> tensor<2x12x4xf32>
// CHECK-NEXT: %[[ROWS:.*]] = dlc.transpose %[[ALL]] [1, 0, 2] : tensor<2x12x4xf32> -> tensor<12x2x4xf32>
// CHECK-NEXT: %[[BACK:.*]] = dlc.reshape %[[ROWS]] : tensor<12x2x4xf32> to tensor<4x3x8xf32>
// CHECK-NEXT: return %[[BACK]] : tensor<4x3x8xf32>

// REPORT: @forward_train:
// REPORT-NEXT: dlc.gather at {{.*}}: split by rows (the vocabulary), @emb along dimension 0
// REPORT-NEXT: dlc.gather at {{.*}}: replicated: its ids are constants (a position embedding): every rank reads the same rows
// REPORT-NEXT: replicated: dlc.reduce_sum at {{.*}} reads its hidden layer and is not pointwise
// REPORT-NEXT: column-parallel by classes, the loss reducing over the ranks, @wh split along dimension 0, @bh along dimension 0
// REPORT-NEXT: @forward:
// REPORT-NEXT: dlc.gather at {{.*}}: split by rows (the vocabulary), @emb along dimension 0
// REPORT-NEXT: dlc.gather at {{.*}}: replicated: its ids are constants (a position embedding): every rank reads the same rows
// REPORT-NEXT: replicated: dlc.reduce_sum at {{.*}} reads its hidden layer and is not pointwise
// REPORT-NEXT: column-parallel by classes, gathered, @wh split along dimension 0, @bh along dimension 0

// Without a cross-entropy to read the split classes, the head stays whole.
// NO-LOSS: @forward_train:
// NO-LOSS: dlc.matmul at {{.*}}language-model.mlir":32{{.*}}: replicated: it is a class head, which is split for a cross-entropy loss alone

// The loss: the label counts 8 classes; each rank's logits are shifted by
// the ranks' largest of each row (gathered, no gradient), their
// exponentials summed over the ranks, and the label's logit taken where
// the rank's slice, from class 4 r, holds it, summed over the ranks.
// LOSS-LABEL: func.func @loss
// LOSS-SAME: dlc.num_classes = 8 : i64
// LOSS: %[[L:.*]] = dlc.add %{{.*}}, %{{.*}} : tensor<4x3x4xf32>, tensor<4xf32> -> tensor<4x3x4xf32>
// LOSS-NEXT: %[[M:.*]] = dlc.reduce_max %[[L]] axes [2] keep_dims
// LOSS-NEXT: %[[MS:.*]] = dlc.stop_gradient %[[M]] : tensor<4x3x1xf32>
// LOSS-NEXT: %[[MF:.*]] = dlc.reshape %[[MS]] : tensor<4x3x1xf32> to tensor<12xf32>
// LOSS-NEXT: %[[MA:.*]] = dlc.all_gather ranks 2 tensor bucket 0 %[[MF]] : tensor<12xf32> -> tensor<2x12xf32>
// LOSS-NEXT: %[[MX:.*]] = dlc.reduce_max %[[MA]] axes [0]
// LOSS-NEXT: %[[SHIFT:.*]] = dlc.reshape %[[MX]] : tensor<12xf32> to tensor<4x3x1xf32>
// LOSS-NEXT: %[[D:.*]] = dlc.sub %[[L]], %[[SHIFT]]
// LOSS-NEXT: %[[E:.*]] = dlc.exp %[[D]]
// LOSS-NEXT: %[[S:.*]] = dlc.reduce_sum %[[E]] axes [2] keep_dims
// LOSS-NEXT: %[[SUM:.*]] = dlc.tp_reduce %[[S]] : tensor<4x3x1xf32>
// LOSS-NEXT: %[[LOG:.*]] = dlc.log %[[SUM]]
// LOSS-NEXT: %[[LSE:.*]] = dlc.add %[[SHIFT]], %[[LOG]]
// An ignored label reads class 0; the others are clamped to the classes.
// LOSS-NEXT: %[[IGNORE:.*]] = dlc.constant dense<-100> : tensor<4x3xi64>
// LOSS-NEXT: %[[VALID:.*]] = dlc.compare ne, %{{.*}}, %[[IGNORE]]
// LOSS: dlc.min
// LOSS-NEXT: %[[FIRSTS:.*]] = dlc.constant dense<[0, 4]> : tensor<2xi64>
// LOSS-NEXT: %[[FIRST:.*]] = dlc.rank_shard ranks 2 tensor %[[FIRSTS]] : tensor<2xi64>
// LOSS: %[[PICK:.*]] = dlc.gather_elements %[[L]][%{{.*}}] {axis = 2 : i64}
// LOSS: %[[MINE:.*]] = dlc.select %{{.*}}, %[[PICK]], %{{.*}}
// LOSS-NEXT: %[[TARGET:.*]] = dlc.tp_reduce %[[MINE]] : tensor<4x3x1xf32>
// LOSS-NEXT: dlc.sub %[[LSE]], %[[TARGET]]
// LOSS-NOT: dlc.cross_entropy
// LOSS: return
