//===- ModuleFile.cpp - Loading and checking .dlcm modules ----------------===//
//
// Every check a plan needs before it can run without bounds checks happens
// here, once, at load time (ModuleFile.h). The executor then trusts the
// module: it never re-checks an offset, an index or a shape.
//
//===----------------------------------------------------------------------===//
#include "runtime/module/ModuleFile.h"

#include "runtime/core/Status.h"
#include "runtime/module/Format.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <set>
#include <sys/stat.h>
#include <type_traits>
#include <unistd.h>

namespace dlc {

size_t elementSize(fb::ElementType t) {
  return dtypeSize(static_cast<DType>(t));
}

std::string ValueType::describe() const { return describeType(dtype, shape); }

int32_t ModuleFile::findGlobal(const std::string &name) const {
  for (size_t i = 0; i < globals_.size(); ++i)
    if (globals_[i].name == name)
      return static_cast<int32_t>(i);
  return -1;
}

const FunctionInfo *ModuleFile::findFunction(const std::string &name) const {
  for (const FunctionInfo &f : functions_)
    if (f.name == name)
      return &f;
  return nullptr;
}

std::string ModuleFile::functionNames() const {
  std::string s;
  for (const FunctionInfo &f : functions_)
    s += (s.empty() ? "'" : ", '") + f.name + "'";
  return s.empty() ? "none" : s;
}

namespace {

constexpr uint64_t kMaxValue = std::numeric_limits<int64_t>::max();
/// Far past any job's ranks, and small enough that a ZeRO bucket's N + 1
/// shards (runtime/cpu/Executor.cpp) are a checked product.
constexpr uint32_t kMaxDataParallelRanks = 1u << 20;
/// As dlc-compile's StagePlacement::kMaxStages (a set of stages is a bit
/// mask).
constexpr uint32_t kMaxPipelineStages = 64;

/// a * b, or false when it exceeds kMaxValue (both non-negative).
bool mulChecked(uint64_t a, uint64_t b, uint64_t &out) {
  return !__builtin_mul_overflow(a, b, &out) && out <= kMaxValue;
}

bool addChecked(uint64_t a, uint64_t b, uint64_t &out) {
  return !__builtin_add_overflow(a, b, &out) && out <= kMaxValue;
}

std::string str(const flatbuffers::String *s) {
  return s ? s->str() : std::string();
}

const char *kindName(fb::BufferKind k) {
  switch (k) {
  case fb::BufferKind::Arena:
    return "arena";
  case fb::BufferKind::Argument:
    return "argument";
  case fb::BufferKind::Result:
    return "result";
  case fb::BufferKind::Constant:
    return "constant";
  }
  return "unknown";
}

} // namespace

/// Checks a verified module's contents and fills the ModuleFile's summary.
/// Each check* returns false with error_ set to the first problem found.
class ModuleChecker {
public:
  explicit ModuleChecker(ModuleFile &module) : m_(module) {}

  bool run() {
    const fb::Module &root = *m_.root_;
    m_.target_ = str(root.target());
    m_.modelName_ = str(root.model_name());
    m_.fingerprint_ = str(root.fingerprint());
    if (root.data_parallel_ranks() == 0 ||
        root.data_parallel_ranks() > kMaxDataParallelRanks)
      return fail("is partitioned for " +
                  std::to_string(root.data_parallel_ranks()) +
                  " data-parallel ranks (expected 1 to " +
                  std::to_string(kMaxDataParallelRanks) + ")");
    uint64_t all = 0;
    if (root.tensor_parallel_ranks() == 0 ||
        !mulChecked(root.data_parallel_ranks(), root.tensor_parallel_ranks(),
                    all) ||
        all > kMaxDataParallelRanks)
      return fail("is partitioned for " +
                  std::to_string(root.tensor_parallel_ranks()) +
                  " tensor-parallel ranks (expected 1 to " +
                  std::to_string(kMaxDataParallelRanks) + " ranks in all)");
    if (root.tensor_parallel_ranks() > 1 && m_.target_ != "cpu")
      return fail("is partitioned for tensor parallelism, which runs on "
                  "CPU ranks only so far, but targets '" +
                  m_.target_ + "'");
    if (root.pipeline_stages() == 0 ||
        root.pipeline_stages() > kMaxPipelineStages ||
        !mulChecked(all, root.pipeline_stages(), all) ||
        all > kMaxDataParallelRanks)
      return fail("is cut into " + std::to_string(root.pipeline_stages()) +
                  " pipeline stages (expected 1 to " +
                  std::to_string(kMaxPipelineStages) + ", and at most " +
                  std::to_string(kMaxDataParallelRanks) + " ranks in all)");
    if (root.pipeline_stages() > 1 && m_.target_ != "cpu")
      return fail("is cut into pipeline stages, which run on CPU ranks only "
                  "so far, but targets '" +
                  m_.target_ + "'");
    return checkGlobals() && checkConstants() && checkKernels() &&
           checkFunctions();
  }

  std::string error_;

private:
  bool fail(const std::string &message) {
    error_ = context_.empty() ? message : context_ + ": " + message;
    return false;
  }

  /// Fails unless `name` is set and not yet in `names`, which it joins;
  /// `repeated` is the message for a name already there.
  bool checkName(const std::string &name, std::set<std::string> &names,
                 const std::string &repeated) {
    if (name.empty())
      return fail("has no name");
    if (!names.insert(name).second)
      return fail(repeated);
    return true;
  }

