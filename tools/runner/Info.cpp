//===- Info.cpp - --info: what a module holds -----------------------------===//
#include "tools/runner/Info.h"

#include "tools/runner/Progress.h"
#include "tools/runner/Values.h"

#include <string>
#include <vector>

namespace dlc::runner {

namespace {

/// Where rank r of a grid of two or more kinds of parallelism sits
/// (runtime/comm/RankLayout.h), or "".
std::string describeRankLayout(const rt::Module &module) {
  const int32_t d = module.dataParallelRanks(),
                t = module.tensorParallelRanks(), s = module.pipelineStages();
  if ((d > 1) + (t > 1) + (s > 1) < 2)
    return "";
  std::vector<std::string> parts;
  if (t > 1)
    parts.push_back("tensor rank r % " + std::to_string(t));
  if (d > 1)
    parts.push_back(t > 1 ? "replica (r / " + std::to_string(t) + ") % " +
                                std::to_string(d)
                          : "replica r % " + std::to_string(d));
  if (s > 1)
    parts.push_back("stage r / " + std::to_string(d * t));
  std::string text = "rank r is ";
  for (size_t i = 0; i < parts.size(); ++i)
    text += (i ? " of " : "") + parts[i];
  return text;
}

} // namespace

std::string describeModule(const LoadedModule &loaded) {
  const rt::Module &module = loaded.module;
  std::string text = "module: " + loaded.name + "\n";
  text += "model: " + module.modelName() + "\n";
  text += "target: " + module.target() + "\n";
  if (int32_t ranks = module.dataParallelRanks(); ranks > 1)
    text += "data parallel: " + std::to_string(ranks) +
            (module.ranks() == ranks
                 ? " ranks (mpirun -np " + std::to_string(ranks) + ")"
                 : " replicas (mpirun -np " + std::to_string(module.ranks()) +
                       " in all)") +
            ", each taking its share of every batch\n";
  if (int32_t sharded = module.shardedGlobals(); sharded > 0)
    text += "ZeRO-1: " + std::to_string(sharded) +
            " globals of optimizer state sharded over the replicas" +
            (module.pipelineStages() > 1 ? " of each stage" : "") +
            ", each rank holding 1/" +
            std::to_string(module.dataParallelRanks()) + " of them\n";
  if (int32_t ranks = module.tensorParallelRanks(); ranks > 1)
    text += "tensor parallel: " + std::to_string(ranks) +
            " ranks per replica (mpirun -np " + std::to_string(module.ranks()) +
            " in all), each holding a slice of the split layers\n";
  if (int32_t stages = module.pipelineStages(); stages > 1)
    text += "pipeline parallel: " + std::to_string(stages) +
            " stages per replica (mpirun -np " +
            std::to_string(module.ranks()) +
            " in all), each running its stage's layers on micro-batches in "
            "1F1B order\n";
  if (std::string layout = describeRankLayout(module); !layout.empty())
    text += "rank layout: " + layout + "\n";
  if (!loaded.trainingOptions.empty())
    text += "training options: " + loaded.trainingOptions + "\n";
  for (size_t f = 0; f < module.functionCount(); ++f) {
    std::string name = module.functionName(f);
    rt::Signature signature = module.signature(name);
    text += "function " + name + "\n";
    for (const dlc_value_info_t &in : signature.inputs) {
      text += "  input  " + std::string(in.name) + " " + in.role + " " +
              describeType(in);
      if (in.num_classes > 0)
        text += " (" + std::to_string(in.num_classes) +
                " classes, ignore index " + std::to_string(in.ignore_index) +
                ")";
      text += "\n";
    }
    for (const dlc_value_info_t &out : signature.outputs)
      text += "  output " + std::string(out.name) + " " + out.role + " " +
              describeType(out) + "\n";
  }
  int64_t bytes = 0;
  for (size_t g = 0; g < module.globalCount(); ++g) {
    dlc_value_info_t info = module.global(g);
    int64_t elements = 1;
    for (int32_t d = 0; d < info.rank; ++d)
      elements *= info.shape[d];
    bytes += elements * static_cast<int64_t>(dlc_dtype_size(info.dtype));
  }
  text += "globals: " + std::to_string(module.globalCount()) + " (" +
          withThousands(bytes) + " bytes)\n";
  return text;
}

} // namespace dlc::runner
