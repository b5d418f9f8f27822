//===- DLCOps.td - dlc operations ----------------------------*- tablegen -*-===//
//
// The op set is small and orthogonal: ONNX ops that are compositions (Gemm,
// Softmax, LayerNormalization, pooling averages, losses...) are built from
// these by the importer (docs/onnx-mapping.md lists how). Every op's result
// type is either inferred or checked, so a verifier-valid module always has
// consistent static shapes, which the evaluator and codegen rely on.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_OPS_TD
#define DLC_OPS_TD

include "ir/DLCDialect.td"
include "ir/GradientOpInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

class DLC_Op<string mnemonic, list<Trait> traits = []>
    : Op<DLC_Dialect, mnemonic, traits>;

// The trait of ops that state their vector-Jacobian product (ir/gradients/).
def DLC_Differentiable : DeclareOpInterfaceMethods<DLC_GradientOpInterface>;
def DLC_PartlyDifferentiable : DeclareOpInterfaceMethods<
    DLC_GradientOpInterface, ["hasGradientRule"]>;

// What kind of work an op is, which fusion, its cost model and codegen
// read from the op instead of lists of ops (ir/Dialect.h, mlir::dlc::
// OpProperty). An op has at most one of the first five (PropertiesTest).
class DLC_Property<string name> : NativeOpTrait<name> {
  let cppNamespace = "::mlir::dlc::OpProperty";
}
// Each result element from operand elements at the same (broadcast) index.
def DLC_Pointwise : DLC_Property<"Pointwise">;
// Each result element is one operand element (or a fill) moved: transpose,
// slice, gather...
def DLC_Movement : DLC_Property<"Movement">;
// Each result element folds a line or window of its operand: reductions,
// scans, top-k, pooling.
def DLC_Reducing : DLC_Property<"Reducing">;
// Writes at indices an operand holds (scatter, max-pool gradients).
def DLC_Scatter : DLC_Property<"Scatter">;
// Runs as a library call or a hand-tiled kernel of its own, never fused.
def DLC_LibraryCall : DLC_Property<"LibraryCall">;
// Costs more to recompute per use than to read back (transcendental math,
// random numbers): fusion does not duplicate it.
def DLC_Expensive : DLC_Property<"Expensive">;

// The values of dlc.global symbols, read by dlc.global_load.
def DLC_GlobalState : Resource<"::mlir::dlc::GlobalStateResource">;

//===----------------------------------------------------------------------===//
// Constants and parameters
//===----------------------------------------------------------------------===//

def DLC_ConstantOp : DLC_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor";
  let description = [{
    Example:
    ```mlir
    %0 = dlc.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs DLC_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def DLC_GlobalOp : DLC_Op<"global", [Symbol, HasParent<"ModuleOp">]> {
  let summary = "a named model parameter or state tensor";
  let description = [{
    A module-level tensor with a name (the ONNX initializer's name) and an
    optional initial value. Functions read it with `dlc.global_load`; the
    training passes turn globals into the parameters and state of
    `train_step`. Large initial values are `dense_resource` blobs.

    Example:
    ```mlir
    dlc.global @"fc.weight" : tensor<4x8xf32> = dense<0.5> : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<DLC_Tensor>:$type,
                       OptionalAttr<ElementsAttr>:$initial_value);
  let assemblyFormat = "$sym_name `:` $type (`=` $initial_value^)? attr-dict";
  let hasVerifier = 1;
}

def DLC_GlobalLoadOp : DLC_Op<"global_load",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead<DLC_GlobalState>]>]> {
  let summary = "reads the current value of a dlc.global";
  let description = [{
    Example:
    ```mlir
    %w = dlc.global_load @"fc.weight" : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$global);
  let results = (outs DLC_Tensor:$result);
  let assemblyFormat = "$global attr-dict `:` type($result)";
}

def DLC_GlobalStoreOp : DLC_Op<"global_store",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemWrite<DLC_GlobalState>]>]> {
  let summary = "sets the value of a dlc.global";
  let description = [{
    State that a function updates (BatchNorm's running statistics, the
    random seed) is written back with this op; the functionalize pass turns
    each store into a function result.

    Example:
    ```mlir
    dlc.global_store @"bn.running_mean", %m : tensor<16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$global, DLC_Tensor:$value);
  let assemblyFormat = "$global `,` $value attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

class DLC_UnaryOp<string mnemonic, Type type, string semantics,
                  string elementType = "f32",
                  list<Trait> traits = [DLC_Differentiable]>
    : DLC_Op<mnemonic,
             traits # [Pure, Elementwise, DLC_Pointwise,
                       SameOperandsAndResultType]> {
  let summary = "elementwise " # mnemonic;
  let description = semantics # [{

    Example:
    ```mlir
    %y = dlc.}] # mnemonic # [{ %x : tensor<2x3x}] # elementType # [{>
    ```
  }];
  let arguments = (ins type:$input);
  let results = (outs type:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def DLC_NegOp : DLC_UnaryOp<"neg", DLC_SignedTensor, "Negation, `-x`.">;
def DLC_AbsOp : DLC_UnaryOp<"abs", DLC_NumericTensor, "Absolute value.">;
def DLC_SignOp : DLC_UnaryOp<"sign", DLC_NumericTensor,
    "-1, 0 or 1 by the sign of `x`; NaN stays NaN.">;
def DLC_ExpOp : DLC_UnaryOp<"exp", DLC_FloatTensor, "Natural exponential.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_LogOp : DLC_UnaryOp<"log", DLC_FloatTensor, "Natural logarithm.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_SqrtOp : DLC_UnaryOp<"sqrt", DLC_FloatTensor, "Square root.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_RsqrtOp : DLC_UnaryOp<"rsqrt", DLC_FloatTensor, "`1 / sqrt(x)`.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_ReciprocalOp : DLC_UnaryOp<"reciprocal", DLC_FloatTensor, "`1 / x`.">;
def DLC_CeilOp : DLC_UnaryOp<"ceil", DLC_FloatTensor, "Rounds up.">;
def DLC_FloorOp : DLC_UnaryOp<"floor", DLC_FloatTensor, "Rounds down.">;
def DLC_RoundOp : DLC_UnaryOp<"round", DLC_FloatTensor,
    "Rounds to the nearest integer, ties to even (ONNX Round).">;
def DLC_ErfOp : DLC_UnaryOp<"erf", DLC_FloatTensor, "The error function.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_SinOp : DLC_UnaryOp<"sin", DLC_FloatTensor, "Sine.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_CosOp : DLC_UnaryOp<"cos", DLC_FloatTensor, "Cosine.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_TanhOp : DLC_UnaryOp<"tanh", DLC_FloatTensor, "Hyperbolic tangent.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_TanOp : DLC_UnaryOp<"tan", DLC_FloatTensor, "Tangent.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_AsinOp : DLC_UnaryOp<"asin", DLC_FloatTensor, "Inverse sine.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_AcosOp : DLC_UnaryOp<"acos", DLC_FloatTensor, "Inverse cosine.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_AtanOp : DLC_UnaryOp<"atan", DLC_FloatTensor, "Inverse tangent.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_SinhOp : DLC_UnaryOp<"sinh", DLC_FloatTensor, "Hyperbolic sine.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_CoshOp : DLC_UnaryOp<"cosh", DLC_FloatTensor, "Hyperbolic cosine.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_AsinhOp : DLC_UnaryOp<"asinh", DLC_FloatTensor, "Inverse hyperbolic sine.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_AcoshOp : DLC_UnaryOp<"acosh", DLC_FloatTensor, "Inverse hyperbolic cosine.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_AtanhOp : DLC_UnaryOp<"atanh", DLC_FloatTensor, "Inverse hyperbolic tangent.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_SigmoidOp : DLC_UnaryOp<"sigmoid", DLC_FloatTensor,
    "The logistic function `1 / (1 + exp(-x))`.", "f32",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_NotOp : DLC_UnaryOp<"not", DLC_BoolTensor, "Logical negation.", "i1",
                           []>;

//===----------------------------------------------------------------------===//
// Elementwise binary ops (NumPy broadcasting)
//===----------------------------------------------------------------------===//

class DLC_BinaryOp<string mnemonic, Type type, string semantics,
                   list<Trait> traits = [], string elementType = "f32">
    : DLC_Op<mnemonic, traits # [Pure, DLC_Pointwise,
                                 SameOperandsAndResultElementType,
                                 InferTypeOpAdaptor]> {
  let summary = "elementwise " # mnemonic # " with broadcasting";
  let description = semantics # [{ Operands broadcast with NumPy's rules.

    Example:
    ```mlir
    %z = dlc.}] # mnemonic # [{ %x, %y : tensor<2x3x}] # elementType #
      [{>, tensor<3x}] # elementType # [{> -> tensor<2x3x}] # elementType # [{>
    ```
  }];
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