  bool checkType(const fb::TensorType *t, ValueType &out) {
    if (!t)
      return fail("has no type");
    if (t->dtype() > fb::ElementType::MAX)
      return fail("has unknown element type " +
                  std::to_string(static_cast<int>(t->dtype())));
    out.dtype = static_cast<DType>(t->dtype());
    out.shape.clear();
    uint64_t elements = 1;
    if (!elementsAligned(t->shape()))
      return fail("has a misaligned shape");
    if (t->shape()) {
      for (int64_t d : *t->shape()) {
        if (d < 0)
          return fail("has a negative dimension " + std::to_string(d));
        out.shape.push_back(d);
        if (!mulChecked(elements, static_cast<uint64_t>(d), elements))
          return fail("has more elements than fit in 63 bits");
      }
    }
    out.numElements = static_cast<int64_t>(elements);
    if (!mulChecked(elements, dtypeSize(out.dtype), out.byteSize))
      return fail("has more bytes than fit in 63 bits");
    return true;
  }

  bool checkGlobals() {
    const auto *globals = m_.root_->globals();
    if (!globals)
      return true;
    std::set<std::string> names;
    for (uint32_t i = 0; i < globals->size(); ++i) {
      const fb::Global *g = globals->Get(i);
      ValueInfo info;
      info.name = str(g->name());
      info.role = str(g->role());
      info.global = static_cast<int32_t>(i);
      context_ = "global " + std::to_string(i) + " ('" + info.name + "')";
      if (!checkName(info.name, names, "has the name of an earlier global"))
        return false;
      if (!checkType(g->type(), info.type))
        return false;
      info.sharded = g->sharded();
      if (info.sharded && m_.root_->data_parallel_ranks() < 2)
        return fail("is sharded in a module of " +
                    std::to_string(m_.root_->data_parallel_ranks()) +
                    " data-parallel rank(s)");
      if (const auto *whole = g->whole_shape())
        if (!readWholeShape(*whole, info))
          return false;
      // A tensor-parallel module's checkpoints hold its shards' whole values.
      if (info.sharded && !info.wholeShape &&
          m_.root_->tensor_parallel_ranks() > 1)
        return fail("is sharded in a tensor-parallel module, but has no "
                    "whole shape");
      info.tpSplit = g->tp_split();
      uint32_t slices = 1;
      if (info.tpSplit != -1) {
        // A shard's split is its whole's, the tensor rank's slice (a
        // sharded global of a module of one tensor rank may lack one: the
        // rank count below refuses the split anyway).
        const std::vector<int64_t> &split = info.sharded && info.wholeShape
                                                ? *info.wholeShape
                                                : info.type.shape;
        const std::string splitType = info.sharded
                                          ? "its whole " + shapeString(split)
                                          : info.type.describe();
        slices = m_.root_->tensor_parallel_ranks();
        if (slices < 2 || info.tpSplit < 0 ||
            info.tpSplit >= static_cast<int32_t>(split.size()))
          return fail("is split along dimension " +
                      std::to_string(info.tpSplit) + " of " + splitType +
                      " in a module of " + std::to_string(slices) +
                      " tensor-parallel rank(s)");
        info.tpSplitGroups = g->tp_split_groups();
        if (info.tpSplitGroups < 1 || split[info.tpSplit] % info.tpSplitGroups)
          return fail("is split in " + std::to_string(info.tpSplitGroups) +
                      " blocks along dimension " +
                      std::to_string(info.tpSplit) + " of " + splitType +
                      ", which are not equal");
        // A shard's initial value is its own, every rank's alike.
        if (info.sharded)
          slices = 1;
      }
      if (const auto *init = g->initial_value()) {
        // A split global's is every tensor rank's slice.
        if (init->size() != info.type.byteSize * slices)
          return fail("initial value has " + std::to_string(init->size()) +
                      " bytes, its type " + info.type.describe() +
                      (slices > 1 ? " times " + std::to_string(slices) +
                                        " tensor-parallel slices"
                                  : std::string()) +
                      " needs " + std::to_string(info.type.byteSize * slices));
        if (!aligned(init->data()))
          return fail("initial value is not 64-byte aligned");
      }
      info.copyOf = g->copy_of();
      if (info.copyOf < -1)
        return fail("is a copy of global " + std::to_string(info.copyOf));
      m_.globals_.push_back(std::move(info));
    }
    for (ValueInfo &copy : m_.globals_) {
      if (copy.copyOf < 0)
        continue;
      context_ =
          "global " + std::to_string(copy.global) + " ('" + copy.name + "')";
      if (copy.copyOf >= static_cast<int32_t>(m_.globals_.size()) ||
          copy.copyOf == copy.global)
        return fail("is a copy of global " + std::to_string(copy.copyOf) +
                    ", which is not another global");
      const ValueInfo &source = m_.globals_[copy.copyOf];
      if (source.type.dtype != DType::F32 ||
          (copy.type.dtype != DType::F16 && copy.type.dtype != DType::BF16) ||
          source.type.shape != copy.type.shape)
        return fail("is " + copy.type.describe() + ", not a float16 or " +
                    "bfloat16 copy of '" + source.name + "' (" +
                    source.type.describe() + ")");
      if (globals->Get(copy.global)->initial_value())
        return fail("is a copy of '" + source.name +
                    "' but has an initial value of its own");
      if (copy.tpSplit != source.tpSplit ||
          copy.tpSplitGroups != source.tpSplitGroups)
        return fail("is a copy of '" + source.name +
                    "' but not split among the tensor-parallel ranks as it is");
    }
    context_.clear();
    return true;
  }

  bool checkConstants() {
    const auto *constants = m_.root_->constants();
    if (!constants)
      return true;
    for (uint32_t i = 0; i < constants->size(); ++i) {
      const fb::Constant *c = constants->Get(i);
      context_ = "constant " + std::to_string(i);
      ValueType type;
      if (!checkType(c->type(), type))
        return false;
      uint64_t size = c->data() ? c->data()->size() : 0;
      if (size != type.byteSize)
        return fail("has " + std::to_string(size) + " bytes, its type " +
                    type.describe() + " needs " +
                    std::to_string(type.byteSize));
      if (c->data() && !aligned(c->data()->data()))
        return fail("data is not 64-byte aligned");
      m_.constants_.push_back(std::move(type));
    }
    context_.clear();
    return true;
  }

