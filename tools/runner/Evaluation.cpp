//===- Evaluation.cpp - --eval-data: accuracy of forward ------------------===//
#include "tools/runner/Evaluation.h"

#include "tools/runner/Error.h"
#include "tools/runner/Values.h"

#include <cmath>
#include <limits>

namespace dlc::runner {

double EvaluationResult::accuracy() const {
  return samples ? static_cast<double>(correct) / static_cast<double>(samples)
                 : std::numeric_limits<double>::quiet_NaN();
}

Evaluation::Evaluation(const Engine &engine, const std::string &path)
    : path_(path), forward_(engine.signature("forward")) {
  std::string what = "--eval-data " + path + ": ";
  // The label: train_step's class-index label, which forward lacks.
  rt::Signature train = engine.signature("train_step");
  const dlc_value_info_t *label = nullptr;
  for (const dlc_value_info_t &in : train.inputs)
    if (!label && std::string(in.role) == "label" && in.num_classes > 0) {
      label = &in;
      ignoreIndex_ = in.ignore_index;
    }
  if (!label)
    throw Error(what + "accuracy needs a label of class indices, and "
                       "train_step has none (compile with --loss "
                       "cross_entropy)");
  // A pipelined train_step takes its micro-batches at once: M times
  // forward's batch.
  const bool scores = !forward_.outputs.empty() &&
                      forward_.outputs[0].rank == 2 && label->rank == 1;
  const int64_t rows = scores ? forward_.outputs[0].shape[0] : 0;
  const int64_t microbatches =
      engine.pipelineStages() > 1 && rows > 0 ? label->shape[0] / rows : 1;
  if (!scores || rows * microbatches != label->shape[0])
    throw Error(what +
                "accuracy needs forward's first output to be [B, C] "
                "scores for a label [B] (or [M B], M micro-batches); they "
                "are " +
                (forward_.outputs.empty() ? std::string("(no output)")
                                          : describeType(forward_.outputs[0])) +
                " and " + describeType(*label));
  std::vector<ArraySpec> specs;
  int64_t batch = forward_.outputs[0].shape[0];
  for (const dlc_value_info_t &in : forward_.inputs) {
    if (in.rank == 0 || in.shape[0] != batch)
      throw Error(what + "forward's input '" + in.name + "' is " +
                  describeType(in) + ", not a batch of " +
                  std::to_string(batch) + " samples");
    specs.push_back({in.name, dtypeOf(in),
                     std::vector<int64_t>(in.shape + 1, in.shape + in.rank)});
  }
  specs.push_back({label->name, dtypeOf(*label), {}});
  throwIfError(DataLoader::open(path, specs, batch, /*shuffle=*/false,
                                /*seed=*/0, /*prefetchDepth=*/2, loader_),
               "--eval-data: ");
}

EvaluationResult Evaluation::run(Engine &engine, int rank, int ranks) {
  throwIfError(loader_->seek(0));
  Tensor scores = makeTensor(forward_.outputs[0]);
  std::vector<Tensor> others;
  std::vector<dlc_tensor_t> outputs = {view(scores)};
  for (size_t i = 1; i < forward_.outputs.size(); ++i)
    others.push_back(makeTensor(forward_.outputs[i]));
  for (Tensor &t : others)
    outputs.push_back(view(t));
  int64_t rows = scores.shape()[0], classes = scores.shape()[1];
  EvaluationResult result;
  for (int64_t b = 0; b < loader_->batchesPerEpoch(); ++b) {
    const Batch *batch = nullptr;
    throwIfError(loader_->next(batch));
    if (b % ranks != rank)
      continue;
    std::vector<dlc_tensor_t> inputs;
    for (size_t i = 0; i + 1 < batch->arrays.size(); ++i)
      inputs.push_back(view(batch->arrays[i]));
    engine.call("forward", inputs, outputs);
    const BatchArray &labels = batch->arrays.back();
    for (int64_t r = 0; r < rows; ++r) {
      int64_t label = 0;
      if (!loadInteger(labels.data, labels.dtype, r, label) ||
          label == ignoreIndex_)
        continue;
      // The first of equal maxima, as numpy's argmax.
      int64_t best = 0;
      for (int64_t c = 1; c < classes; ++c)
        if (scores.getDouble(r * classes + c) >
            scores.getDouble(r * classes + best))
          best = c;
      ++result.samples;
      result.correct += best == label;
    }
  }
  return result;
}

} // namespace dlc::runner
