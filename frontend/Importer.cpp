//===- Importer.cpp - ONNX ModelProto to the dlc dialect ------------------===//
//
// Sorts the graph into dependency order and hands each node to its op rule
// (frontend/ops/). Everything a hostile or broken model can get wrong is
// checked here before a rule sees it: the protobuf, the opset, domains,
// missing or cyclic inputs, input and output counts, input names and
// shapes (negative, symbolic, too large), initializer data, declared
// output types and shapes. ONNX's checker covers part of this, but only up
// to opset 17, so nothing here relies on it. The finished module is
// verified, so a rule's mistake is also an error with the node's location
// rather than a crash later.
//
//===----------------------------------------------------------------------===//

#include "frontend/Importer.h"
#include "frontend/NodeContext.h"
#include "frontend/TensorProto.h"
#include "ir/ShapeUtils.h"
#include "ir/eval/Evaluator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <onnx/checker.h>
#include <onnx/defs/parser.h>
#include <onnx/defs/schema.h>

#include <climits>
#include <queue>

using namespace mlir;
using namespace mlir::dlc;
using mlir::dlc::Tensor;

namespace {

/// Opsets newer than this are accepted for ops whose later forms the rules
/// handle; the Debian ONNX library's own schemas stop at 17.
constexpr int64_t kMaxOpset = 21;
constexpr int64_t kMaxSchemaOpset = 17;

bool isDefaultDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx";
}

class ModelImporter {
public:
  ModelImporter(MLIRContext *context, const onnx::ModelProto &model,
                StringRef modelDir, const ImportOptions &options,
                StringRef source)
      : context_(context), model_(model), graph_(model.graph()),
        modelDir_(modelDir.str()), source_(source.str()), options_(options),
        builder_(context) {
    function_.mode = options.mode;
    function_.syncBatchNormRanks = options.syncBatchNormRanks;
  }

  FailureOr<OwningOpRef<ModuleOp>> run();

private:
  InFlightDiagnostic error() { return emitError(fileLoc()); }
  Location fileLoc() { return FileLineColLoc::get(context_, source_, 0, 0); }
  Location nodeLoc(const onnx::NodeProto &node, int index);

  LogicalResult checkOpset();
  LogicalResult importInitializers();
  FailureOr<RankedTensorType> inputType(const onnx::ValueInfoProto &info);
  LogicalResult importInputs(SmallVectorImpl<Type> &argTypes,
                             SmallVectorImpl<std::string> &argNames);
  LogicalResult importNodes();
  LogicalResult importNode(const onnx::NodeProto &node, int index);
  LogicalResult finishOutputs(func::FuncOp func);

  MLIRContext *context_;
  const onnx::ModelProto &model_;
  const onnx::GraphProto &graph_;
  std::string modelDir_;
  std::string source_;
  const ImportOptions &options_;
  OpBuilder builder_;
  OwningOpRef<ModuleOp> module_;
  int64_t opset_ = 0;
  /// ONNX value name -> its dlc value.
  llvm::StringMap<Value> values_;
  /// Float initializers (parameters) by name.
  llvm::StringMap<GlobalOp> globals_;
  /// Other initializers, imported as constants.
  llvm::StringMap<Tensor> constants_;
  /// What the rules share across the function (the mode, the random seed).
  FunctionState function_;
};

Location ModelImporter::nodeLoc(const onnx::NodeProto &node, int index) {
  return NameLoc::get(StringAttr::get(context_, nodeDisplayName(node, index)),
                      NameLoc::get(StringAttr::get(context_, node.op_type())));
}

LogicalResult ModelImporter::checkOpset() {
  bool found = false;
  for (const onnx::OperatorSetIdProto &id : model_.opset_import())
    if (isDefaultDomain(id.domain())) {
      opset_ = id.version();
      found = true;
    }
  if (!found)
    return error() << "model imports no opset of the default ONNX domain";
  if (opset_ < 1 || opset_ > kMaxOpset)
    return error() << "opset " << opset_ << " is not supported (dlc reads "
                   << "opsets up to " << kMaxOpset << ")";
  if (!model_.has_graph())
    return error() << "model has no graph";
  return success();
}

