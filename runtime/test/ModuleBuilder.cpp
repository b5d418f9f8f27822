//===- ModuleBuilder.cpp - Hand-built .dlcm modules for tests -------------===//
#include "runtime/test/ModuleBuilder.h"

#include <fstream>
#include <iterator>

namespace dlc::test {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

Offset<fb::TensorType> tensorType(FlatBufferBuilder &b, DType dtype,
                                  const std::vector<int64_t> &shape) {
  return fb::CreateTensorType(b, static_cast<fb::ElementType>(dtype),
                              b.CreateVector(shape));
}

/// A [ubyte] (force_align: 64) vector.
Offset<flatbuffers::Vector<uint8_t>>
alignedBytes(FlatBufferBuilder &b, const std::vector<uint8_t> &v) {
  b.ForceVectorAlignment(v.size(), sizeof(uint8_t), kBufferAlignment);
  return b.CreateVector(v);
}

fb::BufferRef ref(const Ref &r) {
  return fb::BufferRef(r.kind, r.index, r.offset);
}

Offset<flatbuffers::Vector<int64_t>>
optionalVector(FlatBufferBuilder &b, const std::vector<int64_t> &v) {
  return v.empty() ? 0 : b.CreateVector(v);
}

Offset<fb::Step> step(FlatBufferBuilder &b, const StepSpec &s) {
  Offset<void> body;
  switch (s.kind) {
  case fb::StepKind::KernelStep: {
    std::vector<fb::BufferRef> refs;
    for (const Ref &r : s.buffers)
      refs.push_back(ref(r));
    body = fb::CreateKernelStep(b, s.kernel, b.CreateVectorOfStructs(refs),
                                s.iterations, s.grain,
                                b.CreateVector(s.bufferBytes), s.outputs,
                                s.threadsPerIteration)
               .Union();
    break;
  }
  case fb::StepKind::MatmulStep: {
    const MatmulSpec &m = s.matmul;
    fb::BufferRef lhs = ref(m.lhs), rhs = ref(m.rhs), res = ref(m.result);
    fb::BufferRef bias = m.bias ? ref(*m.bias) : fb::BufferRef();
    body = fb::CreateMatmulStep(b, static_cast<fb::ElementType>(m.dtype), &lhs,
                                &rhs, &res, m.batch, m.m, m.n, m.k,
                                m.lhsBatchStride, m.rhsBatchStride,
                                m.lhsTransposed, m.rhsTransposed, m.epilogue,
                                m.bias ? &bias : nullptr)
               .Union();
    break;
  }
  case fb::StepKind::ConvStep: {
    const ConvSpec &c = s.conv;
    fb::BufferRef x = ref(c.x), w = ref(c.w), y = ref(c.y);
    body =
        fb::CreateConvStep(
            b, c.kind, static_cast<fb::ElementType>(c.dtype), &x, &w, &y,
            b.CreateVector(c.xShape), b.CreateVector(c.wShape),
            b.CreateVector(c.yShape), optionalVector(b, c.stride),
            optionalVector(b, c.padLow), optionalVector(b, c.padHigh),
            optionalVector(b, c.dilation), c.groups, c.channelsLast, c.engine)
            .Union();
    break;
  }
  case fb::StepKind::CopyStep: {
    fb::BufferRef src = ref(s.source), dst = ref(s.destination);
    body = fb::CreateCopyStep(b, &src, &dst, s.bytes).Union();
    break;
  }
  case fb::StepKind::TransferStep: {
    fb::BufferRef src = ref(s.source), dst = ref(s.destination);
    body = fb::CreateTransferStep(b, s.from, s.to, &src, &dst, s.bytes,
                                  s.waitStep)
               .Union();
    break;
  }
  case fb::StepKind::AllReduceStep:
  case fb::StepKind::ShardStep: {
    std::vector<fb::BufferRef> refs;
    for (const Ref &r : s.buffers)
      refs.push_back(ref(r));
    auto buffers = b.CreateVectorOfStructs(refs);
    auto elements = b.CreateVector(s.elements);
    auto dtype = static_cast<fb::ElementType>(s.dtype);
    body =
        s.kind == fb::StepKind::AllReduceStep
            ? fb::CreateAllReduceStep(b, s.reduction, dtype, s.bucket, buffers,
                                      elements, s.waitStep, s.amongTensorRanks)
                  .Union()
            : fb::CreateShardStep(b, s.shardKind, s.reduction, dtype, s.bucket,
                                  s.ranks, buffers, elements, s.waitStep,
                                  s.amongTensorRanks)
                  .Union();
    break;
  }
  default:
    break;
  }
  return fb::CreateStep(b, s.kind, body,
                        s.location.empty() ? 0 : b.CreateString(s.location),
                        s.stage);
}

} // namespace

