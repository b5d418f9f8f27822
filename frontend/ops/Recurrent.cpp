//===- Recurrent.cpp - ONNX RNN, GRU and LSTM -----------------------------===//
//
// The recurrent ops are unrolled over the static sequence length into dlc
// ops, so training differentiates matmuls, slices and activations like any
// other graph. Per direction, the input projection of every step is one
// matmul X[S, B, I] x W^T[I, G*H] with the biases Wb + Rb added once; each
// step then slices its row, adds the recurrent product H[t-1] x R^T, slices
// the gates (ONNX orders: LSTM i, o, f, c; GRU z, r, h) and applies the
// activation functions, `clip` bounding every activation's input.
//
// sequence_lens must be a constant. A step past a batch entry's length keeps
// that entry's state and outputs zeros: a select on a constant [B, 1] mask.
// A step that no entry reaches is not computed and one that every entry
// reaches needs no mask, so equal lengths give the plain unrolling. The
// reverse direction walks t = S-1 .. 0, so an entry's masked steps come
// first and its recurrence starts, from the initial state, at its own last
// step, as ONNX specifies. An entry of length 0 thus keeps its initial state
// in Y_h and Y_c (onnxruntime returns zeros there; the spec is silent).
//
//===----------------------------------------------------------------------===//

#include "frontend/NodeContext.h"
#include "frontend/ops/RuleUtils.h"

#include "llvm/ADT/STLExtras.h"

#include <map>

using namespace mlir;
using namespace mlir::dlc;

namespace {

enum class CellKind { RNN, GRU, LSTM };

enum class ActivationKind {
  Relu,
  Tanh,
  Sigmoid,
  Affine,
  LeakyRelu,
  ThresholdedRelu,
  ScaledTanh,
  HardSigmoid,
  Elu,
  Softsign,
  Softplus
};

struct ActivationInfo {
  const char *name;
  ActivationKind kind;
  bool usesAlpha, usesBeta;
  double alpha, beta;
};

/// The functions the `activations` attribute may name, with the defaults of
/// the ONNX ops of the same name (Affine and ScaledTanh, once experimental
/// ops, default to the identity and to Tanh).
constexpr ActivationInfo kActivations[] = {
    {"Relu", ActivationKind::Relu, false, false, 0.0, 0.0},
    {"Tanh", ActivationKind::Tanh, false, false, 0.0, 0.0},
    {"Sigmoid", ActivationKind::Sigmoid, false, false, 0.0, 0.0},
    {"Affine", ActivationKind::Affine, true, true, 1.0, 0.0},
    {"LeakyRelu", ActivationKind::LeakyRelu, true, false, 0.01, 0.0},
    {"ThresholdedRelu", ActivationKind::ThresholdedRelu, true, false, 1.0, 0.0},
    {"ScaledTanh", ActivationKind::ScaledTanh, true, true, 1.0, 1.0},
    {"HardSigmoid", ActivationKind::HardSigmoid, true, true, 0.2, 0.5},
    {"Elu", ActivationKind::Elu, true, false, 1.0, 0.0},
    {"Softsign", ActivationKind::Softsign, false, false, 0.0, 0.0},
    {"Softplus", ActivationKind::Softplus, false, false, 0.0, 0.0},
};

struct Activation {
  ActivationKind kind;
  double alpha = 0.0, beta = 0.0;
};

/// A direction's recurrent state: H [B, H], and C [B, H] for LSTM.
struct State {
  Value h, c;
};

/// What a step's sequence_lens mask looks like.
struct StepMask {
  enum Kind { All, None, Some } kind;
  /// [B, 1] i1, true where the step is inside the entry's sequence (Some).
  Value mask;
};

/// What RNN, GRU and LSTM share: the checked operands in time-major form,
/// the activation functions of each direction, the masks of sequence_lens,
/// the step loop and the assembly of Y, Y_h and Y_c.
class Recurrence {
public:
  Recurrence(NodeContext &c, CellKind kind)
      : c(c), kind(kind), gates(kind == CellKind::RNN   ? 1
                                : kind == CellKind::GRU ? 3
                                                        : 4),
        functions(kind == CellKind::RNN   ? 1
                  : kind == CellKind::GRU ? 2
                                          : 3) {}

