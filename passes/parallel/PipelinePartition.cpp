//===- PipelinePartition.cpp - Balanced pipeline stages -------------------===//
//
// Pipeline parallelism as the compiler sees it (DESIGN.md decision 9): the
// loss function's ops are cut into consecutive stages, each on its own
// rank, which pass activations forward and their gradients back for each
// micro-batch of the step. A step takes as long as its slowest stage takes
// for all micro-batches plus the fill and drain of the pipeline, so the cut
// minimizes the costliest stage (GPipe's and PipeDream's balancing), each
// stage paying for the activations it receives and sends, so that in a
// transformer the cuts fall between blocks, where the residual stream alone
// crosses; among near-equal cuts, the most even.
//
//===----------------------------------------------------------------------===//
#include "ir/Dialect.h"
#include "ir/Roles.h"
#include "passes/Passes.h"
#include "passes/parallel/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <limits>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCPIPELINEPARTITION
#include "passes/Passes.h.inc"

namespace {

/// A stage may cost this much more than the best balance when that evens
/// out the others: a pipeline as slow as its costliest stage runs the rest
/// no slower, and even stages hold even activations.
constexpr double kBalanceSlack = 0.02;

/// Where each op that reads the batch goes: its index in the sequence the
/// partitioner cuts, and what it costs.
struct Sequence {
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, int64_t> index;
  /// Roofline cost of each op, with the ops it alone needs folded in.
  SmallVector<double> cost;
  SmallVector<double> flops;
  /// Bytes of each op's results (activations, at the whole batch).
  SmallVector<double> resultBytes;
  /// cutBytes[j]: the bytes of the results of ops before j that ops from j
  /// on (or the function's results) read: what a cut before op j sends (0
  /// before the first op and after the last).
  SmallVector<double> cutBytes;
  /// prefix[j]: the cost of ops [0, j).
  SmallVector<double> prefix;
  /// What a byte sent or received costs, in the units of `cost`.
  double linkCost = 0;

  int64_t size() const { return static_cast<int64_t>(ops.size()); }

