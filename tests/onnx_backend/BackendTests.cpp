//===- BackendTests.cpp - Runs ONNX's backend node tests on dlc -----------===//
//
//   dlc-onnx-backend-tests DATA_DIR [--filter SUBSTR] [--min-pass-rate R]
//                          [--coverage OUT.md] [--expected-failures FILE]
//                          [--write-expected-failures FILE] [-v]
//
// Each test folder holds model.onnx and test_data_set_*/{input,output}_*.pb.
// A test passes when the model imports and the reference evaluator's outputs
// match every data set with ONNX's backend tolerance (rtol 1e-3, atol 1e-7:
// onnx/backend/test/runner uses these for all float outputs). Every other
// test is reported with why: the import error, the evaluation error, or the
// first mismatching element.
//
// Models whose shape inputs are graph inputs (Reshape's `shape`, say) cannot
// be compiled with static shapes. When the importer says a node input must
// be a constant and that input is a graph input, the import is retried with
// that input fixed to its data-set value (ImportOptions::constantInputs),
// which is how a user would specialize such a model; the result lists the
// fixed inputs.
//
// With --expected-failures, the run also fails when a test outside that list
// fails (a regression) or a test on it passes (the list is stale), the way
// LLVM's XFAIL works; --write-expected-failures regenerates the list.
//
// Each test runs in a child process, so a crash in one test is that test's
// failure, not the end of the run.
//
//===----------------------------------------------------------------------===//

#include "frontend/Importer.h"
#include "frontend/TensorProto.h"
#include "ir/eval/Evaluator.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;
using ::dlc::Tensor;

namespace {

enum class Outcome { Pass, Fail };

struct Result {
  Outcome outcome = Outcome::Fail;
  /// For failures: why. For passes: "" or which inputs were fixed.
  std::string detail;
};

bool readProto(const std::string &path, google::protobuf::MessageLite &msg) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  return file && msg.ParseFromArray((*file)->getBufferStart(),
                                    static_cast<int>((*file)->getBufferSize()));
}

/// Reads the numbered `prefix_N.pb` tensors of one data set.
bool readTensors(const std::string &dir, const std::string &prefix,
                 std::vector<Tensor> &out, std::string &error) {
  for (int i = 0;; ++i) {
    std::string path = dir + "/" + prefix + "_" + std::to_string(i) + ".pb";
    if (!llvm::sys::fs::exists(path))
      return true;
    onnx::TensorProto proto;
    if (!readProto(path, proto)) {
      error = path + ": not a TensorProto";
      return false;
    }
    std::string message;
    std::optional<Tensor> t = mlir::dlc::tensorFromProto(proto, "", message);
    if (!t) {
      error = prefix + "_" + std::to_string(i) + ": " + message;
      return false;
    }
    out.push_back(std::move(*t));
  }
}

/// NumPy has no bfloat16, so ONNX's test data stores bfloat16 arrays as
/// their uint16 bit patterns; reinterpret those where bfloat16 is expected.
void reinterpretAsBFloat16(Tensor &t) {
  if (t.dtype() != ::dlc::DType::U16)
    return;
  Tensor bf16(::dlc::DType::BF16, t.shape());
  std::memcpy(bf16.bytes(), t.bytes(), t.byteSize());
  t = std::move(bf16);
}

/// ONNX's check (numpy.testing.assert_allclose, i.e. numpy.isclose):
/// |actual - expected| <= atol + rtol * |expected| for finite values, an
/// infinity only matching the same infinity, NaN matching NaN; integers and
/// bools exactly.
std::string compare(const Tensor &actual, Tensor expected,
                    const std::string &name) {
  if (actual.dtype() == ::dlc::DType::BF16)
    reinterpretAsBFloat16(expected);
  if (actual.dtype() != expected.dtype() ||
      actual.shape() != expected.shape())
    return "output '" + name + "' is " + actual.describe() + ", expected " +
           expected.describe();
  constexpr double rtol = 1e-3, atol = 1e-7;
  for (int64_t i = 0; i < actual.numElements(); ++i) {
    bool ok;
    if (::dlc::isFloat(actual.dtype())) {
      double a = actual.getDouble(i), e = expected.getDouble(i);
      if (std::isnan(a) || std::isnan(e))
        ok = std::isnan(a) && std::isnan(e);
      else if (std::isinf(a) || std::isinf(e))
        // Not the formula: for e = inf its bound is inf, passing any a.
        ok = a == e;
      else
        ok = std::fabs(a - e) <= atol + rtol * std::fabs(e);
    } else {
      ok = actual.getInt(i) == expected.getInt(i);
    }
    if (!ok) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << "output '" << name << "' element " << i << " is "
         << actual.getDouble(i) << ", expected " << expected.getDouble(i);
      return s;
    }
  }
  return "";
}