LogicalResult ModelImporter::importInitializers() {
  builder_.setInsertionPointToStart(module_->getBody());
  for (const onnx::TensorProto &init : graph_.initializer()) {
    if (init.name().empty())
      return error() << "an initializer has no name";
    if (constants_.count(init.name()) || globals_.count(init.name()))
      return error() << "initializer '" << init.name() << "' is defined twice";
    std::string message;
    std::optional<Tensor> value = tensorFromProto(init, modelDir_, message);
    if (!value)
      return error() << "initializer '" << init.name() << "' " << message;
    if (!isFloat(value->dtype())) {
      // Integer and bool initializers are shapes, indices and masks: they are
      // never trained, and folding needs their values, so they are constants
      // (built in run(), where the function body is).
      constants_[init.name()] = std::move(*value);
      continue;
    }
    auto type = RankedTensorType::get(
        value->shape(), elementTypeOf(context_, value->dtype()));
    // Named after the initializer, so an error about the global can say
    // which one it is.
    Location loc =
        NameLoc::get(StringAttr::get(context_, init.name()), fileLoc());
    auto global =
        GlobalOp::create(builder_, loc, StringRef(init.name()), type,
                         cast<ElementsAttr>(attrFromTensor(*value, type)));
    globals_[init.name()] = global;
  }
  return success();
}

FailureOr<RankedTensorType>
ModelImporter::inputType(const onnx::ValueInfoProto &info) {
  if (!info.type().has_tensor_type())
    return error() << "input '" << info.name()
                   << "' is not a tensor (sequences, maps and optionals are "
                      "not supported)";
  const onnx::TypeProto::Tensor &t = info.type().tensor_type();
  std::optional<DType> dtype = dtypeFromOnnx(t.elem_type());
  if (!dtype)
    return error() << "input '" << info.name() << "' has data type "
                   << onnxTypeName(t.elem_type())
                   << ", which is not supported";
  if (!t.has_shape())
    return error() << "input '" << info.name()
                   << "' has no shape; dlc needs static shapes";
  SmallVector<int64_t> shape;
  for (int i = 0; i < t.shape().dim_size(); ++i) {
    const onnx::TensorShapeProto::Dimension &dim = t.shape().dim(i);
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0)
        return error() << "input '" << info.name() << "' dimension " << i
                       << " has negative size " << dim.dim_value();
      shape.push_back(dim.dim_value());
      continue;
    }
    std::string param = dim.has_dim_param() ? dim.dim_param() : "";
    auto bound = options_.dims.find(param);
    if (!param.empty() && bound != options_.dims.end())
      shape.push_back(bound->second);
    else if (i == 0 && options_.batchSize)
      shape.push_back(*options_.batchSize);
    else
      return error() << "input '" << info.name() << "' dimension " << i
                     << (param.empty() ? "" : " ('" + param + "')")
                     << " is symbolic; bind it with "
                     << (i == 0 ? "--batch-size or " : "")
                     << "--dim " << (param.empty() ? "NAME" : param) << "=N";
    if (shape.back() < 0)
      return error() << "input '" << info.name() << "' dimension " << i
                     << " is bound to the negative size " << shape.back();
  }
  if (!checkedNumElements(shape))
    return error() << "input '" << info.name() << "' of shape [" << shape
                   << "] has more than " << kMaxTensorElements
                   << " elements";
  return RankedTensorType::get(shape, elementTypeOf(context_, *dtype));
}

