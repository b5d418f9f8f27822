//===- main.cpp - dlc-runner: the runner executable -----------------------===//
//
// Runs the module appended to its own file (a training binary made by
// dlc-compile --emit=exe), or, with none appended, the module named on its
// command line.
//
//===----------------------------------------------------------------------===//
#include "tools/runner/Runner.h"

int main(int argc, char **argv) {
  return dlc::runner::main(argc, argv, "/proc/self/exe");
}
