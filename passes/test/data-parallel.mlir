// RUN: dlc-opt %s -dlc-data-parallel=ranks=2 | FileCheck %s --check-prefixes=CHECK,ONE
// RUN: dlc-opt %s '-dlc-data-parallel=ranks=4 bucket-mb=0.00003' | FileCheck %s --check-prefixes=CHECK,EACH
// RUN: dlc-opt %s -dlc-data-parallel | FileCheck %s --check-prefix=SINGLE
// RUN: dlc-opt %s '-dlc-data-parallel=ranks=4 zero=1' | FileCheck %s --check-prefix=ZERO
// Every gradient @loss_grad returns is averaged over the ranks before it is
// returned; the loss and the forward's values are not. Buckets follow the
// order backward produces the gradients (b2's, then w2's, then w1's here),
// each placed right after the producer of its last gradient. With 25 MiB
// they all share one bucket, after w1's gradient; with 31 bytes (b2's 8
// bytes, then w2's 24 would make 32) each is a bucket of its own, issued
// as soon as its gradient exists. A gradient returned twice (the tied
// embedding's) is reduced once. One rank needs no collective.

// ONE: module attributes {dlc.data_parallel = 2 : i64}
// EACH: module attributes {dlc.data_parallel = 4 : i64}
// SINGLE-NOT: dlc.data_parallel
// SINGLE-NOT: dlc.all_reduce
// CHECK-LABEL: func.func @loss_grad
// CHECK: %[[LOSS:.+]] = dlc.reduce_sum %{{.+}} axes [0, 1]
// CHECK: %[[DB:.+]] = dlc.reduce_sum %{{.+}} axes [0]
// EACH-NEXT: %[[RB:.+]] = dlc.all_reduce mean bucket 0 %[[DB]] : tensor<2xf32>
// CHECK: %[[DW2:.+]] = dlc.matmul
// EACH-NEXT: %[[RW2:.+]] = dlc.all_reduce mean bucket 1 %[[DW2]] : tensor<3x2xf32>
// ONE-NOT: dlc.all_reduce
// CHECK: %[[DW1:.+]] = dlc.matmul %{{.+}}, %{{.+}} : tensor<4x2xf32>, tensor<2x3xf32>
// ONE-NEXT: %[[R:.+]]:3 = dlc.all_reduce mean bucket 0 %[[DB]], %[[DW2]], %[[DW1]] : tensor<2xf32>, tensor<3x2xf32>, tensor<4x3xf32>
// ONE-NEXT: return %[[LOSS]], %[[R]]#2, %[[R]]#1, %[[R]]#0, %[[R]]#0 :
// EACH-NEXT: %[[RW1:.+]] = dlc.all_reduce mean bucket 2 %[[DW1]] : tensor<4x3xf32>
// EACH-NEXT: return %[[LOSS]], %[[RW1]], %[[RW2]], %[[RB]], %[[RB]] :
// A parameter that is its own gradient (an argument): its bucket comes
// first in the body; with 31-byte buckets u's 24 bytes and v's 12 are two
// buckets at the same place, which keep their order.
// CHECK-LABEL: func.func @argument_gradients
// ONE-NEXT: %[[A:.+]]:2 = dlc.all_reduce mean bucket 0 %arg0, %arg1 : tensor<6xf32>, tensor<3xf32>
// ONE-NEXT: return %[[A]]#0, %[[A]]#1
// EACH-NEXT: %[[A0:.+]] = dlc.all_reduce mean bucket 0 %arg0 : tensor<6xf32>
// EACH-NEXT: %[[A1:.+]] = dlc.all_reduce mean bucket 1 %arg1 : tensor<3xf32>
// EACH-NEXT: return %[[A0]], %[[A1]]
// A bucket holds one element type: bf16 gradients between float32 ones
// make three buckets even where 25 MiB would hold them all.
// CHECK-LABEL: func.func @mixed_types
// ONE-NEXT: %[[M0:.+]] = dlc.all_reduce mean bucket 0 %arg0 : tensor<2xf32>
// ONE-NEXT: %[[M1:.+]]:2 = dlc.all_reduce mean bucket 1 %arg1, %arg2 : tensor<2xbf16>, tensor<3xbf16>
// ONE-NEXT: %[[M2:.+]] = dlc.all_reduce mean bucket 2 %arg3 : tensor<2xf32>
// ONE-NEXT: return %[[M0]], %[[M1]]#0, %[[M1]]#1, %[[M2]]
// ZeRO-1: the same bucket is reduce-scattered, and each gradient result is
// rank r's 1-D shard of ceil(elements / 4) elements, marked with the whole
// gradient's type; the tied gradient shares its shard.
// ZERO: module attributes {dlc.data_parallel = 4 : i64, dlc.zero = 1 : i64}
// ZERO-LABEL: func.func @loss_grad
// ZERO-SAME: -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<3xf32> {dlc.name = "w1", dlc.role = "gradient", dlc.sharded = tensor<4x3xf32>}, tensor<2xf32> {dlc.name = "w2", dlc.role = "gradient", dlc.sharded = tensor<3x2xf32>}, tensor<1xf32> {dlc.name = "b2", dlc.role = "gradient", dlc.sharded = tensor<2xf32>}, tensor<1xf32> {dlc.name = "b2_tied", dlc.role = "gradient", dlc.sharded = tensor<2xf32>})
// ZERO: %[[DW1:.+]] = dlc.matmul %{{.+}}, %{{.+}} : tensor<4x2xf32>, tensor<2x3xf32>
// ZERO-NEXT: %[[S:.+]]:3 = dlc.reduce_scatter mean ranks 4 bucket 0 %{{.+}}, %{{.+}}, %[[DW1]] : tensor<2xf32>, tensor<3x2xf32>, tensor<4x3xf32>
// ZERO-NEXT: return %{{.+}}, %[[S]]#2, %[[S]]#1, %[[S]]#0, %[[S]]#0 : tensor<f32>, tensor<3xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>
// ZERO-NOT: dlc.all_reduce
// Functions without gradients are left alone.
// CHECK-LABEL: func.func @forward
// CHECK-NOT: dlc.all_reduce
// CHECK: return
dlc.global @w1 : tensor<4x3xf32> = dense<0.5> : tensor<4x3xf32>
dlc.global @w2 : tensor<3x2xf32> = dense<0.5> : tensor<3x2xf32>
dlc.global @b2 : tensor<2xf32> = dense<0.0> : tensor<2xf32>
func.func @loss_grad(%w1: tensor<4x3xf32> {dlc.name = "w1", dlc.role = "param"}, %w2: tensor<3x2xf32> {dlc.name = "w2", dlc.role = "param"}, %b2: tensor<2xf32> {dlc.name = "b2", dlc.role = "param"}, %x: tensor<2x4xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}, tensor<4x3xf32> {dlc.name = "w1", dlc.role = "gradient"}, tensor<3x2xf32> {dlc.name = "w2", dlc.role = "gradient"}, tensor<2xf32> {dlc.name = "b2", dlc.role = "gradient"}, tensor<2xf32> {dlc.name = "b2_tied", dlc.role = "gradient"}) {
  %h = dlc.matmul %x, %w1 : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %y = dlc.matmul %h, %w2 : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x2xf32>
  %z = dlc.add %y, %b2 : tensor<2x2xf32>, tensor<2xf32> -> tensor<2x2xf32>
  %s = dlc.reduce_sum %z axes [0, 1] : tensor<2x2xf32> -> tensor<f32>
  %db = dlc.reduce_sum %z axes [0] : tensor<2x2xf32> -> tensor<2xf32>
  %hT = dlc.transpose %h [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %dw2 = dlc.matmul %hT, %z : tensor<3x2xf32>, tensor<2x2xf32> -> tensor<3x2xf32>
  %xT = dlc.transpose %x [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
  %w2T = dlc.transpose %w2 [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
  %dh = dlc.matmul %z, %w2T : tensor<2x2xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %dw1 = dlc.matmul %xT, %dh : tensor<4x2xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  return %s, %dw1, %dw2, %db, %db : tensor<f32>, tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>
}
func.func @argument_gradients(%u: tensor<6xf32> {dlc.name = "u", dlc.role = "param"}, %v: tensor<3xf32> {dlc.name = "v", dlc.role = "param"}) -> (tensor<6xf32> {dlc.name = "u", dlc.role = "gradient"}, tensor<3xf32> {dlc.name = "v", dlc.role = "gradient"}) {
  return %u, %v : tensor<6xf32>, tensor<3xf32>
}
func.func @mixed_types(%a: tensor<2xf32> {dlc.name = "a", dlc.role = "param"}, %b: tensor<2xbf16> {dlc.name = "b", dlc.role = "param"}, %c: tensor<3xbf16> {dlc.name = "c", dlc.role = "param"}, %d: tensor<2xf32> {dlc.name = "d", dlc.role = "param"}) -> (tensor<2xf32> {dlc.name = "a", dlc.role = "gradient"}, tensor<2xbf16> {dlc.name = "b", dlc.role = "gradient"}, tensor<3xbf16> {dlc.name = "c", dlc.role = "gradient"}, tensor<2xf32> {dlc.name = "d", dlc.role = "gradient"}) {
  return %a, %b, %c, %d : tensor<2xf32>, tensor<2xbf16>, tensor<3xbf16>, tensor<2xf32>
}
func.func @forward(%w1: tensor<4x3xf32> {dlc.name = "w1", dlc.role = "param"}, %x: tensor<2x4xf32> {dlc.name = "x", dlc.role = "input"}) -> (tensor<2x3xf32> {dlc.name = "h", dlc.role = "output"}) {
  %h = dlc.matmul %x, %w1 : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  return %h : tensor<2x3xf32>
}
