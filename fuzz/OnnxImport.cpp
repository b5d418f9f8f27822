//===- OnnxImport.cpp - Fuzz target: ONNX model bytes through the importer ===//
//
// The input is a model file (binary protobuf) in the scratch model folder,
// imported as dlc-translate imports it, external data included. Whatever
// the bytes, the import must either succeed (the importer verifies the
// module it returns) or fail with at least one error diagnostic: a failure
// that says nothing is reported as a crash too.
//
//===----------------------------------------------------------------------===//
#include "frontend/Importer.h"
#include "fuzz/Scratch.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = dlc::fuzz::modelDir() + "/model.onnx";
  dlc::fuzz::writeFile(path, data, size);

  // A fresh context per input: a shared one would keep every input's
  // attributes uniqued forever and grow until the RSS limit.
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  int errors = 0;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    if (d.getSeverity() == mlir::DiagnosticSeverity::Error)
      ++errors;
    return mlir::success();
  });
  mlir::dlc::ImportOptions options;
  options.batchSize = 2;
  if (failed(mlir::dlc::importOnnxFile(&context, path, options)) && !errors)
    std::abort();
  return 0;
}