/// If `message` says a node input must be a constant ("input 2 (scales) must
/// be a constant") and that input is a graph input, its name.
std::optional<std::string>
requiredGraphInput(const onnx::ModelProto &model,
                   const std::vector<const onnx::ValueInfoProto *> &inputs,
                   Location loc, const std::string &message) {
  size_t at = message.find(" must be a constant");
  auto nameLoc = dyn_cast<NameLoc>(loc);
  if (at == std::string::npos || !nameLoc || message.rfind("input ", 0) != 0)
    return std::nullopt;
  int index = std::atoi(message.c_str() + 6);
  std::string nodeName = nameLoc.getName().str();
  const auto &nodes = model.graph().node();
  for (int n = 0; n < nodes.size(); ++n) {
    const onnx::NodeProto &node = nodes[n];
    if (mlir::dlc::nodeDisplayName(node, n) != nodeName ||
        index >= node.input_size())
      continue;
    for (const onnx::ValueInfoProto *in : inputs)
      if (in->name() == node.input(index))
        return in->name();
  }
  return std::nullopt;
}

/// Imports and evaluates one test in this process.
Result runTest(const std::string &dir) {
  std::string modelPath = dir + "/model.onnx";
  onnx::ModelProto model;
  if (!readProto(modelPath, model))
    return {Outcome::Fail, "model.onnx does not parse"};

  std::vector<std::string> dataSets;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec))
    if (llvm::sys::path::filename(it->path()).starts_with("test_data_set_"))
      dataSets.push_back(it->path());
  std::sort(dataSets.begin(), dataSets.end());
  if (dataSets.empty())
    return {Outcome::Fail, "no test data sets"};

  // Sequence, map and optional test data are not TensorProtos; say so
  // rather than failing to read them.
  for (const auto *values : {&model.graph().input(), &model.graph().output()})
    for (const onnx::ValueInfoProto &v : *values)
      if (!v.type().has_tensor_type())
        return {Outcome::Fail, "'" + v.name() + "' is not a tensor: "
                               "sequence, map and optional values are not "
                               "supported"};

  // Graph inputs that are not initializers, in order.
  std::set<std::string> initializers;
  for (const auto &init : model.graph().initializer())
    initializers.insert(init.name());
  std::vector<const onnx::ValueInfoProto *> inputs;
  for (const auto &in : model.graph().input())
    if (!initializers.count(in.name()))
      inputs.push_back(&in);

  // Graph inputs imported as constants (the same set for every data set).
  std::set<std::string> fixed;
  for (const std::string &set : dataSets) {
    std::vector<Tensor> in, expected;
    std::string error;
    if (!readTensors(set, "input", in, error) ||
        !readTensors(set, "output", expected, error))
      return {Outcome::Fail, "test data: " + error};
    if (in.size() != inputs.size())
      return {Outcome::Fail, "test data has " + std::to_string(in.size()) +
                                 " inputs for " +
                                 std::to_string(inputs.size()) +
                                 " graph inputs (optional inputs omitted)"};

    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i]->type().tensor_type().elem_type() ==
          onnx::TensorProto::BFLOAT16)
        reinterpretAsBFloat16(in[i]);

    // Import, fixing one more graph input each time the importer names a
    // node input it needs as a constant that is fed by a graph input.
    MLIRContext context(MLIRContext::Threading::DISABLED);
    std::string diagnostics;
    Location errorLoc = UnknownLoc::get(&context);
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      if (diagnostics.empty()) {
        diagnostics = d.str();
        errorLoc = d.getLocation();
      }
      return success();
    });
    FailureOr<OwningOpRef<ModuleOp>> module = failure();
    std::vector<Tensor> args;
    while (true) {
      mlir::dlc::ImportOptions options;
      args.clear();
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (fixed.count(inputs[i]->name()))
          options.constantInputs[inputs[i]->name()] = in[i];
        else
          args.push_back(in[i]);
      }
      diagnostics.clear();
      module = mlir::dlc::importOnnxModel(&context, model, dir, options,
                                          modelPath);
      if (succeeded(module))
        break;
      std::optional<std::string> input =
          requiredGraphInput(model, inputs, errorLoc, diagnostics);
      if (!input || !fixed.insert(*input).second)
        return {Outcome::Fail, "import: " + diagnostics};
    }
    auto func = (*module)->lookupSymbol<func::FuncOp>("forward");
    FailureOr<mlir::dlc::Evaluator> evaluator = mlir::dlc::Evaluator::create(**module);
    if (failed(evaluator))
      return {Outcome::Fail, "evaluate: " + diagnostics};
    FailureOr<SmallVector<Tensor>> results = evaluator->run(func, args);
    if (failed(results))
      return {Outcome::Fail, "evaluate: " + diagnostics};
    if (results->size() != expected.size())
      return {Outcome::Fail, "produced " + std::to_string(results->size()) +
                                 " outputs, expected " +
                                 std::to_string(expected.size())};
    for (size_t i = 0; i < expected.size(); ++i) {
      std::string mismatch = compare((*results)[i], expected[i],
                                     model.graph().output(i).name());
      if (!mismatch.empty())
        return {Outcome::Fail, "mismatch: " + mismatch};
    }
  }
  std::string note;
  for (const std::string &name : fixed)
    note += (note.empty() ? "fixed inputs: " : ", ") + name;
  return {Outcome::Pass, note};
}