uint32_t FunctionBuilder::argument(const std::string &name,
                                   const std::string &role, DType dtype,
                                   std::vector<int64_t> shape, int32_t global,
                                   int64_t numClasses) {
  arguments_.push_back(
      {name, role, dtype, std::move(shape), global, numClasses});
  return static_cast<uint32_t>(arguments_.size() - 1);
}

uint32_t FunctionBuilder::result(const std::string &name,
                                 const std::string &role, DType dtype,
                                 std::vector<int64_t> shape, int32_t global) {
  results_.push_back({name, role, dtype, std::move(shape), global});
  return static_cast<uint32_t>(results_.size() - 1);
}

void FunctionBuilder::kernel(uint32_t kernel, std::vector<Ref> buffers,
                             int64_t iterations, const std::string &location,
                             int64_t grain) {
  StepSpec s;
  s.kind = fb::StepKind::KernelStep;
  s.location = location;
  s.kernel = kernel;
  s.buffers = std::move(buffers);
  auto bytesOf = [](const Value &v) {
    uint64_t n = dtypeSize(v.dtype);
    for (int64_t d : v.shape)
      n *= static_cast<uint64_t>(d);
    return n;
  };
  for (const Ref &r : s.buffers) {
    if (r.kind == fb::BufferKind::Argument && r.index < arguments_.size())
      s.bufferBytes.push_back(bytesOf(arguments_[r.index]));
    else if (r.kind == fb::BufferKind::Result && r.index < results_.size())
      s.bufferBytes.push_back(bytesOf(results_[r.index]));
    else
      s.bufferBytes.push_back(4);
  }
  s.iterations = iterations;
  s.grain = grain;
  steps_.push_back(std::move(s));
}

void FunctionBuilder::matmul(const MatmulSpec &spec,
                             const std::string &location) {
  StepSpec s;
  s.kind = fb::StepKind::MatmulStep;
  s.location = location;
  s.matmul = spec;
  steps_.push_back(std::move(s));
}

void FunctionBuilder::conv(const ConvSpec &spec, const std::string &location) {
  StepSpec s;
  s.kind = fb::StepKind::ConvStep;
  s.location = location;
  s.conv = spec;
  steps_.push_back(std::move(s));
}

void FunctionBuilder::transfer(uint32_t from, uint32_t to, Ref source,
                               Ref destination, uint64_t bytes) {
  StepSpec s;
  s.kind = fb::StepKind::TransferStep;
  s.from = from;
  s.to = to;
  s.source = source;
  s.destination = destination;
  s.bytes = bytes;
  s.waitStep = static_cast<uint32_t>(steps_.size() + 1);
  steps_.push_back(std::move(s));
}

void FunctionBuilder::copy(Ref source, Ref destination, uint64_t bytes,
                           const std::string &location) {
  StepSpec s;
  s.kind = fb::StepKind::CopyStep;
  s.location = location;
  s.source = source;
  s.destination = destination;
  s.bytes = bytes;
  steps_.push_back(std::move(s));
}

void FunctionBuilder::allReduce(std::vector<Ref> inputs,
                                std::vector<Ref> outputs,
                                std::vector<uint64_t> elements,
                                fb::RankReduction reduction, uint32_t waitStep,
                                const std::string &location) {
  StepSpec s;
  s.kind = fb::StepKind::AllReduceStep;
  s.location = location;
  s.buffers = std::move(inputs);
  s.buffers.insert(s.buffers.end(), outputs.begin(), outputs.end());
  s.elements = std::move(elements);
  s.reduction = reduction;
  s.waitStep = waitStep;
  steps_.push_back(std::move(s));
}

void FunctionBuilder::shard(fb::ShardKind kind, std::vector<Ref> inputs,
                            std::vector<Ref> outputs,
                            std::vector<uint64_t> elements, uint32_t ranks,
                            fb::RankReduction reduction, uint32_t waitStep,
                            const std::string &location) {
  allReduce(std::move(inputs), std::move(outputs), std::move(elements),
            reduction, waitStep, location);
  StepSpec &s = steps_.back();
  s.kind = fb::StepKind::ShardStep;
  s.shardKind = kind;
  s.ranks = ranks;
}

