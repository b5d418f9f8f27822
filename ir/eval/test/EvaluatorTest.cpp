//===- EvaluatorTest.cpp - Tests of the Evaluator and constant folding ----===//
//
// The function runner (globals, input checks, values used several times,
// unknown ops), evaluateOp's own operand checks, and the dialect's constant
// folder, which runs evaluateOp on constant operands.
//
//===----------------------------------------------------------------------===//
#include "EvalTestUtil.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace dlc::evaltest;
using namespace mlir;
using namespace mlir::dlc;

namespace {

using EvaluatorTest = EvalTest;

const char *kWithGlobal = R"mlir(
  dlc.global @"fc.weight" : tensor<2xf32> = dense<[1.0, 2.0]> : tensor<2xf32>
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %w = dlc.global_load @"fc.weight" : tensor<2xf32>
    %0 = dlc.add %x, %w : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    return %0 : tensor<2xf32>
  })mlir";

TEST_F(EvaluatorTest, GlobalsStartAtTheirInitialValues) {
  ModuleOp m = parse(kWithGlobal);
  ASSERT_TRUE(m) << errors;
  FailureOr<Evaluator> evaluator = Evaluator::create(m);
  ASSERT_TRUE(succeeded(evaluator)) << errors;
  ASSERT_EQ(evaluator->globals().count("fc.weight"), 1u);
  auto main = m.lookupSymbol<func::FuncOp>("main");
  FailureOr<SmallVector<Tensor>> r = evaluator->run(main, {f32({2}, {10, 20})});
  ASSERT_TRUE(succeeded(r)) << errors;
  expectValues((*r)[0], {11, 22});
  // Later runs read the globals' current values.
  evaluator->globals()["fc.weight"] = f32({2}, {-1, -2});
  r = evaluator->run(main, {f32({2}, {10, 20})});
  ASSERT_TRUE(succeeded(r)) << errors;
  expectValues((*r)[0], {9, 18});
}

