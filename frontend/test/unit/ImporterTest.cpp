//===- ImporterTest.cpp - The importer's C++ API --------------------------===//
//
// Builds small ModelProtos in C++, imports them through importOnnxModel and
// checks what a library user relies on: parameters become named globals,
// symbolic dimensions are bound, fixed inputs become constants, locations
// name the node, errors are diagnostics rather than crashes, and a
// training-mode import's steps update the running statistics and the seed.
//
//===----------------------------------------------------------------------===//

#include "frontend/Importer.h"
#include "frontend/NodeContext.h"
#include "frontend/TensorProto.h"
#include "ir/Dialect.h"
#include "ir/eval/Evaluator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace mlir::dlc;

namespace {

void addTensorValue(onnx::ValueInfoProto *info, const std::string &name,
                    int32_t elemType, std::vector<std::variant<int64_t, std::string>> dims) {
  info->set_name(name);
  auto *tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elemType);
  auto *shape = tensor->mutable_shape();
  for (auto &d : dims) {
    auto *dim = shape->add_dim();
    if (std::holds_alternative<int64_t>(d))
      dim->set_dim_value(std::get<int64_t>(d));
    else
      dim->set_dim_param(std::get<std::string>(d));
  }
}

/// y = MatMul(x, w) + b with x: [batch, 3], w: [3, 2], b: [2].
onnx::ModelProto linearModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto *g = model.mutable_graph();
  g->set_name("linear");
  addTensorValue(g->add_input(), "x", onnx::TensorProto::FLOAT,
                 {std::string("batch"), int64_t(3)});
  addTensorValue(g->add_output(), "y", onnx::TensorProto::FLOAT,
                 {std::string("batch"), int64_t(2)});
  onnx::TensorProto *w = g->add_initializer();
  w->set_name("fc.weight");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->add_dims(2);
  for (float v : {1.f, 2.f, 3.f, 4.f, 5.f, 6.f})
    w->add_float_data(v);
  onnx::TensorProto *b = g->add_initializer();
  b->set_name("fc.bias");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(2);
  b->add_float_data(0.5f);
  b->add_float_data(-0.5f);
  onnx::NodeProto *mm = g->add_node();
  mm->set_name("matmul");
  mm->set_op_type("MatMul");
  mm->add_input("x");
  mm->add_input("fc.weight");
  mm->add_output("t");
  onnx::NodeProto *add = g->add_node();
  add->set_name("bias");
  add->set_op_type("Add");
  add->add_input("t");
  add->add_input("fc.bias");
  add->add_output("y");
  return model;
}


class ImporterTest : public ::testing::Test {
protected:
  ImporterTest()
      : handler(&context, [this](Diagnostic &d) {
          errors.push_back(d.str());
          return success();
        }) {}

  MLIRContext context;
  std::vector<std::string> errors;
  ScopedDiagnosticHandler handler;
};

TEST_F(ImporterTest, ParametersBecomeNamedGlobals) {
  ImportOptions options;
  options.batchSize = 4;
  auto module = importOnnxModel(&context, linearModel(), "", options);
  ASSERT_TRUE(succeeded(module)) << errors.front();
  auto weight = (*module)->lookupSymbol<GlobalOp>("fc.weight");
  ASSERT_TRUE(weight);
  EXPECT_EQ(weight.getType(),
            RankedTensorType::get({3, 2}, Float32Type::get(&context)));
  auto func = (*module)->lookupSymbol<func::FuncOp>("forward");
  ASSERT_TRUE(func);
  EXPECT_EQ(func.getArgument(0).getType(),
            RankedTensorType::get({4, 3}, Float32Type::get(&context)));
  EXPECT_EQ(func.getArgAttrOfType<StringAttr>(0, "dlc.name").str(), "x");
  EXPECT_EQ(func.getResultAttrOfType<StringAttr>(0, "dlc.name").str(), "y");
}

TEST_F(ImporterTest, LocationsNameTheNodeAndOpType) {
  ImportOptions options;
  options.dims["batch"] = 1;
  auto module = importOnnxModel(&context, linearModel(), "", options);
  ASSERT_TRUE(succeeded(module));
  bool found = false;
  (*module)->walk([&](MatmulOp op) {
    auto loc = dyn_cast<NameLoc>(op.getLoc());
    ASSERT_TRUE(loc);
    EXPECT_EQ(loc.getName().str(), "matmul");
    auto type = dyn_cast<NameLoc>(loc.getChildLoc());
    ASSERT_TRUE(type);
    EXPECT_EQ(type.getName().str(), "MatMul");
    found = true;
  });
  EXPECT_TRUE(found);
}

