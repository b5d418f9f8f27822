// RUN: dlc-opt %s '-dlc-pipeline-partition=stages=4 flops-per-byte=0 link-flops-per-byte=0' | FileCheck %s

// When one op bounds the costliest stage, the other stages still share the
// rest evenly. Costs (FLOPs alone): six tanh of 512 elements, a head
// matmul of 2 x 16 x 64 = 2048 and the loss's sum of 16. No stage can cost
// less than the head, 2048; every cut whose stages cost at most that
// (within 2%) is as fast. Of those, the partitioner takes the most even
// (the least sum of squared costs): two tanh per stage and the head with
// the loss, not four tanh, two, the head, and a stage of the sum alone.
// CHECK-COUNT-2: dlc.tanh {{.*}} {dlc.pp_stage = 0 : i64}
// CHECK-COUNT-2: dlc.tanh {{.*}} {dlc.pp_stage = 1 : i64}
// CHECK-COUNT-2: dlc.tanh {{.*}} {dlc.pp_stage = 2 : i64}
// CHECK: dlc.matmul {{.*}} {dlc.pp_stage = 3 : i64}
// CHECK: dlc.reduce_sum {{.*}} {dlc.pp_stage = 3 : i64}
func.func @loss(%w: tensor<64x2xf32> {dlc.name = "w", dlc.role = "param"},
                %x: tensor<8x64xf32> {dlc.name = "x", dlc.role = "input"})
    -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}) {
  %t1 = dlc.tanh %x : tensor<8x64xf32>
  %t2 = dlc.tanh %t1 : tensor<8x64xf32>
  %t3 = dlc.tanh %t2 : tensor<8x64xf32>
  %t4 = dlc.tanh %t3 : tensor<8x64xf32>
  %t5 = dlc.tanh %t4 : tensor<8x64xf32>
  %t6 = dlc.tanh %t5 : tensor<8x64xf32>
  %h = dlc.matmul %t6, %w : tensor<8x64xf32>, tensor<64x2xf32> -> tensor<8x2xf32>
  %l = dlc.reduce_sum %h axes [0, 1] : tensor<8x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}