// Arithmetic with an identity operand (x + -0, x - 0, x * 1, x / 1) folds to
// the other operand when that has the result's type: exact in IEEE
// arithmetic, including signed zeros (x + +0 is not: -0 + +0 is +0).
class DLC_ArithmeticOp<string mnemonic, string semantics,
                       list<Trait> traits = []>
    : DLC_BinaryOp<mnemonic, DLC_NumericTensor, semantics,
                   traits # [DLC_Differentiable]> {
  let hasFolder = 1;
}

def DLC_AddOp : DLC_ArithmeticOp<"add", "`x + y`.", [Commutative]>;
def DLC_SubOp : DLC_ArithmeticOp<"sub", "`x - y`.">;
def DLC_MulOp : DLC_ArithmeticOp<"mul", "`x * y`.", [Commutative]>;
def DLC_DivOp : DLC_ArithmeticOp<"div",
    "`x / y`; integer division truncates toward zero.">;
def DLC_RemOp : DLC_BinaryOp<"rem", DLC_NumericTensor,
    "Remainder with the sign of the dividend (C's `fmod` and `%`).",
    [DLC_Differentiable]>;
def DLC_PowOp : DLC_BinaryOp<"pow", DLC_NumericTensor, "`x ** y`.",
    [DLC_Differentiable, DLC_Expensive]>;
def DLC_MaxOp : DLC_BinaryOp<"max", DLC_NumericTensor,
    "The larger operand; NaN if either is NaN.",
    [Commutative, DLC_Differentiable]>;
def DLC_MinOp : DLC_BinaryOp<"min", DLC_NumericTensor,
    "The smaller operand; NaN if either is NaN.",
    [Commutative, DLC_Differentiable]>;
def DLC_AndOp : DLC_BinaryOp<"and", DLC_BoolTensor, "Logical and.",
                             [Commutative], "i1">;
def DLC_OrOp : DLC_BinaryOp<"or", DLC_BoolTensor, "Logical or.",
                            [Commutative], "i1">;
def DLC_XorOp : DLC_BinaryOp<"xor", DLC_BoolTensor, "Logical exclusive or.",
                             [Commutative], "i1">;