  bool checkKernels() {
    const auto *kernels = m_.root_->kernels();
    if (!kernels)
      return true;
    std::set<std::string> names;
    for (uint32_t i = 0; i < kernels->size(); ++i) {
      std::string name = str(kernels->Get(i)->name());
      context_ = "kernel " + std::to_string(i);
      if (!checkName(name, names, "'" + name + "' is listed twice"))
        return false;
    }
    context_.clear();
    return true;
  }

  bool checkValues(const FunctionInfo &f, bool results) {
    const std::vector<ValueInfo> &values = results ? f.results : f.arguments;
    const char *what = results ? "result" : "argument";
    std::set<int32_t> updated;
    for (size_t i = 0; i < values.size(); ++i) {
      const ValueInfo &v = values[i];
      std::string which =
          std::string(what) + " " + std::to_string(i) + " ('" + v.name + "')";
      if (v.global < -1 || v.global >= static_cast<int64_t>(m_.globals_.size()))
        return fail(which + " names global " + std::to_string(v.global) +
                    ", the module has " + std::to_string(m_.globals_.size()));
      if (v.global < 0)
        continue;
      const ValueInfo &g = m_.globals_[v.global];
      if (v.type != g.type)
        return fail(which + " is " + v.type.describe() + " but global '" +
                    g.name + "' is " + g.type.describe());
      if (results && !updated.insert(v.global).second)
        return fail(which + " updates global '" + g.name +
                    "', which an earlier result updates too");
    }
    return true;
  }

  template <typename List>
  bool readValues(const List *list, std::vector<ValueInfo> &out,
                  const char *what) {
    if (!list)
      return true;
    for (uint32_t i = 0; i < list->size(); ++i) {
      const auto *v = list->Get(i);
      ValueInfo info;
      info.name = str(v->name());
      info.role = str(v->role());
      info.global = v->global();
      if constexpr (std::is_same_v<
                        std::remove_cv_t<std::remove_pointer_t<decltype(v)>>,
                        fb::Argument>) {
        info.numClasses = v->num_classes();
        info.ignoreIndex = v->ignore_index();
        if (info.numClasses < 0)
          return fail(std::string(what) + " " + std::to_string(i) + " has " +
                      std::to_string(info.numClasses) + " classes");
      } else {
        info.stage = v->stage();
        if (!checkStage(info.stage, std::string(what) + " " +
                                        std::to_string(i) + " is held by"))
          return false;
      }
      std::string saved = context_;
      context_ += std::string(": ") + what + " " + std::to_string(i) + " ('" +
                  info.name + "')";
      if (!checkType(v->type(), info.type))
        return false;
      context_ = saved;
      out.push_back(std::move(info));
    }
    return true;
  }

  bool checkFunctions() {
    const auto *functions = m_.root_->functions();
    if (!functions)
      return true;
    std::set<std::string> names;
    for (uint32_t i = 0; i < functions->size(); ++i) {
      const fb::Function *plan = functions->Get(i);
      FunctionInfo f;
      f.name = str(plan->name());
      f.plan = plan;
      context_ = "function " + std::to_string(i) + " ('" + f.name + "')";
      if (!checkName(f.name, names, "has the name of an earlier function"))
        return false;
      if (!readValues(plan->arguments(), f.arguments, "argument") ||
          !readValues(plan->results(), f.results, "result") ||
          !checkValues(f, false) || !checkValues(f, true))
        return false;
      if (plan->arena_size() > kMaxValue)
        return fail("arena size " + std::to_string(plan->arena_size()) +
                    " does not fit in 63 bits");
      for (uint32_t a = 0; a < f.arguments.size(); ++a)
        if (f.arguments[a].global < 0)
          f.inputs.push_back(a);
      for (uint32_t r = 0; r < f.results.size(); ++r)
        if (f.results[r].global < 0)
          f.outputs.push_back(r);
      if (const auto *steps = plan->steps()) {
        std::string functionContext = context_;
        for (uint32_t s = 0; s < steps->size(); ++s) {
          const fb::Step *step = steps->Get(s);
          context_ = functionContext + ": step " + std::to_string(s);
          if (step->location() && step->location()->size())
            context_ += " (" + step->location()->str() + ")";
          if (!checkStep(f, *step, s))
            return false;
        }
      }
      m_.functions_.push_back(std::move(f));
    }
    context_.clear();
    return true;
  }

  /// Fails unless `stage` is -1 (every rank) or one of the module's
  /// pipeline stages; `what` starts the message.
  bool checkStage(int64_t stage, const std::string &what) {
    if (stage >= -1 &&
        stage < static_cast<int64_t>(m_.root_->pipeline_stages()) &&
        (stage == -1 || m_.root_->pipeline_stages() > 1))
      return true;
    return fail(what + " stage " + std::to_string(stage) + " of a module of " +
                std::to_string(m_.root_->pipeline_stages()) +
                " pipeline stage(s)");
  }

