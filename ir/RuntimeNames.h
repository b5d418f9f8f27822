//===- RuntimeNames.h - The runtime support library's names ----*- C++ -*-===//
//
// The compiler (namespace mlir::dlc) builds on the runtime's support library
// (namespace ::dlc: tensors and dtypes, 16-bit floats, Philox, .npz files
// and checkpoints, the statuses they fail with, the module format's
// constants and embedding). Inside
// mlir::dlc the name `dlc` is the compiler's own namespace, so the runtime's
// names are brought in here, once, and compiler code uses them unqualified.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_IR_RUNTIMENAMES_H
#define DLC_IR_RUNTIMENAMES_H

#include "runtime/module/Embedded.h"
#include "runtime/module/Format.h"
#include "runtime/support/Checkpoint.h"
#include "runtime/support/Float16.h"
#include "runtime/support/Npz.h"
#include "runtime/support/OnnxExport.h"
#include "runtime/support/Philox.h"
#include "runtime/support/Status.h"
#include "runtime/support/Tensor.h"

/// The module format's FlatBuffers tables (runtime/module/dlcm.fbs), for the
/// files that include dlcm_generated.h.
namespace dlc::fb {}

namespace mlir::dlc {

using ::dlc::appendEmbeddedModule;
using ::dlc::appendOnnxInitializers;
using ::dlc::BFloat16;
using ::dlc::bfloat16AsBits;
using ::dlc::bfloat16FromBits;
using ::dlc::CheckpointContents;
using ::dlc::CheckpointSlot;
using ::dlc::dropoutKeeps;
using ::dlc::DType;
using ::dlc::dtypeName;
using ::dlc::dtypeSize;
using ::dlc::Half;
using ::dlc::isExportedRole;
using ::dlc::isFloat;
using ::dlc::kBufferAlignment;
using ::dlc::kModuleFormatVersion;
using ::dlc::matchCheckpoint;
using ::dlc::NamedTensors;
using ::dlc::narrowFromFloat;
using ::dlc::numElements;
using ::dlc::philox4x32;
using ::dlc::philoxUniform;
using ::dlc::readCheckpoint;
using ::dlc::readNpy;
using ::dlc::readNpz;
using ::dlc::StatusOwner;
using ::dlc::Tensor;
using ::dlc::writeCheckpoint;
using ::dlc::writeFileAtomically;
using ::dlc::writeNpz;
namespace fb = ::dlc::fb;

} // namespace mlir::dlc

#endif // DLC_IR_RUNTIMENAMES_H