  /// Reads and checks the inputs and attributes; false after an error.
  bool parse();

  int64_t numDirections() const { return reversed.size(); }
  bool hasBias() const { return static_cast<bool>(b); }
  bool hasPeepholes() const { return static_cast<bool>(peepholes); }
  const Activation &activation(int64_t d, size_t i) const {
    return activations[d][i];
  }

  /// Direction d's biases Wb and Rb, [G*H] each (B must be present).
  std::pair<Value, Value> biases(int64_t d) {
    Value both = directionSlice(b, d);
    return {columns(both, 0, gates), columns(both, gates, gates)};
  }
  /// Wb + Rb of direction d, or null without B.
  Value summedBias(int64_t d) {
    if (!hasBias())
      return {};
    auto [wb, rb] = biases(d);
    return add(wb, rb);
  }
  /// X * W^T (+ bias) for every step of direction d: [S, B, G*H].
  Value inputProjection(int64_t d, Value bias) {
    Value wt = c.transpose(directionSlice(w, d), {1, 0});
    Value xw = c.build<MatmulOp>({x, wt});
    return bias ? add(xw, bias) : xw;
  }
  /// R^T of direction d: [H, G*H].
  Value recurrentWeights(int64_t d) {
    return c.transpose(directionSlice(r, d), {1, 0});
  }
  /// Direction d's peepholes P[iof], [3*H] (P must be present).
  Value peepholeWeights(int64_t d) { return directionSlice(peepholes, d); }
  /// Step t of a projection [S, B, N]: [B, N].
  Value row(Value projection, int64_t t) {
    if (!projection)
      return {};
    int64_t n = typeOf(projection).getDimSize(2);
    return c.reshape(c.slice(projection, {t, 0, 0}, {1, batch, n}, {1, 1, 1}),
                     {batch, n});
  }
  /// Gates [first, first + count) of v's last dimension (G*H wide, or any
  /// multiple of H).
  Value columns(Value v, int64_t first, int64_t count) {
    if (!v)
      return {};
    ArrayRef<int64_t> shape = typeOf(v).getShape();
    SmallVector<int64_t> offsets(shape.size(), 0), sizes(shape);
    offsets.back() = first * hidden;
    sizes.back() = count * hidden;
    return c.slice(v, offsets, sizes, SmallVector<int64_t>(shape.size(), 1));
  }

  /// The initial H (or C for `cell`) of direction d, zeros when absent.
  Value initialState(int64_t d, bool cell) {
    Value v = cell ? initialC : initialH;
    if (!v)
      return zeros();
    if (!batchFirst)
      return directionSlice(v, d);
    return c.reshape(c.slice(v, {0, d, 0}, {batch, 1, hidden}, {1, 1, 1}),
                     {batch, hidden});
  }

  /// Runs direction d from `state` through every step, `step(t, previous)`
  /// computing the next state; records the outputs of Y and the final state.
  void run(int64_t d, State state,
           llvm::function_ref<State(int64_t, const State &)> step);

  /// Sets the requested outputs Y, Y_h and (LSTM) Y_c.
  void setOutputs();

  /// The activation `a` of x, x clipped first when `clip` is given.
  Value activate(const Activation &a, Value x);

  /// A cached rank-0 constant of the element type.
  Value k(double value) {
    auto it = scalars.find(value);
    if (it != scalars.end())
      return it->second;
    Value v = c.scalar(type, value);
    scalars[value] = v;
    return v;
  }
  /// Binary ops on built values. Callers build at most one operand inside
  /// the call: C++ leaves the order of argument evaluation unspecified, and
  /// the order of the emitted ops should not depend on the compiler (braced
  /// operand lists of c.build are evaluated in order).
  Value add(Value a, Value b) { return c.build<AddOp>({a, b}); }
  Value sub(Value a, Value b) { return c.build<SubOp>({a, b}); }
  Value mul(Value a, Value b) { return c.build<MulOp>({a, b}); }
  Value matmul(Value a, Value b) { return c.build<MatmulOp>({a, b}); }

private:
  bool checkShape(Value v, StringRef what, ArrayRef<int64_t> shape);
  bool parseActivations();
  StepMask maskAt(int64_t t);
  /// A cached [B, H] zero constant.
  Value zeros() {
    if (!zeroState)
      zeroState = c.broadcastTo(k(0.0), {batch, hidden});
    return zeroState;
  }
  /// v[d] for v of shape [D, ...]: shape [...].
  Value directionSlice(Value v, int64_t d) {
    if (!v)
      return {};
    ArrayRef<int64_t> shape = typeOf(v).getShape();
    SmallVector<int64_t> offsets(shape.size(), 0), sizes(shape);
    offsets[0] = d;
    sizes[0] = 1;
    return c.reshape(
        c.slice(v, offsets, sizes, SmallVector<int64_t>(shape.size(), 1)),
        shape.drop_front());
  }
  /// Joins values along `axis`; one value is itself.
  Value concat(ArrayRef<Value> values, int64_t axis) {
    if (values.size() == 1)
      return values.front();
    return c.build<ConcatOp>(values, {c.namedI64("axis", axis)});
  }

