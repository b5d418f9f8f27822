//===- SimulatedRanks.h - A data-parallel module's ranks in one process ---===//
//
// dlc-run runs a module partitioned for N data-parallel ranks
// (dlc-data-parallel) as the N ranks would run it, on the evaluator: the
// inputs are the global batch's, each rank takes its share, and the ranks'
// results are combined into the global batch's results. So the partitioned
// function's outputs compare directly with the one-device function's on
// the same data. Axis 0 of every input, label and output is the batch, as
// the importer binds it (--batch-size).
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_DLC_RUN_SIMULATEDRANKS_H
#define DLC_TOOLS_DLC_RUN_SIMULATEDRANKS_H

#include "ir/RuntimeNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::dlc::tools {

/// Checks that every ZeRO-1 shard `func` takes or returns (an argument or
/// result marked roles::kShardedAttr) is one over `ranks` ranks of its
/// marked whole, so that sharding and gathering stay in bounds; emits an
/// error at `func` otherwise.
mlir::LogicalResult checkShards(mlir::func::FuncOp func, int64_t ranks);

/// `func`'s argument types at the global batch of `ranks` ranks: per-sample
/// arguments (roles input and label) have `ranks` times the rows, ZeRO
/// shards (roles::kShardedAttr) are the whole value, the rest are as
/// declared.
llvm::SmallVector<mlir::RankedTensorType>
globalArgumentTypes(mlir::func::FuncOp func, int64_t ranks);

/// Each rank's arguments from the global batch's (of globalArgumentTypes):
/// rank r takes rows [r * b, (r + 1) * b) of each per-sample argument, its
/// shard of each sharded one, and every other argument whole.
llvm::SmallVector<llvm::SmallVector<Tensor>>
splitInputs(mlir::func::FuncOp func, llvm::ArrayRef<Tensor> global,
            int64_t ranks);

/// The global batch's results from each rank's: per-sample outputs (role
/// output) concatenated in rank order, losses and metrics averaged (the
/// mean over equal shares is the global mean), ZeRO shards gathered into
/// the whole, the rest (gradients, already reduced; state) rank 0's.
llvm::SmallVector<Tensor>
combineResults(mlir::func::FuncOp func,
               llvm::ArrayRef<llvm::SmallVector<Tensor>> ranks);

} // namespace mlir::dlc::tools

#endif // DLC_TOOLS_DLC_RUN_SIMULATEDRANKS_H
