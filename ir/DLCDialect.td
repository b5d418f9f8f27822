//===- DLCDialect.td - The dlc dialect and its type constraints -*- tablegen -*-===//
//
// dlc is one dialect on statically shaped ranked tensors (DESIGN.md, decision 4).
// ONNX names stay in the importer; ops here are small and orthogonal.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_DIALECT_TD
#define DLC_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def DLC_Dialect : Dialect {
  let name = "dlc";
  let cppNamespace = "::mlir::dlc";
  let summary = "Training compiler dialect for ONNX models";
  let description = [{
    Tensor-level operations on statically shaped tensors. Binary elementwise
    ops broadcast with NumPy's rules. Model parameters are module-level
    `dlc.global` symbols read with `dlc.global_load`.
  }];
  let hasConstantMaterializer = 1;
  // The discardable attributes the dialect defines are verified wherever
  // they appear: dlc.epilogue on ops, dlc.role, dlc.name, dlc.num_classes and
  // dlc.ignore_index on function arguments and results.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Adds the fallback folder that evaluates ops on constant operands.
    void registerConstantFolding();
  }];
}

//===----------------------------------------------------------------------===//
// Element and tensor type constraints
//===----------------------------------------------------------------------===//

def DLC_Int : AnyTypeOf<[I8, I16, I32, I64, UI8, UI16, UI32, UI64]>;
def DLC_Float : AnyTypeOf<[F16, BF16, F32, F64]>;
def DLC_Element : AnyTypeOf<[I1, DLC_Int, DLC_Float]>;

// Statically shaped tensors of at most 2^40 elements: the size bound keeps
// every shape computation in verifiers, folders and the evaluator far from
// int64 overflow, whatever the IR says.
class DLC_TensorOf<list<Type> allowed> : Type<
    And<[StaticShapeTensorOf<allowed>.predicate,
         CPred<"::mlir::dlc::hasSupportedSize("
               "::llvm::cast<::mlir::ShapedType>($_self))">]>,
    StaticShapeTensorOf<allowed>.summary # " of at most 2^40 elements",
    "::mlir::TensorType">;

def DLC_Tensor : DLC_TensorOf<[DLC_Element]>;
def DLC_FloatTensor : DLC_TensorOf<[DLC_Float]>;
def DLC_NumericTensor : DLC_TensorOf<[DLC_Int, DLC_Float]>;
def DLC_SignedTensor : DLC_TensorOf<[I8, I16, I32, I64, DLC_Float]>;
def DLC_BoolTensor : DLC_TensorOf<[I1]>;
def DLC_IndexTensor : DLC_TensorOf<[I32, I64]>;
def DLC_I64Tensor : DLC_TensorOf<[I64]>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def DLC_CmpPredicate : I32EnumAttr<"ComparePredicate", "comparison predicate", [
    I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
    I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
    I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::mlir::dlc";
}

def DLC_PadMode : I32EnumAttr<"PadMode", "padding mode", [
    I32EnumAttrCase<"constant", 0>, I32EnumAttrCase<"reflect", 1>,
    I32EnumAttrCase<"edge", 2>]> {
  let cppNamespace = "::mlir::dlc";
}

def DLC_ScatterReduction : I32EnumAttr<"ScatterReduction",
    "how scatter combines an update with the existing element", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"add", 1>,
    I32EnumAttrCase<"mul", 2>, I32EnumAttrCase<"max", 3>,
    I32EnumAttrCase<"min", 4>]> {
  let cppNamespace = "::mlir::dlc";
}

// What a function argument or result is (the `dlc.role` attribute, written
// as the case's name; ir/Roles.h names each).
def DLC_Role : I32EnumAttr<"Role", "what a function argument or result is", [
    I32EnumAttrCase<"param", 0>, I32EnumAttrCase<"state", 1>,
    I32EnumAttrCase<"optimizer_state", 2>, I32EnumAttrCase<"step", 3>,
    I32EnumAttrCase<"hyperparameter", 4>, I32EnumAttrCase<"weight_copy", 5>,
    I32EnumAttrCase<"loss_scale", 6>, I32EnumAttrCase<"input", 7>,
    I32EnumAttrCase<"label", 8>, I32EnumAttrCase<"output", 9>,
    I32EnumAttrCase<"loss", 10>, I32EnumAttrCase<"gradient", 11>,
    I32EnumAttrCase<"metric", 12>]> {
  let cppNamespace = "::mlir::dlc";
  // Only the enum and its string conversions: the attribute stays the
  // case's name, as readable in IR as the ONNX names beside it.
  let genSpecializedAttr = 0;
}

// Also the `dlc.epilogue` mark dlc-fuse puts on a library op (the case's
// name, bias or bias_relu), and dlc.plan.matmul's epilogue.
def DLC_MatmulEpilogue : I32EnumAttr<"MatmulEpilogue",
    "what a library matmul applies to its product as it stores it", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"bias", 1>,
    I32EnumAttrCase<"bias_relu", 2>]> {
  let cppNamespace = "::mlir::dlc";
}

// dlc.plan.conv's kind: which of a convolution's three products it is,
// named as cuDNN names them (the ConvStep's ConvKind).
def DLC_ConvKind : I32EnumAttr<"ConvKind",
    "which product of a convolution a library call computes", [
    I32EnumAttrCase<"forward", 0>, I32EnumAttrCase<"backward_data", 1>,
    I32EnumAttrCase<"backward_filter", 2>]> {
  let cppNamespace = "::mlir::dlc";
}

// dlc.plan.conv's engine slot (the ConvStep's ConvEngine): `auto` lets the
// runtime choose (the library where it takes the shape, dlc's direct loops
// otherwise); `library` (oneDNN, cuDNN) and `direct` are demands a session
// refuses to open without.
def DLC_ConvEngine : I32EnumAttr<"ConvEngine",
    "what runs a convolution", [
    I32EnumAttrCase<"automatic", 0, "auto">, I32EnumAttrCase<"library", 1>,
    I32EnumAttrCase<"direct", 2>]> {
  let cppNamespace = "::mlir::dlc";
}

// dlc.all_reduce's reduction over the ranks (the communicators'
// dlc_reduce_op_t).
def DLC_RankReduction : I32EnumAttr<"RankReduction",
    "how a collective combines the ranks' values", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>]> {
  let cppNamespace = "::mlir::dlc";
}

#endif // DLC_DIALECT_TD