  bool checkStep(const FunctionInfo &f, const fb::Step &step, uint32_t index) {
    // The verifier accepts a union whose type is set and whose table is
    // absent.
    if (step.step_type() != fb::StepKind::NONE && !step.step())
      return fail("has no step body");
    if (!checkStage(step.stage(), "runs on"))
      return false;
    switch (step.step_type()) {
    case fb::StepKind::KernelStep:
      return checkKernelStep(f, *step.step_as_KernelStep());
    case fb::StepKind::MatmulStep:
      return checkMatmulStep(f, *step.step_as_MatmulStep());
    case fb::StepKind::ConvStep:
      return checkConvStep(f, *step.step_as_ConvStep());
    case fb::StepKind::CopyStep:
      return checkCopyStep(f, *step.step_as_CopyStep());
    case fb::StepKind::AllReduceStep:
      return checkAllReduceStep(f, *step.step_as_AllReduceStep(), index);
    case fb::StepKind::ShardStep:
      return checkShardStep(f, *step.step_as_ShardStep(), index);
    case fb::StepKind::TransferStep:
      if (step.stage() != -1)
        return fail("is a transfer, which its two stages run, but names "
                    "stage " +
                    std::to_string(step.stage()));
      return checkTransferStep(f, *step.step_as_TransferStep(), index);
    default:
      return fail("has unknown step kind " +
                  std::to_string(static_cast<int>(step.step_type())));
    }
  }

  /// Bytes of the buffer `ref` points into, or false if it names none.
  bool capacity(const FunctionInfo &f, const fb::BufferRef &ref,
                const char *what, uint64_t &out) {
    uint32_t index = ref.index();
    auto outOfRange = [&](size_t count) {
      return fail(std::string(what) + " refers to " + kindName(ref.kind()) +
                  " " + std::to_string(index) + ", there are " +
                  std::to_string(count));
    };
    switch (ref.kind()) {
    case fb::BufferKind::Arena:
      out = f.plan->arena_size();
      return true;
    case fb::BufferKind::Argument:
      if (index >= f.arguments.size())
        return outOfRange(f.arguments.size());
      out = f.arguments[index].type.byteSize;
      return true;
    case fb::BufferKind::Result:
      if (index >= f.results.size())
        return outOfRange(f.results.size());
      out = f.results[index].type.byteSize;
      return true;
    case fb::BufferKind::Constant:
      if (index >= m_.constants_.size())
        return outOfRange(m_.constants_.size());
      out = m_.constants_[index].byteSize;
      return true;
    }
    return fail(std::string(what) + " has unknown buffer kind " +
                std::to_string(static_cast<int>(ref.kind())));
  }

  /// Checks that `bytes` bytes at `ref` lie inside its buffer, and that a
  /// `written` reference is in the arena or a result.
  bool checkRef(const FunctionInfo &f, const fb::BufferRef *ref, uint64_t bytes,
                const char *what, bool written) {
    if (!ref)
      return fail(std::string(what) + " is missing");
    uint64_t size = 0;
    if (!capacity(f, *ref, what, size))
      return false;
    if (written && ref->kind() != fb::BufferKind::Arena &&
        ref->kind() != fb::BufferKind::Result)
      return fail(std::string(what) + " is written but lies in " +
                  kindName(ref->kind()) + " " + std::to_string(ref->index()) +
                  " (only the arena and results are writable)");
    uint64_t end = 0;
    if (!addChecked(ref->offset(), bytes, end) || end > size)
      return fail(std::string(what) + " (" + std::to_string(bytes) +
                  " bytes at offset " + std::to_string(ref->offset()) + " of " +
                  kindName(ref->kind()) +
                  (ref->kind() == fb::BufferKind::Arena
                       ? std::string()
                       : " " + std::to_string(ref->index())) +
                  ") ends past its " + std::to_string(size) + " bytes");
    return true;
  }

  bool checkKernelStep(const FunctionInfo &f, const fb::KernelStep &k) {
    const auto *kernels = m_.root_->kernels();
    uint32_t count = kernels ? kernels->size() : 0;
    if (k.kernel() >= count)
      return fail("runs kernel " + std::to_string(k.kernel()) +
                  ", the module has " + std::to_string(count));
    if (k.iterations() < 0)
      return fail("has " + std::to_string(k.iterations()) + " iterations");
    // One thread per iteration, a warp, or a block of a power of two up to
    // 1024 threads (the CUDA kernels' split reductions).
    uint32_t threads = k.threads_per_iteration();
    if (threads != 1 &&
        (threads < 32 || threads > 1024 || (threads & (threads - 1)) != 0))
      return fail("runs " + std::to_string(threads) +
                  " threads per iteration (expected 1, or a power of two "
                  "from 32 to 1024)");
    const auto *buffers = k.buffers();
    const auto *bytes = k.buffer_bytes();
    uint32_t n = buffers ? buffers->size() : 0;
    if (n == 0)
      return fail("runs a kernel on no buffers");
    if (!elementsAligned(buffers) || !elementsAligned(bytes))
      return fail("has misaligned buffer references");
    if (!bytes || bytes->size() != n)
      return fail("gives " + std::to_string(bytes ? bytes->size() : 0) +
                  " buffer sizes for " + std::to_string(n) + " buffers");
    if (k.outputs() == 0 || k.outputs() > n)
      return fail("writes " + std::to_string(k.outputs()) + " of its " +
                  std::to_string(n) + " buffers");
    for (uint32_t i = 0; i < n; ++i) {
      std::string what = "kernel buffer " + std::to_string(i);
      // The kernels index their buffers by the compiled shapes, whose bytes
      // are these; the trailing `outputs` are written.
      if (!checkRef(f, buffers->Get(i), bytes->Get(i), what.c_str(),
                    /*written=*/i >= n - k.outputs()))
        return false;
    }
    return true;
  }