TEST_F(EvaluatorTest, SlicesAlongAnInnerDimensionJoinBack) {
  // [2, 4, 1] along dimension 1 in 2 parts: rows 0-1 and 2-3 of each batch.
  Tensor whole = f32({2, 4, 1}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor first = sliceOf(whole, 1, 0, 2), second = sliceOf(whole, 1, 1, 2);
  EXPECT_EQ(first.shape(), (std::vector<int64_t>{2, 2, 1}));
  expectValues(first, {0, 1, 4, 5});
  expectValues(second, {2, 3, 6, 7});
  expectValues(joinSlices({first, second}, 1), {0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_F(EvaluatorTest, SlicesOfBlocksJoinBack) {
  // [6] in 3 blocks (Q, K, V) of 2, each split in 2: rank 0 holds the
  // first element of each block, rank 1 the second.
  Tensor whole = f32({6}, {0, 1, 2, 3, 4, 5});
  Tensor first = sliceOf(whole, 0, 0, 2, 3),
         second = sliceOf(whole, 0, 1, 2, 3);
  expectValues(first, {0, 2, 4});
  expectValues(second, {1, 3, 5});
  expectValues(joinSlices({first, second}, 0, 3), {0, 1, 2, 3, 4, 5});
  // [2, 4] along dimension 1 in 2 blocks: each row's halves, split.
  Tensor matrix = f32({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  expectValues(sliceOf(matrix, 1, 1, 2, 2), {1, 3, 5, 7});
  expectValues(
      joinSlices({sliceOf(matrix, 1, 0, 2, 2), sliceOf(matrix, 1, 1, 2, 2)}, 1,
                 2),
      {0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_F(EvaluatorTest, RankGridGroupsTensorRanksInnermost) {
  RankGrid grid{/*dataParallel=*/3, /*tensorParallel=*/2};
  EXPECT_EQ(grid.ranks(), 6);
  EXPECT_EQ(grid.tensorGroups(),
            (SmallVector<SmallVector<int64_t>>{{0, 1}, {2, 3}, {4, 5}}));
  EXPECT_EQ(grid.dataGroups(),
            (SmallVector<SmallVector<int64_t>>{{0, 2, 4}, {1, 3, 5}}));
  EXPECT_EQ(grid.describe(), "3 data-parallel x 2 tensor-parallel ranks");
  EXPECT_EQ(RankGrid{}.describe(), "1 rank");
  EXPECT_EQ((RankGrid{1, 4}).describe(), "4 tensor-parallel ranks");
}

TEST_F(EvaluatorTest, RankGridPutsStagesOutermost) {
  RankGrid grid{/*dataParallel=*/2, /*tensorParallel=*/2, /*pipeline=*/3};
  EXPECT_EQ(grid.ranks(), 12);
  EXPECT_EQ(grid.pipelineRank(5), 1);
  EXPECT_EQ(grid.dataRank(5), 0);
  EXPECT_EQ(grid.tensorRank(5), 1);
  EXPECT_EQ(grid.dataGroups().size(), 6u);
  EXPECT_EQ(grid.dataGroups()[3], (SmallVector<int64_t>{5, 7}));
  EXPECT_EQ(grid.tensorGroups()[3], (SmallVector<int64_t>{6, 7}));
  EXPECT_EQ(grid.describe(),
            "2 data-parallel x 2 tensor-parallel x 3 pipeline-stage ranks");
}

// A staged function: rank s runs stage s's ops, an op without a stage runs
// where its operands are, dlc.pp_transfer hands a value over, and every
// rank returns the results as their stages hold them.
TEST_F(EvaluatorTest, PipelineStagesRunTheirOwnOps) {
  ModuleOp m = parse(R"mlir(
    module attributes {dlc.pipeline_stages = 2 : i64} {
      func.func @step(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
        %c = dlc.constant dense<[1.0, 2.0]> : tensor<2xf32>
        %a = dlc.add %x, %c {dlc.pp_stage = 0 : i64} : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
        %t = dlc.pp_transfer %a from 0 to 1 : tensor<2xf32>
        %b = dlc.mul %t, %t {dlc.pp_stage = 1 : i64} : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
        %n = dlc.neg %t : tensor<2xf32>
        return %a, %n : tensor<2xf32>, tensor<2xf32>
      }
    })mlir");
  ASSERT_TRUE(m) << errors;
  FailureOr<Evaluator> evaluator = Evaluator::create(m);
  ASSERT_TRUE(succeeded(evaluator)) << errors;
  ASSERT_EQ(evaluator->ranks(), 2);
  Tensor x = f32({2}, {3, 4});
  auto results =
      evaluator->runRanks(m.lookupSymbol<func::FuncOp>("step"),
                          {ArrayRef<Tensor>(x), ArrayRef<Tensor>(x)});
  ASSERT_TRUE(succeeded(results)) << errors;
  for (int64_t rank : {0, 1}) {
    expectValues((*results)[rank][0], {4, 6});
    expectValues((*results)[rank][1], {-4, -6});
  }
}

TEST_F(EvaluatorTest, TransferOfAValueTheSenderDoesNotHoldIsAnError) {
  ModuleOp m = parse(R"mlir(
    module attributes {dlc.pipeline_stages = 2 : i64} {
      func.func @step(%x: tensor<2xf32>) -> tensor<2xf32> {
        %a = dlc.neg %x {dlc.pp_stage = 1 : i64} : tensor<2xf32>
        %t = dlc.pp_transfer %a from 0 to 1 : tensor<2xf32>
        return %t : tensor<2xf32>
      }
    })mlir");
  ASSERT_TRUE(m) << errors;
  FailureOr<Evaluator> evaluator = Evaluator::create(m);
  ASSERT_TRUE(succeeded(evaluator)) << errors;
  Tensor x = f32({2}, {3, 4});
  EXPECT_TRUE(
      failed(evaluator->runRanks(m.lookupSymbol<func::FuncOp>("step"),
                                 {ArrayRef<Tensor>(x), ArrayRef<Tensor>(x)})));
  EXPECT_NE(errors.find("'dlc.pp_transfer' op sends a value the rank of "
                        "stage 0 does not hold"),
            std::string::npos)
      << errors;
}

// Two stages of two ranks each (ranks 0 and 1 run stage 0): `grid` (two
// replicas or two tensor ranks) and `collective` (among them, on stage 1).
// Each rank's transfer goes to its own rank of the next stage, whose
// collective runs among that stage's ranks: returns what the ranks return
// ([the transfer, the collective] each) for inputs [1, 2] on ranks 0 and 2
// and [3, 4] on ranks 1 and 3.
class StagedEvaluatorTest : public EvalTest {
protected:
  FailureOr<SmallVector<SmallVector<Tensor>>>
  runTwoStagesOfTwo(StringRef grid, StringRef collective) {
    std::string text =
        ("module attributes {dlc.pipeline_stages = 2 : i64, " + grid +
         " = 2 : i64} {\n"
         "  func.func @step(%x: tensor<2xf32>) -> "
         "(tensor<2xf32>, tensor<2xf32>) {\n"
         "    %a = dlc.neg %x {dlc.pp_stage = 0 : i64} : "
         "tensor<2xf32>\n"
         "    %t = dlc.pp_transfer %a from 0 to 1 : "
         "tensor<2xf32>\n"
         "    %r = " +
         collective +
         " %t {dlc.pp_stage = 1 : i64} : tensor<2xf32>\n"
         "    return %t, %r : tensor<2xf32>, tensor<2xf32>\n"
         "  }\n"
         "}")
            .str();
    ModuleOp m = parse(text);
    if (!m)
      return failure();
    FailureOr<Evaluator> evaluator = Evaluator::create(m);
    if (failed(evaluator) || evaluator->ranks() != 4)
      return failure();
    Tensor first = f32({2}, {1, 2}), second = f32({2}, {3, 4});
    return evaluator->runRanks(
        m.lookupSymbol<func::FuncOp>("step"),
        {ArrayRef<Tensor>(first), ArrayRef<Tensor>(second),
         ArrayRef<Tensor>(first), ArrayRef<Tensor>(second)});
  }
};

TEST_F(StagedEvaluatorTest, ReplicasReduceAmongTheirStage) {
  auto results =
      runTwoStagesOfTwo("dlc.data_parallel", "dlc.all_reduce mean bucket 0");
  ASSERT_TRUE(succeeded(results)) << errors;
  for (int64_t rank : {0, 1, 2, 3}) {
    if (rank % 2)
      expectValues((*results)[rank][0], {-3, -4});
    else
      expectValues((*results)[rank][0], {-1, -2});
    expectValues((*results)[rank][1], {-2, -3});
  }
}

TEST_F(StagedEvaluatorTest, TensorRanksReduceAmongTheirStage) {
  auto results = runTwoStagesOfTwo("dlc.tensor_parallel", "dlc.tp_reduce");
  ASSERT_TRUE(succeeded(results)) << errors;
  for (int64_t rank : {0, 1, 2, 3}) {
    if (rank % 2)
      expectValues((*results)[rank][0], {-3, -4});
    else
      expectValues((*results)[rank][0], {-1, -2});
    expectValues((*results)[rank][1], {-4, -6});
  }
}

TEST_F(EvaluatorTest, SplitGlobalsStartAsEachTensorRanksSlice) {
  ModuleOp m = parse(R"mlir(
    module attributes {dlc.tensor_parallel = 2 : i64, dlc.data_parallel = 2 : i64} {
      dlc.global @w : tensor<1x2xf32> = dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32> {dlc.tp_split = 1 : i64}
    })mlir");
  ASSERT_TRUE(m) << errors;
  FailureOr<Evaluator> evaluator = Evaluator::create(m);
  ASSERT_TRUE(succeeded(evaluator)) << errors;
  ASSERT_EQ(evaluator->ranks(), 4);
  for (int64_t rank : {0, 2})
    expectValues(evaluator->globals(rank)["w"], {1, 2});
  for (int64_t rank : {1, 3})
    expectValues(evaluator->globals(rank)["w"], {3, 4});
}

TEST_F(EvaluatorTest, BadRankCountsAreRefused) {
  ModuleOp m = parse(R"mlir(
    module attributes {dlc.tensor_parallel = 0 : i64} {
    })mlir");
  ASSERT_TRUE(m) << errors;
  EXPECT_TRUE(failed(Evaluator::create(m)));
  EXPECT_NE(errors.find("dlc.tensor_parallel must be an i64 number of ranks "
                        "from 1 to 1024, got 0 : i64"),
            std::string::npos)
      << errors;
}

TEST_F(EvaluatorTest, TooManyRanksAreRefused) {
  ModuleOp m = parse(R"mlir(
    module attributes {dlc.tensor_parallel = 64 : i64, dlc.data_parallel = 32 : i64} {
    })mlir");
  ASSERT_TRUE(m) << errors;
  EXPECT_TRUE(failed(Evaluator::create(m)));
  EXPECT_NE(errors.find("the module runs on 32 data-parallel x 64 "
                        "tensor-parallel ranks, more than 1024"),
            std::string::npos)
      << errors;
}

TEST_F(EvaluatorTest, GlobalWithoutInitialValueIsNamed) {
  ModuleOp m = parse(R"mlir(
    dlc.global @state : tensor<2xf32>
    func.func @main() -> tensor<2xf32> {
      %0 = dlc.global_load @state : tensor<2xf32>
      return %0 : tensor<2xf32>
    })mlir");
  ASSERT_TRUE(m) << errors;
  EXPECT_TRUE(failed(Evaluator::create(m)));
  EXPECT_NE(errors.find("@state has no initial value"), std::string::npos)
      << errors;
}

const char *kTakes2x3 = R"mlir(
  func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = dlc.neg %x : tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  })mlir";

TEST_F(EvaluatorTest, InputCountIsChecked) {
  std::string error = runError(kTakes2x3);
  EXPECT_NE(error.find("expects 1 inputs, got 0"), std::string::npos)
      << error;
}

TEST_F(EvaluatorTest, InputShapeIsChecked) {
  std::string error = runError(kTakes2x3, {f32({3}, {1, 2, 3})});
  EXPECT_NE(error.find("input #0 is float32[3], expected float32[2,3]"),
            std::string::npos)
      << error;
}

TEST_F(EvaluatorTest, InputDTypeIsChecked) {
  std::string error = runError(kTakes2x3, {i64({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_NE(error.find("input #0 is int64[2,3], expected float32[2,3]"),
            std::string::npos)
      << error;
}

TEST_F(EvaluatorTest, FunctionWithoutBodyIsAnError) {
  ModuleOp m = parse(R"mlir(
    func.func private @main(tensor<2xf32>) -> tensor<2xf32>
  )mlir");
  FailureOr<Evaluator> evaluator = Evaluator::create(m);
  ASSERT_TRUE(succeeded(evaluator));
  auto func = m.lookupSymbol<func::FuncOp>("main");
  EXPECT_TRUE(failed(evaluator->run(func, {f32({2}, {1, 2})})));
  EXPECT_NE(errors.find("has no body to evaluate"), std::string::npos)
      << errors;
}

TEST_F(EvaluatorTest, UnknownOpHasNoRule) {
  std::string error = runError(R"mlir(
    func.func private @helper(tensor<2xf32>) -> tensor<2xf32>
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = func.call @helper(%x) : (tensor<2xf32>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    })mlir",
                               {f32({2}, {1, 2})});
  EXPECT_NE(error.find("'func.call' op has no evaluator rule"),
            std::string::npos)
      << error;
}

TEST_F(EvaluatorTest, ValuesUsedSeveralTimesStayIntact) {
  // %x feeds two ops (once twice) and is returned; %1 is returned twice.
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
      %0 = dlc.add %x, %x : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
      %1 = dlc.mul %0, %x : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
      %unused = dlc.exp %x : tensor<2xf32>
      return %1, %x, %1 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
    })mlir",
                                       {f32({2}, {1, 2})});
  ASSERT_EQ(r.size(), 3u);
  expectValues(r[0], {2, 8});
  expectValues(r[1], {1, 2});
  expectValues(r[2], {2, 8});
}

TEST_F(EvaluatorTest, EvaluateOpChecksOperandValues) {
  ModuleOp m = parse(kWithGlobal);
  ASSERT_TRUE(m) << errors;
  Operation *add = nullptr, *load = nullptr;
  m.walk([&](Operation *op) {
    if (isa<AddOp>(op))
      add = op;
    if (isa<GlobalLoadOp>(op))
      load = op;
  });
  ASSERT_TRUE(add && load);
  SmallVector<Tensor> results;
  Tensor wrong = f32({3}, {1, 2, 3});
  EXPECT_TRUE(failed(evaluateOp(add, {wrong, wrong}, results)));
  EXPECT_NE(errors.find("operand #0 is float32[3], expected float32[2]"),
            std::string::npos)
      << errors;
  EXPECT_TRUE(failed(evaluateOp(add, {wrong}, results)));
  EXPECT_TRUE(failed(evaluateOp(load, {}, results, /*globals=*/nullptr)));
  EXPECT_NE(errors.find("no global values were provided"), std::string::npos)
      << errors;
  EXPECT_TRUE(results.empty());
}

TEST_F(EvaluatorTest, ConstantFoldingRunsTheEvaluator) {
  OpBuilder builder(&context);
  Location loc = FileLineColLoc::get(&context, "fold-test", 1, 1);
  OwningOpRef<ModuleOp> m = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(m->getBody());
  auto f32x2 = RankedTensorType::get({2}, builder.getF32Type());
  auto i8x2 = RankedTensorType::get({2}, builder.getI8Type());
  Value a = ConstantOp::create(builder, loc,
                               DenseElementsAttr::get(f32x2, {1.0f, 2.0f}));
  Value b = ConstantOp::create(builder, loc,
                               DenseElementsAttr::get(f32x2, {3.0f, 4.5f}));
  Value sum = builder.createOrFold<AddOp>(loc, a, b);
  auto folded = sum.getDefiningOp<ConstantOp>();
  ASSERT_TRUE(folded) << "dlc.add of constants did not fold";
  auto values = cast<DenseElementsAttr>(folded.getValue()).getValues<float>();
  EXPECT_EQ(std::vector<float>(values.begin(), values.end()),
            (std::vector<float>{4.0f, 6.5f}));

  // Folding follows the evaluator's integer wrap-around.
  Value c = ConstantOp::create(
      builder, loc, DenseElementsAttr::get(i8x2, {int8_t(100), int8_t(-1)}));
  Value wrapped = builder.createOrFold<AddOp>(loc, c, c);
  auto foldedInt = wrapped.getDefiningOp<ConstantOp>();
  ASSERT_TRUE(foldedInt);
  auto ints = cast<DenseElementsAttr>(foldedInt.getValue()).getValues<int8_t>();
  EXPECT_EQ(std::vector<int8_t>(ints.begin(), ints.end()),
            (std::vector<int8_t>{-56, -2}));
}

TEST_F(EvaluatorTest, FailedFoldStaysSilentAndUnfolded) {
  OpBuilder builder(&context);
  Location loc = FileLineColLoc::get(&context, "fold-test", 2, 1);
  OwningOpRef<ModuleOp> m = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(m->getBody());
  auto data = RankedTensorType::get({3}, builder.getF32Type());
  auto index = RankedTensorType::get({1}, builder.getI64Type());
  Value d = ConstantOp::create(
      builder, loc, DenseElementsAttr::get(data, {1.0f, 2.0f, 3.0f}));
  Value i = ConstantOp::create(builder, loc,
                               DenseElementsAttr::get(index, {int64_t(7)}));
  Value g = builder.createOrFold<GatherOp>(loc, d, i,
                                           builder.getI64IntegerAttr(0));
  // The out-of-range index is left for evaluation to report.
  EXPECT_TRUE(g.getDefiningOp<GatherOp>());
  EXPECT_TRUE(errors.empty()) << errors;
}

} // namespace
