// RUN: dlc-opt %s -split-input-file -verify-diagnostics

func.func @schedule(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has schedule iterations -1, grain 1, threads 1; expected iterations >= 0, grain and threads >= 1}}
  %0 = dlc.plan.launch(%x) iterations -1 grain 1 threads 1 : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %1 = dlc.fusion %a : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%b: tensor<4xf32>):
      %2 = dlc.exp %b : tensor<4xf32>
      dlc.yield %2 : tensor<4xf32>
    }
    dlc.plan.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @arguments(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has block arguments of types other than its operands'}}
  %0 = dlc.plan.launch(%x) iterations 1 grain 1 threads 1 : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<2x2xf32>):
    %1 = dlc.fusion %a : (tensor<2x2xf32>) -> tensor<2x2xf32> {
    ^bb0(%b: tensor<2x2xf32>):
      dlc.yield %b : tensor<2x2xf32>
    }
    %2 = dlc.reshape %1 : tensor<2x2xf32> to tensor<4xf32>
    dlc.plan.yield %2 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @yield(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{must end in a dlc.plan.yield of its results' types}}
  %0 = dlc.plan.launch(%x) iterations 1 grain 1 threads 1 : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    dlc.plan.yield
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @empty(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{runs no kernel}}
  %0 = dlc.plan.launch(%x) iterations 1 grain 1 threads 1 : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    dlc.plan.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @foreign(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dlc.plan.launch(%x) iterations 1 grain 1 threads 1 : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{cannot run in a dlc.plan.launch (a launch runs fusions or one fused attention op, which may read views of its arguments)}}
    %1 = dlc.exp %a : tensor<4xf32>
    dlc.plan.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @order(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{must pass its arguments to its kernel's op in order and yield that op's results in order}}
  %0 = dlc.plan.launch(%x, %y) iterations 1 grain 1 threads 1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %1 = dlc.fusion %b, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%c: tensor<4xf32>, %d: tensor<4xf32>):
      %2 = dlc.sub %c, %d : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
      dlc.yield %2 : tensor<4xf32>
    }
    dlc.plan.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @group_yield(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{must yield its members' results in member order}}
  %0:2 = dlc.plan.launch(%x) iterations 2 grain 1 threads 1 : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %1 = dlc.fusion %a : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%b: tensor<4xf32>):
      %3 = dlc.exp %b : tensor<4xf32>
      dlc.yield %3 : tensor<4xf32>
    }
    %2 = dlc.fusion %a : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%b: tensor<4xf32>):
      %3 = dlc.neg %b : tensor<4xf32>
      dlc.yield %3 : tensor<4xf32>
    }
    dlc.plan.yield %2, %1 : tensor<4xf32>, tensor<4xf32>
  }
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @shapes(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{multiplies [4, 8] by [4, 8] into 'tensor<4x4xf32>'; expected a [4, 8] product of equal inner dimensions}}
  %0 = dlc.plan.matmul %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @batch(%a: tensor<2x3x4x8xf32>, %b: tensor<3x8x4xf32>) -> tensor<2x3x4x4xf32> {
  // expected-error @+1 {{has a rhs of type 'tensor<3x8x4xf32>' for a result of type 'tensor<2x3x4x4xf32>'; a library matmul takes all or none of the batch dimensions}}
  %0 = dlc.plan.matmul %a, %b : (tensor<2x3x4x8xf32>, tensor<3x8x4xf32>) -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// As many matrices as the result's batch, in another order of dimensions.
func.func @batch_order(%a: tensor<3x2x4x8xf32>, %b: tensor<8x16xf32>) -> tensor<2x3x4x16xf32> {
  // expected-error @+1 {{has a lhs of type 'tensor<3x2x4x8xf32>' for a result of type 'tensor<2x3x4x16xf32>'}}
  %0 = dlc.plan.matmul %a, %b : (tensor<3x2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x3x4x16xf32>
  return %0 : tensor<2x3x4x16xf32>
}

// -----

// A batch of ones is one matrix; a batch of [6] read for a result batch of
// [1, 6] is the full batch.
func.func @batch_ones(%a: tensor<1x1x4x8xf32>, %c: tensor<6x8x16xf32>) -> tensor<1x6x4x16xf32> {
  %0 = dlc.plan.matmul %a, %c : (tensor<1x1x4x8xf32>, tensor<6x8x16xf32>) -> tensor<1x6x4x16xf32>
  return %0 : tensor<1x6x4x16xf32>
}

// -----

// More batch dimensions than the result, even of size 1.
func.func @batch_extra(%a: tensor<1x1x4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{has a lhs of type 'tensor<1x1x4x8xf32>' for a result of type 'tensor<4x16xf32>'}}
  %0 = dlc.plan.matmul %a, %b : (tensor<1x1x4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @no_terminator(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{must end in a dlc.plan.yield of its results' types}}
  %0 = dlc.plan.launch(%x) iterations 1 grain 1 threads 1 : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %1 = dlc.fusion %a : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%b: tensor<4xf32>):
      dlc.yield %b : tensor<4xf32>
    }
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @bias_without_epilogue(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{has epilogue none and a bias; a bias goes with the bias epilogues only}}
  %0 = dlc.plan.matmul %a, %b bias %c : (tensor<4x8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @bias_shape(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{has bias 'tensor<8xf32>'; expected 4 elements of 'f32' along the last dimension}}
  %0 = dlc.plan.matmul %a, %b bias %c epilogue bias_relu : (tensor<4x8xf32>, tensor<8x4xf32>, tensor<8xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @element_types(%a: tensor<4x8xf32>, %b: tensor<8x4xf64>) -> tensor<4x4xf32> {
  // expected-error @+1 {{has operands of an element type other than its result's}}
  %0 = dlc.plan.matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xf64>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @conv_types(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf64>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{has operands of an element type other than its result's}}
  %y = dlc.plan.conv forward %x, %w stride [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf64>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// A backward-data step's result is x: its y (the operand dy) must be what
// x convolved by w gives.
func.func @conv_shapes(%dy: tensor<1x4x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x9x9xf32> {
  // expected-error @+1 {{convolves x 'tensor<1x3x9x9xf32>' by w 'tensor<4x3x3x3xf32>' into 'tensor<1x4x9x9xf32>', not y 'tensor<1x4x8x8xf32>' (backward_data)}}
  %dx = dlc.plan.conv backward_data %dy, %w stride [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] groups 1 : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x9x9xf32>
  return %dx : tensor<1x3x9x9xf32>
}

// -----

func.func @conv_groups(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x4x8x8xf32>) -> tensor<4x3x3x3xf32> {
  // expected-error @+1 {{groups 2 must divide input channels 3 and output channels 4}}
  %dw = dlc.plan.conv backward_filter %x, %dy stride [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] groups 2 : (tensor<1x3x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<4x3x3x3xf32>
  return %dw : tensor<4x3x3x3xf32>
}

// -----

func.func @conv_engine(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'engine' [auto, library, direct]}}
  %y = dlc.plan.conv forward %x, %w stride [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] groups 1 engine winograd : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

func.func @all_reduce_types(%a: tensor<4xf32>, %b: tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xbf16>) {
  // expected-error @+1 {{mixes element types ('f32' and 'bf16'); one collective reduces one type}}
  %0:2 = dlc.plan.all_reduce mean bucket 0 %a, %b : tensor<4xf32>, tensor<4xbf16>
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xbf16>
}

// -----

func.func @all_reduce_empty() {
  // expected-error @+1 {{reduces no values}}
  "dlc.plan.all_reduce"() <{bucket = 0 : i64, reduction = 0 : i32}> : () -> ()
  return
}

// -----

func.func @all_reduce_bucket(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'bucket' failed to satisfy constraint}}
  %0 = dlc.plan.all_reduce mean bucket -1 %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
