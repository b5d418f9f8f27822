//===- Dialect.h - The dlc dialect ----------------------------------------===//
//
// Declares the dlc dialect, its enums and its operations (generated from
// DLCDialect.td, DLCOps.td and PlanOps.td).
//
//===----------------------------------------------------------------------===//
#ifndef DLC_IR_DIALECT_H
#define DLC_IR_DIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ir/RuntimeNames.h"
#include "ir/ShapeUtils.h"

#include <optional>

namespace mlir::dlc {
/// The memory effects' resource: the values of dlc.global symbols.
struct GlobalStateResource
    : public SideEffects::Resource::Base<GlobalStateResource> {
  StringRef getName() final { return "dlc.global_state"; }
};
} // namespace mlir::dlc

/// Op properties (DLCOps.td's DLC_Property): marker traits that fusion, its
/// cost model and codegen ask for with op->hasTrait<OpProperty::...>().
namespace mlir::dlc::OpProperty {
template <typename Op>
class Pointwise : public ::mlir::OpTrait::TraitBase<Op, Pointwise> {};
template <typename Op>
class Movement : public ::mlir::OpTrait::TraitBase<Op, Movement> {};
template <typename Op>
class Reducing : public ::mlir::OpTrait::TraitBase<Op, Reducing> {};
template <typename Op>
class Scatter : public ::mlir::OpTrait::TraitBase<Op, Scatter> {};
template <typename Op>
class LibraryCall : public ::mlir::OpTrait::TraitBase<Op, LibraryCall> {};
template <typename Op>
class Expensive : public ::mlir::OpTrait::TraitBase<Op, Expensive> {};
} // namespace mlir::dlc::OpProperty

#include "ir/DLCEnums.h.inc"
#include "ir/GradientOpInterface.h.inc"
#include "ir/DLCOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "ir/DLCOps.h.inc"

// The execution-plan level (PlanOps.td).
#define GET_OP_CLASSES
#include "ir/PlanOps.h.inc"

namespace mlir::dlc {

/// dlc-fuse's mark on a matmul or convolution whose consumer fusion starts
/// with an epilogue a library can apply in the same call: a MatmulEpilogue
/// name, "bias" (a per-output-channel add) or "bias_relu" (then max(x, 0)).
/// The fusion still computes it; a backend with fused epilogues (cuBLASLt,
/// cuDNN) may take it over. The dialect verifies it (value and op).
inline constexpr StringLiteral kEpilogueAttr = "dlc.epilogue";

/// `op`'s epilogue mark, if it has one.
std::optional<MatmulEpilogue> epilogueMark(Operation *op);
void setEpilogueMark(Operation *op, MatmulEpilogue epilogue);

/// The 1-D type of one rank's ZeRO shard of a value of `type` over `ranks`
/// ranks (dlc.reduce_scatter's results, dlc.rank_shard's): ceil(elements /
/// ranks) elements of its element type. `type` has a static shape.
RankedTensorType shardTypeOf(RankedTensorType type, int64_t ranks);

/// The type of the convolution of `input` by `filter` (dlc.conv's result),
/// all three in the layout `channelsLast` says; failure, reported at `loc`,
/// when they do not convolve with these attributes. The verifiers of
/// dlc.conv, its gradient ops and dlc.plan.conv share it.
FailureOr<RankedTensorType> inferConvTypeIn(
    bool channelsLast, std::optional<Location> loc, RankedTensorType input,
    RankedTensorType filter, ArrayRef<int64_t> stride, ArrayRef<int64_t> padLow,
    ArrayRef<int64_t> padHigh, ArrayRef<int64_t> dilation, int64_t groups);

} // namespace mlir::dlc

#endif // DLC_IR_DIALECT_H
