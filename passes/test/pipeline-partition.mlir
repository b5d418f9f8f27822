// RUN: dlc-opt %s -split-input-file '-dlc-pipeline-partition=stages=2 microbatches=4 flops-per-byte=0 link-flops-per-byte=0' | FileCheck %s
// RUN: dlc-opt %s -split-input-file '-dlc-pipeline-partition=stages=2 microbatches=4 flops-per-byte=0 link-flops-per-byte=0 report=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: dlc-opt %s -split-input-file '-dlc-pipeline-partition=stages=2 microbatches=4 flops-per-byte=0 link-flops-per-byte=1 report=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LINK

// The function is one micro-batch of 8 rows. Costs in FLOPs alone
// (flops-per-byte=0): each matmul 2 x 8 x 16 x 16 = 4096, each elementwise
// op 128, the sum 128. With transfers free (link-flops-per-byte=0) the
// best balance cuts before %d: 8448 | 8448, though %a and %c are both live
// there (1 KiB); the cut before %e costs 8576 | 8320.
// CHECK-LABEL: module attributes {dlc.pipeline_stages = 2 : i64}
// CHECK-LABEL: func.func @loss
// CHECK: dlc.tanh %{{.*}} {dlc.pp_stage = 0 : i64}
// CHECK: dlc.matmul {{.*}} {dlc.pp_stage = 0 : i64}
// CHECK: dlc.matmul {{.*}} {dlc.pp_stage = 0 : i64}
// CHECK: dlc.tanh {{.*}} {dlc.pp_stage = 0 : i64}
// CHECK: dlc.add {{.*}} {dlc.pp_stage = 1 : i64}
// CHECK: dlc.matmul {{.*}} {dlc.pp_stage = 1 : i64}
// CHECK: dlc.matmul {{.*}} {dlc.pp_stage = 1 : i64}
// CHECK: dlc.reduce_sum {{.*}} {dlc.pp_stage = 1 : i64}
// REPORT: pipeline parallelism: @loss in 2 stages, 4 micro-batches, costed at 0 FLOPs per byte of memory, 0 per byte sent
// REPORT-NEXT: stage 0: 4 ops from dlc.tanh at loc("P")
// REPORT-NEXT: 8.45 KFLOP per micro-batch, 50.0% of the cost; parameters 2.0 KiB (2); activations 2.0 KiB per micro-batch, 2 in flight (4.0 KiB); sends 1.0 KiB per micro-batch
// REPORT-NEXT: stage 1: 4 ops from dlc.add at loc("D")
// REPORT-NEXT: 8.45 KFLOP per micro-batch, 50.0% of the cost; parameters 2.0 KiB (2); activations 1.5 KiB per micro-batch, 1 in flight (1.5 KiB)
// REPORT-NEXT: balance: the costliest stage is 1.000x the mean
// REPORT-NEXT: one device, the whole batch: 67.6 KFLOP; parameters 4.0 KiB; activations 14.0 KiB
// At 1 FLOP per byte sent (link-flops-per-byte=1), each side of a cut pays
// for its bytes: before %d 8448 + 1024 on both sides, before %e 8576 + 512
// | 8320 + 512, which wins.
// LINK: costed at 0 FLOPs per byte of memory, 1 per byte sent
// LINK-NEXT: stage 0: 5 ops from dlc.tanh at loc("P")
// LINK-NEXT: 8.58 KFLOP per micro-batch, 50.7% of the cost; parameters 2.0 KiB (2); activations 2.5 KiB per micro-batch, 2 in flight (5.0 KiB); sends 512 B per micro-batch
// LINK-NEXT: stage 1: 3 ops from dlc.matmul at loc("E")
// LINK-NEXT: 8.32 KFLOP per micro-batch, 49.3% of the cost;
// LINK: balance: the costliest stage is 1.014x the mean
func.func @loss(%w1: tensor<16x16xf32> {dlc.name = "w1", dlc.role = "param"},
                %w2: tensor<16x16xf32> {dlc.name = "w2", dlc.role = "param"},
                %w3: tensor<16x16xf32> {dlc.name = "w3", dlc.role = "param"},
                %w4: tensor<16x16xf32> {dlc.name = "w4", dlc.role = "param"},
                %x: tensor<8x16xf32> {dlc.name = "x", dlc.role = "input"})
    -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}) {
  %p = dlc.tanh %x : tensor<8x16xf32> loc("P")
  %a = dlc.matmul %p, %w1 : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %b = dlc.matmul %a, %w2 : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %c = dlc.tanh %b : tensor<8x16xf32>
  %d = dlc.add %c, %a : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32> loc("D")
  %e = dlc.matmul %d, %w3 : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32> loc("E")
  %f = dlc.matmul %e, %w4 : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %g = dlc.reduce_sum %f axes [0, 1] : tensor<8x16xf32> -> tensor<f32>
  return %g : tensor<f32>
}

// -----

// Ops that do not read the batch get no stage: the weight's transpose (its
// cost, 256, counts on its reader's stage: 256 + 4096 + 128 = 4480) and the
// constant. The label is part
// of the batch too. A parameter read on both stages is listed.
// CHECK-LABEL: func.func @loss
// CHECK: dlc.transpose %{{.*}} [1, 0] : tensor<16x16xf32> -> tensor<16x16xf32>
// CHECK: dlc.matmul {{.*}} {dlc.pp_stage = 0 : i64}
// CHECK: dlc.mul {{.*}} {dlc.pp_stage = 0 : i64}
// CHECK: dlc.matmul {{.*}} {dlc.pp_stage = 1 : i64}
// CHECK: dlc.constant dense<6.250000e-02> : tensor<f32>
// CHECK: dlc.sub {{.*}} {dlc.pp_stage = 1 : i64}
// CHECK: dlc.reduce_sum {{.*}} {dlc.pp_stage = 1 : i64}
// CHECK: dlc.mul {{.*}} {dlc.pp_stage = 1 : i64}
// REPORT: pipeline parallelism: @loss in 2 stages, 4 micro-batches, costed at 0 FLOPs per byte of memory, 0 per byte sent
// REPORT: stage 0: 2 ops from dlc.matmul
// REPORT-NEXT: 4.48 KFLOP per micro-batch, 50.7% of the cost; parameters 1.0 KiB (1); activations 1.0 KiB per micro-batch, 2 in flight (2.0 KiB); sends 512 B per micro-batch
// REPORT: parameters read by more than one stage: w
func.func @loss(%w: tensor<16x16xf32> {dlc.name = "w", dlc.role = "param"},
                %x: tensor<8x16xf32> {dlc.name = "x", dlc.role = "input"},
                %y: tensor<8x16xf32> {dlc.name = "y", dlc.role = "label"})
    -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}) {
  %t = dlc.transpose %w [1, 0] : tensor<16x16xf32> -> tensor<16x16xf32>
  %a = dlc.matmul %x, %t : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %b = dlc.mul %a, %a : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %c = dlc.matmul %b, %w : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %scale = dlc.constant dense<0.0625> : tensor<f32>
  %d = dlc.sub %c, %y : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %e = dlc.reduce_sum %d axes [0, 1] : tensor<8x16xf32> -> tensor<f32>
  %f = dlc.mul %e, %scale : tensor<f32>, tensor<f32> -> tensor<f32>
  return %f : tensor<f32>
}
