//===- HorizontalFusion.cpp - Independent kernels in one launch -----------===//
//
// Groups form greedily in one pass over the plan: a group sits where its
// first member was, and a later kernel joins it by moving up to it. Moving
// a step before others is sound when neither writes memory the other reads
// or writes (the memory plan reuses arena bytes, so this is a check of
// byte ranges, not of values); running members together is sound on the
// same condition, as every generated kernel's iterations are independent
// (the runtime may run them in any order, dlcm.fbs `table Kernel`). A step
// looks back only as far as its nearest dependence, which a plan's steps
// mostly have close by, so the pass stays about linear.
//
//===----------------------------------------------------------------------===//

#include "codegen/HorizontalFusion.h"

#include "llvm/ADT/STLExtras.h"

#include <map>
#include <set>
#include <tuple>

using namespace mlir::dlc::codegen;

namespace {

bool isWritten(const StepBuffers &step, size_t i) {
  return i + step.outputs >= step.refs.size();
}

/// Whether `a` and `b` must keep their order (and so cannot run together):
/// one writes memory the other reads or writes.
bool conflicts(const StepBuffers &a, const StepBuffers &b) {
  for (size_t i = 0; i < a.refs.size(); ++i)
    for (size_t j = 0; j < b.refs.size(); ++j)
      if ((isWritten(a, i) || isWritten(b, j)) &&
          overlaps(a.refs[i], a.bytes[i], b.refs[j], b.bytes[j]))
        return true;
  return false;
}

/// A buffer range members read: members reading the same one share the
/// group's buffer (an optimizer's hyperparameters and bias corrections are
/// read by every parameter's update).
namespace fb = mlir::dlc::fb;
using Range = std::tuple<fb::BufferKind, uint32_t, uint64_t, uint64_t>;

Range rangeOf(const StepBuffers &step, size_t i) {
  const fb::BufferRef &ref = step.refs[i];
  return {ref.kind(), ref.index(), ref.offset(), step.bytes[i]};
}

/// The buffers of a group as it grows, for kMaxGroupBuffers.
struct GroupBuffers {
  std::set<Range> reads;
  size_t writes = 0;

  void add(const StepBuffers &step) {
    for (size_t i = 0; i + step.outputs < step.refs.size(); ++i)
      reads.insert(rangeOf(step, i));
    writes += step.outputs;
  }
  /// How many the group would have with `step`.
  size_t countWith(const StepBuffers &step) const {
    size_t newReads = 0;
    std::set<Range> seen;
    for (size_t i = 0; i + step.outputs < step.refs.size(); ++i) {
      Range range = rangeOf(step, i);
      newReads += !reads.count(range) && seen.insert(range).second;
    }
    return reads.size() + newReads + writes + step.outputs;
  }
};

/// Fills in `group`'s buffers and its members' slots (StepGroup).
void layOut(StepGroup &group, llvm::ArrayRef<StepSummary> steps) {
  if (group.members.size() == 1) {
    const StepBuffers &step = steps[group.members.front()].buffers;
    group.buffers = step;
    std::vector<unsigned> slots(step.refs.size());
    for (size_t i = 0; i < slots.size(); ++i)
      slots[i] = static_cast<unsigned>(i);
    group.slots = {slots};
    return;
  }
  StepBuffers &buffers = group.buffers;
  std::map<Range, unsigned> readSlot;
  group.slots.resize(group.members.size());
  for (auto [k, member] : llvm::enumerate(group.members)) {
    const StepBuffers &step = steps[member].buffers;
    group.slots[k].resize(step.refs.size());
    for (size_t i = 0; i + step.outputs < step.refs.size(); ++i) {
      auto [it, inserted] = readSlot.try_emplace(
          rangeOf(step, i), static_cast<unsigned>(buffers.refs.size()));
      if (inserted) {
        buffers.refs.push_back(step.refs[i]);
        buffers.bytes.push_back(step.bytes[i]);
      }
      group.slots[k][i] = it->second;
    }
  }
  for (auto [k, member] : llvm::enumerate(group.members)) {
    const StepBuffers &step = steps[member].buffers;
    for (size_t i = step.refs.size() - step.outputs; i < step.refs.size();
         ++i) {
      group.slots[k][i] = static_cast<unsigned>(buffers.refs.size());
      buffers.refs.push_back(step.refs[i]);
      buffers.bytes.push_back(step.bytes[i]);
      ++buffers.outputs;
    }
  }
}

} // namespace

bool mlir::dlc::codegen::overlaps(const fb::BufferRef &a, uint64_t aBytes,
                                  const fb::BufferRef &b, uint64_t bBytes) {
  return a.kind() == b.kind() && a.index() == b.index() &&
         a.offset() < b.offset() + bBytes && b.offset() < a.offset() + aBytes;
}

std::vector<StepGroup>
mlir::dlc::codegen::groupSteps(llvm::ArrayRef<StepSummary> steps) {
  std::vector<StepGroup> groups;
  std::vector<GroupBuffers> buffers;
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepSummary &step = steps[i];
    // Back from the last group until one that `step` depends on (it can
    // neither move above that group nor run with it), the earliest group of
    // its class with room: steps join the first groups they can, which
    // leaves the later groups to the steps that depend on those.
    size_t target = groups.size();
    for (size_t g = groups.size(); step.groupClass != 0 && g-- > 0;) {
      const std::vector<size_t> &members = groups[g].members;
      if (llvm::any_of(members, [&](size_t member) {
            return conflicts(steps[member].buffers, step.buffers);
          }))
        break;
      if (steps[members.front()].groupClass == step.groupClass &&
          buffers[g].countWith(step.buffers) <= kMaxGroupBuffers)
        target = g;
    }
    if (target == groups.size()) {
      groups.push_back({});
      buffers.emplace_back();
    }
    groups[target].members.push_back(i);
    buffers[target].add(step.buffers);
  }
  for (StepGroup &group : groups)
    layOut(group, steps);
  return groups;
}