LogicalResult
ModelImporter::importInputs(SmallVectorImpl<Type> &argTypes,
                            SmallVectorImpl<std::string> &argNames) {
  // ONNX's checker rejects these up to opset 17; later opsets rely on this.
  llvm::StringSet<> names;
  for (const onnx::ValueInfoProto &info : graph_.input()) {
    if (info.name().empty())
      return error() << "a graph input has no name";
    if (!names.insert(info.name()).second)
      return error() << "graph input '" << info.name() << "' is listed twice";
  }
  for (const onnx::ValueInfoProto &info : graph_.input()) {
    // Before IR version 4 initializers were also listed as inputs.
    if (globals_.count(info.name()) || constants_.count(info.name()))
      continue;
    auto fixed = options_.constantInputs.find(info.name());
    if (fixed != options_.constantInputs.end()) {
      FailureOr<RankedTensorType> type = inputType(info);
      if (failed(type))
        return failure();
      FailureOr<DType> dtype = dtypeOf(type->getElementType());
      std::vector<int64_t> shape(type->getShape().begin(),
                                 type->getShape().end());
      if (failed(dtype) || *dtype != fixed->second.dtype() ||
          shape != fixed->second.shape())
        return error() << "the value given for input '" << info.name()
                       << "' is " << fixed->second.describe()
                       << ", but the input is " << *type;
      constants_[info.name()] = fixed->second;
      continue;
    }
    FailureOr<RankedTensorType> type = inputType(info);
    if (failed(type))
      return failure();
    argTypes.push_back(*type);
    argNames.push_back(info.name());
  }
  // A value for an input the graph does not have is a mistake (a typo in
  // a name), not something to ignore.
  for (const auto &fixed : options_.constantInputs)
    if (!names.count(fixed.getKey())) {
      InFlightDiagnostic diag =
          error() << "a value is given for input '" << fixed.getKey()
                  << "', which the graph does not have; its "
                     "inputs are: ";
      SmallVector<StringRef> inputs;
      for (const onnx::ValueInfoProto &info : graph_.input())
        if (!globals_.count(info.name()))
          inputs.push_back(info.name());
      llvm::interleaveComma(inputs, diag);
      return diag;
    }
  return success();
}

/// "1 input", "2 inputs".
static std::string plural(int64_t n, StringRef noun) {
  return std::to_string(n) + " " + noun.str() + (n == 1 ? "" : "s");
}

/// How many inputs and outputs a node of an op may have.
struct Arity {
  int minInputs, maxInputs, minOutputs, maxOutputs;
};

/// The arity of `opType` at `opset` from `schema` (looked up at
/// min(opset, 17)), or nullopt without a schema. The ONNX library's schemas
/// stop at opset 17, so the ops whose arity changed in opsets 18-21 are
/// listed here with their later ranges.
static std::optional<Arity> arityOf(const onnx::OpSchema *schema,
                                    StringRef opType, int64_t opset) {
  if (!schema)
    return std::nullopt;
  Arity arity{schema->min_input(), schema->max_input(), schema->min_output(),
              schema->max_output()};
  // Opset 18 made the reductions' axes and Pad's axes optional inputs, and
  // opset 20 made DFT's dft_length and axis inputs.
  static const llvm::StringSet<> axesInput18 = {
      "ReduceL1",   "ReduceL2",  "ReduceLogSum", "ReduceLogSumExp",
      "ReduceMax",  "ReduceMean", "ReduceMin",   "ReduceProd",
      "ReduceSumSquare"};
  if (opset >= 18 && axesInput18.contains(opType))
    arity.maxInputs = 2;
  if (opset >= 18 && opType == "Pad")
    arity.maxInputs = 4;
  if (opset >= 20 && opType == "DFT")
    arity.maxInputs = 3;
  return arity;
}

LogicalResult ModelImporter::importNode(const onnx::NodeProto &node,
                                        int index) {
  Location loc = nodeLoc(node, index);
  if (!isDefaultDomain(node.domain()))
    return emitError(loc) << "operator domain '" << node.domain()
                          << "' is not supported";
  if (node.output_size() == 0)
    return emitError(loc) << "has no outputs";
  const OpRuleTable &rules = opRules();
  auto rule = rules.find(node.op_type());
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
      node.op_type(), static_cast<int>(std::min(opset_, kMaxSchemaOpset)));
  if (rule == rules.end()) {
    if (!schema && opset_ <= kMaxSchemaOpset)
      return emitError(loc) << "'" << node.op_type()
                            << "' is not an ONNX operator in opset " << opset_;
    return emitError(loc) << "ONNX operator '" << node.op_type()
                          << "' is not supported";
  }
  // Ops newer than the schemas we have are taken at the model's opset.
  int version = schema ? schema->SinceVersion() : static_cast<int>(opset_);
  if (version < rule->second.minVersion)
    return emitError(loc) << node.op_type() << "-" << version << " (opset "
                          << opset_ << ") is not supported; dlc implements "
                          << node.op_type() << " from version "
                          << rule->second.minVersion;
  // ONNX's checker does this up to opset 17 (omitted optional inputs, empty
  // names, count); later opsets rely on this check.
  if (std::optional<Arity> arity = arityOf(schema, node.op_type(), opset_)) {
    int inputs = node.input_size(), outputs = node.output_size();
    if (inputs < arity->minInputs)
      return emitError(loc) << "takes at least "
                            << plural(arity->minInputs, "input") << ", got "
                            << inputs;
    if (inputs > arity->maxInputs)
      return emitError(loc) << "takes at most "
                            << plural(arity->maxInputs, "input") << ", got "
                            << inputs;
    if (outputs < arity->minOutputs)
      return emitError(loc) << "produces at least "
                            << plural(arity->minOutputs, "output") << ", got "
                            << outputs;
    if (outputs > arity->maxOutputs)
      return emitError(loc) << "produces at most "
                            << plural(arity->maxOutputs, "output") << ", got "
                            << outputs;
  }

  SmallVector<Value> inputs;
  for (const std::string &name : node.input()) {
    if (name.empty()) {
      inputs.push_back(Value());
      continue;
    }
    inputs.push_back(values_.lookup(name));
  }
  NodeContext ctx(builder_, node, std::move(inputs), version, loc,
                  &function_);
  rule->second.rule(ctx);
  if (ctx.failed())
    return failure();
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    Value out = ctx.outputs()[i];
    if (!out)
      return emitError(loc) << "output " << i << " ('" << node.output(i)
                            << "') is not supported";
    if (values_.count(node.output(i)))
      return emitError(loc) << "value '" << node.output(i)
                            << "' is defined twice";
    values_[node.output(i)] = out;
  }
  return success();
}

