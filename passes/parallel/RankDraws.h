//===- RankDraws.h - Each data-parallel rank's own random draws -*- C++ -*-===//
//
// Part of dlc-data-parallel: the ranks of a data-parallel program share its
// seed and streams, so without more each would draw rank 0's dropout masks
// and augmentation for its own rows.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_PASSES_PARALLEL_RANKDRAWS_H
#define DLC_PASSES_PARALLEL_RANKDRAWS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::dlc {

/// Gives `func`'s dlc.dropout and dlc.random_uniform ops over each rank's
/// own rows a counter offset of rank * (elements drawn), so that rank r
/// draws the counters rank r's rows have in one process's draw over the
/// whole batch. Dropouts of values every rank holds alike (computed from
/// globals only) keep drawing one mask for all, unless their outermost
/// dimension is the batch's. Fails, with an error, on a function of more
/// than one block, a draw that already has an offset, one inside an
/// isolated body, and offsets past 2^53.
LogicalResult offsetRankDraws(func::FuncOp func, int64_t ranks);

} // namespace mlir::dlc

#endif // DLC_PASSES_PARALLEL_RANKDRAWS_H
