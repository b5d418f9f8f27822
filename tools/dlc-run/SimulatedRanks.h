//===- SimulatedRanks.h - A partitioned module's ranks in one process -----===//
//
// dlc-run runs a module partitioned for data-parallel ranks
// (dlc-data-parallel) and tensor-parallel ones (dlc-tensor-parallel) as the
// ranks would run it, on the evaluator: the inputs are the global batch's
// and the whole parameters, each rank takes its share of the batch and its
// slice of each split value, and the ranks' results are combined into the
// global batch's and the whole values. So the partitioned function's
// outputs compare directly with the one-device function's on the same
// data. Axis 0 of every input, label and output is the batch, as the
// importer binds it (--batch-size).
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_DLC_RUN_SIMULATEDRANKS_H
#define DLC_TOOLS_DLC_RUN_SIMULATEDRANKS_H

#include "ir/RuntimeNames.h"
#include "ir/eval/Evaluator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::dlc::tools {

/// Checks that every ZeRO-1 shard `func` takes or returns (an argument or
/// result marked roles::kShardedAttr) is one over `grid`'s data-parallel
/// ranks of its marked whole, and that every tensor-parallel slice
/// (roles::kTpSplitAttr) names a dimension of its type, so that sharding
/// and gathering stay in bounds; emits an error at `func` otherwise.
mlir::LogicalResult checkShards(mlir::func::FuncOp func, const RankGrid &grid);

/// `func`'s argument types at the global batch, whole: per-sample
/// arguments (roles input and label) have the data-parallel ranks' rows,
/// ZeRO shards (roles::kShardedAttr) are the whole value, tensor-parallel
/// slices the whole along their dimension, the rest are as declared.
llvm::SmallVector<mlir::RankedTensorType>
globalArgumentTypes(mlir::func::FuncOp func, const RankGrid &grid);

/// Each rank's arguments from the global batch's (of globalArgumentTypes):
/// data-parallel replica d takes rows [d * b, (d + 1) * b) of each
/// per-sample argument and its shard of each sharded one, tensor rank t its
/// slice of each split one, and every rank every other argument whole.
llvm::SmallVector<llvm::SmallVector<Tensor>>
splitInputs(mlir::func::FuncOp func, llvm::ArrayRef<Tensor> global,
            const RankGrid &grid);

/// The global batch's results from each rank's: per-sample outputs (role
/// output) concatenated in replica order, losses and metrics averaged over
/// the replicas (the mean over equal shares is the global mean), ZeRO
/// shards gathered and tensor-parallel slices joined into the whole, the
/// rest (gradients, already reduced; state) rank 0's.
llvm::SmallVector<Tensor>
combineResults(mlir::func::FuncOp func,
               llvm::ArrayRef<llvm::SmallVector<Tensor>> ranks,
               const RankGrid &grid);

/// The values one device holds of the module's globals: each rank's ZeRO
/// shards gathered and tensor-parallel slices joined, the rest rank 0's.
GlobalValues wholeGlobals(mlir::ModuleOp module, Evaluator &evaluator);

} // namespace mlir::dlc::tools

#endif // DLC_TOOLS_DLC_RUN_SIMULATEDRANKS_H
