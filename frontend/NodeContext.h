//===- NodeContext.h - What an ONNX op rule sees while importing a node ---===//
//
// Each ONNX op type has one rule (frontend/ops/*.cpp) that turns a node into
// dlc ops through a NodeContext. The context hands out the node's inputs and
// attributes, builds dlc ops with inferred result types, folds ops whose
// operands are constants (so shape subgraphs become constants), and reports
// errors at the node's location.
//
// Building is "poisoning": when a rule's input is malformed (shapes that do
// not broadcast, an attribute out of range or of the wrong type) the first
// error is emitted, the failed build returns a null Value, every later build
// returns null without a second message, and the importer stops after the
// rule. Rules therefore read as straight-line compositions without an error
// check after every op; what they must check is a null Value before looking
// at its type.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_FRONTEND_NODECONTEXT_H
#define DLC_FRONTEND_NODECONTEXT_H

#include "frontend/Importer.h"
#include "ir/Dialect.h"
#include "runtime/support/Tensor.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

namespace mlir::dlc {

/// What the rules of one imported function share beyond a single node: the
/// semantics mode, and the state that training-mode rules thread through
/// the function.
struct FunctionState {
  ImportMode mode = ImportMode::AsExported;
  /// Training mode: the data-parallel ranks whose batches a
  /// BatchNormalization's statistics cover (ImportOptions).
  int64_t syncBatchNormRanks = 1;
  /// The `stream` of the next active dropout: dropouts are numbered 0, 1,
  /// ... in import order, so each draws its own mask from one seed.
  int64_t nextDropoutStream = 0;
  /// The function's load of @"dlc.rng_seed", made before the first active
  /// dropout; the importer stores the seed plus one before the return.
  Value rngSeed;
};

class NodeContext {
public:
  /// `function` is shared by the nodes of one function; without one the
  /// node imports as exported and cannot use the random seed.
  NodeContext(OpBuilder &builder, const onnx::NodeProto &node,
              SmallVector<Value> inputs, int sinceVersion, Location loc,
              FunctionState *function = nullptr);

  const onnx::NodeProto &node() const { return node_; }
  /// The since_version of the node's op schema, looked up at
  /// min(opset, 17) since the ONNX library's schemas stop at opset 17. For
  /// opsets 18-21 an op changed after 17 therefore reports its opset-17
  /// version (ReduceMean at opset 18 reports 13, not 18); rules tell the
  /// later forms apart by looking at the node itself (an `axes` input
  /// rather than an attribute, say). An op new after 17, with no schema,
  /// reports the model's opset.
  int version() const { return version_; }
  Location loc() const { return loc_; }
  OpBuilder &builder() { return builder_; }
  MLIRContext *context() { return builder_.getContext(); }
  /// The semantics BatchNormalization and Dropout import with.
  ImportMode mode() const {
    return function_ ? function_->mode : ImportMode::AsExported;
  }
  int64_t syncBatchNormRanks() const {
    return function_ ? function_->syncBatchNormRanks : 1;
  }

  //===--------------------------------------------------------------------===//
  // Inputs and outputs
  //===--------------------------------------------------------------------===//

  /// Number of inputs, counting omitted optional ones (empty names).
  size_t numInputs() const { return inputs_.size(); }
  /// True if input `i` is present (not omitted, not past the end).
  bool hasInput(size_t i) const { return i < inputs_.size() && inputs_[i]; }
  /// Input `i`; emits an error and returns null if it is absent.
  Value input(size_t i);
  RankedTensorType inputType(size_t i);
  Type inputElementType(size_t i);

  size_t numOutputs() const { return node_.output_size(); }
  /// True if output `i` is requested (exists and has a name).
  bool wantsOutput(size_t i) const;
  /// Defines output `i`.
  void setOutput(size_t i, Value value);
  const SmallVector<Value> &outputs() const { return outputs_; }

  //===--------------------------------------------------------------------===//
  // Attributes (absent attributes give the default)
  //
  // The typed getters check the attribute's declared type as ONNX's checker
  // does (no INT where a FLOAT is expected): an attribute of another type is
  // an error, "attribute 'axis' must be INT, got INTS", that poisons the
  // context, and the getter returns the default.
  //===--------------------------------------------------------------------===//

