//===- Fusion.h - Grouping ops into dlc.fusion kernels ----------*- C++ -*-===//
//
// The policy (which producer may join which group) is a control function,
// separate from the mechanism (growing groups and outlining them into
// dlc.fusion ops), so tests and later passes can drive either alone.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_PASSES_FUSION_FUSION_H
#define DLC_PASSES_FUSION_FUSION_H

#include "ir/Dialect.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::dlc {

/// How an op takes part in kernel generation.
enum class KernelRole {
  /// Runs as a library call (matmul, convolutions) or a hand-tiled kernel
  /// of its own (attention kept whole for CUDA): never in a fusion.
  Library,
  /// A reinterpretation of its operand's buffer (reshape) when alone.
  View,
  /// Computes each result element from operand elements at the same or a
  /// broadcast index.
  Elementwise,
  /// Reads operand elements at remapped indices (transpose, slice, pad,
  /// concat, broadcast_to, gather, segment sums, reshape inside a group).
  Movement,
  /// Folds an inner loop per result element (reductions, argmax/argmin,
  /// cumulative sums, top_k, pooling).
  Reducing,
  /// Writes at data-dependent positions (scatter_elements, the max-pool
  /// gradient routing each window's gradient to its maximum): always alone.
  Scatter,
  /// Cloned into each group that uses it (splat constants).
  Inlined,
  /// Has no generated kernel (global access, ops codegen does not handle).
  Opaque,
};

KernelRole kernelRoleOf(Operation *op);

/// What the control function is asked: may `producer` join the group that
/// contains `consumer`?
struct FusionCandidate {
  Operation *producer;
  Operation *consumer;
  /// How many times each producer element would be computed per run of the
  /// fused kernel (1 when every use reads each element once).
  double reuse;
  /// Whether every use in the group reads the producer at the index of the
  /// group's results (same shape, elementwise path to the root).
  bool atRootIndex;
  /// Whether the producer also has users outside the group (it then
  /// becomes an extra result).
  bool extraResult;
  /// Ops already in the group.
  unsigned groupSize;
};

using FusionControlFn = llvm::function_ref<bool(const FusionCandidate &)>;

/// The default, cost-aware policy: no recomputation of transcendental or
/// reducing ops, reductions and pooling only where their result is read at
/// the group's index, extra results only at the group's index, and groups
/// of at most `maxGroupSize` ops.
bool defaultFusionControl(const FusionCandidate &candidate,
                          unsigned maxGroupSize);

/// Marks each library op of `block` whose only user is a fusion computing
/// a bias add (and a ReLU) of it, with its epilogue (kEpilogueAttr,
/// ir/Dialect.h).
void markLibraryEpilogues(Block &block);

/// Groups the kernel ops of `block` (every op that is not Library, View,
/// Inlined or Opaque) into dlc.fusion ops, consumers first: each op starts
/// a group or joins the group of its users when `control` allows. Every
/// kernel op ends up in exactly one fusion (possibly alone).
void fuseBlock(Block &block, FusionControlFn control);

} // namespace mlir::dlc

#endif // DLC_PASSES_FUSION_FUSION_H
