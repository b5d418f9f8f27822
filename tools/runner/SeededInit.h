//===- SeededInit.h - Seeded random parameters ------------------*- C++ -*-===//
//
// A module compiled with --embed-parameters=false holds no weights: a real
// run takes them from a checkpoint (--resume), while a benchmark or a
// comparison of two devices only needs the same weights on both, which a
// seed gives without shipping hundreds of megabytes (DESIGN.md decision 8's
// "seeded initializer").
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_RUNNER_SEEDEDINIT_H
#define DLC_TOOLS_RUNNER_SEEDEDINIT_H

#include "tools/runner/Engine.h"

#include <cstdint>

namespace dlc::runner {

/// Sets every floating-point parameter global (role "param") of `engine`:
/// matrices and kernels (rank >= 2) to values drawn uniformly from
/// +-1/sqrt(fan_in), fan_in being the product of all dimensions but the
/// first (PyTorch's bound for Linear and Conv weights, whose first dimension
/// is the output; an initializer stored transposed gets the other bound);
/// vectors and scalars to 0, except names ending in "weight", which are
/// normalization scales, to 1 (random scales would make deep BatchNorm
/// networks' gradients explode, and their runs chaotic). Each global's
/// values depend only on `seed` and its name, so two modules of one model
/// (cpu and cuda) get the same weights; a tensor-parallel module's rank
/// `tensorRank` takes its slice of the whole's draw, so that T ranks start
/// where one process does. Throws for a parameter of a type it cannot fill.
void initializeParameters(Engine &engine, uint64_t seed, int tensorRank = 0);

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_SEEDEDINIT_H
