// RUN: not dlc-opt %s --dlc-fuse --dlc-plan-memory --dlc-plan-pipeline=target=cpu -o /dev/null 2>&1 | FileCheck %s
// A pipelined step has no execution plan yet: the runtime's sends and
// receives between stages are not built, and lowering names the transfer.
// CHECK: error: 'func.func' op has 1 op without a compiled path on the CPU: {{.*}}plan-lower-pipeline.mlir:9:10: 'dlc.pp_transfer' op has no execution plan yet: pipeline stages run in the evaluator (dlc-run --interpret)
module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @forward(%x: tensor<2xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<2xf32> {dlc.name = "y", dlc.role = "output"}) {
    %a = dlc.neg %x {dlc.pp_stage = 0 : i64} : tensor<2xf32>
    // The transfer.
    %t = dlc.pp_transfer %a from 0 to 1 : tensor<2xf32>
    %b = dlc.exp %t {dlc.pp_stage = 1 : i64} : tensor<2xf32>
    return %b : tensor<2xf32>
  }
}
