//===- Schedule.cpp - How generated CUDA kernels spread their work --------===//
#include "passes/fusion/Schedule.h"

#include <algorithm>

namespace mlir::dlc {

int64_t chooseReductionThreads(const ReductionShape &shape,
                               const DeviceModel &device) {
  constexpr int64_t kMinRowLength = 64, kWarp = 32, kMaxBlock = 1024;
  constexpr int64_t kMinBytesPerThread = 64, kMaxWaves = 4;
  if (shape.rows <= 0 || shape.rowLength < kMinRowLength)
    return 1;
  if (!shape.contiguous && shape.rows * kWarp > device.wave())
    return 1;
  int64_t perThread =
      std::max<int64_t>(1, kMinBytesPerThread /
                               std::max<int64_t>(1, shape.elementBytes));
  int64_t threads = kWarp;
  while (threads < kMaxBlock &&
         shape.rowLength >= 2 * threads * perThread &&
         shape.rows * 2 * threads <= kMaxWaves * device.wave())
    threads *= 2;
  return threads;
}

int64_t chooseReductionSplit(const ReductionShape &shape,
                             const DeviceModel &device) {
  constexpr int64_t kBlock = 1024, kMinBytesPerThread = 64;
  constexpr int64_t kBlocksPerMultiprocessor = 2, kMinStridedChunk = 8;
  if (!shape.contiguous && shape.rows > 0 && shape.rows < device.wave()) {
    int64_t chunks =
        std::min((device.wave() + shape.rows - 1) / shape.rows,
                 shape.rowLength / kMinStridedChunk);
    return std::max<int64_t>(1, chunks);
  }
  if (chooseReductionThreads(shape, device) < kBlock)
    return 1;
  int64_t wanted = kBlocksPerMultiprocessor * device.multiprocessors;
  if (shape.rows >= wanted)
    return 1;
  int64_t minChunk =
      kBlock * std::max<int64_t>(1, kMinBytesPerThread /
                                        std::max<int64_t>(1, shape.elementBytes));
  int64_t chunks = std::min((wanted + shape.rows - 1) / shape.rows,
                            shape.rowLength / minChunk);
  return std::max<int64_t>(1, chunks);
}

int64_t chooseScatterChunks(int64_t lines, int64_t targets, int64_t updates,
                            const DeviceModel &device) {
  constexpr int64_t kMaxIndexReadsPerElement = 64;
  if (lines <= 0 || targets <= 1)
    return 1;
  int64_t chunks = (device.wave() + lines - 1) / lines;
  chunks = std::min(chunks, targets);
  chunks = std::min(chunks, std::max<int64_t>(1, kMaxIndexReadsPerElement *
                                                     targets /
                                                     std::max<int64_t>(1, updates)));
  return std::max<int64_t>(1, chunks);
}

} // namespace mlir::dlc
