// RUN: dlc-opt %s '-dlc-tensor-parallel=ranks=2 class-function=forward_train' | FileCheck %s
// RUN: %reference_python -c "import numpy as np, sys; r = np.random.default_rng(5); np.savez(sys.argv[1], ids=np.array([[0, 5, 7], [2, 6, 1]]), labels=np.array([[3, 4, 7], [0, 6, 1]]), table=r.uniform(-1, 1, (8, 4)).astype(np.float32))" %t.inputs.npz
// RUN: dlc-opt %s --dlc-functionalize --dlc-add-loss --dlc-autodiff -o %t.one.mlir
// RUN: dlc-opt %s '--dlc-tensor-parallel=ranks=2 class-function=forward_train' --dlc-functionalize --dlc-add-loss --dlc-autodiff -o %t.tp2.mlir
// RUN: dlc-run --interpret %t.one.mlir --function loss_grad --inputs %t.inputs.npz --outputs %t.one.npz
// RUN: dlc-run --interpret %t.tp2.mlir --function loss_grad --inputs %t.inputs.npz --outputs %t.tp2.npz
// RUN: %reference_python %S/../../tests/tools/compare_npz.py %t.tp2.npz %t.one.npz --atol 1e-5 | FileCheck %s --check-prefix=MATCH

// Tied embeddings (GPT-2's wte): one load of @table, read by the embedding
// and, transposed, by the class head, is split by its rows for both: each
// split claims one of the load's two reads. The loss and the table's
// gradient (the embedding's scatter plus the head's) are one device's
// (tolerance: float32 summation order over 8 / 2 classes, as in
// tensor-parallel-classes-numerics.test; seen: 1.5e-8).
// CHECK: dlc.global @table : tensor<4x4xf32> = dense<1.000000e-01> : tensor<8x4xf32> {dlc.tp_split = 0 : i64}
// CHECK-LABEL: func.func @forward_train
// CHECK-SAME: -> (tensor<2x3x4xf32> {dlc.name = "logits", dlc.role = "output", dlc.tp_split = 2 : i64})
// CHECK: %[[T:.*]] = dlc.global_load @table : tensor<4x4xf32>
// CHECK: dlc.gather %[[T]][%{{.*}}] {axis = 0 : i64} : tensor<4x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
// CHECK: dlc.transpose %[[T]] [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK: dlc.matmul %{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<4x4xf32> -> tensor<2x3x4xf32>
// MATCH: {{^}}RESULT: match{{$}}
module {
  dlc.global @table : tensor<8x4xf32> = dense<0.1> : tensor<8x4xf32>
  func.func @forward_train(%ids: tensor<2x3xi64> {dlc.name = "ids", dlc.role = "input"}) -> (tensor<2x3x8xf32> {dlc.name = "logits", dlc.role = "output"}) {
    %t = dlc.global_load @table : tensor<8x4xf32>
    %e = dlc.gather %t[%ids] {axis = 0 : i64} : tensor<8x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
    %h = dlc.tanh %e : tensor<2x3x4xf32>
    %tt = dlc.transpose %t [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
    %l = dlc.matmul %h, %tt : tensor<2x3x4xf32>, tensor<4x8xf32> -> tensor<2x3x8xf32>
    return %l : tensor<2x3x8xf32>
  }
}