  bool checkMatmulStep(const FunctionInfo &f, const fb::MatmulStep &mm) {
    if (mm.dtype() > fb::ElementType::MAX)
      return fail("matmul has unknown element type " +
                  std::to_string(static_cast<int>(mm.dtype())));
    int64_t dims[] = {
        mm.batch(),           mm.m(), mm.n(), mm.k(), mm.lhs_batch_stride(),
        mm.rhs_batch_stride()};
    const char *dimNames[] = {
        "batch", "m", "n", "k", "lhs_batch_stride", "rhs_batch_stride"};
    for (int i = 0; i < 6; ++i)
      if (dims[i] < 0)
        return fail("matmul " + std::string(dimNames[i]) + " is " +
                    std::to_string(dims[i]));
    uint64_t es = elementSize(mm.dtype());
    uint64_t lhs = 0, rhs = 0, result = 0;
    if (!operandBytes(mm.batch(), mm.lhs_batch_stride(), mm.m(), mm.k(), es,
                      lhs) ||
        !operandBytes(mm.batch(), mm.rhs_batch_stride(), mm.k(), mm.n(), es,
                      rhs) ||
        !mulChecked(mm.batch(), mm.m(), result) ||
        !mulChecked(result, mm.n(), result) || !mulChecked(result, es, result))
      return fail("matmul operand sizes overflow 63 bits");
    if (mm.epilogue() > fb::MatmulEpilogue::MAX)
      return fail("matmul has unknown epilogue " +
                  std::to_string(static_cast<int>(mm.epilogue())));
    if (mm.epilogue() != fb::MatmulEpilogue::None) {
      // Fused epilogues are cuBLASLt's; the CPU runs bias adds as kernels.
      if (m_.target_ != "cuda")
        return fail(std::string("matmul has a '") +
                    fb::EnumNameMatmulEpilogue(mm.epilogue()) +
                    "' epilogue, which only the 'cuda' target fuses");
      uint64_t bias = 0;
      if (!mm.bias() || !mulChecked(mm.n(), es, bias))
        return fail("matmul epilogue has no bias");
      if (!checkRef(f, mm.bias(), bias, "matmul bias", false))
        return false;
    }
    return checkRef(f, mm.lhs(), lhs, "matmul lhs", false) &&
           checkRef(f, mm.rhs(), rhs, "matmul rhs", false) &&
           checkRef(f, mm.result(), result, "matmul result", true) &&
           checkDisjoint(*mm.result(), result, "matmul result", *mm.lhs(), lhs,
                         "lhs") &&
           checkDisjoint(*mm.result(), result, "matmul result", *mm.rhs(), rhs,
                         "rhs");
  }

  /// Bytes a strided batch of [rows, cols] operands spans.
  static bool operandBytes(int64_t batch, int64_t stride, int64_t rows,
                           int64_t cols, uint64_t elementBytes, uint64_t &out) {
    uint64_t matrix = 0, span = 0;
    if (!mulChecked(rows, cols, matrix))
      return false;
    if (batch == 0 || matrix == 0) {
      out = 0;
      return true;
    }
    return mulChecked(batch - 1, stride, span) &&
           addChecked(span, matrix, span) &&
           mulChecked(span, elementBytes, out);
  }

  bool checkConvStep(const FunctionInfo &f, const fb::ConvStep &c) {
    if (c.kind() > fb::ConvKind::MAX)
      return fail("convolution has unknown kind " +
                  std::to_string(static_cast<int>(c.kind())));
    if (c.dtype() > fb::ElementType::MAX)
      return fail("convolution has unknown element type " +
                  std::to_string(static_cast<int>(c.dtype())));
    if (c.engine() > fb::ConvEngine::MAX)
      return fail("convolution has unknown engine " +
                  std::to_string(static_cast<int>(c.engine())));
    std::vector<int64_t> x, w, y;
    if (!readShape(c.x_shape(), "x", x) || !readShape(c.w_shape(), "w", w) ||
        !readShape(c.y_shape(), "y", y))
      return false;
    size_t rank = x.size();
    if (rank < 3 || w.size() != rank || y.size() != rank)
      return fail("convolution shapes x, w, y must have one equal rank of at "
                  "least 3, they have " +
                  std::to_string(x.size()) + ", " + std::to_string(w.size()) +
                  ", " + std::to_string(y.size()));
    size_t spatial = rank - 2;
    std::vector<int64_t> stride, padLow, padHigh, dilation;
    if (!readAttribute(c.stride(), "stride", spatial, 1, 1, stride) ||
        !readAttribute(c.pad_low(), "pad_low", spatial, 0, 0, padLow) ||
        !readAttribute(c.pad_high(), "pad_high", spatial, 0, 0, padHigh) ||
        !readAttribute(c.dilation(), "dilation", spatial, 1, 1, dilation))
      return false;
    int64_t g = c.groups();
    if (g < 1)
      return fail("convolution groups is " + std::to_string(g));
    if (x[1] % g || w[0] % g || w[1] * g != x[1] || y[1] != w[0] ||
        y[0] != x[0])
      return fail("convolution shapes x " + shapeString(x) + ", w " +
                  shapeString(w) + ", y " + shapeString(y) +
                  " do not agree with " + std::to_string(g) + " group(s)");
    for (size_t i = 0; i < spatial; ++i) {
      uint64_t extent = 0, padded = 0;
      if (w[i + 2] < 1)
        return fail("convolution kernel dimension " + std::to_string(i) +
                    " is " + std::to_string(w[i + 2]));
      if (!mulChecked(w[i + 2] - 1, dilation[i], extent) ||
          !addChecked(extent, 1, extent) ||
          !addChecked(x[i + 2], padLow[i], padded) ||
          !addChecked(padded, padHigh[i], padded))
        return fail("convolution geometry overflows 63 bits");
      int64_t expected =
          padded >= extent
              ? static_cast<int64_t>((padded - extent) / stride[i]) + 1
              : 0;
      if (y[i + 2] != expected)
        return fail(
            "convolution output dimension " + std::to_string(i) + " is " +
            std::to_string(y[i + 2]) + ", expected " +
            std::to_string(expected) + " from input " +
            std::to_string(x[i + 2]) + ", kernel " + std::to_string(w[i + 2]) +
            ", stride " + std::to_string(stride[i]) + ", padding " +
            std::to_string(padLow[i]) + "+" + std::to_string(padHigh[i]) +
            ", dilation " + std::to_string(dilation[i]));
    }
    uint64_t es = elementSize(c.dtype()), xb = 0, wb = 0, yb = 0;
    if (!shapeBytes(x, es, xb) || !shapeBytes(w, es, wb) ||
        !shapeBytes(y, es, yb))
      return fail("convolution operand sizes overflow 63 bits");
    if (!checkRef(f, c.x(), xb, "convolution x",
                  c.kind() == fb::ConvKind::BackwardData) ||
        !checkRef(f, c.w(), wb, "convolution w",
                  c.kind() == fb::ConvKind::BackwardFilter) ||
        !checkRef(f, c.y(), yb, "convolution y",
                  c.kind() == fb::ConvKind::Forward))
      return false;
    struct Operand {
      const fb::BufferRef *ref;
      uint64_t bytes;
      const char *name;
    } xOperand{c.x(), xb, "x"}, wOperand{c.w(), wb, "w"},
        yOperand{c.y(), yb, "y"};
    Operand out = c.kind() == fb::ConvKind::Forward        ? yOperand
                  : c.kind() == fb::ConvKind::BackwardData ? xOperand
                                                           : wOperand;
    for (const Operand &in : {xOperand, wOperand, yOperand})
      if (in.ref != out.ref &&
          !checkDisjoint(*out.ref, out.bytes,
                         (std::string("convolution ") + out.name).c_str(),
                         *in.ref, in.bytes, in.name))
        return false;
    return true;
  }