uint32_t ModuleBuilder::global(const std::string &name, const std::string &role,
                               DType dtype, std::vector<int64_t> shape,
                               std::vector<uint8_t> initial, int32_t copyOf) {
  GlobalSpec g;
  g.value = {name, role, dtype, std::move(shape), -1};
  g.initial = std::move(initial);
  g.copyOf = copyOf;
  globals_.push_back(std::move(g));
  return static_cast<uint32_t>(globals_.size() - 1);
}

uint32_t ModuleBuilder::constant(DType dtype, std::vector<int64_t> shape,
                                 std::vector<uint8_t> data) {
  constants_.push_back({dtype, std::move(shape), std::move(data)});
  return static_cast<uint32_t>(constants_.size() - 1);
}

uint32_t ModuleBuilder::kernel(const std::string &name) {
  kernels_.push_back(name);
  return static_cast<uint32_t>(kernels_.size() - 1);
}

FunctionBuilder &ModuleBuilder::function(const std::string &name) {
  for (FunctionBuilder &f : functions_)
    if (f.name_ == name)
      return f;
  functions_.emplace_back(name);
  return functions_.back();
}

std::vector<uint8_t> ModuleBuilder::finish() const {
  FlatBufferBuilder b;
  std::vector<Offset<fb::Global>> globals;
  for (const GlobalSpec &g : globals_) {
    auto name = b.CreateString(g.value.name);
    auto role = b.CreateString(g.value.role);
    auto type = tensorType(b, g.value.dtype, g.value.shape);
    auto init = g.initial.empty() ? 0 : alignedBytes(b, g.initial);
    auto whole = g.wholeShape ? b.CreateVector(*g.wholeShape) : 0;
    globals.push_back(fb::CreateGlobal(b, name, role, type, init, g.copyOf,
                                       g.sharded, whole, g.tpSplit,
                                       g.tpSplitGroups));
  }
  std::vector<Offset<fb::Constant>> constants;
  for (const ConstantSpec &c : constants_) {
    auto type = tensorType(b, c.dtype, c.shape);
    constants.push_back(fb::CreateConstant(b, type, alignedBytes(b, c.data)));
  }
  std::vector<Offset<fb::Kernel>> kernels;
  for (const std::string &k : kernels_)
    kernels.push_back(fb::CreateKernel(b, b.CreateString(k)));
  std::vector<Offset<fb::Function>> functions;
  for (const FunctionBuilder &f : functions_) {
    std::vector<Offset<fb::Argument>> args;
    for (const Value &v : f.arguments_)
      args.push_back(fb::CreateArgument(
          b, b.CreateString(v.name), b.CreateString(v.role),
          tensorType(b, v.dtype, v.shape), v.global, v.numClasses));
    std::vector<Offset<fb::Result>> results;
    for (const Value &v : f.results_)
      results.push_back(
          fb::CreateResult(b, b.CreateString(v.name), b.CreateString(v.role),
                           tensorType(b, v.dtype, v.shape), v.global, v.stage));
    std::vector<Offset<fb::Step>> steps;
    for (const StepSpec &s : f.steps_)
      steps.push_back(step(b, s));
    functions.push_back(fb::CreateFunction(
        b, b.CreateString(f.name_), b.CreateVector(args),
        b.CreateVector(results), f.arenaSize_, b.CreateVector(steps)));
  }
  auto so = so_.empty() ? 0 : b.CreateVector(so_);
  auto onnx = onnx_.empty() ? 0 : b.CreateVector(onnx_);
  auto module = fb::CreateModule(
      b, version_, b.CreateString("dlc test ModuleBuilder"),
      b.CreateString(modelName_), b.CreateString(target_),
      b.CreateString(fingerprint_), b.CreateVector(globals),
      b.CreateVector(functions), b.CreateVector(constants),
      b.CreateVector(kernels), b.CreateString("test kernels"), so,
      /*cuda_binaries=*/0, ptx_.empty() ? 0 : b.CreateString(ptx_),
      b.CreateString(""), onnx, /*parameters_embedded=*/true,
      /*cuda_allow_tf32=*/false, /*cuda_allow_nondeterministic=*/false, ranks_,
      tensorRanks_, stages_);
  fb::FinishModuleBuffer(b, module);
  return std::vector<uint8_t>(b.GetBufferPointer(),
                              b.GetBufferPointer() + b.GetSize());
}

std::vector<uint8_t> readFileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

bool writeFileBytes(const std::string &path, const std::vector<uint8_t> &b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(b.data()),
            static_cast<std::streamsize>(b.size()));
  return static_cast<bool>(out);
}

} // namespace dlc::test
