//===- HorizontalFusion.h - Independent kernels in one launch ---*- C++ -*-===//
//
// A training step's optimizer update is one small kernel per parameter
// (passes/training), and so are many steps of a backward pass: on a GPU
// each is a launch of a few microseconds, most of them far too small to
// fill the device. Horizontal fusion runs independent kernel steps as one
// kernel step: the group's kernel (KernelEmitter's emitKernelGroup) lays
// its members' iteration spaces end to end and each iteration runs the
// member it falls in. This file decides which steps of a function's plan
// form groups; it sees only the buffers each step reads and writes, so any
// step (matmuls, convolutions, copies) can be proven independent of a
// kernel and moved past.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_CODEGEN_HORIZONTALFUSION_H
#define DLC_CODEGEN_HORIZONTALFUSION_H

#include "ir/RuntimeNames.h"
#include "runtime/module/dlcm_generated.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace mlir::dlc::codegen {

/// The buffers of one step of a plan, in dlcm.fbs KernelStep's convention
/// whatever the step's kind: the last `outputs` are written, the others
/// read.
struct StepBuffers {
  std::vector<fb::BufferRef> refs;
  /// The byte size of each of `refs`.
  std::vector<uint64_t> bytes;
  unsigned outputs = 0;
};

/// A step as horizontal fusion sees it.
struct StepSummary {
  StepBuffers buffers;
  /// For a kernel step that may run in a group: its threads per iteration
  /// (dlcm.fbs KernelStep.threads_per_iteration), since a group's members
  /// share one. 0 for a step that runs alone.
  unsigned groupClass = 0;
};

/// Steps that run as one step of the plan: a single step of any kind, or
/// independent kernel steps of one class run by one kernel.
struct StepGroup {
  /// The members' indices in the plan, in plan order.
  std::vector<size_t> members;
  /// The group step's buffers: every buffer a member reads, each (range)
  /// once, then every buffer a member writes. A single step's own.
  StepBuffers buffers;
  /// For each member, the index in `buffers` of each of its buffers.
  std::vector<std::vector<unsigned>> slots;
};

/// Whether byte ranges [a, a + aBytes) and [b, b + bBytes) of two buffer
/// references share memory. References of different kinds or indices never
/// do: every argument, result and constant and the arena are memory of
/// their own (a global's argument and result are its two buffers,
/// runtime/core/Session.cpp; outputs share memory with no input).
bool overlaps(const fb::BufferRef &a, uint64_t aBytes, const fb::BufferRef &b,
              uint64_t bBytes);

/// The most buffers a group's kernel takes. A CUDA kernel's parameters
/// (dlc_buffers<N>, 8 bytes a buffer, then the 8-byte iteration count) must
/// fit in 4 KB: CUDA 12.1 raised the limit to 32 KB only for drivers and
/// architectures that support it.
constexpr unsigned kMaxGroupBuffers = (4096 - 8) / 8;

/// Partitions `steps` (a function's plan, in order) into the groups to
/// write, in the order to write them. A kernel step joins the earliest
/// group of its class that it can reach: one it shares no memory with (its
/// members run together) and after which it is independent of every step
/// (it moves up before them), with room for its buffers (kMaxGroupBuffers);
/// otherwise it starts a group. Steps of class 0 are groups of their own,
/// so a plan without kernel classes keeps its order.
std::vector<StepGroup> groupSteps(llvm::ArrayRef<StepSummary> steps);

} // namespace mlir::dlc::codegen

#endif // DLC_CODEGEN_HORIZONTALFUSION_H
