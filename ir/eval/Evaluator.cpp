//===- Evaluator.cpp - The reference evaluator of dlc IR ------------------===//
//
// The op dispatcher (evaluateOp), the function runner (Evaluator) and the
// small shape helpers every rule file shares. The rules themselves live by
// family in EvalElementwise.cpp, EvalTensor.cpp, EvalReduce.cpp and
// EvalNN.cpp; EvalSupport.h explains the numeric domains they share.
//
// evaluateOp checks operand values against the op's operand types before
// running a rule, so a rule may trust every shape and dtype it reads (the
// verifier has already related operands, attributes and results).
//
//===----------------------------------------------------------------------===//

#include "ir/Roles.h"
#include "ir/eval/EvalSupport.h"
#include "runtime/support/Float16.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::eval;

//===----------------------------------------------------------------------===//
// Shared helpers (declared in EvalSupport.h)
//===----------------------------------------------------------------------===//

SmallVector<int64_t> eval::stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

SmallVector<int64_t> eval::broadcastStrides(ArrayRef<int64_t> from,
                                            ArrayRef<int64_t> to) {
  SmallVector<int64_t> own = stridesOf(from);
  SmallVector<int64_t> strides(to.size(), 0);
  size_t lead = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    strides[lead + d] = from[d] == 1 ? 0 : own[d];
  return strides;
}

int64_t eval::productOf(ArrayRef<int64_t> shape, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t d = begin; d < end; ++d)
    product *= shape[d];
  return product;
}

std::vector<int64_t> eval::readIndices(const Tensor &indices) {
  std::vector<int64_t> values(indices.numElements());
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = indices.getInt(i);
  return values;
}

Tensor eval::resultTensor(Operation *op, unsigned i) {
  auto type = cast<RankedTensorType>(op->getResult(i).getType());
  return Tensor(*dtypeOf(type.getElementType()),
                std::vector<int64_t>(type.getShape().begin(),
                                     type.getShape().end()));
}

LogicalResult eval::unsupportedType(Operation *op, DType dtype) {
  return op->emitOpError() << "has no evaluator rule for element type "
                           << dtypeName(dtype);
}