LogicalResult ModelImporter::importNodes() {
  // ONNX requires topological order, and its checker rejects an unsorted
  // graph, but the checker only runs at opsets <= 17 (the schemas the ONNX
  // library knows). For later opsets the importer sorts the graph itself:
  // Kahn's algorithm over a map from each value to the node producing it,
  // taking the ready node that comes first in the file, so a sorted graph
  // is imported in file order. A node never ready waits for a value that
  // nothing produces, or sits on a cycle or after one.
  int numNodes = graph_.node_size();
  llvm::StringMap<int> producer;
  for (int i = 0; i < numNodes; ++i)
    for (const std::string &out : graph_.node(i).output())
      if (!out.empty())
        producer.try_emplace(out, i);
  // waiting[i]: the inputs node i still waits for, one per use; a value no
  // node produces is waited for forever.
  std::vector<int> waiting(numNodes, 0);
  std::vector<SmallVector<int, 2>> consumers(numNodes);
  auto pendingProducer = [&](const std::string &name) -> std::optional<int> {
    if (name.empty() || values_.count(name))
      return std::nullopt;
    auto it = producer.find(name);
    return it == producer.end() ? -1 : it->second;
  };
  for (int i = 0; i < numNodes; ++i)
    for (const std::string &name : graph_.node(i).input())
      if (std::optional<int> p = pendingProducer(name)) {
        ++waiting[i];
        if (*p >= 0)
          consumers[*p].push_back(i);
      }

  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < numNodes; ++i)
    if (waiting[i] == 0)
      ready.push(i);
  int imported = 0;
  while (!ready.empty()) {
    int index = ready.top();
    ready.pop();
    if (failed(importNode(graph_.node(index), index)))
      return failure();
    ++imported;
    for (int consumer : consumers[index])
      if (--waiting[consumer] == 0)
        ready.push(consumer);
  }
  if (imported == numNodes)
    return success();

  // The nodes left (waiting[i] > 0), in file order: first one that needs a
  // value nothing produces.
  for (int i = 0; i < numNodes; ++i) {
    if (waiting[i] == 0)
      continue;
    for (const std::string &name : graph_.node(i).input())
      if (std::optional<int> p = pendingProducer(name); p && *p < 0)
        return emitError(nodeLoc(graph_.node(i), i))
               << "input '" << name
               << "' is not a graph input, an initializer or the output of "
                  "any node";
  }
  // Otherwise every node left is on a cycle or after one. Peeling off the
  // nodes whose outputs no other node left consumes leaves the cycles
  // (and any nodes between two of them), which are what the message names.
  std::vector<int> uses(numNodes, 0);
  for (int i = 0; i < numNodes; ++i)
    if (waiting[i] > 0)
      for (int consumer : consumers[i])
        uses[i] += waiting[consumer] > 0;
  std::vector<int> sinks;
  for (int i = 0; i < numNodes; ++i)
    if (waiting[i] > 0 && uses[i] == 0)
      sinks.push_back(i);
  std::vector<bool> peeled(numNodes, false);
  while (!sinks.empty()) {
    int i = sinks.back();
    sinks.pop_back();
    peeled[i] = true;
    for (const std::string &name : graph_.node(i).input())
      if (std::optional<int> p = pendingProducer(name); p && *p >= 0)
        if (waiting[*p] > 0 && --uses[*p] == 0)
          sinks.push_back(*p);
  }
  std::string cycle;
  int first = -1;
  for (int i = 0; i < numNodes; ++i) {
    if (waiting[i] == 0 || peeled[i])
      continue;
    if (first < 0)
      first = i;
    cycle += (cycle.empty() ? "'" : ", '") +
             nodeDisplayName(graph_.node(i), i) + "'";
  }
  // Nodes left with every input produced by a node left form a cycle,
  // which peeling cannot remove.
  assert(first >= 0 && "a stalled sort leaves a cycle");
  return emitError(nodeLoc(graph_.node(first), first))
         << "the graph has a cycle among nodes " << cycle;
}

