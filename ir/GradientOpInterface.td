//===- GradientOpInterface.td - Vector-Jacobian products -----*- tablegen -*-===//
//
// Each differentiable dlc op states its own vector-Jacobian product, so the
// autodiff pass (passes/training/Autodiff.cpp) never needs to know an op by
// name and a new op brings its gradient with it.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_GRADIENT_OP_INTERFACE_TD
#define DLC_GRADIENT_OP_INTERFACE_TD

include "mlir/IR/OpBase.td"

def DLC_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::mlir::dlc";
  let description = [{
    The reverse-mode derivative of an op: given the gradients of the loss
    with respect to the op's results, builds the gradients with respect to
    its operands. Gradients are only ever asked of floating-point operands
    and results; integer and boolean values (indices, shapes, masks) carry
    none.
  }];
  let methods = [
    InterfaceMethod<[{
        Whether a gradient flows to operand `index`. Float operands do by
        default; an op overrides this for float operands that only select
        or shape (a fill value of pad, for example, still does).
      }],
      "bool", "isDifferentiableOperand", (ins "unsigned":$index), "",
      [{
        return ::mlir::isa<::mlir::FloatType>(::mlir::getElementTypeOrSelf(
            $_op->getOperand(index).getType()));
      }]>,
    InterfaceMethod<[{
        Whether this instance has a gradient rule. An op whose rule covers
        only some attribute values (scatter with `mul`, say) returns false
        for the others, so the autodiff pass can list every such node
        before it builds anything.
      }],
      "bool", "hasGradientRule", (ins), "", [{ return true; }]>,
    InterfaceMethod<[{
        Builds the vector-Jacobian product at the builder's insertion point.
        `resultGrads` has one entry per result: the gradient of the loss
        with respect to it, or null where none flows (the rule must accept
        that for every result but one that has a gradient). Sets
        `operandGrads` (already sized to the operand count, all null) to
        one value per differentiable operand with exactly that operand's
        type, or leaves it null where the contribution is zero. The forward
        op's operands and results may be used: they dominate the
        insertion point.
      }],
      "::mlir::LogicalResult", "buildGradient",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultGrads,
           "::mlir::MutableArrayRef<::mlir::Value>":$operandGrads)>,
  ];
}

#endif // DLC_GRADIENT_OP_INTERFACE_TD