/// Runs `runTest` in a child process; a crash or a timeout is a failure.
Result runIsolated(const std::string &dir) {
  int fds[2];
  if (pipe(fds) != 0)
    return {Outcome::Fail, "pipe failed"};
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    alarm(60);
    Result r = runTest(dir);
    std::string msg = (r.outcome == Outcome::Pass ? "P" : "F") + r.detail;
    ssize_t unused = write(fds[1], msg.data(), msg.size());
    (void)unused;
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0)
    msg.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status))
    return {Outcome::Fail, std::string("crashed with signal ") +
                               strsignal(WTERMSIG(status))};
  if (msg.empty())
    return {Outcome::Fail, "no result"};
  return {msg[0] == 'P' ? Outcome::Pass : Outcome::Fail, msg.substr(1)};
}

/// The op types a test exercises (its model's nodes).
std::set<std::string> opTypes(const std::string &dir) {
  onnx::ModelProto model;
  std::set<std::string> ops;
  if (readProto(dir + "/model.onnx", model))
    for (const auto &node : model.graph().node())
      ops.insert(node.op_type());
  return ops;
}

std::string firstLine(const std::string &s) {
  return s.substr(0, s.find('\n'));
}

void writeCoverage(const std::string &path,
                   const std::map<std::string, Result> &results,
                   const std::map<std::string, std::set<std::string>> &ops,
                   int passed) {
  std::map<std::string, std::pair<std::vector<std::string>,
                                  std::vector<std::string>>> byOp;
  for (const auto &[test, result] : results)
    for (const std::string &op : ops.at(test))
      (result.outcome == Outcome::Pass ? byOp[op].first : byOp[op].second)
          .push_back(test);
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    llvm::errs() << "cannot write " << path << ": " << ec.message() << "\n";
    return;
  }
  os << "# ONNX backend node tests: coverage\n\n"
     << "Generated by `dlc-onnx-backend-tests --coverage` over the node tests "
        "of Debian's libonnx-testdata (ONNX 1.12). Do not edit by hand.\n\n"
     << "**" << passed << " of " << results.size() << " pass ("
     << llvm::format("%.1f", 100.0 * passed / results.size()) << "%).**\n\n"
     << "| op | passing | failing |\n|---|---|---|\n";
  for (const auto &[op, lists] : byOp)
    os << "| " << op << " | " << lists.first.size() << " | "
       << lists.second.size() << " |\n";
  os << "\n## Failing tests and why\n\n| test | reason |\n|---|---|\n";
  for (const auto &[test, result] : results)
    if (result.outcome != Outcome::Pass) {
      std::string reason = firstLine(result.detail);
      std::replace(reason.begin(), reason.end(), '|', '/');
      os << "| " << test << " | " << reason << " |\n";
    }
}

/// Reads test names, one per line; `#` starts a comment.
bool readExpectedFailures(const std::string &path,
                          std::set<std::string> &names) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file) {
    llvm::errs() << "dlc-onnx-backend-tests: error: cannot read '" << path
                 << "': " << file.getError().message() << "\n";
    return false;
  }
  llvm::SmallVector<llvm::StringRef> lines;
  (*file)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines) {
    llvm::StringRef name = line.split('#').first.trim();
    if (!name.empty())
      names.insert(name.str());
  }
  return true;
}