TEST_F(ImporterTest, EvaluatesWhatItImports) {
  ImportOptions options;
  options.batchSize = 1;
  auto module = importOnnxModel(&context, linearModel(), "", options);
  ASSERT_TRUE(succeeded(module));
  FailureOr<Evaluator> evaluator = Evaluator::create(**module);
  ASSERT_TRUE(succeeded(evaluator));
  Tensor x(DType::F32, {1, 3});
  float *xs = x.data<float>();
  xs[0] = 1;
  xs[1] = 0;
  xs[2] = -1;
  auto func = (*module)->lookupSymbol<func::FuncOp>("forward");
  FailureOr<SmallVector<Tensor>> out = evaluator->run(func, {x});
  ASSERT_TRUE(succeeded(out));
  // [1, 0, -1] x [[1, 2], [3, 4], [5, 6]] + [0.5, -0.5] = [-3.5, -4.5]
  EXPECT_FLOAT_EQ((*out)[0].data<float>()[0], -3.5f);
  EXPECT_FLOAT_EQ((*out)[0].data<float>()[1], -4.5f);
}

TEST_F(ImporterTest, UnboundSymbolicDimensionIsAnError) {
  auto module = importOnnxModel(&context, linearModel(), "", ImportOptions());
  EXPECT_TRUE(failed(module));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("dimension 0 ('batch') is symbolic"),
            std::string::npos)
      << errors[0];
}

TEST_F(ImporterTest, ConstantInputsBecomeConstants) {
  onnx::ModelProto model = linearModel();
  ImportOptions options;
  Tensor x(DType::F32, {2, 3});
  options.constantInputs["x"] = x;
  options.batchSize = 2;
  auto module = importOnnxModel(&context, model, "", options);
  ASSERT_TRUE(succeeded(module)) << errors.front();
  auto func = (*module)->lookupSymbol<func::FuncOp>("forward");
  EXPECT_EQ(func.getNumArguments(), 0u);
}

TEST_F(ImporterTest, ConstantInputOfTheWrongShapeIsAnError) {
  ImportOptions options;
  options.constantInputs["x"] = Tensor(DType::F32, {5});
  options.batchSize = 2;
  EXPECT_TRUE(failed(importOnnxModel(&context, linearModel(), "", options)));
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].find("the value given for input 'x' is float32[5]"),
            std::string::npos)
      << errors[0];
}

TEST_F(ImporterTest, UnsupportedOpNamesTheOp) {
  onnx::ModelProto model = linearModel();
  model.mutable_graph()->mutable_node(1)->set_op_type("NonMaxSuppression");
  ImportOptions options;
  options.batchSize = 1;
  EXPECT_TRUE(failed(importOnnxModel(&context, model, "", options)));
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors.back().find("NonMaxSuppression"), std::string::npos)
      << errors.back();
}

TEST_F(ImporterTest, ExternalDataIsRefusedWithoutAFolder) {
  onnx::ModelProto model = linearModel();
  onnx::TensorProto *w = model.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto *entry = w->add_external_data();
  entry->set_key("location");
  entry->set_value("weights.bin");
  ImportOptions options;
  options.batchSize = 1;
  EXPECT_TRUE(failed(importOnnxModel(&context, model, "", options)));
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors.back().find("external data is not allowed here"),
            std::string::npos)
      << errors.back();
}

// fuzz/regressions/external-data/empty-raw-data.pb: an empty raw_data
// copied no bytes to the null buffer of an empty tensor, which memcpy may
// not be given (UBSan's report; fuzz/run.sh replays the input).
TEST(TensorProtoTest, EmptyRawDataIsAnEmptyTensor) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::FLOAT);
  proto.add_dims(0);
  proto.set_raw_data("");
  std::string message;
  std::optional<Tensor> tensor = tensorFromProto(proto, "", message);
  ASSERT_TRUE(tensor) << message;
  EXPECT_EQ(tensor->shape(), std::vector<int64_t>{0});
  EXPECT_EQ(tensor->byteSize(), 0u);
}

