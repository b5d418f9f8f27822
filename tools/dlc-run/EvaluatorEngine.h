//===- EvaluatorEngine.h - dlc IR on the reference evaluator ----*- C++ -*-===//
//
// dlc-run --interpret --train trains with the runner's loop
// (tools/runner/Training.h) on this engine: the module's functions run on
// the reference evaluator, its dlc.global ops are the state, bound to the
// arguments and results of the same name as the runtime binds a compiled
// module's globals, and checkpoints are the runtime's format with the same
// fingerprint (ir/Globals.h), so a run moves between the two.
//
// This file is compiled with exceptions: it throws runner::Error, as the
// runner's loop expects, and its callers reach it through
// runner::reportFailures.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_DLC_RUN_EVALUATORENGINE_H
#define DLC_TOOLS_DLC_RUN_EVALUATORENGINE_H

#include "tools/runner/Options.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::dlc::tools {

/// The runner of compiled modules (tools/runner), of the runtime's
/// namespace.
namespace runner = ::dlc::runner;

/// Trains `module` (which dlc-compile --train made, or the importer and the
/// training pipeline) as `options` say, on the reference evaluator, with
/// the runner's loop. `name` names the module in messages; `onnxModel` is
/// the ONNX model --export writes the trained parameters into, without the
/// initializers that are globals (frontend's readOnnxWithoutInitializers),
/// or empty. Returns the exit code after printing any failure as one
/// `TOOL: error: ...` line.
int trainOnEvaluator(mlir::ModuleOp module, const std::string &name,
                     const std::string &onnxModel,
                     const runner::Options &options, const std::string &tool);

} // namespace mlir::dlc::tools

#endif // DLC_TOOLS_DLC_RUN_EVALUATORENGINE_H
