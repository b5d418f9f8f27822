//===- Importer.h - ONNX ModelProto to the dlc dialect --------------------===//
//
// The public entry points of the ONNX importer. A model becomes a module with
// one `dlc.global` per initializer and a function `@forward` whose arguments
// are the graph inputs and whose results are the graph outputs; shapes are
// static, with symbolic dimensions bound by the options.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_FRONTEND_IMPORTER_H
#define DLC_FRONTEND_IMPORTER_H

#include "ir/Roles.h"
#include "ir/RuntimeNames.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace onnx {
class ModelProto;
class NodeProto;
} // namespace onnx

namespace mlir::dlc {

/// Which semantics the ops whose behavior depends on training take.
enum class ImportMode {
  /// As ONNX specifies for the exported graph: BatchNormalization uses
  /// batch statistics only where the node says so (training_mode, or extra
  /// outputs before opset 14), and Dropout drops only where its
  /// training_mode input is true, with the node's `seed` attribute.
  AsExported,
  /// A training step, as PyTorch's train(): every BatchNormalization
  /// normalizes with batch statistics and writes its running statistics
  /// back (dlc.global_store, PyTorch's update with the unbiased variance),
  /// and every Dropout with a ratio above 0 drops, drawing from the
  /// module's `dlc.rng_seed` global, which each call advances by one.
  Training,
  /// Inference, as PyTorch's eval(): every BatchNormalization uses its
  /// running statistics and every Dropout is the identity.
  Inference,
};

/// "as-exported", "training", "inference".
llvm::StringRef importModeName(ImportMode mode);
/// The mode importModeName names; nullopt for any other string.
std::optional<ImportMode> parseImportMode(llvm::StringRef name);

/// The name of the global holding the seed of a training-mode import's
/// dropouts (a tensor<i64>, 0 initially, advanced by one per call).
inline constexpr llvm::StringLiteral kRngSeedGlobal = roles::kRngSeedGlobal;

struct ImportOptions {
  /// Training- or inference-mode semantics for BatchNormalization and
  /// Dropout (see ImportMode).
  ImportMode mode = ImportMode::AsExported;
  /// Binds the leading dimension of every input whose leading dimension is
  /// symbolic or unknown.
  std::optional<int64_t> batchSize;
  /// Binds symbolic dimensions by their `dim_param` name.
  llvm::StringMap<int64_t> dims;
  /// Inputs whose values are fixed at import: they become constants and are
  /// not arguments of the function (shape inputs of test models, say).
  llvm::StringMap<Tensor> constantInputs;
  /// Name of the function holding the graph.
  std::string functionName = "forward";
  /// Training mode, imported for one of this many data-parallel ranks
  /// (dlc-compile --dp N --sync-batchnorm): BatchNormalization's batch
  /// statistics are averaged over the ranks (dlc.all_reduce), so that they
  /// are the global batch's, as PyTorch's SyncBatchNorm. 1: each rank's own.
  int64_t syncBatchNormRanks = 1;
};

/// The model file at `path` re-serialized without the initializers named in
/// `names`: what a compiled module keeps so the runtime can export its
/// trained parameters into it. On failure an error naming the file has been
/// emitted on `context`.
FailureOr<std::string>
readOnnxWithoutInitializers(MLIRContext *context, llvm::StringRef path,
                            const llvm::StringSet<> &names);

/// Reads and imports a model file: binary protobuf, or ONNX's text syntax
/// when the name ends in `.onnxtxt`. External data is resolved relative to
/// the file's folder and may not leave it. On failure one error naming the
/// file or the node and the reason has been emitted on `context`.
FailureOr<OwningOpRef<ModuleOp>> importOnnxFile(MLIRContext *context,
                                                llvm::StringRef path,
                                                const ImportOptions &options);

/// Imports an already parsed model. `modelDir` is where external data is
/// looked up ("" forbids external data); `source` names the model in
/// messages.
FailureOr<OwningOpRef<ModuleOp>>
importOnnxModel(MLIRContext *context, const onnx::ModelProto &model,
                llvm::StringRef modelDir, const ImportOptions &options,
                llvm::StringRef source = "<model>");

/// The name a node goes by in locations and messages: its own name, or
/// `<OpType>_<index>` (its position in the graph's node list) when it has
/// none.
std::string nodeDisplayName(const onnx::NodeProto &node, int index);

/// Registers what an importer's MLIRContext needs (the dlc and func
/// dialects).
void registerImporterDialects(MLIRContext *context);

} // namespace mlir::dlc

#endif // DLC_FRONTEND_IMPORTER_H