namespace {

/// True if `value` has exactly the dtype and shape of tensor type `type`.
bool matchesType(const Tensor &value, Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return false;
  FailureOr<DType> dtype = dtypeOf(ranked.getElementType());
  return succeeded(dtype) && *dtype == value.dtype() &&
         ranked.getShape() == ArrayRef<int64_t>(value.shape());
}

/// A type in Tensor::describe()'s notation ("float32[2,3]") when it has one.
std::string describeType(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  FailureOr<DType> dtype =
      ranked ? dtypeOf(ranked.getElementType()) : FailureOr<DType>(failure());
  std::string text;
  llvm::raw_string_ostream os(text);
  if (failed(dtype) || !ranked.hasStaticShape()) {
    os << type;
    return text;
  }
  os << dtypeName(*dtype) << '[';
  llvm::interleave(ranked.getShape(), os, ",");
  os << ']';
  return text;
}

LogicalResult checkOperandsAndResults(Operation *op,
                                      ArrayRef<Tensor> operands) {
  if (operands.size() != op->getNumOperands())
    return op->emitOpError() << "was given " << operands.size()
                             << " operand values for "
                             << op->getNumOperands() << " operands";
  for (auto [i, value] : llvm::enumerate(op->getOperands()))
    if (!matchesType(operands[i], value.getType()))
      return op->emitOpError()
             << "operand #" << i << " is " << operands[i].describe()
             << ", expected " << describeType(value.getType());
  for (auto [i, type] : llvm::enumerate(op->getResultTypes())) {
    auto ranked = dyn_cast<RankedTensorType>(type);
    if (!ranked || !ranked.hasStaticShape() ||
        failed(dtypeOf(ranked.getElementType())))
      return op->emitOpError() << "result #" << i << " has type " << type
                               << ", which the evaluator cannot hold";
  }
  return success();
}

/// `op`'s operands (a dlc.all_reduce's, dlc.plan.all_reduce's or
/// dlc.tp_reduce's) reduced over the ranks of each of `groups`, in rank
/// order: float32 and float64 summed in their own type, 16-bit values in
/// float32 and rounded once (as the host communicators do); a mean is that
/// sum divided by the group's size. `operands[r]` are rank r's; every rank of
/// a group gets the same results.
LogicalResult reduceOverRanks(Operation *op, RankReduction reduction,
                              ArrayRef<SmallVector<int64_t>> groups,
                              MutableArrayRef<SmallVector<Tensor>> operands,
                              MutableArrayRef<SmallVector<Tensor>> results) {
  const bool mean = reduction == RankReduction::mean;
  for (ArrayRef<int64_t> group : groups)
    for (unsigned k = 0; k < op->getNumOperands(); ++k) {
      Tensor reduced = operands[group.front()][k];
      const int64_t n = reduced.numElements();
      auto reduce = [&](auto zero, auto read, auto write) {
        for (int64_t i = 0; i < n; ++i) {
          decltype(zero) sum = zero;
          for (int64_t r : group)
            sum += read(operands[r][k], i);
          write(reduced, i,
                mean ? sum / static_cast<decltype(zero)>(group.size()) : sum);
        }
      };
      switch (reduced.dtype()) {
      case DType::F32:
        reduce(
            0.0f, [](const Tensor &t, int64_t i) { return t.data<float>()[i]; },
            [](Tensor &t, int64_t i, float v) { t.data<float>()[i] = v; });
        break;
      case DType::F64:
        reduce(
            0.0, [](const Tensor &t, int64_t i) { return t.data<double>()[i]; },
            [](Tensor &t, int64_t i, double v) { t.data<double>()[i] = v; });
        break;
      case DType::BF16:
        reduce(
            0.0f,
            [](const Tensor &t, int64_t i) {
              return static_cast<float>(t.data<BFloat16>()[i]);
            },
            [](Tensor &t, int64_t i, float v) {
              t.data<BFloat16>()[i] = BFloat16::fromFloat(v);
            });
        break;
      case DType::F16:
        reduce(
            0.0f,
            [](const Tensor &t, int64_t i) {
              return static_cast<float>(t.data<Half>()[i]);
            },
            [](Tensor &t, int64_t i, float v) {
              t.data<Half>()[i] = Half::fromFloat(v);
            });
        break;
      default:
        return eval::unsupportedType(op, reduced.dtype());
      }
      for (int64_t r : group)
        results[r].push_back(reduced);
    }
  return success();
}

/// dlc.reduce_scatter, dlc.all_gather and dlc.rank_shard, which each need
/// every rank's operands or its rank number within its data-parallel group,
/// or its tensor group (`tensor`; `groups` are those groups): `operands[r]`
/// are rank r's.
LogicalResult shardOverRanks(Operation *op, bool tensor,
                             ArrayRef<SmallVector<int64_t>> groups,
                             MutableArrayRef<SmallVector<Tensor>> operands,
                             MutableArrayRef<SmallVector<Tensor>> results) {
  const int64_t ranks = static_cast<int64_t>(groups.front().size());
  auto expectRanks = [&](int64_t attr) -> LogicalResult {
    if (attr == ranks)
      return success();
    return op->emitOpError()
           << "shards over " << attr << " ranks, but the module runs on "
           << ranks << (tensor ? " tensor" : " data") << "-parallel ranks";
  };
  if (auto shard = dyn_cast<RankShardOp>(op)) {
    if (failed(expectRanks(shard.getRanks())))
      return failure();
    for (ArrayRef<int64_t> group : groups)
      for (auto [index, r] : llvm::enumerate(group))
        results[r].push_back(
            shardOf(operands[r][0], static_cast<int64_t>(index), ranks));
    return success();
  }
  if (auto scatter = dyn_cast<ReduceScatterOp>(op)) {
    if (failed(expectRanks(scatter.getRanks())))
      return failure();
    SmallVector<SmallVector<Tensor>> reduced(operands.size());
    if (failed(reduceOverRanks(op, scatter.getReduction(), groups, operands,
                               reduced)))
      return failure();
    for (ArrayRef<int64_t> group : groups)
      for (auto [index, r] : llvm::enumerate(group))
        for (const Tensor &whole : reduced[r])
          results[r].push_back(
              shardOf(whole, static_cast<int64_t>(index), ranks));
    return success();
  }
  auto gather = cast<AllGatherOp>(op);
  if (failed(expectRanks(gather.getRanks())))
    return failure();
  for (ArrayRef<int64_t> group : groups)
    for (auto [i, type] : llvm::enumerate(gather.getResultTypes())) {
      auto ranked = cast<RankedTensorType>(type);
      std::vector<Tensor> shards;
      for (int64_t r : group)
        shards.push_back(std::move(operands[r][i]));
      Tensor whole =
          gatherShards(shards, shards.front().dtype(), ranked.getShape().vec());
      for (int64_t r : group)
        results[r].push_back(whole);
    }
  return success();
}

/// Whether the rank of pipeline stage `stage` runs `op` of a staged
/// function: a constant, an op of its stage, or one without a stage whose
/// operands it holds (a weight's transpose, the rows of a micro-batch).
bool runsOnRank(Operation &op, int64_t stage,
                const llvm::DenseMap<Value, Tensor> &held) {
  if (op.hasTrait<OpTrait::ReturnLike>() ||
      op.hasTrait<OpTrait::ConstantLike>())
    return true;
  if (auto own = op.getAttrOfType<IntegerAttr>(roles::kPipelineStageAttr))
    return own.getInt() == stage;
  return llvm::all_of(op.getOperands(),
                      [&](Value v) { return held.count(v) > 0; });
}

/// dlc.pp_transfer: each rank of stage `to` receives the value of the rank
/// of stage `from` with its replica and tensor rank; every other rank that
/// holds the value keeps it.
LogicalResult
transferBetweenStages(PpTransferOp op, const RankGrid &grid,
                      const llvm::DenseMap<Value, Operation *> &lastUser,
                      SmallVectorImpl<llvm::DenseMap<Value, Tensor>> &values) {
  const int64_t perStage = grid.dataParallel * grid.tensorParallel;
  for (int64_t r = 0; r < grid.ranks(); ++r) {
    if (grid.pipelineRank(r) != op.getTo()) {
      if (auto it = values[r].find(op.getInput());
          it != values[r].end() && lastUser.count(op.getResult()))
        values[r][op.getResult()] = it->second;
      continue;
    }
    const int64_t sender = op.getFrom() * perStage + r % perStage;
    auto it = values[sender].find(op.getInput());
    if (it == values[sender].end())
      return op.emitOpError() << "sends a value the rank of stage "
                              << op.getFrom() << " does not hold";
    if (lastUser.count(op.getResult()))
      values[r][op.getResult()] = it->second;
  }
  return success();
}

/// A staged function's results: every rank returns each result as the
/// stage of its replica and tensor rank that computes it holds it (the
/// simulation's gather).
void fillResultsFromStages(
    Operation &ret, const RankGrid &grid,
    SmallVectorImpl<llvm::DenseMap<Value, Tensor>> &values) {
  const int64_t perStage = grid.dataParallel * grid.tensorParallel;
  for (Value v : ret.getOperands())
    for (int64_t r = 0; r < grid.ranks(); ++r) {
      if (values[r].count(v))
        continue;
      for (int64_t stage = 0; stage < grid.pipeline; ++stage) {
        auto &peer = values[stage * perStage + r % perStage];
        if (auto it = peer.find(v); it != peer.end()) {
          Tensor copy = it->second;
          values[r][v] = std::move(copy);
          break;
        }
      }
    }
}

/// Runs a block on every rank of `grid` in lockstep: rank r's argument
/// values are `inputs[r]` (types already checked) and its globals
/// `globals[r]` (null where the block touches none). Each op runs on each
/// rank in turn, but a collective (dlc.all_reduce, dlc.plan.all_reduce,
/// dlc.tp_reduce), which needs every rank of its group's operands, runs
/// once for all, in a function's body (`functionBody`), and so do ZeRO's
/// dlc.reduce_scatter, dlc.all_gather and dlc.rank_shard; a nested body's
/// is an error. In a function of pipeline stages (`grid.pipeline` > 1),
/// each rank runs its stage's ops (runsOnRank), and dlc.pp_transfer gives
/// the value of one stage's rank to another's. Returns each rank's values of
/// the return-like terminator's operands.
FailureOr<SmallVector<SmallVector<Tensor>>>
evaluateBlockOnRanks(Block &block, const RankGrid &grid,
                     ArrayRef<ArrayRef<Tensor>> inputs,
                     ArrayRef<GlobalValues *> globals, bool functionBody) {
  const size_t ranks = inputs.size();
  // Each value is dropped after its last use; an operand whose last use is
  // the current op is moved into it instead of copied.
  SmallVector<llvm::DenseMap<Value, Tensor>> values(ranks);
  llvm::DenseMap<Value, Operation *> lastUser;
  for (Operation &op : block)
    for (Value operand : op.getOperands())
      lastUser[operand] = &op;
  for (size_t r = 0; r < ranks; ++r)
    for (auto [i, argument] : llvm::enumerate(block.getArguments()))
      if (lastUser.count(argument))
        values[r][argument] = inputs[r][i];
  const SmallVector<SmallVector<int64_t>> dataGroups = grid.dataGroups();
  const SmallVector<SmallVector<int64_t>> tensorGroups = grid.tensorGroups();

  const bool stages = functionBody && grid.pipeline > 1;
  for (Operation &op : block) {
    if (auto transfer = dyn_cast<PpTransferOp>(op); transfer && stages) {
      if (failed(transferBetweenStages(transfer, grid, lastUser, values)))
        return failure();
      continue;
    }
    // Which ranks run the op: all, or its pipeline stage's. An op without
    // a stage runs where its operands are; a function's results are read
    // from the stage that computes each.
    SmallVector<bool> runs(ranks, true);
    if (stages)
      for (size_t r = 0; r < ranks; ++r)
        runs[r] = runsOnRank(op, grid.pipelineRank(r), values[r]);
    if (stages && op.hasTrait<OpTrait::ReturnLike>())
      fillResultsFromStages(op, grid, values);
    SmallVector<SmallVector<Tensor>> operands(ranks);
    for (size_t r = 0; r < ranks; ++r)
      for (auto [i, operand] : llvm::enumerate(op.getOperands())) {
        if (!runs[r])
          break;
        auto it = values[r].find(operand);
        if (it == values[r].end())
          return op.emitOpError()
                 << "uses operand #" << i << ", which has no value"
                 << (stages ? " on the rank of stage " +
                                  std::to_string(grid.pipelineRank(r))
                            : std::string());
        bool usedAgain =
            lastUser[operand] != &op ||
            llvm::is_contained(op.getOperands().drop_front(i + 1), operand);
        if (usedAgain) {
          operands[r].push_back(it->second);
        } else {
          operands[r].push_back(std::move(it->second));
          values[r].erase(it);
        }
      }
    if (op.hasTrait<OpTrait::ReturnLike>())
      return operands;

    SmallVector<SmallVector<Tensor>> results(ranks);
    std::optional<RankReduction> reduction;
    bool amongTensorRanks = false;
    if (auto reduce = dyn_cast<AllReduceOp>(op))
      reduction = reduce.getReduction();
    if (auto reduce = dyn_cast<PlanAllReduceOp>(op)) {
      reduction = reduce.getReduction();
      amongTensorRanks = reduce.getTensor();
    }
    if (isa<TpReduceOp>(op)) {
      reduction = RankReduction::sum;
      amongTensorRanks = true;
    }
    if (auto gather = dyn_cast<AllGatherOp>(op))
      amongTensorRanks = gather.getTensor();
    if (auto shard = dyn_cast<RankShardOp>(op))
      amongTensorRanks = shard.getTensor();
    // A collective of a pipeline stage runs among that stage's ranks.
    auto running = [&](ArrayRef<SmallVector<int64_t>> groups) {
      SmallVector<SmallVector<int64_t>> kept;
      for (const SmallVector<int64_t> &group : groups)
        if (runs[group.front()])
          kept.push_back(group);
      return kept;
    };
    if (reduction && functionBody) {
      if (failed(reduceOverRanks(
              &op, *reduction,
              running(amongTensorRanks ? tensorGroups : dataGroups), operands,
              results)))
        return failure();
    } else if (isa<ReduceScatterOp, AllGatherOp, RankShardOp>(op) &&
               functionBody) {
      if (failed(shardOverRanks(
              &op, amongTensorRanks,
              running(amongTensorRanks ? tensorGroups : dataGroups), operands,
              results)))
        return failure();
    } else {
      for (size_t r = 0; r < ranks; ++r)
        if (runs[r] &&
            failed(evaluateOp(&op, operands[r], results[r], globals[r])))
          return failure();
    }
    for (size_t r = 0; r < ranks; ++r)
      for (auto [result, value] : llvm::zip(op.getResults(), results[r]))
        if (lastUser.count(result))
          values[r][result] = std::move(value);
  }
  return block.getParentOp()->emitOpError()
         << "has a block without a terminator";
}

/// A nested body (a fusion's, a launch's) on one rank.
FailureOr<SmallVector<Tensor>>
evaluateBlock(Block &block, ArrayRef<Tensor> inputs, GlobalValues *globals) {
  FailureOr<SmallVector<SmallVector<Tensor>>> results =
      evaluateBlockOnRanks(block, RankGrid(), {inputs}, {globals},
                           /*functionBody=*/false);
  if (failed(results))
    return failure();
  return std::move(results->front());
}

/// A fusion or a plan's kernel launch: its body on its operands.
LogicalResult evalBody(Operation *op, ArrayRef<Tensor> operands,
                       Results &results) {
  FailureOr<SmallVector<Tensor>> values =
      evaluateBlock(op->getRegion(0).front(), operands, /*globals=*/nullptr);
  if (failed(values))
    return failure();
  results.append(std::make_move_iterator(values->begin()),
                 std::make_move_iterator(values->end()));
  return success();
}

LogicalResult evalConstant(ConstantOp op, Results &results) {
  FailureOr<Tensor> value = tensorFromAttr(op.getValue());
  if (failed(value))
    return op.emitOpError() << "has a value the evaluator cannot read";
  results.push_back(std::move(*value));
  return success();
}

LogicalResult evalGlobalLoad(GlobalLoadOp op, const GlobalValues *globals,
                             Results &results) {
  StringRef name = op.getGlobal();
  if (!globals)
    return op.emitOpError() << "reads @" << name
                            << " but no global values were provided";
  auto it = globals->find(name);
  if (it == globals->end())
    return op.emitOpError() << "reads @" << name << ", which has no value";
  if (!matchesType(it->second, op.getType()))
    return op.emitOpError() << "reads @" << name << " holding "
                            << it->second.describe() << ", expected "
                            << describeType(op.getType());
  results.push_back(it->second);
  return success();
}

LogicalResult evalGlobalStore(GlobalStoreOp op, ArrayRef<Tensor> operands,
                              GlobalValues *globals) {
  StringRef name = op.getGlobal();
  if (!globals)
    return op.emitOpError() << "writes @" << name
                            << " but no global values were provided";
  auto it = globals->find(name);
  if (it == globals->end())
    return op.emitOpError() << "writes @" << name << ", which has no value";
  it->second = operands[0];
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// evaluateOp
//===----------------------------------------------------------------------===//

LogicalResult mlir::dlc::evaluateOp(Operation *op, ArrayRef<Tensor> operands,
                                    SmallVectorImpl<Tensor> &results,
                                    GlobalValues *globals) {
  if (!isa<DLCDialect>(op->getDialect()))
    return op->emitOpError() << "has no evaluator rule";
  if (failed(checkOperandsAndResults(op, operands)))
    return failure();
  size_t before = results.size();
  LogicalResult status =
      llvm::TypeSwitch<Operation *, LogicalResult>(op)
          .Case<ConstantOp>([&](auto c) { return evalConstant(c, results); })
          .Case<GlobalLoadOp>(
              [&](auto g) { return evalGlobalLoad(g, globals, results); })
          .Case<GlobalStoreOp>(
              [&](auto g) { return evalGlobalStore(g, operands, globals); })
          .Case<NegOp, AbsOp, SignOp, ExpOp, LogOp, SqrtOp, RsqrtOp,
                ReciprocalOp, CeilOp, FloorOp, RoundOp, ErfOp, SinOp, CosOp,
                TanhOp, TanOp, AsinOp, AcosOp, AtanOp, SinhOp, CoshOp, AsinhOp,
                AcoshOp, AtanhOp, SigmoidOp, NotOp>(
              [&](auto) { return evalUnary(op, operands, results); })
          .Case<AddOp, SubOp, MulOp, DivOp, RemOp, PowOp, MaxOp, MinOp, AndOp,
                OrOp, XorOp>(
              [&](auto) { return evalBinary(op, operands, results); })
          .Case<CompareOp>(
              [&](auto c) { return evalCompare(c, operands, results); })
          .Case<SelectOp>(
              [&](auto s) { return evalSelect(s, operands, results); })
          .Case<CastOp>([&](auto c) { return evalCast(c, operands, results); })
          .Case<ReshapeOp>(
              [&](auto r) { return evalReshape(r, operands, results); })
          .Case<TransposeOp>(
              [&](auto t) { return evalTranspose(t, operands, results); })
          .Case<BroadcastToOp>(
              [&](auto b) { return evalBroadcastTo(b, operands, results); })
          .Case<ConcatOp>(
              [&](auto c) { return evalConcat(c, operands, results); })
          .Case<SliceOp>(
              [&](auto s) { return evalSlice(s, operands, results); })
          .Case<PadOp>([&](auto p) { return evalPad(p, operands, results); })
          .Case<GatherOp>(
              [&](auto g) { return evalGather(g, operands, results); })
          .Case<GatherElementsOp>(
              [&](auto g) { return evalGatherElements(g, operands, results); })
          .Case<ScatterElementsOp>(
              [&](auto s) { return evalScatterElements(s, operands, results); })
          .Case<SegmentSumOp>(
              [&](auto s) { return evalSegmentSum(s, operands, results); })
          .Case<ReduceSumOp, ReduceProdOp, ReduceMaxOp, ReduceMinOp>(
              [&](auto r) {
                return evalReduce(op, r.getAxes(), operands, results);
              })
          .Case<ArgMaxOp, ArgMinOp>([&](auto a) {
            return evalArgReduce(op, static_cast<int64_t>(a.getAxis()),
                                 a.getSelectLastIndex(), operands, results);
          })
          .Case<CumSumOp>(
              [&](auto c) { return evalCumSum(c, operands, results); })
          .Case<TopKOp>([&](auto t) { return evalTopK(t, operands, results); })
          .Case<MatmulOp>([&](auto m) {
            return evalMatmul(m, operands, false, false, results);
          })
          .Case<PlanMatmulOp>(
              [&](auto m) { return evalPlanMatmul(m, operands, results); })
          .Case<PlanCopyOp, TpCopyOp, PpTransferOp, StopGradientOp>([&](auto) {
            results.push_back(operands[0]);
            return success();
          })
          .Case<ConvOp>([&](auto c) { return evalConv(c, operands, results); })
          .Case<MaxPoolOp, SumPoolOp>([&](auto p) {
            return evalPool(op, p.getWindow(), p.getStride(), p.getPadLow(),
                            p.getDilation(), operands, results);
          })
          .Case<DropoutOp>(
              [&](auto d) { return evalDropout(d, operands, results); })
          .Case<RandomUniformOp>(
              [&](auto r) { return evalRandomUniform(r, operands, results); })
          .Case<ConvGradInputOp>(
              [&](auto c) { return evalConvGradInput(c, operands, results); })
          .Case<ConvGradFilterOp>(
              [&](auto c) { return evalConvGradFilter(c, operands, results); })
          .Case<PlanConvOp>(
              [&](auto c) { return evalPlanConv(c, operands, results); })
          .Case<MaxPoolGradOp>(
              [&](auto m) { return evalMaxPoolGrad(m, operands, results); })
          .Case<AttentionOp>(
              [&](auto a) { return evalAttention(a, operands, results); })
          .Case<AttentionGradOp>(
              [&](auto a) { return evalAttentionGrad(a, operands, results); })
          .Case<CrossEntropyOp>(
              [&](auto c) { return evalCrossEntropy(c, operands, results); })
          .Case<CrossEntropyGradOp>([&](auto c) {
            return evalCrossEntropyGrad(c, operands, results);
          })
          .Case<AllReduceOp, PlanAllReduceOp, ReduceScatterOp, AllGatherOp,
                RankShardOp, TpReduceOp>([&](auto) {
            return op->emitOpError()
                   << "combines every rank's values or depends on the rank: "
                      "the evaluator runs it in a function's body, on all "
                      "ranks at once";
          })
          .Case<FusionOp, LaunchOp>(
              [&](auto f) { return evalBody(f, operands, results); })
          .Default([&](Operation *) {
            return op->emitOpError() << "has no evaluator rule";
          });
  if (failed(status)) {
    results.truncate(before);
    return failure();
  }
  assert(results.size() == before + op->getNumResults() &&
         "a rule must produce one tensor per result");
  return success();
}

//===----------------------------------------------------------------------===//
// Evaluator
//===----------------------------------------------------------------------===//

FailureOr<RankGrid> RankGrid::of(ModuleOp module, int64_t mostRanks) {
  RankGrid grid;
  for (auto [name, count] :
       {std::pair(roles::kDataParallelAttr, &grid.dataParallel),
        std::pair(roles::kTensorParallelAttr, &grid.tensorParallel),
        std::pair(roles::kPipelineStagesAttr, &grid.pipeline)}) {
    Attribute attr = module->getAttr(name);
    if (!attr)
      continue;
    auto value = dyn_cast<IntegerAttr>(attr);
    if (!value || !value.getType().isSignlessInteger(64) ||
        value.getInt() < 1 || value.getInt() > mostRanks)
      return module.emitError()
             << name << " must be an i64 number of ranks from 1 to "
             << mostRanks << ", got " << attr;
    *count = value.getInt();
  }
  if (grid.ranks() > mostRanks)
    return module.emitError() << "the module runs on " << grid.describe()
                              << ", more than " << mostRanks;
  return grid;
}

std::string RankGrid::describe() const {
  if (ranks() == 1)
    return "1 rank";
  std::string text;
  if (dataParallel > 1)
    text = std::to_string(dataParallel) + " data-parallel";
  if (tensorParallel > 1)
    text += (text.empty() ? "" : " x ") + std::to_string(tensorParallel) +
            " tensor-parallel";
  if (pipeline > 1)
    text += (text.empty() ? "" : " x ") + std::to_string(pipeline) +
            " pipeline-stage";
  return text + " ranks";
}

SmallVector<SmallVector<int64_t>> RankGrid::dataGroups() const {
  SmallVector<SmallVector<int64_t>> groups(pipeline * tensorParallel);
  for (int64_t r = 0; r < ranks(); ++r)
    groups[pipelineRank(r) * tensorParallel + tensorRank(r)].push_back(r);
  return groups;
}

SmallVector<SmallVector<int64_t>> RankGrid::tensorGroups() const {
  SmallVector<SmallVector<int64_t>> groups(pipeline * dataParallel);
  for (int64_t r = 0; r < ranks(); ++r)
    groups[pipelineRank(r) * dataParallel + dataRank(r)].push_back(r);
  return groups;
}

FailureOr<Evaluator> Evaluator::create(ModuleOp module) {
  Evaluator evaluator(module);
  // Each simulated rank holds a copy of every global: the most the
  // evaluator simulates.
  constexpr int64_t kMostRanks = 1024;
  FailureOr<RankGrid> grid = RankGrid::of(module, kMostRanks);
  if (failed(grid))
    return failure();
  evaluator.grid_ = *grid;
  evaluator.globals_.resize(grid->ranks());
  for (GlobalOp global : module.getOps<GlobalOp>()) {
    StringRef name = global.getSymName();
    std::optional<ElementsAttr> init = global.getInitialValue();
    if (!init)
      return global.emitOpError() << "@" << name << " has no initial value";
    FailureOr<Tensor> value = tensorFromAttr(*init);
    if (failed(value))
      return global.emitOpError()
             << "@" << name
             << " has an initial value the evaluator cannot read (a "
                "dense_resource blob without data?)";
    // The verifier checked that a split global's initial value is the
    // whole of its slices (a shard's is its own).
    std::optional<roles::TpSplit> split =
        roles::shardedTypeOf(global->getAttrDictionary())
            ? std::nullopt
            : roles::tpSplitIn(global->getAttrDictionary());
    for (int64_t r = 0; r < grid->ranks(); ++r)
      evaluator.globals_[r][name] =
          split ? sliceOf(*value, split->dim, grid->tensorRank(r),
                          grid->tensorParallel, split->groups)
                : *value;
  }
  return evaluator;
}

FailureOr<SmallVector<Tensor>> Evaluator::run(func::FuncOp func,
                                              ArrayRef<Tensor> inputs) {
  if (ranks() != 1)
    return func.emitOpError()
           << "belongs to a module partitioned for " << grid_.describe()
           << ": run every rank's inputs together "
              "(dlc-run simulates the ranks)";
  FailureOr<SmallVector<SmallVector<Tensor>>> results =
      runRanks(func, {inputs});
  if (failed(results))
    return failure();
  return std::move(results->front());
}

FailureOr<SmallVector<SmallVector<Tensor>>>
Evaluator::runRanks(func::FuncOp func, ArrayRef<ArrayRef<Tensor>> inputs) {
  if (func.isExternal())
    return func.emitOpError() << "has no body to evaluate";
  if (!func.getBody().hasOneBlock())
    return func.emitOpError() << "has more than one block; the evaluator "
                                 "runs single-block functions";
  if (static_cast<int64_t>(inputs.size()) != ranks())
    return func.emitOpError() << "runs on " << ranks() << " ranks, given "
                              << inputs.size() << " ranks' inputs";
  Block &block = func.getBody().front();
  for (auto [rank, rankInputs] : llvm::enumerate(inputs)) {
    std::string where =
        ranks() > 1 ? " of rank " + std::to_string(rank) : std::string();
    if (rankInputs.size() != block.getNumArguments())
      return func.emitOpError()
             << "expects " << block.getNumArguments() << " inputs" << where
             << ", got " << rankInputs.size();
    for (auto [i, argument] : llvm::enumerate(block.getArguments()))
      if (!matchesType(rankInputs[i], argument.getType()))
        return func.emitOpError()
               << "input #" << i << where << " is " << rankInputs[i].describe()
               << ", expected " << describeType(argument.getType());
  }
  SmallVector<GlobalValues *> globals;
  for (GlobalValues &g : globals_)
    globals.push_back(&g);
  return evaluateBlockOnRanks(block, grid_, inputs, globals,
                              /*functionBody=*/true);
}
