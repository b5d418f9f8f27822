//===- Normalization.cpp - ONNX normalization and softmax ops -------------===//
//
// Every op here is a composition of reductions and elementwise ops: the
// statistics are means over the normalized axes kept as size-1 dimensions,
// so they broadcast back over the input; per-channel parameters are
// reshaped to [1, C, 1, ...]. The variance is the biased (population) one
// throughout, as ONNX specifies, except in BatchNormalization's running
// variance under training mode, which follows PyTorch (unbiased) and is
// written back to its initializer (see ImportMode). Softmax, LogSoftmax
// and Hardmax before opset 13 normalize the input coerced to 2-D at the
// axis, which is a reshape around the one-axis form.
//
//===----------------------------------------------------------------------===//

#include "frontend/NodeContext.h"
#include "frontend/ops/RuleUtils.h"
#include "frontend/TensorProto.h"
#include "ir/eval/Evaluator.h"

using namespace mlir;
using namespace mlir::dlc;

namespace {

/// Checks that each of `params` (named by `names`) has shape [channels].
bool checkChannelParams(NodeContext &c, ArrayRef<Value> params,
                        ArrayRef<StringRef> names, int64_t channels) {
  for (auto [v, name] : llvm::zip(params, names)) {
    if (!v)
      return false;
    if (typeOf(v).getShape() != ArrayRef<int64_t>{channels}) {
      c.error() << name << " has shape [" << typeOf(v).getShape()
                << "], expected [" << channels << "]";
      return false;
    }
  }
  return true;
}

/// A [C] parameter as [1, C, 1, ...] for an input of rank `rank` (rank 1
/// inputs have one channel), in `type`.
Value channelParam(NodeContext &c, Value p, int64_t rank, Type type) {
  if (!p)
    return {};
  SmallVector<int64_t> shape(rank, 1);
  if (rank >= 2)
    shape[1] = typeOf(p).getDimSize(0);
  return c.reshape(c.cast(p, type), shape);
}

/// (x - mean) / sqrt(var + epsilon) over `axes` (kept), with the mean and
/// variance (biased) also returned.
struct Standardized {
  Value centered, mean, variance;
};

/// With `ranks` > 1 the statistics are the global batch's: each rank's
/// means are averaged over the data-parallel ranks, whose shares of the
/// batch are equal (the variance's over the global mean).
Standardized standardize(NodeContext &c, Value x, ArrayRef<int64_t> axes,
                         int64_t ranks = 1) {
  auto mean = [&](Value v) -> Value {
    Value m = c.mean(v, axes, /*keepDims=*/true);
    if (ranks == 1)
      return m;
    return AllReduceOp::create(c.builder(), c.loc(), ValueRange{m},
                               RankReduction::mean, /*bucket=*/0)
        .getResult(0);
  };
  Standardized s;
  s.mean = mean(x);
  s.centered = c.build<SubOp>({x, s.mean});
  s.variance = mean(c.build<MulOp>({s.centered, s.centered}));
  return s;
}

Value invStdDev(NodeContext &c, Value variance, double epsilon) {
  return c.unary<RsqrtOp>(
      c.build<AddOp>({variance, scalarLike(c, variance, epsilon)}));
}

//===----------------------------------------------------------------------===//
// BatchNormalization
//===----------------------------------------------------------------------===//

/// Whether the node normalizes with batch statistics. In training mode
/// always, in inference mode never. As exported, from version 14 the
/// training_mode attribute says so; before, requesting any output beyond Y
/// does (version 6 also has is_test, which forbids them).
std::optional<bool> batchNormTraining(NodeContext &c) {
  if (c.version() < 9 && c.intAttr("spatial", 1) == 0) {
    c.error() << "spatial=0 (per-activation statistics) is not supported; "
                 "flatten the input to [N, C * D1 * ...] instead";
    return std::nullopt;
  }
  if (c.mode() != ImportMode::AsExported)
    return c.mode() == ImportMode::Training;
  bool extraOutputs = false;
  for (size_t i = 1; i < c.numOutputs(); ++i)
    extraOutputs = extraOutputs || c.wantsOutput(i);
  if (c.version() >= 14) {
    bool training = c.intAttr("training_mode", 0) != 0;
    if (!training && extraOutputs) {
      c.error() << "running_mean and running_var outputs need training_mode=1";
      return std::nullopt;
    }
    return training;
  }
  if (c.version() < 7 && c.intAttr("is_test", 0) != 0 && extraOutputs) {
    c.error() << "outputs beyond Y need is_test=0";
    return std::nullopt;
  }
  return extraOutputs;
}

/// In training mode, the initializers holding the running statistics
/// (inputs 3 and 4), which the node writes back; null after an error.
std::optional<std::pair<GlobalOp, GlobalOp>> runningGlobals(NodeContext &c) {
  GlobalOp mean = c.globalOf(c.input(3)), var = c.globalOf(c.input(4));
  for (auto [global, index, name] :
       {std::tuple(mean, 3, "mean"), std::tuple(var, 4, "var")}) {
    if (!global) {
      c.error() << "training mode updates the running statistics, so input "
                << index << " (" << name << ") must be an initializer";
      return std::nullopt;
    }
  }
  if (mean == var) {
    c.error() << "training mode updates the running statistics, so mean and "
                 "var must be different initializers, got '"
              << mean.getSymName() << "' for both";
    return std::nullopt;
  }
  return std::pair(mean, var);
}

void batchNormRule(NodeContext &c) {
  Value x = c.input(0), scale = c.input(1), bias = c.input(2),
        mean = c.input(3), var = c.input(4);
  if (!x || !scale || !bias || !mean || !var)
    return;
  int64_t rank = typeOf(x).getRank();
  if (rank < 1) {
    c.error() << "input must have rank 1 or more, got " << typeOf(x);
    return;
  }
  int64_t channels = rank >= 2 ? typeOf(x).getDimSize(1) : 1;
  if (!checkChannelParams(c, {scale, bias, mean, var},
                          {"scale", "B", "mean", "var"}, channels))
    return;
  std::optional<bool> training = batchNormTraining(c);
  if (!training)
    return;
  double epsilon = c.floatAttr("epsilon", 1e-5f);
  Type type = elemType(x);
  Value scaleC = channelParam(c, scale, rank, type);
  Value biasC = channelParam(c, bias, rank, type);

  if (!*training) {
    // y = (x - mean) * (scale / sqrt(var + epsilon)) + B
    Value factor = c.build<MulOp>(
        {scaleC, invStdDev(c, channelParam(c, var, rank, type), epsilon)});
    Value centered = c.build<SubOp>({x, channelParam(c, mean, rank, type)});
    c.setOutput(0, c.build<AddOp>({c.build<MulOp>({centered, factor}), biasC}));
    // Only an inference-mode import of a training node gets here with
    // outputs beyond Y: the running statistics are left as they are, and
    // the saved statistics (before version 14) are the ones used.
    for (size_t i = 1; i < c.numOutputs(); ++i)
      if (c.wantsOutput(i))
        c.setOutput(i, i % 2 ? mean : var);
    return;
  }

  // Batch statistics over every axis but the channel axis.
  SmallVector<int64_t> axes = {0};
  for (int64_t a = 2; a < rank; ++a)
    axes.push_back(a);
  bool trainingMode = c.mode() == ImportMode::Training;
  // Elements per channel, in every rank's batch where the statistics are
  // synchronized.
  int64_t ranks = trainingMode ? c.syncBatchNormRanks() : 1;
  int64_t count =
      typeOf(x).getNumElements() / std::max<int64_t>(channels, 1) * ranks;
  std::optional<std::pair<GlobalOp, GlobalOp>> globals;
  if (trainingMode) {
    // PyTorch refuses this too: the unbiased variance divides by N - 1.
    if (count < 2) {
      c.error() << "training mode needs more than 1 value per channel, got "
                << count << " for input " << typeOf(x);
      return;
    }
    globals = runningGlobals(c);
    if (!globals)
      return;
  }
  Standardized s = standardize(c, x, axes, ranks);
  Value factor = c.build<MulOp>({scaleC, invStdDev(c, s.variance, epsilon)});
  c.setOutput(0, c.build<AddOp>({c.build<MulOp>({s.centered, factor}), biasC}));

  // running = input * momentum + current * (1 - momentum), in the type of
  // the running statistics. ONNX updates the variance with the biased
  // batch variance; PyTorch, whose update training mode follows, with the
  // unbiased one (ONNX's momentum is 1 - PyTorch's).
  double momentum = c.floatAttr("momentum", 0.9f);
  auto running = [&](Value input, Value current) {
    Value batch = c.cast(c.reshape(current, {channels}), elemType(input));
    return c.build<AddOp>(
        {c.build<MulOp>({input, scalarLike(c, input, momentum)}),
         c.build<MulOp>({batch, scalarLike(c, input, 1.0 - momentum)})});
  };
  if (trainingMode) {
    Value unbiased = c.build<MulOp>(
        {s.variance,
         scalarLike(c, s.variance, double(count) / double(count - 1))});
    // The statistics as they are now: another node sharing them (a module
    // called twice) may have updated them earlier in this step, and
    // PyTorch chains the updates.
    auto current = [&](GlobalOp global) -> Value {
      return GlobalLoadOp::create(c.builder(), c.loc(), global.getType(),
                                  global.getSymName());
    };
    Value newMean = running(current(globals->first), s.mean);
    Value newVar = running(current(globals->second), unbiased);
    if (!newMean || !newVar)
      return;
    GlobalStoreOp::create(c.builder(), c.loc(), globals->first.getSymName(),
                          newMean);
    GlobalStoreOp::create(c.builder(), c.loc(), globals->second.getSymName(),
                          newVar);
    c.setOutput(1, newMean);
    c.setOutput(2, newVar);
  } else {
    if (c.wantsOutput(1))
      c.setOutput(1, running(mean, s.mean));
    if (c.wantsOutput(2))
      c.setOutput(2, running(var, s.variance));
  }
  // Before version 14 the batch statistics are outputs too.
  if (c.wantsOutput(3))
    c.setOutput(3, c.reshape(s.mean, {channels}));
  if (c.wantsOutput(4))
    c.setOutput(4, c.reshape(s.variance, {channels}));
}

//===----------------------------------------------------------------------===//
// LayerNormalization, InstanceNormalization
//===----------------------------------------------------------------------===//

void layerNormRule(NodeContext &c) {
  Value x = c.input(0), scale = c.input(1);
  if (!x || !scale)
    return;
  int64_t rank = typeOf(x).getRank();
  std::optional<int64_t> axis = c.normalizeAxis(c.intAttr("axis", -1), rank);
  if (!axis)
    return;
  // stash_type asks for the statistics in another precision (float32 by
  // default); dlc computes them in the input type, where the evaluator
  // already accumulates reductions in float64, and only gives the Mean and
  // InvStdDev outputs the stash type the model declares for them.
  int64_t stash = c.intAttr("stash_type", 1);
  std::optional<DType> stashType = dtypeFromOnnx(static_cast<int32_t>(stash));
  if (!stashType || !isFloat(*stashType)) {
    c.error() << "stash_type " << stash << " is not a floating-point type";
    return;
  }
  SmallVector<int64_t> axes;
  for (int64_t a = *axis; a < rank; ++a)
    axes.push_back(a);
  Standardized s = standardize(c, x, axes);
  Value inv = invStdDev(c, s.variance, c.floatAttr("epsilon", 1e-5f));
  Value y = c.build<MulOp>({c.build<MulOp>({s.centered, inv}), scale});
  if (c.hasInput(2))
    y = c.build<AddOp>({y, c.input(2)});
  if (y && y.getType() != x.getType()) {
    c.error() << "Scale and B must broadcast to the input shape "
              << typeOf(x) << ", got " << typeOf(y);
    return;
  }
  c.setOutput(0, y);
  Type statType = elementTypeOf(c.context(), *stashType);
  if (c.wantsOutput(1))
    c.setOutput(1, c.cast(s.mean, statType));
  if (c.wantsOutput(2))
    c.setOutput(2, c.cast(inv, statType));
}

void instanceNormRule(NodeContext &c) {
  Value x = c.input(0), scale = c.input(1), bias = c.input(2);
  if (!x || !scale || !bias)
    return;
  int64_t rank = typeOf(x).getRank();
  if (rank < 3) {
    c.error() << "input must have rank 3 or more (N, C, spatial...), got "
              << typeOf(x);
    return;
  }
  int64_t channels = typeOf(x).getDimSize(1);
  if (!checkChannelParams(c, {scale, bias}, {"scale", "B"}, channels))
    return;
  SmallVector<int64_t> axes;
  for (int64_t a = 2; a < rank; ++a)
    axes.push_back(a);
  Type type = elemType(x);
  Standardized s = standardize(c, x, axes);
  Value inv = invStdDev(c, s.variance, c.floatAttr("epsilon", 1e-5f));
  Value y = c.build<MulOp>({c.build<MulOp>({s.centered, inv}),
                            channelParam(c, scale, rank, type)});
  c.setOutput(0, c.build<AddOp>({y, channelParam(c, bias, rank, type)}));
}

//===----------------------------------------------------------------------===//
// MeanVarianceNormalization
//===----------------------------------------------------------------------===//

/// MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) over
/// `axes` (default [0, 2, 3]), as ONNX's function body defines it, with the
/// variance computed from centered values (never negative).
void meanVarianceNormalizationRule(NodeContext &c) {
  Value x = c.input(0);
  if (!x)
    return;
  RankedTensorType type = typeOf(x);
  if (!isa<FloatType>(type.getElementType())) {
    c.error() << "input " << type << " must have a float element type";
    return;
  }
  std::vector<int64_t> axes =
      c.hasAttr("axes") ? c.intsAttr("axes") : std::vector<int64_t>{0, 2, 3};
  std::optional<SmallVector<int64_t>> normalized =
      c.normalizeAxes(axes, type.getRank());
  if (!normalized)
    return;
  Value centered =
      c.build<SubOp>({x, c.mean(x, *normalized, /*keepDims=*/true)});
  Value variance = c.mean(c.build<MulOp>({centered, centered}), *normalized,
                          /*keepDims=*/true);
  Value epsilon = c.scalar(type.getElementType(), 1e-9);
  Value stddev = c.build<AddOp>({c.unary<SqrtOp>(variance), epsilon});
  c.setOutput(0, c.build<DivOp>({centered, stddev}));
}

//===----------------------------------------------------------------------===//
// Softmax, LogSoftmax, Hardmax
//===----------------------------------------------------------------------===//

/// One-hot of the first maximum along `axis`, in x's type.
Value hardmax(NodeContext &c, Value x, int64_t axis) {
  if (!x)
    return {};
  RankedTensorType type = typeOf(x);
  Value index = c.build<ArgMaxOp>(
      {x}, {c.namedI64("axis", axis),
            c.named("keep_dims", c.builder().getUnitAttr())});
  int64_t n = type.getDimSize(axis);
  Tensor iota(DType::I64, {n});
  for (int64_t i = 0; i < n; ++i)
    iota.data<int64_t>()[i] = i;
  SmallVector<int64_t> shape(type.getRank(), 1);
  shape[axis] = n;
  Value positions = c.reshape(c.constant(iota), shape);
  return c.cast(c.compare(ComparePredicate::eq, index, positions),
                type.getElementType());
}

/// Softmax, LogSoftmax or Hardmax along one axis.
using AxisFn = Value (*)(NodeContext &, Value, int64_t);

/// Version 13 normalizes along `axis` (default -1). Earlier versions
/// coerce the input to 2-D [d0 * ... * d(axis-1), d(axis) * ... * d(n-1)]
/// (default axis 1) and normalize its rows.
template <AxisFn F> void softmaxLikeRule(NodeContext &c) {
  Value x = c.input(0);
  if (!x)
    return;
  RankedTensorType type = typeOf(x);
  int64_t rank = type.getRank();
  if (c.version() >= 13) {
    std::optional<int64_t> axis = c.normalizeAxis(c.intAttr("axis", -1), rank);
    if (axis)
      c.setOutput(0, F(c, x, *axis));
    return;
  }
  int64_t axis = c.intAttr("axis", 1);
  if (axis < -rank || axis > rank) {
    c.error() << "axis " << axis << " is out of range for rank " << rank;
    return;
  }
  if (axis < 0)
    axis += rank;
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? rows : cols) *= type.getDimSize(d);
  Value y = F(c, c.reshape(x, {rows, cols}), 1);
  c.setOutput(0, c.reshape(y, type.getShape()));
}

Value softmaxOn(NodeContext &c, Value x, int64_t axis) {
  return c.softmax(x, axis);
}

Value logSoftmaxOn(NodeContext &c, Value x, int64_t axis) {
  return c.logSoftmax(x, axis);
}

} // namespace

void mlir::dlc::addNormalizationRules(OpRuleTable &t) {
  t["BatchNormalization"] = {batchNormRule, 6};
  t["LayerNormalization"] = {layerNormRule, 17};
  t["InstanceNormalization"] = {instanceNormRule, 6};
  t["MeanVarianceNormalization"] = {meanVarianceNormalizationRule, 9};
  t["Softmax"] = {softmaxLikeRule<softmaxOn>, 1};
  t["LogSoftmax"] = {softmaxLikeRule<logSoftmaxOn>, 1};
  t["Hardmax"] = {softmaxLikeRule<hardmax>, 1};
}