  /// The attribute named `name`, of any type; null if absent.
  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  bool hasAttr(llvm::StringRef name) const { return attr(name) != nullptr; }
  int64_t intAttr(llvm::StringRef name, int64_t defaultValue);
  float floatAttr(llvm::StringRef name, float defaultValue);
  std::string stringAttr(llvm::StringRef name,
                         llvm::StringRef defaultValue = "");
  /// Empty when absent.
  std::vector<int64_t> intsAttr(llvm::StringRef name);
  std::vector<float> floatsAttr(llvm::StringRef name);
  std::vector<std::string> stringsAttr(llvm::StringRef name);
  /// A tensor-valued attribute (Constant's `value`), converted; nullopt
  /// after an error (absent, not a TENSOR, or data that does not convert).
  std::optional<Tensor> tensorAttr(llvm::StringRef name);

  //===--------------------------------------------------------------------===//
  // Constant inputs
  //===--------------------------------------------------------------------===//

  /// The value of input `i` if it is a constant (after folding), else
  /// nullopt without an error.
  std::optional<Tensor> constantValue(size_t i);
  /// Like constantValue, but also reads an initializer's initial value, and
  /// emits "input i (`what`) must be a constant" when there is none.
  std::optional<Tensor> requireConstant(size_t i, llvm::StringRef what);
  /// An integer constant input as int64 values (any integer dtype).
  std::optional<std::vector<int64_t>> requireConstantInts(size_t i,
                                                          llvm::StringRef what);

  //===--------------------------------------------------------------------===//
  // Errors
  //===--------------------------------------------------------------------===//

  /// Emits an error at the node and poisons the context. Only the first
  /// error of a node is reported: once poisoned, the diagnostic returned
  /// is dropped, so a rule that goes on after a failed getter or build does
  /// not print a second, consequential message.
  InFlightDiagnostic error();
  bool failed() const { return failed_; }
  /// Normalizes a possibly negative axis into [0, rank); error if outside.
  std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                       llvm::StringRef what = "axis");

  //===--------------------------------------------------------------------===//
  // Building dlc ops (null operands propagate; see the file comment)
  //===--------------------------------------------------------------------===//

  /// Builds OpT on `operands` with `attrs`, inferring the result type, and
  /// folds it when its operands are constants.
  template <typename OpT>
  Value build(ValueRange operands, ArrayRef<NamedAttribute> attrs = {}) {
    if (!checkOperands(operands))
      return {};
    typename OpT::Properties properties;
    DictionaryAttr dict = DictionaryAttr::get(context(), attrs);
    SmallVector<Type> types;
    if (mlir::failed(OpT::setPropertiesFromAttr(
            properties, dict, [&] { return error(); })) ||
        mlir::failed(OpT::inferReturnTypes(context(), loc_, operands, dict,
                                           OpaqueProperties(&properties), {},
                                           types))) {
      failed_ = true;
      return {};
    }
    return buildTyped<OpT>(types.front(), operands, attrs);
  }

  /// Builds OpT with an explicit result type (ops without type inference:
  /// reshape, broadcast_to, cast, scatter_elements, cumsum, unary ops).
  template <typename OpT>
  Value buildTyped(Type resultType, ValueRange operands,
                   ArrayRef<NamedAttribute> attrs = {}) {
    if (!checkOperands(operands))
      return {};
    return builder_.createOrFold<OpT>(loc_, TypeRange{resultType}, operands,
                                      attrs);
  }

  /// Elementwise unary op keeping the operand's type.
  template <typename OpT> Value unary(Value x) {
    return x ? buildTyped<OpT>(x.getType(), {x}) : Value();
  }

  NamedAttribute named(llvm::StringRef name, Attribute value) {
    return builder_.getNamedAttr(name, value);
  }
  NamedAttribute namedI64(llvm::StringRef name, int64_t value) {
    return named(name, builder_.getI64IntegerAttr(value));
  }
  NamedAttribute namedI64s(llvm::StringRef name, ArrayRef<int64_t> values) {
    return named(name, builder_.getDenseI64ArrayAttr(values));
  }