  /// The cost of a stage of ops [begin, end): its ops, and receiving its
  /// inputs and sending its outputs.
  double stageCost(int64_t begin, int64_t end) const {
    return prefix[end] - prefix[begin] +
           linkCost * (cutBytes[begin] + cutBytes[end]);
  }
};

/// `value` in the largest of `units` (each `base` times the one before)
/// that keeps it at least 1: "1.5 KiB", "3.7 MFLOP".
std::string formatScaled(double value, double base,
                         ArrayRef<const char *> units, const char *format) {
  size_t unit = 0;
  while (value >= base && unit + 1 < units.size()) {
    value /= base;
    ++unit;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format(format, value) << units[unit];
  return text;
}

std::string formatBytes(double bytes) {
  // Bytes below 1 KiB are whole.
  return formatScaled(bytes, 1024, {" B", " KiB", " MiB", " GiB", " TiB"},
                      bytes < 1024 ? "%.0f" : "%.1f");
}

std::string formatFlops(double flops) {
  return formatScaled(
      flops, 1000,
      {" FLOP", " KFLOP", " MFLOP", " GFLOP", " TFLOP", " PFLOP"}, "%.3g");
}

/// The first `count` stages' ends: stage k covers ops [ends[k-1], ends[k]).
/// Minimizes the costliest stage (Sequence::stageCost) over every cut into
/// `count` non-empty stages; then, among cuts within kBalanceSlack of that,
/// the sum of the stages' squared costs, so that a stage the costliest one
/// does not need is not left nearly empty.
SmallVector<int64_t> balancedCut(const Sequence &seq, int64_t count) {
  const int64_t n = seq.size();
  const double inf = std::numeric_limits<double>::infinity();
  // best[k][j]: the costliest stage of the best cut of ops [0, j) into k+1
  // stages.
  std::vector<std::vector<double>> best(count, std::vector<double>(n + 1, inf));
  for (int64_t j = 1; j <= n; ++j)
    best[0][j] = seq.stageCost(0, j);
  for (int64_t k = 1; k < count; ++k)
    for (int64_t j = k + 1; j <= n; ++j)
      // Earlier cuts only add ops to the last stage, which also sends what
      // crosses its end (and receives what crosses its start, at least
      // nothing): a lower bound that only grows.
      for (int64_t i = j - 1; i >= k && seq.prefix[j] - seq.prefix[i] +
                                                seq.linkCost * seq.cutBytes[j] <
                                            best[k][j];
           --i)
        best[k][j] = std::min(
            best[k][j], std::max(best[k - 1][i], seq.stageCost(i, j)));
  // Rounding in the sums must not exclude the best cut itself.
  const double limit =
      best[count - 1][n] * (1 + kBalanceSlack) + seq.prefix[n] * 1e-12;
  // squares[k][j]: the least sum of squared costs of a cut of ops [0, j)
  // into k+1 stages of at most `limit` each; from[k][j]: where its last
  // stage starts.
  std::vector<std::vector<double>> squares(count,
                                           std::vector<double>(n + 1, inf));
  std::vector<std::vector<int64_t>> from(count,
                                         std::vector<int64_t>(n + 1, -1));
  for (int64_t j = 1; j <= n; ++j)
    if (double cost = seq.stageCost(0, j); cost <= limit)
      squares[0][j] = cost * cost;
  for (int64_t k = 1; k < count; ++k)
    for (int64_t j = k + 1; j <= n; ++j)
      for (int64_t i = j - 1;
           i >= k &&
           seq.prefix[j] - seq.prefix[i] + seq.linkCost * seq.cutBytes[j] <=
               limit;
           --i) {
        double cost = seq.stageCost(i, j);
        double total = squares[k - 1][i] + cost * cost;
        if (cost <= limit && total < squares[k][j]) {
          squares[k][j] = total;
          from[k][j] = i;
        }
      }
  SmallVector<int64_t> ends(count);
  for (int64_t k = count - 1, j = n; k >= 0; --k) {
    ends[k] = j;
    j = k > 0 ? from[k][j] : 0;
    assert(j >= 0 && "the best cut is within its own limit");
  }
  return ends;
}

class PipelinePartitionPass
    : public impl::DLCPipelinePartitionBase<PipelinePartitionPass> {
public:
  using DLCPipelinePartitionBase::DLCPipelinePartitionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (stages < 1 || microbatches < 1) {
      module.emitError() << "dlc-pipeline-partition: "
                         << (stages < 1 ? "stages" : "microbatches")
                         << " must be at least 1, got "
                         << static_cast<int64_t>(stages < 1 ? stages
                                                            : microbatches);
      return signalPassFailure();
    }
    if (stages == 1 && microbatches > 1) {
      module.emitError()
          << "dlc-pipeline-partition: microbatches apply to a pipeline of "
             "more than one stage (stages=1 takes the batch whole)";
      return signalPassFailure();
    }
    for (auto [option, value] :
         {std::pair("flops-per-byte", static_cast<double>(flopsPerByte)),
          std::pair("link-flops-per-byte",
                    static_cast<double>(linkFlopsPerByte))})
      if (!(value >= 0) || !std::isfinite(value)) {
        module.emitError() << "dlc-pipeline-partition: " << option
                           << " must be a finite number >= 0, got " << value;
        return signalPassFailure();
      }
    if (auto done =
            module->getAttrOfType<IntegerAttr>(roles::kPipelineStagesAttr)) {
      module.emitError() << "dlc-pipeline-partition: the module is already "
                            "partitioned into "
                         << done.getInt() << " pipeline stages";
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> losses;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      bool loss = false, gradient = false;
      for (unsigned i = 0; i < func.getNumResults(); ++i) {
        StringRef role = roles::roleOf(func.getResultAttrDict(i));
        loss |= role == roles::kLoss;
        gradient |= role == roles::kGradient;
      }
      if (gradient) {
        func.emitOpError() << "already has a backward pass (it returns "
                              "gradients): dlc-pipeline-partition runs "
                              "before dlc-autodiff, which keeps each stage's "
                              "backward on its stage";
        return signalPassFailure();
      }
      if (loss)
        losses.push_back(func);
    }
    if (losses.empty()) {
      module.emitError() << "dlc-pipeline-partition: no function returns a "
                            "loss (dlc.role = \"loss\"); run dlc-add-loss "
                            "first";
      return signalPassFailure();
    }
    if (stages == 1)
      return;
    for (func::FuncOp func : losses)
      if (failed(partition(func)))
        return signalPassFailure();
    module->setAttr(roles::kPipelineStagesAttr,
                    Builder(module.getContext()).getI64IntegerAttr(stages));
  }

private:
  LogicalResult partition(func::FuncOp func) {
    if (!func.getBody().hasOneBlock())
      return func.emitOpError() << "has more than one block; "
                                   "dlc-pipeline-partition cuts single-block "
                                   "functions";
    Block &body = func.getBody().front();
    // The batch: every input and label.
    llvm::DenseSet<Value> batch;
    for (BlockArgument arg : body.getArguments()) {
      StringRef role = roles::roleOf(func.getArgAttrDict(arg.getArgNumber()));
      if (role == roles::kInput || role == roles::kLabel)
        batch.insert(arg);
    }
    if (batch.empty())
      return func.emitOpError() << "reads no input or label: there is no "
                                   "batch to pipeline";

    Sequence seq;
    Operation *terminator = body.getTerminator();
    for (Operation &op : body.without_terminator()) {
      if (llvm::none_of(op.getOperands(),
                        [&](Value v) { return batch.contains(v); }))
        continue;
      seq.index[&op] = static_cast<int64_t>(seq.ops.size());
      seq.ops.push_back(&op);
      for (Value result : op.getResults())
        batch.insert(result);
    }
    const int64_t n = static_cast<int64_t>(seq.ops.size());
    if (n < stages)
      return func.emitOpError()
             << "has " << n << " ops that read the batch, fewer than the "
             << static_cast<int64_t>(stages) << " pipeline stages";

    seq.cost.assign(n, 0);
    seq.flops.assign(n, 0);
    seq.resultBytes.assign(n, 0);
    // Ops that do not read the batch cost where their first batch-reading
    // reader is (walking backwards, each one's readers are placed first).
    llvm::DenseMap<Operation *, int64_t> firstReader;
    for (Operation &op : llvm::reverse(body.without_terminator())) {
      OpCost cost = costOf(&op);
      auto it = seq.index.find(&op);
      int64_t at = it != seq.index.end() ? it->second : n;
      if (it == seq.index.end()) {
        for (Operation *user : op.getUsers()) {
          if (user == terminator)
            at = std::min(at, n - 1);
          else if (auto u = seq.index.find(user); u != seq.index.end())
            at = std::min(at, u->second);
          else if (auto f = firstReader.find(user); f != firstReader.end())
            at = std::min(at, f->second);
        }
        if (at == n)
          continue;
        firstReader[&op] = at;
      } else if (!isa<ReshapeOp>(op)) {
        for (Value result : op.getResults())
          seq.resultBytes[at] += bytesOf(result.getType());
      }
      seq.cost[at] += cost.roofline(flopsPerByte);
      seq.flops[at] += cost.flops;
    }
    // A value is sent across every cut between its op and its last reader.
    SmallVector<double> change(n + 1, 0);
    for (auto [i, op] : llvm::enumerate(seq.ops))
      for (Value result : op->getResults()) {
        int64_t last = static_cast<int64_t>(i);
        for (Operation *user : result.getUsers())
          last = std::max(last, user == terminator ? n : seq.index.lookup(user));
        if (last == static_cast<int64_t>(i))
          continue;
        double bytes = bytesOf(result.getType());
        change[i + 1] += bytes;
        change[std::min(last, n - 1) + 1] -= bytes;
      }
    seq.cutBytes.assign(n + 1, 0);
    for (int64_t j = 1; j < n; ++j)
      seq.cutBytes[j] = seq.cutBytes[j - 1] + change[j];
    seq.prefix.assign(n + 1, 0);
    for (int64_t i = 0; i < n; ++i)
      seq.prefix[i + 1] = seq.prefix[i] + seq.cost[i];
    seq.linkCost = linkFlopsPerByte;

    SmallVector<int64_t> ends = balancedCut(seq, stages);
    Builder builder(func.getContext());
    for (int64_t k = 0, i = 0; k < stages; ++k)
      for (; i < ends[k]; ++i)
        seq.ops[i]->setAttr(roles::kPipelineStageAttr,
                            builder.getI64IntegerAttr(k));
    if (report)
      printReport(func, seq, ends);
    return success();
  }

  void printReport(func::FuncOp func, const Sequence &seq,
                   ArrayRef<int64_t> ends) {
    const int64_t count = stages, m = microbatches;
    // Each parameter's bytes count on every stage that reads it.
    SmallVector<double> parameters(count, 0);
    SmallVector<int64_t> parameterCount(count, 0);
    SmallVector<std::string> shared;
    auto stageOf = [&](Operation *op) -> std::optional<int64_t> {
      if (auto stage = op->getAttrOfType<IntegerAttr>(
              roles::kPipelineStageAttr))
        return stage.getInt();
      return std::nullopt;
    };
    double allParameters = 0;
    for (BlockArgument arg : func.getArguments()) {
      DictionaryAttr attrs = func.getArgAttrDict(arg.getArgNumber());
      if (roles::roleOf(attrs) != roles::kParam)
        continue;
      // The stages of the batch-reading ops it reaches.
      llvm::SmallSetVector<int64_t, 4> readers;
      SmallVector<Operation *> work(arg.getUsers().begin(),
                                    arg.getUsers().end());
      llvm::DenseSet<Operation *> seen;
      while (!work.empty()) {
        Operation *op = work.pop_back_val();
        if (!seen.insert(op).second)
          continue;
        if (std::optional<int64_t> stage = stageOf(op))
          readers.insert(*stage);
        else if (op == func.getBody().front().getTerminator())
          readers.insert(count - 1);
        else
          work.append(op->getUsers().begin(), op->getUsers().end());
      }
      double bytes = bytesOf(arg.getType());
      allParameters += bytes;
      for (int64_t stage : readers) {
        parameters[stage] += bytes;
        ++parameterCount[stage];
      }
      if (readers.size() > 1)
        shared.push_back(roles::nameOf(attrs).str());
    }
    // Costs with the stages' transfers.
    double total = 0, allActivations = 0, allFlops = 0;
    for (int64_t k = 0, begin = 0; k < count; begin = ends[k], ++k)
      total += seq.stageCost(begin, ends[k]);
    for (int64_t i = 0; i < seq.size(); ++i) {
      allActivations += seq.resultBytes[i];
      allFlops += seq.flops[i];
    }
    llvm::raw_ostream &os = llvm::errs();
    os << "pipeline parallelism: @" << func.getSymName() << " in " << count
       << " stages, " << m << " micro-batches, costed at "
       << llvm::format("%g", static_cast<double>(flopsPerByte))
       << " FLOPs per byte of memory, "
       << llvm::format("%g", static_cast<double>(linkFlopsPerByte))
       << " per byte sent\n";
    double costliest = 0;
    for (int64_t k = 0, begin = 0; k < count; begin = ends[k], ++k) {
      double cost = seq.stageCost(begin, ends[k]), flops = 0, activations = 0;
      for (int64_t i = begin; i < ends[k]; ++i) {
        flops += seq.flops[i];
        activations += seq.resultBytes[i];
      }
      costliest = std::max(costliest, cost);
      int64_t inFlight = std::min<int64_t>(count - k, m);
      os << "  stage " << k << ": " << ends[k] - begin << " ops from "
         << seq.ops[begin]->getName() << " at " << seq.ops[begin]->getLoc()
         << "\n    " << formatFlops(flops) << " per micro-batch, "
         << llvm::format("%.1f", total > 0 ? 100 * cost / total : 0)
         << "% of the cost; parameters " << formatBytes(parameters[k]) << " ("
         << parameterCount[k] << "); activations " << formatBytes(activations)
         << " per micro-batch, " << inFlight << " in flight ("
         << formatBytes(activations * inFlight) << ")";
      if (k + 1 < count)
        os << "; sends " << formatBytes(seq.cutBytes[ends[k]])
           << " per micro-batch";
      os << "\n";
    }
    os << "  balance: the costliest stage is "
       << llvm::format("%.3f", total > 0 ? costliest * count / total : 1)
       << "x the mean\n";
    if (!shared.empty()) {
      os << "  parameters read by more than one stage:";
      for (const std::string &name : shared)
        os << " " << name;
      os << "\n";
    }
    // One device takes the m micro-batches' samples as one batch.
    os << "  one device, the whole batch: " << formatFlops(allFlops * m)
       << "; parameters " << formatBytes(allParameters) << "; activations "
       << formatBytes(allActivations * m) << "\n";
  }
};

} // namespace
} // namespace mlir::dlc