LogicalResult ModelImporter::finishOutputs(func::FuncOp func) {
  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const onnx::ValueInfoProto &info : graph_.output()) {
    Value v = values_.lookup(info.name());
    if (!v)
      return error() << "graph output '" << info.name()
                     << "' is not produced by any node or input";
    auto type = cast<RankedTensorType>(v.getType());
    if (info.type().has_tensor_type()) {
      const onnx::TypeProto::Tensor &t = info.type().tensor_type();
      std::optional<DType> declared = dtypeFromOnnx(t.elem_type());
      FailureOr<DType> actual = dtypeOf(type.getElementType());
      if (t.elem_type() != onnx::TensorProto::UNDEFINED &&
          (!declared || failed(actual) || *declared != *actual))
        return error() << "graph output '" << info.name()
                       << "' is declared " << onnxTypeName(t.elem_type())
                       << " but computes " << type;
      if (t.has_shape() && t.shape().dim_size() != type.getRank())
        return error() << "graph output '" << info.name() << "' is declared "
                       << "with rank " << t.shape().dim_size()
                       << " but computes " << type;
      // Symbolic and unknown dimensions (dim_param, or neither field) match
      // any size.
      for (int i = 0; t.has_shape() && i < t.shape().dim_size(); ++i) {
        const onnx::TensorShapeProto::Dimension &dim = t.shape().dim(i);
        if (dim.has_dim_value() && dim.dim_value() != type.getDimSize(i))
          return error() << "graph output '" << info.name()
                         << "' is declared with size " << dim.dim_value()
                         << " in dimension " << i << " but computes " << type;
      }
    }
    results.push_back(v);
    resultTypes.push_back(type);
  }
  // A training step's dropouts drew from the seed; the next step draws
  // from the next one.
  if (Value seed = function_.rngSeed) {
    Location loc = fileLoc();
    auto type = cast<RankedTensorType>(seed.getType());
    Value one = ConstantOp::create(
        builder_, loc, DenseElementsAttr::get(type, int64_t(1)));
    Value next = AddOp::create(builder_, loc, seed, one);
    GlobalStoreOp::create(builder_, loc, kRngSeedGlobal, next);
  }
  func::ReturnOp::create(builder_, fileLoc(), results);
  func.setFunctionType(
      FunctionType::get(context_, func.getArgumentTypes(), resultTypes));
  for (auto [i, info] : llvm::enumerate(graph_.output()))
    func.setResultAttr(i, "dlc.name", StringAttr::get(context_, info.name()));
  return success();
}

