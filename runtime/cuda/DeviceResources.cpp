//===- DeviceResources.cpp - Owners of driver objects ---------------------===//
#include "runtime/cuda/DeviceResources.h"

#include "runtime/core/Status.h"

#include <utility>

namespace dlc::cuda {

DeviceBlock &DeviceBlock::operator=(DeviceBlock &&other) noexcept {
  if (this != &other) {
    reset();
    device_ = std::exchange(other.device_, nullptr);
    address_ = std::exchange(other.address_, 0);
  }
  return *this;
}

dlc_status_t DeviceBlock::allocate(CudaDevice &device, uint64_t bytes,
                                   const std::string &what) {
  reset();
  uint64_t address = 0;
  DLC_RETURN_IF_ERROR(
      prefixStatus(device.allocator().allocate(bytes, address), what));
  device_ = &device;
  address_ = address;
  return nullptr;
}

void DeviceBlock::reset() {
  if (device_)
    dlc_status_free(device_->allocator().free(address_));
  device_ = nullptr;
  address_ = 0;
}

dlc_status_t PinnedBuffer::allocate(const Driver &driver, size_t bytes) {
  reset();
  void *data = nullptr;
  // At least one byte: a function without inputs still has a (tiny)
  // staging buffer, which keeps every call on one path.
  DLC_RETURN_IF_ERROR(driver.check(
      driver.cuMemHostAlloc(&data, bytes ? bytes : 1, 0), "cuMemHostAlloc"));
  driver_ = &driver;
  handle_ = static_cast<std::byte *>(data);
  return nullptr;
}

dlc_status_t Stream::create(const Driver &driver) {
  reset();
  DLC_RETURN_IF_ERROR(
      driver.check(driver.cuStreamCreate(&handle_, CU_STREAM_NON_BLOCKING),
                   "cuStreamCreate"));
  driver_ = &driver;
  return nullptr;
}

dlc_status_t Event::create(const Driver &driver, bool timing) {
  reset();
  DLC_RETURN_IF_ERROR(driver.check(
      driver.cuEventCreate(&handle_,
                           timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING),
      "cuEventCreate"));
  driver_ = &driver;
  return nullptr;
}

dlc_status_t KernelModule::load(const CudaDevice &device,
                                const ModuleFile &module) {
  const auto *names = module.root().kernels();
  if (!names || !names->size())
    return nullptr;
  driver_ = &device.driver();
  const fb::Module &root = module.root();
  std::vector<std::string> archs;
  if (const auto *binaries = root.cuda_binaries())
    for (const fb::CudaBinary *b : *binaries)
      archs.push_back(b->arch() ? b->arch()->str() : "");
  std::string ptx = root.cuda_ptx() ? root.cuda_ptx()->str() : "";
  Architecture arch = device.architecture();
  std::string deviceArch = arch.name();
  int chosen = chooseKernelImage(archs, ptx, arch);
  if (chosen == -2) {
    std::string has;
    for (const std::string &a : archs)
      has += (has.empty() ? "" : ", ") + a;
    if (!ptx.empty())
      has += (has.empty() ? "PTX for " : ", PTX for ") + ptxTarget(ptx);
    return makeStatus(DLC_FAILED_PRECONDITION,
                      module.name() + ": no kernel image runs on " +
                          device.spec() + " (" + device.name() + ", " +
                          deviceArch + "): the module has " +
                          (has.empty() ? "none" : has) +
                          " (dlc-compile --cuda-arch=" + deviceArch + ")");
  }
  const void *image = nullptr;
  if (chosen >= 0) {
    const auto *cubin = root.cuda_binaries()->Get(chosen)->cubin();
    if (!cubin || !cubin->size())
      return makeStatus(DLC_DATA_LOSS, module.name() + ": the " +
                                           archs[chosen] + " cubin is empty");
    image = cubin->data();
    image_ = archs[chosen] + " cubin";
  } else {
    // cuModuleLoadDataEx reads PTX as a NUL-terminated string, which the
    // FlatBuffers string is.
    image = root.cuda_ptx()->c_str();
    image_ =
        "PTX for " + ptxTarget(ptx) + " (JIT-compiled for " + deviceArch + ")";
  }
  // The JIT's error log, for PTX the driver cannot compile.
  char log[4096] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log) - 1)};
  CUresult loaded =
      driver_->cuModuleLoadDataEx(&handle_, image, 2, options, values);
  if (loaded != CUDA_SUCCESS) {
    handle_ = nullptr;
    return prefixStatus(
        driver_->check(loaded, "cuModuleLoadDataEx"),
        module.name() + ": loading its " + image_ +
            (log[0] ? std::string(" (") + log + ")" : std::string()));
  }
  for (const fb::Kernel *k : *names) {
    std::string name = k->name() ? k->name()->str() : "";
    Kernel kernel;
    DLC_RETURN_IF_ERROR(driver_->check(
        driver_->cuModuleGetFunction(&kernel.function, handle_, name.c_str()),
        module.name() + ": kernel '" + name + "': cuModuleGetFunction"));
    int minGrid = 0, block = 0;
    DLC_RETURN_IF_ERROR(
        driver_->check(driver_->cuOccupancyMaxPotentialBlockSize(
                           &minGrid, &block, kernel.function, nullptr, 0, 0),
                       module.name() + ": kernel '" + name +
                           "': cuOccupancyMaxPotentialBlockSize"));
    // Warp-cooperative kernels need whole warps per block.
    kernel.blockSize = std::max(32, block / 32 * 32);
    kernel.residentBlocks = std::max(1, minGrid);
    kernels_.push_back(kernel);
  }
  return nullptr;
}

} // namespace dlc::cuda