  NodeContext &c;
  CellKind kind;
  /// Gates per direction (G) and activation functions per direction.
  int64_t gates;
  size_t functions;

  Type type;
  bool batchFirst = false;
  int64_t seq = 0, batch = 0, inputSize = 0, hidden = 0;
  /// Per direction: whether it runs from the last step to the first.
  SmallVector<bool, 2> reversed;
  /// X in [S, B, I] order; W, R, B, initial_h, initial_c, P as given.
  Value x, w, r, b, initialH, initialC, peepholes;
  std::optional<std::vector<int64_t>> lengths;
  std::optional<double> clip;
  SmallVector<SmallVector<Activation, 3>, 2> activations;

  std::map<double, Value> scalars;
  Value zeroState;
  std::map<int64_t, Value> masks;
  /// Per direction: each step's Y entry [B, H] (when Y is requested), and
  /// the final state.
  SmallVector<SmallVector<Value>, 2> ys;
  SmallVector<State, 2> finals;
};

bool Recurrence::checkShape(Value v, StringRef what, ArrayRef<int64_t> shape) {
  RankedTensorType t = typeOf(v);
  if (t.getShape() != shape) {
    c.error() << what << " has shape [" << t.getShape() << "], expected ["
              << shape << "]";
    return false;
  }
  if (t.getElementType() != type) {
    c.error() << what << " has element type " << t.getElementType()
              << ", expected X's " << type;
    return false;
  }
  return true;
}

bool Recurrence::parse() {
  Value xIn = c.input(0);
  w = c.input(1);
  r = c.input(2);
  if (!xIn || !w || !r)
    return false;
  RankedTensorType xType = typeOf(xIn);
  type = xType.getElementType();
  if (!isa<FloatType>(type)) {
    c.error() << "X must be a floating-point tensor, got " << xType;
    return false;
  }
  if (xType.getRank() != 3) {
    c.error() << "X must have rank 3, got " << xType;
    return false;
  }
  int64_t layout = c.intAttr("layout", 0);
  if (layout != 0 && layout != 1) {
    c.error() << "layout " << layout << " must be 0 or 1";
    return false;
  }
  batchFirst = layout == 1;
  seq = xType.getDimSize(batchFirst ? 1 : 0);
  batch = xType.getDimSize(batchFirst ? 0 : 1);
  inputSize = xType.getDimSize(2);
  if (seq == 0) {
    c.error() << "X " << xType << " has an empty sequence";
    return false;
  }
  x = batchFirst ? c.transpose(xIn, {1, 0, 2}) : xIn;

  std::string direction = c.stringAttr("direction", "forward");
  if (direction == "forward")
    reversed = {false};
  else if (direction == "reverse")
    reversed = {true};
  else if (direction == "bidirectional")
    reversed = {false, true};
  else {
    c.error() << "direction '" << direction
              << "' is not one of forward, reverse, bidirectional";
    return false;
  }
  int64_t dirs = numDirections();

  RankedTensorType rType = typeOf(r);
  if (rType.getRank() != 3) {
    c.error() << "R must have rank 3, got " << rType;
    return false;
  }
  hidden = rType.getDimSize(2);
  if (c.hasAttr("hidden_size") && c.intAttr("hidden_size", 0) != hidden) {
    c.error() << "hidden_size " << c.intAttr("hidden_size", 0)
              << " does not match R of shape [" << rType.getShape()
              << "] (last dimension " << hidden << ")";
    return false;
  }
  if (hidden <= 0) {
    c.error() << "hidden size " << hidden << " must be positive";
    return false;
  }
  if (!checkShape(w, "W", {dirs, gates * hidden, inputSize}) ||
      !checkShape(r, "R", {dirs, gates * hidden, hidden}))
    return false;
  if (c.hasInput(3)) {
    b = c.input(3);
    if (!checkShape(b, "B", {dirs, 2 * gates * hidden}))
      return false;
  }
  if (c.hasInput(4)) {
    lengths = c.requireConstantInts(4, "sequence_lens");
    if (!lengths)
      return false;
    if (static_cast<int64_t>(lengths->size()) != batch) {
      c.error() << "sequence_lens has " << lengths->size()
                << " values, expected the batch size " << batch;
      return false;
    }
    for (auto [i, len] : llvm::enumerate(*lengths)) {
      if (len < 0 || len > seq) {
        c.error() << "sequence_lens[" << i << "] is " << len << ", outside [0, "
                  << seq << "]";
        return false;
      }
    }
  }
  SmallVector<int64_t> stateShape =
      batchFirst ? SmallVector<int64_t>{batch, dirs, hidden}
                 : SmallVector<int64_t>{dirs, batch, hidden};
  if (c.hasInput(5)) {
    initialH = c.input(5);
    if (!checkShape(initialH, "initial_h", stateShape))
      return false;
  }
  if (kind == CellKind::LSTM && c.hasInput(6)) {
    initialC = c.input(6);
    if (!checkShape(initialC, "initial_c", stateShape))
      return false;
  }
  if (kind == CellKind::LSTM && c.hasInput(7)) {
    peepholes = c.input(7);
    if (!checkShape(peepholes, "P", {dirs, 3 * hidden}))
      return false;
  }
  if (c.hasAttr("clip")) {
    double bound = c.floatAttr("clip", 0.0f);
    if (!(bound > 0.0)) {
      c.error() << "clip " << bound << " must be positive";
      return false;
    }
    clip = bound;
  }
  return parseActivations();
}

/// The `activations` attribute lists the functions of the forward direction
/// then of the reverse one; a list for one direction serves both (and a
/// one-direction node takes the first of a two-direction list, as the RNN
/// schema's default ["Tanh", "Tanh"] is). activation_alpha and
/// activation_beta are consumed in order by the functions that take an
/// alpha or a beta, the rest keeping their defaults (onnxruntime's reading).
bool Recurrence::parseActivations() {
  SmallVector<Activation, 6> list;
  std::vector<std::string> names = c.stringsAttr("activations");
  if (c.failed())
    return false;
  if (names.empty()) {
    switch (kind) {
    case CellKind::RNN:
      list = {{ActivationKind::Tanh}};
      break;
    case CellKind::GRU:
      list = {{ActivationKind::Sigmoid}, {ActivationKind::Tanh}};
      break;
    case CellKind::LSTM:
      list = {{ActivationKind::Sigmoid},
              {ActivationKind::Tanh},
              {ActivationKind::Tanh}};
      break;
    }
  } else {
    std::vector<float> alphas = c.floatsAttr("activation_alpha");
    std::vector<float> betas = c.floatsAttr("activation_beta");
    size_t nextAlpha = 0, nextBeta = 0;
    for (const std::string &name : names) {
      const ActivationInfo *info =
          llvm::find_if(kActivations, [&](const ActivationInfo &i) {
            return StringRef(i.name).equals_insensitive(name);
          });
      if (info == std::end(kActivations)) {
        c.error() << "activation '" << name
                  << "' is not one of Relu, Tanh, Sigmoid, Affine, "
                     "LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, "
                     "Elu, Softsign, Softplus";
        return false;
      }
      Activation a{info->kind, info->alpha, info->beta};
      if (info->usesAlpha && nextAlpha < alphas.size())
        a.alpha = alphas[nextAlpha++];
      if (info->usesBeta && nextBeta < betas.size())
        a.beta = betas[nextBeta++];
      list.push_back(a);
    }
  }
  if (list.size() != functions && list.size() != 2 * functions) {
    c.error() << "activations needs " << functions
              << " functions per direction (" << functions << " or "
              << 2 * functions << " in all), got " << list.size();
    return false;
  }
  for (int64_t d = 0; d < numDirections(); ++d) {
    size_t first = list.size() == 2 * functions ? d * functions : 0;
    activations.emplace_back(list.begin() + first,
                             list.begin() + first + functions);
  }
  return true;
}

StepMask Recurrence::maskAt(int64_t t) {
  if (!lengths)
    return {StepMask::All, {}};
  int64_t inside =
      llvm::count_if(*lengths, [&](int64_t len) { return t < len; });
  if (inside == batch)
    return {StepMask::All, {}};
  if (inside == 0)
    return {StepMask::None, {}};
  Value &mask = masks[t];
  if (!mask) {
    Tensor m(DType::Bool, {batch, 1});
    for (int64_t i = 0; i < batch; ++i)
      m.data<bool>()[i] = t < (*lengths)[i];
    mask = c.constant(m);
  }
  return {StepMask::Some, mask};
}

Value Recurrence::activate(const Activation &a, Value v) {
  if (clip)
    v = c.build<MinOp>({c.build<MaxOp>({v, k(-*clip)}), k(*clip)});
  switch (a.kind) {
  // Relu, LeakyRelu, HardSigmoid and Elu as their ONNX ops import them,
  // with PyTorch's gradient at the kinks.
  case ActivationKind::Relu:
    return reluOf(c, v);
  case ActivationKind::Tanh:
    return c.unary<TanhOp>(v);
  case ActivationKind::Sigmoid:
    return c.unary<SigmoidOp>(v);
  case ActivationKind::Affine:
    return c.build<AddOp>({mul(v, k(a.alpha)), k(a.beta)});
  case ActivationKind::LeakyRelu:
    return leakyReluOf(c, v, a.alpha);
  case ActivationKind::ThresholdedRelu: {
    Value kept = c.compare(ComparePredicate::ge, v, k(a.alpha));
    return c.select(kept, v, k(0.0));
  }
  case ActivationKind::ScaledTanh:
    return c.build<MulOp>({c.unary<TanhOp>(mul(v, k(a.beta))), k(a.alpha)});
  case ActivationKind::HardSigmoid:
    return hardSigmoidOf(c, v, a.alpha, a.beta);
  case ActivationKind::Elu:
    return eluOf(c, v, a.alpha);
  case ActivationKind::Softsign:
    return c.build<DivOp>({v, c.build<AddOp>({c.unary<AbsOp>(v), k(1.0)})});
  case ActivationKind::Softplus: {
    // max(x, 0) + log(1 + exp(-|x|)): log(1 + e^x) without overflow.
    Value e = c.unary<ExpOp>(c.unary<NegOp>(c.unary<AbsOp>(v)));
    return c.build<AddOp>(
        {c.build<MaxOp>({v, k(0.0)}), c.unary<LogOp>(add(e, k(1.0)))});
  }
  }
  return {};
}

void Recurrence::run(int64_t d, State state,
                     llvm::function_ref<State(int64_t, const State &)> step) {
  bool wantY = c.wantsOutput(0);
  SmallVector<Value> y(wantY ? seq : 0);
  for (int64_t i = 0; i < seq && !c.failed(); ++i) {
    int64_t t = reversed[d] ? seq - 1 - i : i;
    StepMask m = maskAt(t);
    if (m.kind == StepMask::None) {
      if (wantY)
        y[t] = zeros();
      continue;
    }
    State next = step(t, state);
    if (m.kind == StepMask::Some) {
      if (wantY)
        y[t] = c.select(m.mask, next.h, k(0.0));
      next.h = c.select(m.mask, next.h, state.h);
      if (next.c)
        next.c = c.select(m.mask, next.c, state.c);
    } else if (wantY) {
      y[t] = next.h;
    }
    state = next;
  }
  ys.push_back(std::move(y));
  finals.push_back(state);
}

void Recurrence::setOutputs() {
  if (c.failed())
    return;
  // Layout 0: Y [S, D, B, H], states [D, B, H]; layout 1: Y [B, S, D, H],
  // states [B, D, H].
  int64_t seqAxis = batchFirst ? 1 : 0, dirAxis = batchFirst ? 2 : 1;
  int64_t stateAxis = batchFirst ? 1 : 0;
  SmallVector<int64_t> stepShape =
      batchFirst ? SmallVector<int64_t>{batch, 1, 1, hidden}
                 : SmallVector<int64_t>{1, 1, batch, hidden};
  SmallVector<int64_t> stateShape =
      batchFirst ? SmallVector<int64_t>{batch, 1, hidden}
                 : SmallVector<int64_t>{1, batch, hidden};
  if (c.wantsOutput(0)) {
    SmallVector<Value> perDirection;
    for (ArrayRef<Value> steps : ys) {
      SmallVector<Value> parts;
      for (Value v : steps)
        parts.push_back(c.reshape(v, stepShape));
      perDirection.push_back(concat(parts, seqAxis));
    }
    c.setOutput(0, concat(perDirection, dirAxis));
  }
  auto states = [&](bool cell) {
    SmallVector<Value> parts;
    for (const State &s : finals)
      parts.push_back(c.reshape(cell ? s.c : s.h, stateShape));
    return concat(parts, stateAxis);
  };
  if (c.wantsOutput(1))
    c.setOutput(1, states(false));
  if (kind == CellKind::LSTM && c.wantsOutput(2))
    c.setOutput(2, states(true));
}

//===----------------------------------------------------------------------===//
// The cells
//===----------------------------------------------------------------------===//

/// Parses the node as a `kind` cell, builds each of its directions with
/// `direction(rec, d)` and sets the node's outputs.
void buildCell(NodeContext &c, CellKind kind,
               function_ref<void(Recurrence &rec, int64_t d)> direction) {
  Recurrence rec(c, kind);
  if (!rec.parse())
    return;
  for (int64_t d = 0; d < rec.numDirections(); ++d)
    direction(rec, d);
  rec.setOutputs();
}

/// Ht = f(Xt*W^T + Ht-1*R^T + Wb + Rb).
void rnnRule(NodeContext &c) {
  buildCell(c, CellKind::RNN, [](Recurrence &rec, int64_t d) {
    Value xw = rec.inputProjection(d, rec.summedBias(d));
    Value rt = rec.recurrentWeights(d);
    const Activation &f = rec.activation(d, 0);
    rec.run(d, {rec.initialState(d, false), {}},
            [&](int64_t t, const State &prev) {
              Value row = rec.row(xw, t);
              Value pre = rec.add(row, rec.matmul(prev.h, rt));
              return State{rec.activate(f, pre), {}};
            });
  });
}

/// zt = f(Xt*Wz^T + Ht-1*Rz^T + Wbz + Rbz), rt likewise, and
///   ht = g(Xt*Wh^T + (rt . Ht-1)*Rh^T + Rbh + Wbh), or with
///   linear_before_reset ht = g(Xt*Wh^T + rt . (Ht-1*Rh^T + Rbh) + Wbh);
/// Ht = (1 - zt) . ht + zt . Ht-1.
void gruRule(NodeContext &c) {
  bool linearBeforeReset = c.intAttr("linear_before_reset", 0) != 0;
  buildCell(c, CellKind::GRU, [&](Recurrence &rec, int64_t d) {
    // Rbh joins the input bias unless it must go inside rt's product.
    Value bias, rbh;
    if (rec.hasBias() && linearBeforeReset) {
      auto [wb, rb] = rec.biases(d);
      Value wbzr = rec.columns(wb, 0, 2);
      Value zr = rec.add(wbzr, rec.columns(rb, 0, 2));
      bias = c.build<ConcatOp>({zr, rec.columns(wb, 2, 1)},
                               {c.namedI64("axis", 0)});
      rbh = rec.columns(rb, 2, 1);
    } else {
      bias = rec.summedBias(d);
    }
    Value xw = rec.inputProjection(d, bias);
    Value rt = rec.recurrentWeights(d);
    // Without linear_before_reset, Rh multiplies rt . Ht-1, so it is
    // separate from Rz and Rr.
    Value rzr = linearBeforeReset ? rt : rec.columns(rt, 0, 2);
    Value rh = linearBeforeReset ? Value() : rec.columns(rt, 2, 1);
    const Activation &f = rec.activation(d, 0), &g = rec.activation(d, 1);
    rec.run(d, {rec.initialState(d, false), {}},
            [&](int64_t t, const State &prev) {
              Value row = rec.row(xw, t);
              Value hr = rec.matmul(prev.h, rzr);
              Value hrZR = linearBeforeReset ? rec.columns(hr, 0, 2) : hr;
              Value zr = rec.add(rec.columns(row, 0, 2), hrZR);
              Value z = rec.activate(f, rec.columns(zr, 0, 1));
              Value r = rec.activate(f, rec.columns(zr, 1, 1));
              Value xh = rec.columns(row, 2, 1), hh;
              if (linearBeforeReset) {
                hh = rec.columns(hr, 2, 1);
                if (rbh)
                  hh = rec.add(hh, rbh);
                hh = rec.mul(r, hh);
              } else {
                hh = rec.matmul(rec.mul(r, prev.h), rh);
              }
              Value h = rec.activate(g, rec.add(xh, hh));
              Value keep = rec.mul(z, prev.h);
              Value h1 = rec.mul(rec.sub(rec.k(1.0), z), h);
              return State{rec.add(h1, keep), {}};
            });
  });
}

/// it = f(Xt*Wi^T + Ht-1*Ri^T + Pi . Ct-1 + Wbi + Rbi),
/// ft = f(Xt*Wf^T + Ht-1*Rf^T + Pf . Ct-1 + Wbf + Rbf) (1 - it with
/// input_forget), ct = g(Xt*Wc^T + Ht-1*Rc^T + Wbc + Rbc),
/// Ct = ft . Ct-1 + it . ct, ot = f(Xt*Wo^T + Ht-1*Ro^T + Po . Ct + Wbo + Rbo),
/// Ht = ot . h(Ct).
void lstmRule(NodeContext &c) {
  bool inputForget = c.intAttr("input_forget", 0) != 0;
  buildCell(c, CellKind::LSTM, [&](Recurrence &rec, int64_t d) {
    Value xw = rec.inputProjection(d, rec.summedBias(d));
    Value rt = rec.recurrentWeights(d);
    Value pi, po, pf;
    if (rec.hasPeepholes()) {
      Value p = rec.peepholeWeights(d);
      pi = rec.columns(p, 0, 1);
      po = rec.columns(p, 1, 1);
      pf = rec.columns(p, 2, 1);
    }
    const Activation &f = rec.activation(d, 0), &g = rec.activation(d, 1),
                     &h = rec.activation(d, 2);
    rec.run(d, {rec.initialState(d, false), rec.initialState(d, true)},
            [&](int64_t t, const State &prev) {
              Value row = rec.row(xw, t);
              Value gatesPre = rec.add(row, rec.matmul(prev.h, rt));
              Value iPre = rec.columns(gatesPre, 0, 1);
              Value oPre = rec.columns(gatesPre, 1, 1);
              Value cPre = rec.columns(gatesPre, 3, 1);
              if (pi)
                iPre = rec.add(iPre, rec.mul(pi, prev.c));
              Value i = rec.activate(f, iPre);
              Value forget;
              if (inputForget) {
                forget = rec.sub(rec.k(1.0), i);
              } else {
                Value fPre = rec.columns(gatesPre, 2, 1);
                if (pf)
                  fPre = rec.add(fPre, rec.mul(pf, prev.c));
                forget = rec.activate(f, fPre);
              }
              Value cell = rec.activate(g, cPre);
              Value kept = rec.mul(forget, prev.c);
              Value cNext = rec.add(kept, rec.mul(i, cell));
              if (po)
                oPre = rec.add(oPre, rec.mul(po, cNext));
              Value o = rec.activate(f, oPre);
              return State{rec.mul(o, rec.activate(h, cNext)), cNext};
            });
  });
}

} // namespace

void mlir::dlc::addRecurrentRules(OpRuleTable &t) {
  t["RNN"] = {rnnRule, 7};
  t["GRU"] = {gruRule, 7};
  t["LSTM"] = {lstmRule, 7};
}