FailureOr<OwningOpRef<ModuleOp>> ModelImporter::run() {
  module_ = ModuleOp::create(fileLoc());
  if (failed(checkOpset()) || failed(importInitializers()))
    return failure();
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  if (failed(importInputs(argTypes, argNames)))
    return failure();

  builder_.setInsertionPointToEnd(module_->getBody());
  auto func = func::FuncOp::create(builder_, fileLoc(), options_.functionName,
                                   FunctionType::get(context_, argTypes, {}));
  Block *body = func.addEntryBlock();
  builder_.setInsertionPointToStart(body);
  for (auto [i, name] : llvm::enumerate(argNames)) {
    values_[name] = body->getArgument(i);
    func.setArgAttr(i, "dlc.name", StringAttr::get(context_, name));
  }
  // In file order, so the printed IR is deterministic.
  SmallVector<std::string> names;
  for (const onnx::TensorProto &init : graph_.initializer())
    names.push_back(init.name());
  for (const onnx::ValueInfoProto &info : graph_.input())
    names.push_back(info.name());
  for (const std::string &name : names) {
    if (values_.count(name))
      continue;
    if (GlobalOp global = globals_.lookup(name)) {
      values_[name] = GlobalLoadOp::create(
          builder_, fileLoc(), global.getType(), global.getSymName());
    } else if (auto it = constants_.find(name); it != constants_.end()) {
      const Tensor &value = it->second;
      auto type = RankedTensorType::get(
          value.shape(), elementTypeOf(context_, value.dtype()));
      values_[name] =
          ConstantOp::create(builder_, fileLoc(), attrFromTensor(value, type));
    }
  }

  if (failed(importNodes()) || failed(finishOutputs(func)))
    return failure();

  // Loads of parameters the graph never uses are dropped, and so are the
  // parameters themselves, so the module holds only what the program reads.
  // The symbols still used are collected in one walk of the function.
  for (Operation &op : llvm::make_early_inc_range(body->getOperations()))
    if (isa<GlobalLoadOp, ConstantOp>(op) && op.use_empty())
      op.erase();
  llvm::StringSet<> used;
  if (std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(&func.getBody()))
    for (const SymbolTable::SymbolUse &use : *uses)
      used.insert(use.getSymbolRef().getRootReference().getValue());
  for (auto &entry : globals_)
    if (!used.contains(entry.getKey()))
      entry.getValue().erase();

  if (failed(verify(*module_)))
    return failure();
  return std::move(module_);
}

} // namespace

StringRef mlir::dlc::importModeName(ImportMode mode) {
  switch (mode) {
  case ImportMode::AsExported:
    return "as-exported";
  case ImportMode::Training:
    return "training";
  case ImportMode::Inference:
    return "inference";
  }
  return "unknown";
}

std::optional<ImportMode> mlir::dlc::parseImportMode(StringRef name) {
  for (ImportMode mode :
       {ImportMode::AsExported, ImportMode::Training, ImportMode::Inference})
    if (name == importModeName(mode))
      return mode;
  return std::nullopt;
}

std::string mlir::dlc::nodeDisplayName(const onnx::NodeProto &node,
                                       int index) {
  return node.name().empty() ? node.op_type() + "_" + std::to_string(index)
                             : node.name();
}

void mlir::dlc::registerImporterDialects(MLIRContext *context) {
  context->loadDialect<DLCDialect, func::FuncDialect>();
}

/// ONNX's checker looks for external data files relative to the working
/// directory, not the model's folder. The importer reads and checks that data
/// itself (tensorFromProto), so the checker sees each external initializer as
/// a graph input of the same type instead. Returns nothing, and copies
/// nothing, when the model has no external data.
static std::optional<onnx::ModelProto>
withoutExternalData(const onnx::ModelProto &model) {
  auto isExternal = [](const onnx::TensorProto &t) {
    return t.data_location() == onnx::TensorProto::EXTERNAL;
  };
  if (llvm::none_of(model.graph().initializer(), isExternal))
    return std::nullopt;
  onnx::ModelProto copy = model;
  onnx::GraphProto *graph = copy.mutable_graph();
  llvm::StringSet<> inputs;
  for (const onnx::ValueInfoProto &info : graph->input())
    inputs.insert(info.name());
  auto *inits = graph->mutable_initializer();
  for (int i = inits->size() - 1; i >= 0; --i) {
    const onnx::TensorProto &init = inits->Get(i);
    if (!isExternal(init))
      continue;
    if (!inputs.count(init.name())) {
      onnx::ValueInfoProto *input = graph->add_input();
      input->set_name(init.name());
      onnx::TypeProto::Tensor *type =
          input->mutable_type()->mutable_tensor_type();
      type->set_elem_type(init.data_type());
      for (int64_t d : init.dims())
        type->mutable_shape()->add_dim()->set_dim_value(d);
    }
    inits->DeleteSubrange(i, 1);
  }
  return copy;
}

