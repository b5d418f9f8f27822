//===- EvalTestUtil.h - Fixture and helpers of the evaluator tests --------===//
//
// Tests parse a small module from a string, run its @main with the
// Evaluator and compare the results with hand-computed values. Diagnostics
// are captured into `errors` so error tests can check their text.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_IR_EVAL_TEST_EVALTESTUTIL_H
#define DLC_IR_EVAL_TEST_EVALTESTUTIL_H

#include "ir/Dialect.h"
#include "ir/eval/Evaluator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace dlc::evaltest {

using ::dlc::BFloat16;
using ::dlc::DType;
using ::dlc::Half;
using ::dlc::Tensor;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

/// A tensor of storage type T holding `values` (row-major).
template <typename T>
Tensor tensorOf(std::vector<int64_t> shape, const std::vector<T> &values) {
  Tensor t(DTypeOf<T>::value, std::move(shape));
  EXPECT_EQ(static_cast<size_t>(t.numElements()), values.size())
      << "test tensor has the wrong number of values";
  T *data = t.data<T>();
  for (size_t i = 0; i < values.size() && i < size_t(t.numElements()); ++i)
    data[i] = values[i];
  return t;
}

inline Tensor f32(std::vector<int64_t> shape, const std::vector<float> &v) {
  return tensorOf<float>(std::move(shape), v);
}
inline Tensor i64(std::vector<int64_t> shape, const std::vector<int64_t> &v) {
  return tensorOf<int64_t>(std::move(shape), v);
}

/// Every element as a double (exact for all but huge 64-bit integers).
inline std::vector<double> doublesOf(const Tensor &t) {
  std::vector<double> values;
  for (int64_t i = 0; i < t.numElements(); ++i)
    values.push_back(t.getDouble(i));
  return values;
}

template <typename T> std::vector<T> valuesOf(const Tensor &t) {
  const T *data = t.data<T>();
  return std::vector<T>(data, data + t.numElements());
}

/// IREE's e2e criterion |actual - expected| <= atol + rtol * |expected|;
/// NaN matches NaN and infinities must match exactly.
inline void expectClose(const Tensor &actual,
                        const std::vector<double> &expected, double atol,
                        double rtol) {
  ASSERT_EQ(static_cast<size_t>(actual.numElements()), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    double a = actual.getDouble(i), e = expected[i];
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(a)) << "element " << i << ": " << a;
    } else if (std::isinf(e)) {
      EXPECT_EQ(a, e) << "element " << i;
    } else {
      EXPECT_LE(std::fabs(a - e), atol + rtol * std::fabs(e))
          << "element " << i << ": got " << a << ", expected " << e;
    }
  }
}

/// Exact comparison (every expected value must be representable).
inline void expectValues(const Tensor &actual,
                         const std::vector<double> &expected) {
  expectClose(actual, expected, 0.0, 0.0);
}

class EvalTest : public ::testing::Test {
protected:
  EvalTest() {
    mlir::DialectRegistry registry;
    registry.insert<mlir::dlc::DLCDialect, mlir::func::FuncDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    context.getDiagEngine().registerHandler([this](mlir::Diagnostic &d) {
      errors += d.str();
      errors += "\n";
      return mlir::success();
    });
  }

  /// Parses and verifies `source`; null on error (`errors` says why).
  mlir::ModuleOp parse(llvm::StringRef source) {
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    return module ? *module : nullptr;
  }

  /// Parses `source` and runs its @main on `inputs`.
  mlir::FailureOr<llvm::SmallVector<Tensor>>
  run(llvm::StringRef source, llvm::ArrayRef<Tensor> inputs = {}) {
    mlir::ModuleOp m = parse(source);
    if (!m) {
      ADD_FAILURE() << "parse failed:\n" << errors;
      return mlir::failure();
    }
    mlir::FailureOr<mlir::dlc::Evaluator> evaluator =
        mlir::dlc::Evaluator::create(m);
    if (mlir::failed(evaluator))
      return mlir::failure();
    auto main = m.lookupSymbol<mlir::func::FuncOp>("main");
    if (!main) {
      ADD_FAILURE() << "no @main";
      return mlir::failure();
    }
    return evaluator->run(main, inputs);
  }

  /// run(), expecting success; all results.
  llvm::SmallVector<Tensor> runAll(llvm::StringRef source,
                                   llvm::ArrayRef<Tensor> inputs = {}) {
    mlir::FailureOr<llvm::SmallVector<Tensor>> results = run(source, inputs);
    if (mlir::failed(results)) {
      ADD_FAILURE() << "evaluation failed:\n" << errors;
      return {};
    }
    return *results;
  }

  /// run(), expecting success and one result (an empty f32 tensor on
  /// failure, so the caller's comparison fails too).
  Tensor runOne(llvm::StringRef source, llvm::ArrayRef<Tensor> inputs = {}) {
    llvm::SmallVector<Tensor> results = runAll(source, inputs);
    if (results.size() != 1) {
      ADD_FAILURE() << "expected one result, got " << results.size();
      return Tensor(DType::F32, {0});
    }
    return results.front();
  }

  /// run(), expecting failure; the diagnostics.
  std::string runError(llvm::StringRef source,
                       llvm::ArrayRef<Tensor> inputs = {}) {
    EXPECT_TRUE(mlir::failed(run(source, inputs))) << "expected an error";
    return errors;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string errors;
};

} // namespace dlc::evaltest

#endif // DLC_IR_EVAL_TEST_EVALTESTUTIL_H