  /// A library step (matmul, convolution) must not write the memory it
  /// reads: with several threads its output blocks would overwrite operand
  /// blocks other threads have yet to read.
  bool checkDisjoint(const fb::BufferRef &out, uint64_t outBytes,
                     const char *what, const fb::BufferRef &in,
                     uint64_t inBytes, const char *operand) {
    bool sameBuffer =
        out.kind() == in.kind() &&
        (out.kind() == fb::BufferKind::Arena || out.index() == in.index());
    if (!sameBuffer || !outBytes || !inBytes ||
        out.offset() >= in.offset() + inBytes ||
        in.offset() >= out.offset() + outBytes)
      return true;
    return fail(std::string(what) + " (" + std::to_string(outBytes) +
                " bytes at offset " + std::to_string(out.offset()) + " of " +
                kindName(out.kind()) + ") overlaps its " + operand + " (" +
                std::to_string(inBytes) + " bytes at offset " +
                std::to_string(in.offset()) + ")");
  }

  bool readShape(const flatbuffers::Vector<int64_t> *v, const char *what,
                 std::vector<int64_t> &out) {
    if (!v)
      return fail(std::string("convolution has no ") + what + "_shape");
    if (!elementsAligned(v))
      return fail(std::string("convolution ") + what + "_shape is misaligned");
    for (int64_t d : *v) {
      if (d < 0)
        return fail(std::string("convolution ") + what +
                    "_shape has a negative dimension");
      out.push_back(d);
    }
    return true;
  }

  /// A sharded global's whole shape: its shard over the module's ranks
  /// must be the global's own type's elements.
  bool readWholeShape(const flatbuffers::Vector<int64_t> &v, ValueInfo &info) {
    if (!elementsAligned(&v))
      return fail("whole shape is misaligned");
    if (!info.sharded)
      return fail("has a whole shape but is not sharded");
    uint64_t whole = 1, shard = 1;
    std::vector<int64_t> shape(v.begin(), v.end());
    for (int64_t d : shape)
      if (d < 0 || !mulChecked(whole, static_cast<uint64_t>(d), whole))
        return fail("whole shape " + shapeString(shape) + " is not a tensor's");
    for (int64_t d : info.type.shape)
      shard *= static_cast<uint64_t>(d);
    uint64_t ranks = m_.root_->data_parallel_ranks();
    if (info.type.shape.size() != 1 ||
        shard != whole / ranks + (whole % ranks != 0))
      return fail("is " + info.type.describe() + ", not a shard of " +
                  shapeString(shape) + " over " + std::to_string(ranks) +
                  " ranks");
    info.wholeShape = std::move(shape);
    return true;
  }

  /// A per-spatial-dimension attribute: absent means `absent` everywhere.
  bool readAttribute(const flatbuffers::Vector<int64_t> *v, const char *what,
                     size_t spatial, int64_t absent, int64_t minimum,
                     std::vector<int64_t> &out) {
    if (!v) {
      out.assign(spatial, absent);
      return true;
    }
    if (!elementsAligned(v))
      return fail(std::string("convolution ") + what + " is misaligned");
    if (v->size() != spatial)
      return fail(std::string("convolution ") + what + " has " +
                  std::to_string(v->size()) + " values for " +
                  std::to_string(spatial) + " spatial dimensions");
    for (int64_t value : *v) {
      if (value < minimum)
        return fail(std::string("convolution ") + what + " is " +
                    std::to_string(value));
      out.push_back(value);
    }
    return true;
  }

  static bool shapeBytes(const std::vector<int64_t> &shape, uint64_t es,
                         uint64_t &out) {
    out = es;
    for (int64_t d : shape)
      if (!mulChecked(out, d, out))
        return false;
    return true;
  }

  static std::string shapeString(const std::vector<int64_t> &shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i)
      s += (i ? "," : "") + std::to_string(shape[i]);
    return s + "]";
  }

