//===- TrainingChoices.cpp - Spellings of the training options' cases -----===//

#include "passes/TrainingChoices.h"

namespace mlir::dlc {

constexpr Spelling<LossKind> kLosses[] = {
    {LossKind::CrossEntropy, "cross_entropy",
     "softmax cross-entropy against integer class labels"},
    {LossKind::Mse, "mse", "mean squared error"},
    {LossKind::L1, "l1", "mean absolute error"},
    {LossKind::BceWithLogits, "bce_with_logits",
     "binary cross-entropy on logits"},
    {LossKind::Model, "model", "the output is the loss"},
};
llvm::ArrayRef<Spelling<LossKind>> spellings(LossKind) { return kLosses; }

constexpr Spelling<OptimizerKind> kOptimizers[] = {
    {OptimizerKind::Sgd, "sgd", "SGD with momentum, dampening, Nesterov"},
    {OptimizerKind::Adam, "adam", "Adam"},
    {OptimizerKind::AdamW, "adamw", "AdamW (decoupled weight decay)"},
};
llvm::ArrayRef<Spelling<OptimizerKind>> spellings(OptimizerKind) {
  return kOptimizers;
}

constexpr Spelling<LrSchedule> kSchedules[] = {
    {LrSchedule::Constant, "constant", "the rate itself"},
    {LrSchedule::Linear, "linear", "decaying linearly to 0 at total-steps"},
    {LrSchedule::Cosine, "cosine", "half a cosine down to 0 at total-steps"},
};
llvm::ArrayRef<Spelling<LrSchedule>> spellings(LrSchedule) {
  return kSchedules;
}

constexpr Spelling<Precision> kPrecisions[] = {
    {Precision::Fp32, "fp32", "float32 throughout"},
    {Precision::Tf32, "tf32",
     "float32, with --target cuda's matmuls and convolutions on TF32 tensor "
     "cores"},
    {Precision::Bf16, "bf16",
     "mixed precision: matmuls and convolutions in bfloat16, float32 master "
     "weights"},
    {Precision::Fp16, "fp16",
     "mixed precision in float16, with dynamic loss scaling"},
};
llvm::ArrayRef<Spelling<Precision>> spellings(Precision) { return kPrecisions; }

constexpr Spelling<LowPrecision> kLowPrecisions[] = {
    {LowPrecision::Bf16, "bf16", "bfloat16"},
    {LowPrecision::Fp16, "fp16", "float16"},
};
llvm::ArrayRef<Spelling<LowPrecision>> spellings(LowPrecision) {
  return kLowPrecisions;
}

constexpr Spelling<LossScalingMode> kLossScalings[] = {
    {LossScalingMode::Auto, "auto", "dynamic with fp16, none otherwise"},
    {LossScalingMode::Dynamic, "dynamic", "GradScaler's dynamic loss scaling"},
    {LossScalingMode::None, "none", "no loss scaling"},
};
llvm::ArrayRef<Spelling<LossScalingMode>> spellings(LossScalingMode) {
  return kLossScalings;
}

} // namespace mlir::dlc