/// `text` with each run of whitespace, newlines included, made one space:
/// ONNX's checker and parser write multi-line messages.
static std::string oneLine(StringRef text) {
  std::string line;
  for (char c : text.trim()) {
    if (!llvm::isSpace(c))
      line += c;
    else if (line.back() != ' ')
      line += ' ';
  }
  return line;
}

/// ONNX's checker reports on several lines and, for a bad node, ends with
/// "==> Context: Bad node spec for node. Name: N OpType: T". Reports that as
/// one line, at the node's location when the checker names one.
static LogicalResult checkerError(MLIRContext *context, StringRef source,
                                  StringRef what) {
  auto [body, where] = what.split("==> Context:");
  Location loc = FileLineColLoc::get(context, source, 0, 0);
  std::string message = "the model fails ONNX's checker: " + oneLine(body);
  StringRef node = where.trim();
  if (node.consume_front("Bad node spec for node. Name: ")) {
    auto [name, opType] = node.rsplit(" OpType: ");
    if (!name.empty())
      loc = NameLoc::get(StringAttr::get(context, name),
                         NameLoc::get(StringAttr::get(context, opType)));
    else
      message += " (in a " + opType.str() + " node)";
  } else if (!node.empty()) {
    message += " (" + oneLine(node) + ")";
  }
  return emitError(loc) << message;
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::dlc::importOnnxModel(MLIRContext *context, const onnx::ModelProto &model,
                           StringRef modelDir, const ImportOptions &options,
                           StringRef source) {
  registerImporterDialects(context);
  // ONNX's checker knows the schemas up to opset 17; later models are left
  // to the importer's own checks.
  bool checkable = llvm::all_of(model.opset_import(), [](const auto &id) {
    return !isDefaultDomain(id.domain()) || id.version() <= kMaxSchemaOpset;
  });
  if (checkable) {
    try {
      std::optional<onnx::ModelProto> checked = withoutExternalData(model);
      onnx::checker::check_model(checked ? *checked : model);
    } catch (const std::exception &e) {
      return checkerError(context, source, e.what());
    }
  }
  ModelImporter importer(context, model, modelDir, options, source);
  return importer.run();
}

namespace {

/// Reads a binary or text (.onnxtxt) model file.
FailureOr<onnx::ModelProto> readOnnxFile(MLIRContext *context,
                                         StringRef path) {
  Location loc = FileLineColLoc::get(context, path, 0, 0);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/true);
  if (!file)
    return emitError(loc) << "cannot read the file: "
                          << file.getError().message();
  onnx::ModelProto model;
  StringRef bytes = (*file)->getBuffer();
  if (path.ends_with(".onnxtxt")) {
    try {
      onnx::OnnxParser parser(bytes.data());
      onnx::Common::Status status = parser.Parse(model);
      if (!status.IsOK())
        return emitError(loc) << "not a valid ONNX text model: "
                              << oneLine(status.ErrorMessage());
    } catch (const std::exception &e) {
      return emitError(loc) << "not a valid ONNX text model: "
                            << oneLine(e.what());
    }
  } else if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return emitError(loc) << "larger than protobuf's 2 GB limit; store the "
                          << "weights as external data";
  } else if (!model.ParseFromArray(bytes.data(),
                                   static_cast<int>(bytes.size()))) {
    return emitError(loc) << "not a valid ONNX model (the protobuf does not "
                             "parse; truncated or not ONNX?)";
  }
  return model;
}

} // namespace

FailureOr<OwningOpRef<ModuleOp>>
mlir::dlc::importOnnxFile(MLIRContext *context, StringRef path,
                          const ImportOptions &options) {
  FailureOr<onnx::ModelProto> model = readOnnxFile(context, path);
  if (failed(model))
    return failure();
  llvm::SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  return importOnnxModel(context, *model, dir, options, path);
}

FailureOr<std::string>
mlir::dlc::readOnnxWithoutInitializers(MLIRContext *context, StringRef path,
                                       const llvm::StringSet<> &names) {
  FailureOr<onnx::ModelProto> model = readOnnxFile(context, path);
  if (failed(model))
    return failure();
  auto *initializers = model->mutable_graph()->mutable_initializer();
  for (int i = initializers->size(); i-- > 0;)
    if (names.contains(initializers->Get(i).name()))
      initializers->DeleteSubrange(i, 1);
  return model->SerializeAsString();
}