  bool checkTransferStep(const FunctionInfo &f, const fb::TransferStep &t,
                         uint32_t index) {
    const uint32_t stages = m_.root_->pipeline_stages();
    const uint32_t steps = f.plan->steps()->size();
    if (t.wait_step() <= index || t.wait_step() > steps)
      return fail("transfer waits before step " +
                  std::to_string(t.wait_step()) +
                  ", not after it and within the function's " +
                  std::to_string(steps) + " steps");
    if (t.from() >= stages || t.to() >= stages || t.from() == t.to())
      return fail("transfers from stage " + std::to_string(t.from()) +
                  " to stage " + std::to_string(t.to()) + " in a module of " +
                  std::to_string(stages) + " pipeline stage(s)");
    return checkRef(f, t.source(), t.bytes(), "transfer source", false) &&
           checkRef(f, t.destination(), t.bytes(), "transfer destination",
                    true);
  }

  bool checkCopyStep(const FunctionInfo &f, const fb::CopyStep &c) {
    return checkRef(f, c.source(), c.bytes(), "copy source", false) &&
           checkRef(f, c.destination(), c.bytes(), "copy destination", true);
  }

  /// The fields every collective step shares: a wait after step `index`
  /// and within the function (unless it completes at once), a known
  /// reduction, a float element type. `what` names the step in messages.
  bool checkCollective(const FunctionInfo &f, uint32_t index, const char *what,
                       bool waits, uint32_t waitStep,
                       fb::RankReduction reduction, fb::ElementType dtype,
                       bool floatsOnly = true) {
    uint32_t steps = f.plan->steps()->size();
    if (waits && (waitStep <= index || waitStep > steps))
      return fail(std::string(what) + " waits before step " +
                  std::to_string(waitStep) + ", not after it and within " +
                  "the function's " + std::to_string(steps) + " steps");
    if (reduction > fb::RankReduction::MAX)
      return fail(std::string(what) + " has unknown reduction " +
                  std::to_string(static_cast<int>(reduction)));
    if (dtype > fb::ElementType::MAX)
      return fail(std::string(what) + " of unknown element type " +
                  std::to_string(static_cast<int>(dtype)));
    if (floatsOnly && dtype != fb::ElementType::F16 &&
        dtype != fb::ElementType::BF16 && dtype != fb::ElementType::F32 &&
        dtype != fb::ElementType::F64)
      return fail(std::string(what) + " of element type " +
                  std::to_string(static_cast<int>(dtype)) +
                  ", not a float type");
    return true;
  }

  bool checkAllReduceStep(const FunctionInfo &f, const fb::AllReduceStep &r,
                          uint32_t index) {
    if (!checkCollective(f, index, "all-reduce", true, r.wait_step(),
                         r.reduction(), r.dtype()))
      return false;
    if (r.tensor_parallel() && m_.root_->tensor_parallel_ranks() < 2)
      return fail("all-reduce among the tensor-parallel ranks of a module "
                  "of one tensor rank");
    const auto *buffers = r.buffers();
    const auto *elements = r.elements();
    uint32_t n = elements ? elements->size() : 0;
    if (n == 0 || !buffers || buffers->size() != 2 * n)
      return fail("all-reduce has " +
                  std::to_string(buffers ? buffers->size() : 0) +
                  " buffers for " + std::to_string(n) +
                  " values (expected an input and an output each)");
    if (!elementsAligned(buffers) || !elementsAligned(elements))
      return fail("has misaligned buffer references");
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; ++i) {
      uint64_t bytes = 0;
      if (!mulChecked(elements->Get(i), elementSize(r.dtype()), bytes) ||
          !addChecked(total, bytes, total))
        return fail("all-reduce value sizes overflow 63 bits");
      std::string value = "all-reduce value " + std::to_string(i);
      if (!checkRef(f, buffers->Get(i), bytes, (value + " input").c_str(),
                    false) ||
          !checkRef(f, buffers->Get(n + i), bytes, (value + " output").c_str(),
                    true))
        return false;
    }
    return true;
  }

  bool checkShardStep(const FunctionInfo &f, const fb::ShardStep &z,
                      uint32_t index) {
    if (z.kind() > fb::ShardKind::MAX)
      return fail("shard step of unknown kind " +
                  std::to_string(static_cast<int>(z.kind())));
    // A tensor rank's slice of a constant may hold integers (class ids).
    const bool tensor = z.tensor_parallel();
    if (tensor && m_.root_->tensor_parallel_ranks() < 2)
      return fail("shard step among the tensor-parallel ranks of a module "
                  "of one tensor rank");
    if (!checkCollective(f, index, "shard step",
                         z.kind() != fb::ShardKind::RankShard, z.wait_step(),
                         z.reduction(), z.dtype(),
                         !tensor || z.kind() != fb::ShardKind::RankShard))
      return false;
    // Collectives over one rank are the identity: dlc-compile writes none,
    // but they are valid (a single GPU checks NCCL with one).
    uint32_t ranks = tensor ? m_.root_->tensor_parallel_ranks()
                            : m_.root_->data_parallel_ranks();
    if (z.ranks() != ranks)
      return fail("shard step over " + std::to_string(z.ranks()) +
                  " ranks in a module of " + std::to_string(ranks) +
                  (tensor ? " tensor" : " data") + "-parallel rank(s)");
    const auto *buffers = z.buffers();
    const auto *elements = z.elements();
    uint32_t n = elements ? elements->size() : 0;
    if (n == 0 || !buffers || buffers->size() != 2 * n)
      return fail("shard step has " +
                  std::to_string(buffers ? buffers->size() : 0) +
                  " buffers for " + std::to_string(n) +
                  " values (expected an input and an output each)");
    if (!elementsAligned(buffers) || !elementsAligned(elements))
      return fail("has misaligned buffer references");
    const bool gather = z.kind() == fb::ShardKind::AllGather;
    uint64_t total = 0, shards = 0;
    for (uint32_t i = 0; i < n; ++i) {
      uint64_t whole = 0, shard = 0;
      if (!mulChecked(elements->Get(i), elementSize(z.dtype()), whole) ||
          !addChecked(total, whole, total))
        return fail("shard step value sizes overflow 63 bits");
      // ceil(e / N) elements, without overflowing e + N - 1.
      uint64_t e = elements->Get(i);
      if (tensor && e % ranks != 0)
        return fail("shard step value " + std::to_string(i) + " of " +
                    std::to_string(e) + " elements does not divide over " +
                    std::to_string(ranks) + " tensor-parallel ranks");
      shard = (e / ranks + (e % ranks != 0)) * elementSize(z.dtype());
      shards += shard;
      std::string value = "shard step value " + std::to_string(i);
      if (!checkRef(f, buffers->Get(i), gather ? shard : whole,
                    (value + " input").c_str(), false) ||
          !checkRef(f, buffers->Get(n + i), gather ? whole : shard,
                    (value + " output").c_str(), true))
        return false;
    }
    // A collective's bucket holds every rank's shards and this rank's.
    uint64_t bucket = 0;
    if (z.kind() != fb::ShardKind::RankShard &&
        !mulChecked(shards, uint64_t{ranks} + 1, bucket))
      return fail("shard step's bucket of " + std::to_string(ranks + 1) +
                  " times " + std::to_string(shards) +
                  " bytes overflows 63 bits");
    return true;
  }

  static bool aligned(const void *p) {
    return reinterpret_cast<uintptr_t>(p) % kBufferAlignment == 0;
  }

  /// The verifier checks a vector's length field but not that its elements
  /// are aligned for their type; a corrupt offset can leave 8-byte elements
  /// 4-byte aligned, and reading them would be undefined behavior. (An
  /// empty vector has nothing to read, and FlatBufferBuilder does not align
  /// it.)
  template <typename T>
  static bool elementsAligned(const flatbuffers::Vector<T> *v) {
    using Element = std::remove_const_t<std::remove_pointer_t<T>>;
    return !v || v->size() == 0 ||
           reinterpret_cast<uintptr_t>(v->Data()) % alignof(Element) == 0;
  }

  ModuleFile &m_;
  std::string context_;
};

