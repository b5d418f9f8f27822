//===- Evaluator.h - The reference evaluator of dlc IR --------------------===//
//
// Runs dlc IR on the CPU in plain C++. It is the numeric oracle every pass is
// tested against, so each op is written for clarity, not speed:
//  - float16 and bfloat16 are computed in float32 and rounded on store;
//  - float32 and float64 elementwise math is computed in float64 and rounded
//    on store; reductions, matmuls and convolutions accumulate in float64;
//  - integers compute in 64 bits and wrap on store; bool is bool.
// Errors in the data (an index out of range) are reported at the op's
// location, naming it, and evaluation stops.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_IR_EVAL_EVALUATOR_H
#define DLC_IR_EVAL_EVALUATOR_H

#include "ir/RuntimeNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir::dlc {

/// Current values of the module's dlc.global symbols, by symbol name.
using GlobalValues = llvm::StringMap<Tensor>;

/// The DType of an MLIR element type, or failure for types dlc has no
/// storage for.
FailureOr<DType> dtypeOf(Type elementType);
/// The MLIR element type of a DType (ui8 for U8, i1 for Bool...).
Type elementTypeOf(MLIRContext *context, DType dtype);

/// The value of a constant attribute (dense or dense_resource elements).
FailureOr<Tensor> tensorFromAttr(ElementsAttr attr);
/// A DenseElementsAttr holding `tensor` (whose dtype must match `type`).
DenseElementsAttr attrFromTensor(const Tensor &tensor, RankedTensorType type);

/// Evaluates one dlc op on operand values, appending one tensor per result.
/// Emits an error at the op on failure. `globals` serves dlc.global_load and
/// dlc.global_store (may be null when the op touches no global).
LogicalResult evaluateOp(Operation *op, ArrayRef<Tensor> operands,
                         SmallVectorImpl<Tensor> &results,
                         GlobalValues *globals = nullptr);

/// A ZeRO rank's shard of a value and back, and a tensor-parallel rank's
/// slice of a split global (roles::kTpSplitAttr) and back
/// (runtime/support/Tensor.h).
using ::dlc::gatherShards;
using ::dlc::joinSlices;
using ::dlc::shardOf;
using ::dlc::sliceOf;

/// The ranks a partitioned module runs on (ir/Roles.h), laid out as the
/// runtime lays out a job's (runtime/comm/RankLayout.h).
struct RankGrid {
  int64_t dataParallel = 1;
  int64_t tensorParallel = 1;
  /// Pipeline stages (dlc.pipeline_stages).
  int64_t pipeline = 1;

  /// The module's dlc.data_parallel and dlc.tensor_parallel, each 1 when
  /// absent; fails (with a diagnostic) on a bad value or more than
  /// `mostRanks` ranks in all.
  static FailureOr<RankGrid> of(ModuleOp module, int64_t mostRanks);

  int64_t ranks() const { return dataParallel * tensorParallel * pipeline; }
  /// "4 data-parallel ranks", "2 data-parallel x 2 tensor-parallel ranks",
  /// "1 rank".
  std::string describe() const;
  /// Rank r is tensor rank r % T of replica (r / T) % D of stage r / (D T):
  /// the stages outermost, as Megatron-LM lays them out.
  int64_t dataRank(int64_t rank) const {
    return rank / tensorParallel % dataParallel;
  }
  int64_t tensorRank(int64_t rank) const { return rank % tensorParallel; }
  int64_t pipelineRank(int64_t rank) const {
    return rank / (dataParallel * tensorParallel);
  }
  /// Every group of ranks a data-parallel collective (the ranks of a stage
  /// with one tensor rank) or a tensor-parallel one (one replica's ranks of
  /// a stage) runs among, each in rank order.
  SmallVector<SmallVector<int64_t>> dataGroups() const;
  SmallVector<SmallVector<int64_t>> tensorGroups() const;
};

/// Runs functions of a module. Globals start at their initial values.
/// A module partitioned for data or tensor parallelism (RankGrid) is run as
/// its ranks in lockstep, each with its own globals (a tensor-parallel
/// global's slice of the initial value); the collectives (dlc.all_reduce,
/// dlc.tp_reduce...) combine the values of the ranks of each group.
class Evaluator {
public:
  /// Fails (with a diagnostic) if a global has no initial value.
  static FailureOr<Evaluator> create(ModuleOp module);

  /// The number of ranks a function runs on, 1 unless the module is
  /// partitioned.
  int64_t ranks() const { return grid_.ranks(); }
  const RankGrid &grid() const { return grid_; }

  /// Runs `func` on `inputs` (one per argument, types checked) and returns one
  /// tensor per result. For a module of one rank.
  FailureOr<SmallVector<Tensor>> run(func::FuncOp func,
                                     ArrayRef<Tensor> inputs);
  /// Runs `func` on every rank: `inputs[r]` are rank r's arguments (one
  /// list per rank, ranks() of them); returns each rank's results.
  FailureOr<SmallVector<SmallVector<Tensor>>>
  runRanks(func::FuncOp func, ArrayRef<ArrayRef<Tensor>> inputs);

  /// Rank 0's globals (a one-rank module's).
  GlobalValues &globals() { return globals_.front(); }
  GlobalValues &globals(int64_t rank) { return globals_[rank]; }

private:
  explicit Evaluator(ModuleOp module) : module_(module) {}

  ModuleOp module_;
  RankGrid grid_;
  /// Each rank's.
  SmallVector<GlobalValues, 1> globals_;
};

} // namespace mlir::dlc

#endif // DLC_IR_EVAL_EVALUATOR_H
