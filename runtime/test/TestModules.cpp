//===- TestModules.cpp - Ready-made modules for runtime tests -------------===//
#include "runtime/test/TestModules.h"

namespace dlc::test {

const std::vector<uint8_t> &testKernelsObject() {
  static const std::vector<uint8_t> bytes =
      readFileBytes(DLC_TEST_KERNELS_PATH);
  return bytes;
}

ModuleBuilder linearClassifier(int64_t batch, int64_t features,
                               int64_t classes) {
  ModuleBuilder m;
  m.modelName("linear.onnx");
  m.fingerprint("linear-" + std::to_string(batch) + "-" +
                std::to_string(features) + "-" + std::to_string(classes));
  std::vector<float> w(features * classes);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = 0.01f * static_cast<float>(static_cast<int>((i * 37) % 11) - 5);
  uint32_t gw =
      m.global("w", "param", DType::F32, {features, classes}, bytesOf(w));
  uint32_t glr = m.global("lr", "hyperparameter", DType::F32, {},
                          bytesOf(std::vector<float>{0.5f}));
  uint32_t gstep = m.global("dlc.step", "step", DType::I64, {});
  uint32_t dims = m.constant(DType::I64, {2},
                             bytesOf(std::vector<int64_t>{batch, classes}));
  uint32_t xent = m.kernel("test_softmax_xent_f32");
  uint32_t sgd = m.kernel("test_sgd_f32");
  uint32_t increment = m.kernel("test_increment_i64");
  m.sharedObject(testKernelsObject());

  auto align = [](uint64_t n) { return (n + 63) / 64 * 64; };
  uint64_t logits = 0, dlogits = align(batch * classes * 4),
           dw = dlogits + align(batch * classes * 4),
           arenaBytes = dw + align(features * classes * 4);

  FunctionBuilder &train = m.function("train_step");
  uint32_t x = train.argument("x", "input", DType::F32, {batch, features});
  uint32_t labels =
      train.argument("labels", "label", DType::I64, {batch}, -1, classes);
  uint32_t aw =
      train.argument("w", "param", DType::F32, {features, classes}, gw);
  uint32_t alr = train.argument("lr", "hyperparameter", DType::F32, {}, glr);
  uint32_t astep = train.argument("dlc.step", "step", DType::I64, {}, gstep);
  uint32_t loss = train.result("loss", "loss", DType::F32, {});
  uint32_t rw = train.result("w", "param", DType::F32, {features, classes}, gw);
  uint32_t rstep = train.result("dlc.step", "step", DType::I64, {}, gstep);
  train.arenaSize(arenaBytes);
  MatmulSpec forwardMatmul;
  forwardMatmul.lhs = argument(x);
  forwardMatmul.rhs = argument(aw);
  forwardMatmul.result = arena(logits);
  forwardMatmul.m = batch;
  forwardMatmul.k = features;
  forwardMatmul.n = classes;
  train.matmul(forwardMatmul, "node 'fc' (MatMul)");
  train.kernel(xent,
               {arena(logits), argument(labels), constant(dims), result(loss),
                arena(dlogits)},
               1, "softmax cross-entropy");
  MatmulSpec gradient; // dw[features, classes] = x^T dlogits
  gradient.lhs = argument(x);
  gradient.lhsTransposed = true;
  gradient.rhs = arena(dlogits);
  gradient.result = arena(dw);
  gradient.m = features;
  gradient.k = batch;
  gradient.n = classes;
  train.matmul(gradient, "node 'fc' (MatMul) gradient");
  train.kernel(sgd, {argument(aw), arena(dw), argument(alr), result(rw)},
               features * classes, "sgd");
  train.kernel(increment, {argument(astep), result(rstep)}, 1, "step");

  FunctionBuilder &forward = m.function("forward");
  uint32_t fx = forward.argument("x", "input", DType::F32, {batch, features});
  uint32_t fw =
      forward.argument("w", "param", DType::F32, {features, classes}, gw);
  uint32_t out =
      forward.result("logits", "output", DType::F32, {batch, classes});
  forwardMatmul.lhs = argument(fx);
  forwardMatmul.rhs = argument(fw);
  forwardMatmul.result = result(out);
  forward.matmul(forwardMatmul, "node 'fc' (MatMul)");
  return m;
}

} // namespace dlc::test