  // Common compositions.
  Value constant(const Tensor &value);
  /// A rank-0 constant of `elementType` holding `value` (converted).
  Value scalar(Type elementType, double value);
  /// A rank-1 i64 constant.
  Value i64Constant(ArrayRef<int64_t> values);
  Value cast(Value x, Type elementType);
  Value reshape(Value x, ArrayRef<int64_t> shape);
  Value transpose(Value x, ArrayRef<int64_t> permutation);
  Value broadcastTo(Value x, ArrayRef<int64_t> shape);
  Value compare(ComparePredicate predicate, Value lhs, Value rhs);
  Value select(Value condition, Value onTrue, Value onFalse);
  Value slice(Value x, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
              ArrayRef<int64_t> strides);
  /// ReduceOpT over `axes` (any order, normalized), optionally keeping dims.
  template <typename ReduceOpT>
  Value reduce(Value x, ArrayRef<int64_t> axes, bool keepDims) {
    SmallVector<int64_t> sorted(axes);
    llvm::sort(sorted);
    SmallVector<NamedAttribute> attrs = {namedI64s("axes", sorted)};
    if (keepDims)
      attrs.push_back(named("keep_dims", builder_.getUnitAttr()));
    return build<ReduceOpT>({x}, attrs);
  }
  /// Mean over `axes` (sum times 1/count, in x's element type).
  Value mean(Value x, ArrayRef<int64_t> axes, bool keepDims);
  /// Normalizes possibly negative `axes` into [0, rank), keeping their
  /// order; error (naming `what`) on an axis out of range or repeated.
  std::optional<SmallVector<int64_t>>
  normalizeAxes(ArrayRef<int64_t> axes, int64_t rank,
                llvm::StringRef what = "axes");
  /// Integers that older opsets give as attribute `name` and newer ones as
  /// the constant input `index` (Squeeze's or ReduceMax's axes): the
  /// attribute if present, else the input if present, else empty. Nullopt
  /// after an error (a non-constant input).
  std::optional<std::vector<int64_t>> intsAttrOrInput(llvm::StringRef name,
                                                      size_t index);
  /// Softmax along `axis` (in [0, rank)): exp(x - max) / sum(exp(x - max)),
  /// the maximum subtracted so large inputs do not overflow.
  Value softmax(Value x, int64_t axis);
  /// LogSoftmax along `axis` (in [0, rank)):
  /// (x - max) - log(sum(exp(x - max))).
  Value logSoftmax(Value x, int64_t axis);

  //===--------------------------------------------------------------------===//
  // Training-mode state
  //===--------------------------------------------------------------------===//

  /// The function's random seed (a tensor<i64>): the first call declares
  /// the module's @"dlc.rng_seed" global and loads it here; later calls
  /// return that load. Null after an error (no function state, or a symbol
  /// of that name already in the module).
  Value rngSeed();
  /// The stream number of the next active dropout of the function.
  int64_t nextDropoutStream();
  /// The global that `v` was loaded from (an initializer), or null.
  GlobalOp globalOf(Value v);

private:
  /// attr(name) if it has `type`; null if absent, or after an error if it
  /// has another type.
  const onnx::AttributeProto *
  typedAttr(llvm::StringRef name, onnx::AttributeProto::AttributeType type);
  /// False (and nothing built) if an operand is null, i.e. an earlier build
  /// failed.
  bool checkOperands(ValueRange operands);

  OpBuilder &builder_;
  const onnx::NodeProto &node_;
  SmallVector<Value> inputs_;
  SmallVector<Value> outputs_;
  int version_;
  Location loc_;
  FunctionState *function_;
  bool failed_ = false;
};

/// An op rule: turns the node into dlc ops and sets its outputs.
using OpRule = void (*)(NodeContext &);

struct OpRuleInfo {
  OpRule rule;
  /// The oldest op schema version (since_version) the rule implements; a
  /// model whose opset resolves the op to an older schema is rejected.
  int minVersion;
};

using OpRuleTable = llvm::StringMap<OpRuleInfo>;

/// Each rule file in frontend/ops/ adds its rules.
void addElementwiseRules(OpRuleTable &table);
void addShapeRules(OpRuleTable &table);
void addIndexingRules(OpRuleTable &table);
void addConstantRules(OpRuleTable &table);
void addReductionRules(OpRuleTable &table);
void addLinearRules(OpRuleTable &table);
void addConvRules(OpRuleTable &table);
void addPoolRules(OpRuleTable &table);
void addNormalizationRules(OpRuleTable &table);
void addLossRules(OpRuleTable &table);
void addResizeRules(OpRuleTable &table);
void addImageRules(OpRuleTable &table);
void addRecurrentRules(OpRuleTable &table);
void addSortingRules(OpRuleTable &table);
void addSamplingRules(OpRuleTable &table);

/// The table of every supported ONNX op (default domain).
const OpRuleTable &opRules();

} // namespace mlir::dlc

#endif // DLC_FRONTEND_NODECONTEXT_H