/// Writes the failing tests, each with its reason as a comment.
bool writeExpectedFailureList(const std::string &path,
                              const std::map<std::string, Result> &results) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    llvm::errs() << "dlc-onnx-backend-tests: error: cannot write '" << path
                 << "': " << ec.message() << "\n";
    return false;
  }
  os << "# ONNX backend node tests dlc is expected to fail, with the reason.\n"
     << "# Regenerate with dlc-onnx-backend-tests --write-expected-failures.\n";
  for (const auto &[test, result] : results)
    if (result.outcome != Outcome::Pass)
      os << test << "  # " << firstLine(result.detail) << "\n";
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string dataDir, filter, coverage;
  std::string expectedFailuresFile, writeExpectedFailures;
  double minPassRate = 0.0;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--filter" && i + 1 < argc)
      filter = argv[++i];
    else if (arg == "--expected-failures" && i + 1 < argc)
      expectedFailuresFile = argv[++i];
    else if (arg == "--write-expected-failures" && i + 1 < argc)
      writeExpectedFailures = argv[++i];
    else if (arg == "--coverage" && i + 1 < argc)
      coverage = argv[++i];
    else if (arg == "--min-pass-rate" && i + 1 < argc)
      minPassRate = std::atof(argv[++i]);
    else if (arg == "-v")
      verbose = true;
    else if (dataDir.empty() && !arg.empty() && arg[0] != '-')
      dataDir = arg;
    else {
      llvm::errs() << "usage: dlc-onnx-backend-tests DATA_DIR [--filter S] "
                      "[--min-pass-rate R] [--coverage OUT.md] "
                      "[--expected-failures F] [--write-expected-failures F] "
                      "[-v]\n";
      return 2;
    }
  }
  if (dataDir.empty() || !llvm::sys::fs::is_directory(dataDir)) {
    llvm::errs() << "dlc-onnx-backend-tests: error: '" << dataDir
                 << "' is not a folder of ONNX node tests\n";
    return 2;
  }

  std::set<std::string> expectedFailures;
  if (!expectedFailuresFile.empty() &&
      !readExpectedFailures(expectedFailuresFile, expectedFailures))
    return 2;

  std::vector<std::string> tests;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dataDir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = llvm::sys::path::filename(it->path()).str();
    if (llvm::sys::fs::exists(it->path() + "/model.onnx") &&
        name.find(filter) != std::string::npos)
      tests.push_back(name);
  }
  std::sort(tests.begin(), tests.end());

  std::map<std::string, Result> results;
  std::map<std::string, std::set<std::string>> ops;
  int passed = 0;
  for (const std::string &test : tests) {
    std::string dir = dataDir + "/" + test;
    Result r = runIsolated(dir);
    passed += r.outcome == Outcome::Pass;
    ops[test] = opTypes(dir);
    if (verbose || r.outcome != Outcome::Pass)
      llvm::outs() << (r.outcome == Outcome::Pass ? "PASS " : "FAIL ") << test
                   << (r.detail.empty() ? "" : ": " + firstLine(r.detail))
                   << "\n";
    results[test] = std::move(r);
  }
  if (!coverage.empty())
    writeCoverage(coverage, results, ops, passed);
  if (!writeExpectedFailures.empty() &&
      !writeExpectedFailureList(writeExpectedFailures, results))
    return 2;

  // Regressions and stale expectations, when a list was given.
  int unexpected = 0;
  if (!expectedFailuresFile.empty())
    for (const auto &[test, result] : results) {
      bool expectedToFail = expectedFailures.count(test) != 0;
      if ((result.outcome == Outcome::Pass) == expectedToFail) {
        ++unexpected;
        llvm::outs() << (expectedToFail ? "UNEXPECTED PASS " : "UNEXPECTED FAIL ")
                     << test
                     << (expectedToFail ? ": remove it from the expected "
                                          "failures"
                                        : "")
                     << "\n";
      }
    }

  int failed = static_cast<int>(tests.size()) - passed;
  double rate = tests.empty() ? 0.0 : double(passed) / tests.size();
  llvm::outs() << llvm::format("pass rate %.1f%% (required %.1f%%)\n",
                               100 * rate, 100 * minPassRate);
  if (!expectedFailuresFile.empty())
    llvm::outs() << unexpected << " unexpected results\n";
  llvm::outs() << passed << " passed, " << failed << " failed\n";
  return rate + 1e-12 >= minPassRate && unexpected == 0 ? 0 : 1;
}