def DLC_CompareOp : DLC_Op<"compare",
    [Pure, DLC_Pointwise, AllElementTypesMatch<["lhs", "rhs"]>, InferTypeOpAdaptor]> {
  let summary = "elementwise comparison with broadcasting";
  let description = [{
    Compares with the predicate (`eq`, `ne`, `lt`, `le`, `gt`, `ge`) and
    yields `i1`. Any comparison with NaN is false except `ne`.

    Example:
    ```mlir
    %m = dlc.compare lt, %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
    ```
  }];
  let arguments = (ins DLC_CmpPredicate:$predicate, DLC_Tensor:$lhs, DLC_Tensor:$rhs);
  let results = (outs DLC_BoolTensor:$result);
  let assemblyFormat = [{
    $predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

def DLC_SelectOp : DLC_Op<"select",
    [DLC_Differentiable, Pure, DLC_Pointwise, InferTypeOpAdaptor,
    AllElementTypesMatch<["on_true", "on_false", "result"]>]> {
  let summary = "elementwise choice with broadcasting";
  let description = [{
    `condition ? on_true : on_false`, the three operands broadcast together.

    Example:
    ```mlir
    %r = dlc.select %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins DLC_BoolTensor:$condition, DLC_Tensor:$on_true,
                       DLC_Tensor:$on_false);
  let results = (outs DLC_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` type($condition) `,`
    type($on_true) `,` type($on_false) `->` type($result)
  }];
}

def DLC_CastOp : DLC_Op<"cast",
    [DLC_Differentiable, Pure, DLC_Pointwise, SameOperandsAndResultShape]> {
  let summary = "elementwise element type conversion";
  let description = [{
    ONNX Cast semantics: floats to integers truncate toward zero, anything to
    `i1` is `x != 0`, floats round to nearest even when narrowed.

    Example:
    ```mlir
    %i = dlc.cast %x : tensor<4xf32> to tensor<4xi64>
    ```
  }];
  let arguments = (ins DLC_Tensor:$input);
  let results = (outs DLC_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

def DLC_ReshapeOp : DLC_Op<"reshape",
    [DLC_Differentiable, Pure, SameOperandsAndResultElementType]> {
  let summary = "reinterprets the shape, keeping row-major element order";
  let description = [{
    Example:
    ```mlir
    %y = dlc.reshape %x : tensor<2x3xf32> to tensor<6xf32>
    ```
  }];
  let arguments = (ins DLC_Tensor:$input);
  let results = (outs DLC_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def DLC_TransposeOp : DLC_Op<"transpose",
    [DLC_Differentiable, Pure, DLC_Movement, InferTypeOpAdaptor]> {
  let summary = "permutes dimensions";
  let description = [{
    Result dimension `i` is input dimension `permutation[i]`.

    Example:
    ```mlir
    %y = dlc.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins DLC_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs DLC_Tensor:$result);
  let assemblyFormat = [{
    $input $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def DLC_BroadcastToOp : DLC_Op<"broadcast_to",
    [DLC_Differentiable, Pure, DLC_Movement, SameOperandsAndResultElementType]> {
  let summary = "broadcasts to a larger shape with NumPy's rules";
  let description = [{
    Example:
    ```mlir
    %y = dlc.broadcast_to %x : tensor<3xf32> to tensor<2x3xf32>
    ```
  }];
  let arguments = (ins DLC_Tensor:$input);
  let results = (outs DLC_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def DLC_ConcatOp : DLC_Op<"concat",
    [DLC_Differentiable, Pure, DLC_Movement,
     SameOperandsAndResultElementType, InferTypeOpAdaptor]> {
  let summary = "joins tensors along an axis";
  let description = [{
    Example:
    ```mlir
    %y = dlc.concat %a, %b {axis = 0 : i64} : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<3x3xf32>
    ```
  }];
  let arguments = (ins Variadic<DLC_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs DLC_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($result)";
}

def DLC_SliceOp : DLC_Op<"slice",
    [DLC_Differentiable, Pure, DLC_Movement, SameOperandsAndResultElementType,
                                   InferTypeOpAdaptor]> {
  let summary = "a strided window of a tensor";
  let description = [{
    Result element `i` along dimension `d` is input element
    `offsets[d] + i * strides[d]`; strides may be negative (a reversal) but
    not zero, and every element read must be inside the input.

    Example:
    ```mlir
    %y = dlc.slice %x offsets [0, 3] sizes [2, 4] strides [1, -1]
        : tensor<2x8xf32> -> tensor<2x4xf32>
    ```
  }];
  let arguments = (ins DLC_Tensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$strides);
  let results = (outs DLC_Tensor:$result);
  let assemblyFormat = [{
    $input `offsets` $offsets `sizes` $sizes `strides` $strides attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def DLC_PadOp : DLC_Op<"pad",
    [DLC_Differentiable, Pure, DLC_Movement, InferTypeOpAdaptor]> {
  let summary = "pads each dimension at both ends";
  let description = [{
    Modes follow ONNX Pad: `constant` fills with `value` (a scalar tensor,
    zero when absent), `reflect` mirrors without repeating the edge and
    `edge` repeats the edge element. Padding amounts are non-negative.

    Example:
    ```mlir
    %y = dlc.pad %x low [0, 1] high [0, 2] mode constant
        : tensor<2x3xf32> -> tensor<2x6xf32>
    ```
  }];
  let arguments = (ins DLC_Tensor:$input, Optional<DLC_Tensor>:$value,
                       DenseI64ArrayAttr:$low, DenseI64ArrayAttr:$high,
                       DLC_PadMode:$mode);
  let results = (outs DLC_Tensor:$result);
  let assemblyFormat = [{
    $input (`value` $value^ `:` type($value))? `low` $low `high` $high
    `mode` $mode attr-dict `:` type($input) `->` type($result)
  }];
}

def DLC_GatherOp : DLC_Op<"gather",
    [DLC_Differentiable, Pure, DLC_Movement, InferTypeOpAdaptor]> {
  let summary = "takes slices along an axis at the given indices (ONNX Gather)";
  let description = [{
    The result shape is `data[:axis] + indices + data[axis+1:]`. Negative
    indices count from the end; an index outside `[-n, n)` is an error.

    Example:
    ```mlir
    %e = dlc.gather %table[%ids] {axis = 0 : i64}
        : tensor<100x16xf32>, tensor<4x8xi64> -> tensor<4x8x16xf32>
    ```
  }];
  let arguments = (ins DLC_Tensor:$data, DLC_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs DLC_Tensor:$result);
  let assemblyFormat = [{
    $data `[` $indices `]` attr-dict `:` type($data) `,` type($indices) `->` type($result)
  }];
}

def DLC_GatherElementsOp : DLC_Op<"gather_elements",
    [DLC_Differentiable, Pure, DLC_Movement, InferTypeOpAdaptor]> {
  let summary = "elementwise gather along an axis (ONNX GatherElements)";
  let description = [{
    `result[i][j]... = data[...][indices[i][j]...][...]` with the index
    replacing the coordinate on `axis`; the result has the shape of `indices`.

    Example:
    ```mlir
    %y = dlc.gather_elements %x[%idx] {axis = 1 : i64}
        : tensor<2x3xf32>, tensor<2x2xi64> -> tensor<2x2xf32>
    ```
  }];
  let arguments = (ins DLC_Tensor:$data, DLC_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs DLC_Tensor:$result);
  let assemblyFormat = [{
    $data `[` $indices `]` attr-dict `:` type($data) `,` type($indices) `->` type($result)
  }];
}

def DLC_ScatterElementsOp : DLC_Op<"scatter_elements",
    [DLC_PartlyDifferentiable, Pure, DLC_Scatter, AllTypesMatch<["data", "result"]>,
     AllElementTypesMatch<["data", "updates"]>]> {
  let summary = "elementwise scatter along an axis (ONNX ScatterElements)";
  let description = [{
    A copy of `data` where each `updates` element is combined into the
    position `indices` selects on `axis` (`none` overwrites; `add`, `mul`,
    `max`, `min` reduce). `indices` and `updates` have the same shape.

    Example:
    ```mlir
    %y = dlc.scatter_elements %x[%idx], %u {axis = 1 : i64} reduction add
        : tensor<2x3xf32>, tensor<2x2xi64>, tensor<2x2xf32>
    ```
  }];
  let arguments = (ins DLC_Tensor:$data, DLC_IndexTensor:$indices,
                       DLC_Tensor:$updates, I64Attr:$axis,
                       DLC_ScatterReduction:$reduction);
  let results = (outs DLC_Tensor:$result);
  let assemblyFormat = [{
    $data `[` $indices `]` `,` $updates attr-dict `reduction` $reduction `:`
    type($data) `,` type($indices) `,` type($updates)
  }];
  let hasVerifier = 1;
}

def DLC_SegmentSumOp : DLC_Op<"segment_sum",
    [Pure, DLC_Movement, AllElementTypesMatch<["data", "result"]>]> {
  let summary = "sums of the rows of data that share a segment, in order";
  let description = [{
    For `data` `[N, ...]` and `segments` `[N]`: `result[v, ...]` (`[V, ...]`)
    is the sum of the rows `data[t, ...]` whose `segments[t]` is `v`, added
    in increasing `t` (from 0; a segment id outside [0, V) drops its row).
    The kernels find a segment's rows without walking all N: `order` must
    be the stable sorting permutation of `segments` (`order[p]` the
    position of the p-th smallest id, equal ids in increasing position) and
    `starts[v]` (`[V]`) the first p whose id is v (any value >= N for a
    segment without rows); they add `data[order[p]]` from p = `starts[v]`
    while the id is v, which is the same order. The evaluator reads neither.
    dlc-sort-scatters forms it from the scatter-add of an embedding's
    gradient for the GPU; it has no gradient rule (it exists after autodiff
    only).

    Example:
    ```mlir
    %g = dlc.segment_sum %rows[%ids, %order, %starts]
        : tensor<8x4xf32>, tensor<8xi64>, tensor<8xi64>, tensor<5xi64>
          -> tensor<5x4xf32>
    ```
  }];
  let arguments = (ins DLC_FloatTensor:$data, DLC_IndexTensor:$segments,
                       DLC_IndexTensor:$order, DLC_IndexTensor:$starts);
  let results = (outs DLC_FloatTensor:$result);
  let assemblyFormat = [{
    $data `[` $segments `,` $order `,` $starts `]` attr-dict `:`
    type($data) `,` type($segments) `,` type($order) `,` type($starts) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and scans
//===----------------------------------------------------------------------===//

class DLC_ReduceOp<string mnemonic, string semantics>
    : DLC_Op<mnemonic, [DLC_Differentiable, Pure, DLC_Reducing,
                        SameOperandsAndResultElementType,
                        InferTypeOpAdaptor]> {
  let summary = semantics # " over the given axes";
  let description = [{
    `axes` are sorted, unique and in range; an empty list reduces nothing.
    With `keep_dims` the reduced dimensions stay with size 1. Floating
    reductions accumulate in float64 in the evaluator.

    Example:
    ```mlir
    %s = dlc.}] # mnemonic # [{ %x axes [1] keep_dims : tensor<2x3xf32> -> tensor<2x1xf32>
    ```
  }];
  let arguments = (ins DLC_NumericTensor:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keep_dims);
  let results = (outs DLC_NumericTensor:$result);
  let assemblyFormat = [{
    $input `axes` $axes (`keep_dims` $keep_dims^)? attr-dict `:`
    type($input) `->` type($result)
  }];
}

def DLC_ReduceSumOp : DLC_ReduceOp<"reduce_sum", "sum">;
def DLC_ReduceProdOp : DLC_ReduceOp<"reduce_prod", "product">;
def DLC_ReduceMaxOp : DLC_ReduceOp<"reduce_max", "maximum (NaN propagates)">;
def DLC_ReduceMinOp : DLC_ReduceOp<"reduce_min", "minimum (NaN propagates)">;

class DLC_ArgReduceOp<string mnemonic, string which>
    : DLC_Op<mnemonic, [Pure, DLC_Reducing, InferTypeOpAdaptor]> {
  let summary = "index of the " # which # " along an axis";
  let description = [{
    Ties pick the first index, or the last with `select_last_index`.

    Example:
    ```mlir
    %i = dlc.}] # mnemonic # [{ %x {axis = 1 : i64} : tensor<2x3xf32> -> tensor<2xi64>
    ```
  }];
  let arguments = (ins DLC_NumericTensor:$input, I64Attr:$axis,
                       UnitAttr:$keep_dims, UnitAttr:$select_last_index);
  let results = (outs DLC_I64Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def DLC_ArgMaxOp : DLC_ArgReduceOp<"argmax", "largest element">;
def DLC_ArgMinOp : DLC_ArgReduceOp<"argmin", "smallest element">;

def DLC_CumSumOp : DLC_Op<"cumsum",
    [DLC_Differentiable, Pure, DLC_Reducing, SameOperandsAndResultType]> {
  let summary = "cumulative sum along an axis";
  let description = [{
    `exclusive` leaves out the element itself; `reverse` sums from the end.

    Example:
    ```mlir
    %y = dlc.cumsum %x {axis = 0 : i64} : tensor<5xf32>
    ```
  }];
  let arguments = (ins DLC_NumericTensor:$input, I64Attr:$axis,
                       UnitAttr:$exclusive, UnitAttr:$reverse);
  let results = (outs DLC_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Sorting
//===----------------------------------------------------------------------===//

def DLC_TopKOp : DLC_Op<"top_k",
    [DLC_Differentiable, Pure, DLC_Reducing, InferTypeOpAdaptor]> {
  let summary = "the k largest or smallest elements along an axis";
  let description = [{
    ONNX TopK: `values` holds the `k` largest elements of each line along
    `axis` (the smallest without `largest`) and `indices` their positions
    in `input`; both have the input's shape with dimension `axis` set to
    `k` (`0 <= k <= dim`). The order is a total one: NaN counts as larger
    than every number (so it comes first with `largest` and last without),
    and equal elements are ordered by position, the lower index first.
    With `sorted` the elements are in that order (descending with
    `largest`); without it ONNX leaves the order unspecified, and dlc
    produces the same sorted order, so `sorted` changes no result.

    Example:
    ```mlir
    %v, %i = dlc.top_k %x {axis = 1 : i64, k = 2 : i64, largest, sorted}
        : tensor<3x4xf32> -> tensor<3x2xf32>, tensor<3x2xi64>
    ```
  }];
  let arguments = (ins DLC_NumericTensor:$input, I64Attr:$k, I64Attr:$axis,
                       UnitAttr:$largest, UnitAttr:$sorted);
  let results = (outs DLC_NumericTensor:$values, DLC_I64Tensor:$indices);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($values) `,` type($indices)
  }];
}

//===----------------------------------------------------------------------===//
// Linear algebra, convolution and pooling
//===----------------------------------------------------------------------===//

def DLC_MatmulOp : DLC_Op<"matmul",
    [DLC_Differentiable, Pure, DLC_LibraryCall,
     SameOperandsAndResultElementType, InferTypeOpAdaptor]> {
  let summary = "batched matrix product with broadcast batch dimensions";
  let description = [{
    `lhs` is `[..., M, K]`, `rhs` `[..., K, N]` (both rank 2 or more); the
    batch dimensions broadcast with NumPy's rules. Floating products
    accumulate in float64 in the evaluator.

    Example:
    ```mlir
    %y = dlc.matmul %a, %b : tensor<8x2x3xf32>, tensor<3x4xf32> -> tensor<8x2x4xf32>
    ```
  }];
  let arguments = (ins DLC_NumericTensor:$lhs, DLC_NumericTensor:$rhs);
  let results = (outs DLC_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

def DLC_ConvOp : DLC_Op<"conv",
    [DLC_Differentiable, Pure, DLC_LibraryCall,
     SameOperandsAndResultElementType, InferTypeOpAdaptor]> {
  let summary = "N-d grouped convolution (cross-correlation)";
  let description = [{
    `input` is `[N, C, spatial...]`, `filter` `[O, C / groups, kernel...]`.
    Per spatial dimension: the input is padded by `pad_low`/`pad_high` and
    correlated with the filter dilated by `dilation` at steps of `stride`.
    A transposed convolution is dlc.conv_grad_input.

    With `channels_last` the channels are the innermost dimension instead:
    `input` is `[N, spatial..., C]`, `filter` `[O, kernel..., C / groups]`
    and the result `[N, output..., O]` (NHWC and OHWI for 2-D), the
    layout tensor-core convolutions read without a transpose
    (dlc-channels-last). The arithmetic and its order are the same.

    Example:
    ```mlir
    %y = dlc.conv %x, %w stride [1, 1] pad_low [1, 1] pad_high [1, 1]
        dilation [1, 1] groups 1
        : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32> -> tensor<1x16x8x8xf32>
    %z = dlc.conv %u, %v channels_last stride [1, 1] pad_low [1, 1]
        pad_high [1, 1] dilation [1, 1] groups 1
        : tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32> -> tensor<1x8x8x16xf32>
    ```
  }];
  let arguments = (ins DLC_FloatTensor:$input, DLC_FloatTensor:$filter,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$pad_low,
                       DenseI64ArrayAttr:$pad_high, DenseI64ArrayAttr:$dilation,
                       I64Attr:$groups, UnitAttr:$channels_last);
  let results = (outs DLC_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $filter (`channels_last` $channels_last^)? `stride` $stride
    `pad_low` $pad_low `pad_high` $pad_high `dilation` $dilation
    `groups` $groups attr-dict `:`
    type($input) `,` type($filter) `->` type($result)
  }];
}

class DLC_PoolOp<string mnemonic, string semantics>
    : DLC_Op<mnemonic, [DLC_Differentiable, Pure, DLC_Reducing,
                        SameOperandsAndResultElementType,
                        InferTypeOpAdaptor]> {
  let summary = semantics # " over sliding windows of the spatial dimensions";
  let description = [{
    `input` is `[N, C, spatial...]`; windows, strides, dilations and padding
    are per spatial dimension. Padding never wins a maximum and adds zero to
    a sum (averages divide by a count the importer computes).

    Example:
    ```mlir
    %y = dlc.}] # mnemonic # [{ %x window [2, 2] stride [2, 2] pad_low [0, 0]
        pad_high [0, 0] dilation [1, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
    ```
  }];
  let arguments = (ins DLC_NumericTensor:$input, DenseI64ArrayAttr:$window,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$pad_low,
                       DenseI64ArrayAttr:$pad_high, DenseI64ArrayAttr:$dilation);
  let results = (outs DLC_NumericTensor:$result);
  let assemblyFormat = [{
    $input `window` $window `stride` $stride `pad_low` $pad_low `pad_high`
    $pad_high `dilation` $dilation attr-dict `:` type($input) `->` type($result)
  }];
}

def DLC_MaxPoolOp : DLC_PoolOp<"max_pool", "maximum">;
def DLC_SumPoolOp : DLC_PoolOp<"sum_pool", "sum">;

//===----------------------------------------------------------------------===//
// Randomness
//===----------------------------------------------------------------------===//

def DLC_DropoutOp : DLC_Op<"dropout",
    [DLC_Differentiable, Pure, DLC_Pointwise, DLC_Expensive,
    AllTypesMatch<["input", "output"]>]> {
  let summary = "training-mode dropout";
  let description = [{
    Zeroes each element with probability `ratio` and scales the others by
    `1 / (1 - ratio)`; also returns the keep mask. The mask is a pure
    function of `seed` (a scalar), `stream` (which tells apart the dropouts
    of one program) and the element's counter index, `offset` (a scalar,
    0 when absent) plus its row-major index: the counter-based
    Philox4x32-10 generator with key `seed` and counter
    `(index low, index high, stream, 0)` gives a 32-bit word `w`, and the
    element is kept when `w * 2^-32 >= ratio`. Any backend therefore draws
    the same mask, and a training program threads a new seed through each
    step. A data-parallel rank's `offset` is the counter its rows'
    elements start at in one process's draw over the global batch
    (dlc-data-parallel: rank * the elements of `input`), so that the ranks
    draw the masks one process draws. Inference-mode dropout is imported
    as the identity.

    Example:
    ```mlir
    %y, %mask = dlc.dropout %x, %seed {ratio = 0.1 : f64, stream = 0 : i64}
        : tensor<4xf32>, tensor<i64> -> tensor<4xi1>
    %z, %keep = dlc.dropout %x, %seed offset %o
        {ratio = 0.1 : f64, stream = 1 : i64}
        : tensor<4xf32>, tensor<i64>, tensor<i64> -> tensor<4xi1>
    ```
  }];
  let arguments = (ins DLC_FloatTensor:$input, DLC_TensorOf<[I64]>:$seed,
                       Optional<DLC_TensorOf<[I64]>>:$offset,
                       F64Attr:$ratio, I64Attr:$stream);
  let results = (outs DLC_FloatTensor:$output, DLC_BoolTensor:$mask);
  let assemblyFormat = [{
    $input `,` $seed (`offset` $offset^)? attr-dict `:` type($input) `,`
    type($seed) (`,` type($offset)^)? `->` type($mask)
  }];
  let hasVerifier = 1;
}

def DLC_RandomUniformOp : DLC_Op<"random_uniform",
    [Pure, DLC_Pointwise, DLC_Expensive]> {
  let summary = "uniform random numbers in [0, 1] drawn from Philox";
  let description = [{
    Element i (row-major) is `w * 2^-32` in [0, 1), computed in float64 and
    rounded to the result type (through float32 for bfloat16 and float16;
    the rounding may give 1), where `w` is the first word Philox4x32-10 gives
    for key `seed` and counter `(c low, c high, stream, 0)` with
    c = `offset` (a scalar, 0 when absent) + i: dlc.dropout's draw, so every
    backend gives the same numbers, and `stream` tells the draws of one
    program apart. Data augmentation (dlc-augment) draws each sample's
    flip, crop offset and angle from it; a data-parallel rank's `offset`
    skips the draws of the ranks before it. It has no gradient.

    Example:
    ```mlir
    %u = dlc.random_uniform %seed {stream = 2147483648 : i64}
        : tensor<i64> -> tensor<8xf32>
    %v = dlc.random_uniform %seed offset %o {stream = 2147483649 : i64}
        : tensor<i64>, tensor<i64> -> tensor<8xf32>
    ```
  }];
  let arguments = (ins DLC_TensorOf<[I64]>:$seed,
                       Optional<DLC_TensorOf<[I64]>>:$offset,
                       I64Attr:$stream);
  let results = (outs DLC_FloatTensor:$result);
  let assemblyFormat = [{
    $seed (`offset` $offset^)? attr-dict `:` type($seed)
    (`,` type($offset)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gradient ops: what the vector-Jacobian products of convolution and
// pooling need beyond the forward ops (each maps to one library call, as
// cuDNN's backward-data and backward-filter convolutions)
//===----------------------------------------------------------------------===//

def DLC_ConvGradInputOp : DLC_Op<"conv_grad_input",
    [DLC_Differentiable, Pure, DLC_LibraryCall, SameOperandsAndResultElementType]> {
  let summary = "the gradient of dlc.conv with respect to its input";
  let description = [{
    For `y = dlc.conv(x, w)` with these attributes (`channels_last` as
    dlc.conv's) and `x` of the result type, returns `dL/dx` given `dL/dy`
    (`grad_output`). It is also the transposed convolution (ONNX's
    ConvTranspose, cuDNN's backward-data, oneDNN's deconvolution): each
    `grad_output` element scatters the filter into the result at `stride`
    steps. Being linear in both operands, it is differentiable: its
    gradients are a dlc.conv and a dlc.conv_grad_filter.

    Example:
    ```mlir
    %dx = dlc.conv_grad_input %dy, %w stride [1, 1] pad_low [1, 1]
        pad_high [1, 1] dilation [1, 1] groups 1
        : tensor<1x16x8x8xf32>, tensor<16x3x3x3xf32> -> tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins DLC_FloatTensor:$grad_output, DLC_FloatTensor:$filter,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$pad_low,
                       DenseI64ArrayAttr:$pad_high, DenseI64ArrayAttr:$dilation,
                       I64Attr:$groups, UnitAttr:$channels_last);
  let results = (outs DLC_FloatTensor:$result);
  let assemblyFormat = [{
    $grad_output `,` $filter (`channels_last` $channels_last^)? `stride` $stride
    `pad_low` $pad_low `pad_high` $pad_high `dilation` $dilation `groups`
    $groups attr-dict `:`
    type($grad_output) `,` type($filter) `->` type($result)
  }];
  let hasVerifier = 1;
}

def DLC_ConvGradFilterOp : DLC_Op<"conv_grad_filter",
    [Pure, DLC_LibraryCall, SameOperandsAndResultElementType]> {
  let summary = "the gradient of dlc.conv with respect to its filter";
  let description = [{
    For `y = dlc.conv(x, w)` with these attributes (`channels_last` as
    dlc.conv's) and `w` of the result type,
    returns `dL/dw` given `x` and `dL/dy` (`grad_output`).

    Example:
    ```mlir
    %dw = dlc.conv_grad_filter %x, %dy stride [1, 1] pad_low [1, 1]
        pad_high [1, 1] dilation [1, 1] groups 1
        : tensor<1x3x8x8xf32>, tensor<1x16x8x8xf32> -> tensor<16x3x3x3xf32>
    ```
  }];
  let arguments = (ins DLC_FloatTensor:$input, DLC_FloatTensor:$grad_output,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$pad_low,
                       DenseI64ArrayAttr:$pad_high, DenseI64ArrayAttr:$dilation,
                       I64Attr:$groups, UnitAttr:$channels_last);
  let results = (outs DLC_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $grad_output (`channels_last` $channels_last^)? `stride` $stride
    `pad_low` $pad_low `pad_high` $pad_high `dilation` $dilation `groups`
    $groups attr-dict `:`
    type($input) `,` type($grad_output) `->` type($result)
  }];
  let hasVerifier = 1;
}

def DLC_MaxPoolGradOp : DLC_Op<"max_pool_grad",
    [Pure, DLC_Scatter, AllTypesMatch<["input", "result"]>,
     AllElementTypesMatch<["input", "grad_output"]>]> {
  let summary = "the gradient of dlc.max_pool with respect to its input";
  let description = [{
    For `y = dlc.max_pool(x)` with these attributes, routes each window's
    `grad_output` element to the window's maximum in `input`, the first
    one in row-major window order on ties (as PyTorch's CPU and CUDA
    kernels do), and sums what reaches each input element.

    Example:
    ```mlir
    %dx = dlc.max_pool_grad %x, %dy window [2, 2] stride [2, 2]
        pad_low [0, 0] pad_high [0, 0] dilation [1, 1]
        : tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins DLC_FloatTensor:$input, DLC_FloatTensor:$grad_output,
                       DenseI64ArrayAttr:$window, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$pad_low, DenseI64ArrayAttr:$pad_high,
                       DenseI64ArrayAttr:$dilation);
  let results = (outs DLC_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $grad_output `window` $window `stride` $stride `pad_low`
    $pad_low `pad_high` $pad_high `dilation` $dilation attr-dict `:`
    type($input) `,` type($grad_output) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def DLC_AttentionOp : DLC_Op<"attention",
    [DeclareOpInterfaceMethods<DLC_GradientOpInterface,
                               ["isDifferentiableOperand"]>, Pure,
     DLC_LibraryCall]> {
  let summary = "scaled dot-product attention with an optional additive bias";
  let description = [{
    `out = softmax(q @ k^T * scale + bias) @ v` over the last axis of the
    scores, for `q` `[..., Tq, D]`, `k` `[..., Tk, D]`, `v` `[..., Tk, Dv]`
    with the same leading dimensions, and `bias` (optional) broadcastable
    to `[..., Tq, Tk]`: a causal or padding mask is a bias of 0 and -inf.
    `lse` is each score row's log-sum-exp (`[..., Tq]`), which the
    gradient reuses instead of storing the `Tq x Tk` probabilities. A row
    whose scores are all -inf has NaN results, as the softmax it replaces.
    The dlc-fuse-attention pass forms it from the matmul, scale, mask and
    softmax that exporters emit; the bias carries no gradient (masks and
    constant position biases).

    Example:
    ```mlir
    %out, %lse = dlc.attention %q, %k, %v bias %mask scale 1.250000e-01
        : tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>,
          tensor<1x1x16x16xf32> -> tensor<2x4x16x64xf32>, tensor<2x4x16xf32>
    ```
  }];
  let arguments = (ins DLC_FloatTensor:$q, DLC_FloatTensor:$k,
                       DLC_FloatTensor:$v, Optional<DLC_FloatTensor>:$bias,
                       F64Attr:$scale);
  let results = (outs DLC_FloatTensor:$out, DLC_FloatTensor:$lse);
  let assemblyFormat = [{
    $q `,` $k `,` $v (`bias` $bias^)? `scale` $scale attr-dict `:`
    type($q) `,` type($k) `,` type($v) (`,` type($bias)^)? `->` type($out)
    `,` type($lse)
  }];
  let hasVerifier = 1;
}

def DLC_AttentionGradOp : DLC_Op<"attention_grad",
    [Pure, DLC_LibraryCall, AllTypesMatch<["q", "grad_q"]>, AllTypesMatch<["k", "grad_k"]>,
     AllTypesMatch<["v", "grad_v"]>, AllTypesMatch<["out", "grad_out"]>]> {
  let summary = "the gradient of dlc.attention with respect to q, k and v";
  let description = [{
    For `out, lse = dlc.attention(q, k, v, bias)` with the same scale,
    recomputes the probabilities `P = exp(q @ k^T * scale + bias - lse)`
    and returns, with `dP = grad_out @ v^T` and
    `dS = P * (dP - rowsum(grad_out * out))`:
    `grad_q = dS @ k * scale`, `grad_k = dS^T @ q * scale`,
    `grad_v = P^T @ grad_out`.

    Example:
    ```mlir
    %dq, %dk, %dv = dlc.attention_grad %q, %k, %v, %out, %lse, %dout
        scale 1.250000e-01
        : tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>,
          tensor<2x16x8xf32>, tensor<2x16xf32>, tensor<2x16x8xf32>
          -> tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>
    ```
  }];
  let arguments = (ins DLC_FloatTensor:$q, DLC_FloatTensor:$k,
                       DLC_FloatTensor:$v, DLC_FloatTensor:$out,
                       DLC_FloatTensor:$lse, DLC_FloatTensor:$grad_out,
                       Optional<DLC_FloatTensor>:$bias, F64Attr:$scale);
  let results = (outs DLC_FloatTensor:$grad_q, DLC_FloatTensor:$grad_k,
                      DLC_FloatTensor:$grad_v);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $out `,` $lse `,` $grad_out (`bias` $bias^)?
    `scale` $scale attr-dict `:` type($q) `,` type($k) `,` type($v) `,`
    type($out) `,` type($lse) `,` type($grad_out) (`,` type($bias)^)? `->`
    type($grad_q) `,` type($grad_k) `,` type($grad_v)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Cross-entropy
//===----------------------------------------------------------------------===//

def DLC_CrossEntropyOp : DLC_Op<"cross_entropy",
    [DeclareOpInterfaceMethods<DLC_GradientOpInterface,
                               ["isDifferentiableOperand"]>, Pure]> {
  let summary = "per-position softmax cross-entropy over the last axis";
  let description = [{
    For `logits` `[..., C]` and class indices `labels` `[...]`: `loss` is
    `lse - (1 - label_smoothing) * logits[label] - label_smoothing *
    mean(logits)` at each position whose label is not `ignore_index`, and
    0 where it is (torch.nn.functional.cross_entropy with
    reduction='none'); `lse` is each row's log-sum-exp. The gradient
    recomputes the probabilities from the logits and `lse`, so nothing but
    the logits and one value a row lives from the loss to its gradient.
    Labels outside the classes are clamped, as dlc.gather_elements does
    (the runners refuse such labels before a step).

    Example:
    ```mlir
    %loss, %lse = dlc.cross_entropy %logits, %labels ignore_index -100
        label_smoothing 0.000000e+00
        : tensor<8x1024x50304xf32>, tensor<8x1024xi64>
          -> tensor<8x1024xf32>, tensor<8x1024xf32>
    ```
  }];
  let arguments = (ins DLC_FloatTensor:$logits, DLC_IndexTensor:$labels,
                       I64Attr:$ignore_index, F64Attr:$label_smoothing);
  let results = (outs DLC_FloatTensor:$loss, DLC_FloatTensor:$lse);
  let assemblyFormat = [{
    $logits `,` $labels `ignore_index` $ignore_index `label_smoothing`
    $label_smoothing attr-dict `:` type($logits) `,` type($labels) `->`
    type($loss) `,` type($lse)
  }];
  let hasVerifier = 1;
}

def DLC_CrossEntropyGradOp : DLC_Op<"cross_entropy_grad",
    [Pure, AllTypesMatch<["logits", "grad_logits"]>,
     AllTypesMatch<["lse", "grad_loss"]>]> {
  let summary = "the gradient of dlc.cross_entropy with respect to its logits";
  let description = [{
    `grad_loss * (exp(logits - lse) - (1 - label_smoothing) *
    onehot(label) - label_smoothing / C)` at positions whose label is not
    `ignore_index`, 0 elsewhere, for `loss, lse = dlc.cross_entropy(logits,
    labels)` with the same attributes.

    Example:
    ```mlir
    %d = dlc.cross_entropy_grad %logits, %labels, %lse, %g ignore_index -100
        label_smoothing 0.000000e+00
        : tensor<4x10xf32>, tensor<4xi64>, tensor<4xf32>, tensor<4xf32>
          -> tensor<4x10xf32>
    ```
  }];
  let arguments = (ins DLC_FloatTensor:$logits, DLC_IndexTensor:$labels,
                       DLC_FloatTensor:$lse, DLC_FloatTensor:$grad_loss,
                       I64Attr:$ignore_index, F64Attr:$label_smoothing);
  let results = (outs DLC_FloatTensor:$grad_logits);
  let assemblyFormat = [{
    $logits `,` $labels `,` $lse `,` $grad_loss `ignore_index` $ignore_index
    `label_smoothing` $label_smoothing attr-dict `:` type($logits) `,`
    type($labels) `,` type($lse) `,` type($grad_loss) `->` type($grad_logits)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Collectives between data-parallel ranks
//===----------------------------------------------------------------------===//

def DLC_AllReduceOp : DLC_Op<"all_reduce",
    [Pure, InferTypeOpAdaptor, DLC_Differentiable]> {
  let summary = "each operand's sum or mean over the data-parallel ranks";
  let description = [{
    In a module partitioned for N data-parallel ranks (the module's
    `dlc.data_parallel` attribute), every rank runs the same function on
    its share of the batch; each result is the sum, or the mean, of its
    operand over the N ranks, the same on every rank. The operands travel
    together, as one bucket of a gradient all-reduce (`bucket` numbers the
    buckets in the order the ranks issue them). 16-bit values are summed
    in float32 and rounded once, as the host communicators do (NCCL's
    order and rounding are its own).
    dlc-data-parallel inserts it on the gradients, and a training import
    with synchronized BatchNorm (dlc-compile --sync-batchnorm) on the batch
    statistics, whose gradient is the same all-reduce of the results'
    gradients (each rank's gradient of the ranks' mean loss, as
    data-parallel training averages them); the evaluator runs the N ranks
    of such a module in lockstep.

    Example:
    ```mlir
    %gw, %gb = dlc.all_reduce mean bucket 0 %dw, %db
        : tensor<16x8xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Variadic<DLC_FloatTensor>:$inputs,
                       DLC_RankReduction:$reduction,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$bucket);
  let results = (outs Variadic<DLC_FloatTensor>:$results);
  let assemblyFormat = [{
    $reduction `bucket` $bucket $inputs attr-dict `:` type($inputs)
  }];
  let hasVerifier = 1;
}

def DLC_ReduceScatterOp : DLC_Op<"reduce_scatter",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "each operand's sum or mean over the ranks, one shard per rank";
  let description = [{
    ZeRO-1's gradient reduction (dlc-compile --zero 1): the ranks reduce
    their operands as dlc.all_reduce does, but rank r keeps only shard r of
    each: the operand flattened, padded with zeros to a multiple of
    `ranks` elements and cut into `ranks` equal blocks, so each result is a
    1-D tensor of ceil(elements / ranks) elements. The operands share one
    element type and travel together, as one bucket (`bucket` numbers the
    module's collectives in the order the ranks issue them).

    Example:
    ```mlir
    %sw, %sb = dlc.reduce_scatter mean ranks 2 bucket 0 %dw, %db
        : tensor<3x5xf32>, tensor<3xf32>
    // %sw : tensor<8xf32>, %sb : tensor<2xf32>
    ```
  }];
  let arguments = (ins Variadic<DLC_FloatTensor>:$inputs,
                       DLC_RankReduction:$reduction,
                       ConfinedAttr<I64Attr, [IntMinValue<2>]>:$ranks,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$bucket);
  let results = (outs Variadic<DLC_FloatTensor>:$results);
  let assemblyFormat = [{
    $reduction `ranks` $ranks `bucket` $bucket $inputs attr-dict `:`
    type($inputs)
  }];
  let hasVerifier = 1;
}

def DLC_AllGatherOp : DLC_Op<"all_gather", [Pure]> {
  let summary = "every rank's shard of each value, joined into the whole";
  let description = [{
    The inverse of dlc.reduce_scatter's sharding (ZeRO-1's parameter
    update): operand i is this rank's shard of result i, a 1-D tensor of
    ceil(elements / ranks) elements; each result is the ranks' shards in
    rank order, without the padding, in the result's shape, the same on
    every rank. The operands share one element type and travel together
    (`bucket` as for dlc.reduce_scatter).

    With `tensor`, the ranks are those of this rank's tensor-parallel
    group instead (dlc-tensor-parallel joins the slices of a value split
    along its outermost dimension: the rows of each rank's logits over its
    classes, or each rank's maximum of them); the shards then divide
    evenly, without padding.

    Example:
    ```mlir
    %w, %b = dlc.all_gather ranks 2 bucket 3 %sw, %sb
        : tensor<8xf32>, tensor<2xf32> -> tensor<3x5xf32>, tensor<3xf32>
    %m = dlc.all_gather ranks 2 tensor bucket 0 %local
        : tensor<32xf32> -> tensor<2x32xf32>
    ```
  }];
  let arguments = (ins Variadic<DLC_FloatTensor>:$inputs,
                       ConfinedAttr<I64Attr, [IntMinValue<2>]>:$ranks,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$bucket,
                       UnitAttr:$tensor);
  let results = (outs Variadic<DLC_FloatTensor>:$results);
  let assemblyFormat = [{
    `ranks` $ranks (`tensor` $tensor^)? `bucket` $bucket $inputs attr-dict `:`
    type($inputs) `->` type($results)
  }];
  let hasVerifier = 1;
}

def DLC_RankShardOp : DLC_Op<"rank_shard", [Pure, InferTypeOpAdaptor]> {
  let summary = "this rank's shard of a value every rank holds";
  let description = [{
    The block of `input` that rank r owns under ZeRO-1, without any
    communication: `input` flattened, padded with zeros to a multiple of
    `ranks` elements, and block r of `ranks` equal ones, a 1-D tensor of
    ceil(elements / ranks) elements (the shard dlc.reduce_scatter leaves of
    a gradient of the same shape). The optimizer updates a parameter's
    shard with it.

    With `tensor`, r is this rank's index in its tensor-parallel group
    instead (dlc-add-loss takes the first class of the rank's slice of the
    logits so, from a constant of every rank's), and `input` may hold
    integers.

    Example:
    ```mlir
    %s = dlc.rank_shard ranks 2 %w : tensor<3x5xf32>
    // %s : tensor<8xf32>
    %first = dlc.rank_shard ranks 2 tensor %firsts : tensor<2xi64>
    // %first : tensor<1xi64>
    ```
  }];
  let arguments = (ins DLC_Tensor:$input,
                       ConfinedAttr<I64Attr, [IntMinValue<2>]>:$ranks,
                       UnitAttr:$tensor);
  let results = (outs DLC_Tensor:$result);
  let assemblyFormat = [{
    `ranks` $ranks (`tensor` $tensor^)? $input attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Collectives between tensor-parallel ranks
//===----------------------------------------------------------------------===//

def DLC_TpCopyOp : DLC_Op<"tp_copy",
    [Pure, SameOperandsAndResultType, DLC_Differentiable]> {
  let summary = "a value every tensor-parallel rank holds, entering split work";
  let description = [{
    In a module partitioned for tensor parallelism (the module's
    `dlc.tensor_parallel` attribute), the identity: every rank of a tensor
    group holds the same `input`. It marks where a replicated value enters
    work the ranks split (a column-parallel matmul), so that its gradient,
    which each rank computes from its own part, is summed over the group:
    its gradient is dlc.tp_reduce of the result's. Megatron-LM's `f`.

    Example:
    ```mlir
    %x1 = dlc.tp_copy %x : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins DLC_FloatTensor:$input);
  let results = (outs DLC_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def DLC_TpReduceOp : DLC_Op<"tp_reduce",
    [Pure, SameOperandsAndResultType, DLC_Differentiable]> {
  let summary = "the sum over the tensor-parallel ranks of their partial sums";
  let description = [{
    Each rank of a tensor group holds a partial sum of the same value (a
    row-parallel matmul's, over its rows of the contraction); the result is
    their sum, the same on every rank of the group. 16-bit values are
    summed in float32 and rounded once, as dlc.all_reduce's are. Its
    gradient is dlc.tp_copy of the result's: every rank's partial sum adds
    to the result with weight one. Megatron-LM's `g`.

    Example:
    ```mlir
    %y = dlc.tp_reduce %partial : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins DLC_FloatTensor:$input);
  let results = (outs DLC_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def DLC_StopGradientOp : DLC_Op<"stop_gradient",
    [DeclareOpInterfaceMethods<DLC_GradientOpInterface,
                               ["isDifferentiableOperand"]>,
     Pure, SameOperandsAndResultType]> {
  let summary = "the identity, through which no gradient flows";
  let description = [{
    `input` itself; dlc-autodiff treats the result as a constant. A value
    whose effect on the loss cancels out needs no backward work: the shift
    of a log-sum-exp split over tensor-parallel ranks (any value near the
    maximum keeps exp from overflowing and leaves the result unchanged).
    dlc-decompose removes it.

    Example:
    ```mlir
    %shift = dlc.stop_gradient %max : tensor<8x1xf32>
    ```
  }];
  let arguments = (ins DLC_Tensor:$input);
  let results = (outs DLC_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def DLC_PpTransferOp : DLC_Op<"pp_transfer",
    [Pure, SameOperandsAndResultType]> {
  let summary = "a value one pipeline stage computes, for another stage";
  let description = [{
    In a module partitioned into pipeline stages (the module's
    `dlc.pipeline_stages`), `input` is computed by the rank of stage `from`,
    and the result, the same value, is held by the rank of stage `to` and
    every rank that holds `input`: a send on the one and a receive on the
    other, at this point of each stage's order (dlc-pipeline-schedule places it after the op computing
    the value and before every op of `to` reading it). On one device, the
    identity.

    Example:
    ```mlir
    %h1 = dlc.pp_transfer %h from 0 to 1 : tensor<2x16x32xf32>
    ```
  }];
  let arguments = (ins DLC_Tensor:$input, I64Attr:$from, I64Attr:$to);
  let results = (outs DLC_Tensor:$result);
  let assemblyFormat = "$input `from` $from `to` $to attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fusion: groups of ops that codegen turns into one kernel
//===----------------------------------------------------------------------===//

def DLC_FusionOp : DLC_Op<"fusion",
    [IsolatedFromAbove, RecursiveMemoryEffects, SingleBlock]> {
  let summary = "a group of ops that runs as one generated kernel";
  let description = [{
    The dlc-fuse pass groups elementwise, data-movement and reduction ops
    into fusions; codegen emits one kernel per fusion (C++ for the CPU,
    CUDA C++ for NVIDIA GPUs), so the values inside never reach memory.
    The body is isolated from above: it sees only its block arguments,
    which are the fusion's operands, and yields the fusion's results.
    Evaluating a fusion is evaluating its body.

    Example:
    ```mlir
    %y = dlc.fusion %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
      %s = dlc.add %a, %c : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
      %e = dlc.exp %s : tensor<4x8xf32>
      dlc.yield %e : tensor<4x8xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<DLC_Tensor>:$inputs);
  let results = (outs Variadic<DLC_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes,
                   "::mlir::ValueRange":$inputs)>
  ];
}

def DLC_YieldOp : DLC_Op<"yield",
    [Pure, Terminator, ReturnLike, HasParent<"FusionOp">]> {
  let summary = "returns a fusion's results from its body";
  let description = [{
    Example:
    ```mlir
    dlc.yield %e : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Variadic<DLC_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // DLC_OPS_TD