TEST_F(ImporterTest, NodeDisplayNameIsTheNameOrOpTypeAndIndex) {
  onnx::NodeProto node;
  node.set_op_type("Relu");
  EXPECT_EQ(nodeDisplayName(node, 7), "Relu_7");
  node.set_name("act");
  EXPECT_EQ(nodeDisplayName(node, 7), "act");
}

TEST_F(ImporterTest, GlobalsAreNamedAfterTheirInitializer) {
  ImportOptions options;
  options.batchSize = 1;
  auto module = importOnnxModel(&context, linearModel(), "", options);
  ASSERT_TRUE(succeeded(module));
  auto weight = (*module)->lookupSymbol<GlobalOp>("fc.weight");
  ASSERT_TRUE(weight);
  auto loc = dyn_cast<NameLoc>(weight.getLoc());
  ASSERT_TRUE(loc);
  EXPECT_EQ(loc.getName().str(), "fc.weight");
}

TEST_F(ImporterTest, UnusedParametersAreDropped) {
  onnx::ModelProto model = linearModel();
  onnx::TensorProto *unused = model.mutable_graph()->add_initializer();
  unused->set_name("unused");
  unused->set_data_type(onnx::TensorProto::FLOAT);
  unused->add_dims(1);
  unused->add_float_data(1.f);
  ImportOptions options;
  options.batchSize = 1;
  auto module = importOnnxModel(&context, model, "", options);
  ASSERT_TRUE(succeeded(module)) << errors.front();
  EXPECT_FALSE((*module)->lookupSymbol<GlobalOp>("unused"));
  EXPECT_TRUE((*module)->lookupSymbol<GlobalOp>("fc.weight"));
  EXPECT_TRUE((*module)->lookupSymbol<GlobalOp>("fc.bias"));
}

void addFloatInitializer(onnx::GraphProto *g, const std::string &name,
                         std::vector<float> values) {
  onnx::TensorProto *t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (float v : values)
    t->add_float_data(v);
}

/// y = Dropout(BatchNormalization(x, s, b, m, v)) with x: [4, 2] and the
/// BatchNormalization as an eval-mode export writes it (training_mode 0,
/// momentum 0.9), the Dropout with ratio 0.5 and no training_mode.
onnx::ModelProto batchNormDropoutModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(15);
  onnx::GraphProto *g = model.mutable_graph();
  g->set_name("bn");
  addTensorValue(g->add_input(), "x", onnx::TensorProto::FLOAT,
                 {int64_t(4), int64_t(2)});
  addTensorValue(g->add_output(), "y", onnx::TensorProto::FLOAT,
                 {int64_t(4), int64_t(2)});
  addTensorValue(g->add_output(), "mask", onnx::TensorProto::BOOL,
                 {int64_t(4), int64_t(2)});
  addFloatInitializer(g, "s", {1.0f, 2.0f});
  addFloatInitializer(g, "b", {0.0f, 0.5f});
  addFloatInitializer(g, "m", {0.5f, -1.0f});
  addFloatInitializer(g, "v", {2.0f, 0.25f});
  onnx::NodeProto *bn = g->add_node();
  bn->set_name("bn");
  bn->set_op_type("BatchNormalization");
  for (const char *in : {"x", "s", "b", "m", "v"})
    bn->add_input(in);
  bn->add_output("t");
  onnx::NodeProto *drop = g->add_node();
  drop->set_name("drop");
  drop->set_op_type("Dropout");
  drop->add_input("t");
  drop->add_output("y");
  drop->add_output("mask");
  return model;
}

TEST_F(ImporterTest, ModeNamesRoundTrip) {
  for (ImportMode mode :
       {ImportMode::AsExported, ImportMode::Training, ImportMode::Inference})
    EXPECT_EQ(parseImportMode(importModeName(mode)), mode);
  EXPECT_EQ(parseImportMode("train"), std::nullopt);
  EXPECT_EQ(ImportOptions().mode, ImportMode::AsExported);
}

