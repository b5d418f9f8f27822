//===- TensorBoard.h - Scalars as TensorBoard event files -------*- C++ -*-===//
//
// --tensorboard DIR writes an event file TensorBoard reads
// (`tensorboard --logdir DIR`): DIR/events.out.tfevents.<seconds>.<host>,
// a TFRecord stream (per record: the length as a little-endian uint64, its
// masked CRC-32C, the bytes, their masked CRC-32C) of Event messages
// compiled from tensorboard/event.proto. Each run writes a file of its own,
// so a resumed run's scalars join the first run's in TensorBoard's view;
// every record is written whole and flushed, so a reader never sees half
// of one.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_RUNNER_TENSORBOARD_H
#define DLC_TOOLS_RUNNER_TENSORBOARD_H

#include <cstdint>
#include <string>

namespace dlc::runner {

/// CRC-32C (Castagnoli) of `size` bytes, as TFRecord frames them.
uint32_t crc32c(const void *data, size_t size);

class TensorBoardWriter {
public:
  /// Creates DIR (and its parents) if needed and a new event file in it;
  /// throws an Error naming the file when it cannot.
  explicit TensorBoardWriter(const std::string &dir);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter &) = delete;
  TensorBoardWriter &operator=(const TensorBoardWriter &) = delete;

  /// Appends scalar `tag` = `value` at `step`. Throws on a write failure.
  void scalar(const std::string &tag, int64_t step, double value);

  const std::string &path() const { return path_; }

private:
  void writeRecord(const std::string &bytes);

  std::string path_;
  int fd_ = -1;
};

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_TENSORBOARD_H
