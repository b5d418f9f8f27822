// dlc-pipeline-partition's and dlc-pipeline-schedule's option errors,
// reported on the module (one run each).
// RUN: not dlc-opt %s -dlc-pipeline-partition=stages=0 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not dlc-opt %s '-dlc-pipeline-partition=stages=2 microbatches=0' 2>&1 | FileCheck %s --check-prefix=MICRO
// RUN: not dlc-opt %s '-dlc-pipeline-partition=stages=1 microbatches=2' 2>&1 | FileCheck %s --check-prefix=ONE-STAGE
// RUN: not dlc-opt %s '-dlc-pipeline-partition=stages=2 flops-per-byte=-1' 2>&1 | FileCheck %s --check-prefix=RATE
// RUN: not dlc-opt %s '-dlc-pipeline-partition=stages=2 flops-per-byte=inf' 2>&1 | FileCheck %s --check-prefix=RATE-INF
// RUN: not dlc-opt %s '-dlc-pipeline-partition=stages=2 link-flops-per-byte=-2' 2>&1 | FileCheck %s --check-prefix=LINK
// RUN: not dlc-opt %s -dlc-pipeline-schedule=microbatches=0 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// STAGES: error: dlc-pipeline-partition: stages must be at least 1, got 0
// MICRO: error: dlc-pipeline-partition: microbatches must be at least 1, got 0
// ONE-STAGE: error: dlc-pipeline-partition: microbatches apply to a pipeline of more than one stage (stages=1 takes the batch whole)
// RATE: error: dlc-pipeline-partition: flops-per-byte must be a finite number >= 0, got -1
// RATE-INF: error: dlc-pipeline-partition: flops-per-byte must be a finite number >= 0, got INF
// LINK: error: dlc-pipeline-partition: link-flops-per-byte must be a finite number >= 0, got -2
// SCHEDULE: error: dlc-pipeline-schedule: microbatches must be at least 1, got 0
func.func @loss(%x: tensor<8xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}) {
  %0 = dlc.reduce_sum %x axes [0] : tensor<8xf32> -> tensor<f32>
  return %0 : tensor<f32>
}