/// Two training steps on the evaluator: each writes PyTorch's running
/// statistics back to the initializers' globals and advances the seed, so
/// the second step starts from the first one's statistics and draws another
/// mask.
TEST_F(ImporterTest, TrainingStepsUpdateRunningStatisticsAndSeed) {
  ImportOptions options;
  options.mode = ImportMode::Training;
  auto module =
      importOnnxModel(&context, batchNormDropoutModel(), "", options);
  ASSERT_TRUE(succeeded(module)) << errors.front();
  FailureOr<Evaluator> evaluator = Evaluator::create(**module);
  ASSERT_TRUE(succeeded(evaluator));
  auto func = (*module)->lookupSymbol<func::FuncOp>("forward");
  Tensor x(DType::F32, {4, 2});
  // Column 0: 1, 2, 3, 4 (mean 2.5, unbiased variance 5/3); column 1:
  // 0, 0, 1, 3 (mean 1, unbiased variance 2).
  float xs[] = {1, 0, 2, 0, 3, 1, 4, 3};
  std::copy(std::begin(xs), std::end(xs), x.data<float>());

  double mean[2] = {0.5, -1.0}, var[2] = {2.0, 0.25};
  double batchMean[2] = {2.5, 1.0}, batchVar[2] = {5.0 / 3.0, 2.0};
  // ONNX's momentum 0.9 as float32, the share of the old statistics.
  double keep = 0.9f;
  std::vector<bool> masks[2];
  for (int step = 0; step < 2; ++step) {
    FailureOr<SmallVector<Tensor>> out = evaluator->run(func, {x});
    ASSERT_TRUE(succeeded(out)) << (errors.empty() ? "" : errors.front());
    for (int c = 0; c < 2; ++c) {
      mean[c] = keep * mean[c] + (1 - keep) * batchMean[c];
      var[c] = keep * var[c] + (1 - keep) * batchVar[c];
      // Float32 steps: a few ulps of values near 1.
      EXPECT_NEAR(evaluator->globals()["m"].getDouble(c), mean[c], 1e-6)
          << "step " << step << " channel " << c;
      EXPECT_NEAR(evaluator->globals()["v"].getDouble(c), var[c], 1e-6)
          << "step " << step << " channel " << c;
    }
    EXPECT_EQ(evaluator->globals()[kRngSeedGlobal].getInt(0), step + 1);
    for (int64_t i = 0; i < 8; ++i)
      masks[step].push_back((*out)[1].getInt(i) != 0);
  }
  // Seeds 0 and 1 draw different masks for these 8 elements (Philox is
  // deterministic, so this cannot flake).
  EXPECT_NE(masks[0], masks[1]);
}

TEST_F(ImporterTest, InferenceModeLeavesStateAlone) {
  ImportOptions options;
  options.mode = ImportMode::Inference;
  auto module =
      importOnnxModel(&context, batchNormDropoutModel(), "", options);
  ASSERT_TRUE(succeeded(module)) << errors.front();
  bool stores = false, dropouts = false;
  (*module)->walk([&](Operation *op) {
    stores |= isa<GlobalStoreOp>(op);
    dropouts |= isa<DropoutOp>(op);
  });
  EXPECT_FALSE(stores);
  EXPECT_FALSE(dropouts);
  EXPECT_FALSE((*module)->lookupSymbol<GlobalOp>(kRngSeedGlobal));
}

/// A NodeContext for `node` outside any import, for the getters.
struct DetachedNode {
  explicit DetachedNode(MLIRContext &context, const onnx::NodeProto &node)
      : builder(&context),
        ctx(builder, node, {}, 13,
            NameLoc::get(StringAttr::get(&context, node.name()))) {
    registerImporterDialects(&context);
  }
  OpBuilder builder;
  NodeContext ctx;
};

TEST_F(ImporterTest, AttributeGettersCheckTheType) {
  onnx::NodeProto node;
  node.set_name("softmax");
  node.set_op_type("Softmax");
  onnx::AttributeProto *axis = node.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INTS);
  axis->add_ints(1);
  onnx::AttributeProto *alpha = node.add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(0.5f);
  DetachedNode n(context, node);

  EXPECT_EQ(n.ctx.floatAttr("alpha", 1.0f), 0.5f);
  EXPECT_FALSE(n.ctx.failed());
  // INTS where an INT is read: the default, an error, a poisoned context.
  EXPECT_EQ(n.ctx.intAttr("axis", -1), -1);
  EXPECT_TRUE(n.ctx.failed());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "attribute 'axis' must be INT, got INTS");
  // An INT is not a FLOAT either; later errors of the node are dropped.
  EXPECT_EQ(n.ctx.intAttr("alpha", 3), 3);
  EXPECT_EQ(n.ctx.intsAttr("axis"), std::vector<int64_t>{1});
  EXPECT_EQ(errors.size(), 1u);
}

} // namespace