dlc_status_t ModuleFile::load(AlignedBuffer buffer, const std::string &name,
                              std::unique_ptr<ModuleFile> &out) {
  auto invalid = [&](const std::string &why) {
    return makeStatus(DLC_DATA_LOSS,
                      name + ": not a valid dlc module (" + why + ")");
  };
  const auto *bytes = reinterpret_cast<const uint8_t *>(buffer.data());
  size_t size = buffer.size();
  if (size < 8)
    return invalid("only " + std::to_string(size) + " bytes");
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return invalid(std::to_string(size) +
                   " bytes, more than a FlatBuffers file can hold");
  if (!fb::ModuleBufferHasIdentifier(bytes)) {
    std::string id;
    for (int i = 4; i < 8; ++i) {
      char c[8];
      std::snprintf(c, sizeof(c),
                    bytes[i] >= 32 && bytes[i] < 127 ? "%c" : "\\x%02x",
                    bytes[i]);
      id += c;
    }
    return invalid("file identifier is '" + id + "', expected 'DLCM'");
  }
  flatbuffers::Verifier::Options options;
  // A large model's plan has many steps and every step is two tables.
  options.max_tables = 1u << 28;
  flatbuffers::Verifier verifier(bytes, size, options);
  if (!fb::VerifyModuleBuffer(verifier))
    return invalid("the FlatBuffers verifier rejects it: truncated or "
                   "corrupt");
  std::unique_ptr<ModuleFile> module(new ModuleFile());
  module->root_ = fb::GetModule(bytes);
  module->name_ = name;
  uint32_t version = module->root_->format_version();
  if (version != kModuleFormatVersion)
    return makeStatus(DLC_FAILED_PRECONDITION,
                      name + ": module format version " +
                          std::to_string(version) +
                          ", this runtime reads version " +
                          std::to_string(kModuleFormatVersion) +
                          " (compile the model again with a matching dlc)");
  ModuleChecker checker(*module);
  if (!checker.run())
    return invalid(checker.error_);
  module->buffer_ = std::move(buffer);
  out = std::move(module);
  return nullptr;
}

dlc_status_t ModuleFile::loadMemory(const void *data, size_t size,
                                    const std::string &name,
                                    std::unique_ptr<ModuleFile> &out) {
  if (!data && size)
    return makeStatus(DLC_INVALID_ARGUMENT, name + ": no data");
  AlignedBuffer buffer;
  if (!buffer.allocate(size, false))
    return makeStatus(DLC_RESOURCE_EXHAUSTED, name + ": out of memory for " +
                                                  std::to_string(size) +
                                                  " bytes");
  if (size)
    std::memcpy(buffer.data(), data, size);
  return load(std::move(buffer), name, out);
}

dlc_status_t ModuleFile::loadFile(const std::string &path,
                                  std::unique_ptr<ModuleFile> &out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return makeStatus(e == ENOENT ? DLC_NOT_FOUND : DLC_IO_ERROR,
                      path + ": cannot open: " + std::strerror(e));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return makeStatus(DLC_IO_ERROR,
                      path + ": cannot stat: " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return makeStatus(DLC_IO_ERROR, path + ": not a regular file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  AlignedBuffer buffer;
  if (!buffer.allocate(size, false)) {
    ::close(fd);
    return makeStatus(DLC_RESOURCE_EXHAUSTED, path + ": out of memory for " +
                                                  std::to_string(size) +
                                                  " bytes");
  }
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, buffer.data() + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      return makeStatus(DLC_IO_ERROR,
                        path + ": read failed: " +
                            (n == 0 ? std::string("file shrank while reading")
                                    : std::string(std::strerror(e))));
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return load(std::move(buffer), path, out);
}

} // namespace dlc
