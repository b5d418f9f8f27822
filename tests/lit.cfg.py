# -*- Python -*-
# lit configuration for dlc's IR tests (the test/ folder of each stage).
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "dlc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtxt", ".test"]
config.test_source_root = config.dlc_source_dir
config.test_exec_root = os.path.join(config.dlc_binary_dir, "tests", "lit-out")
# Lit files live in each stage's test/ folder; skip everything else.
config.excludes = ["Inputs", "CMakeLists.txt", "build", "tests", "docs",
                   "scripts", "bench", "examples", "runtime", ".git"]
# The build folder may sit in the source tree under any name (DLC_BUILD_DIR,
# `cmake -B out`); its copies of test inputs and lit's own outputs are not
# tests. lit excludes by folder name, so exclude its top-level folder's.
_build_rel = os.path.relpath(os.path.realpath(config.dlc_binary_dir),
                             os.path.realpath(config.dlc_source_dir))
_build_top = _build_rel.split(os.sep)[0]
if _build_top not in (os.curdir, os.pardir):
    config.excludes.append(_build_top)

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tools = ["dlc-compile", "dlc-opt", "dlc-translate", "dlc-run"]
llvm_config.add_tool_substitutions(tools, [config.dlc_tools_dir])
# The reference scripts need Debian's python3 (numpy, onnx, torch).
config.substitutions.append(("%reference_python", "/usr/bin/python3"))

# NVRTC compiles CUDA kernels without a GPU; tests that need it (modules
# compiled for --target cuda) are unsupported where it cannot be loaded.
try:
    import ctypes
    for _name in ("libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                  "/usr/local/cuda/lib64/libnvrtc.so"):
        try:
            ctypes.CDLL(_name)
            config.available_features.add("nvrtc")
            break
        except OSError:
            pass
except ImportError:
    pass

# Data-parallel runs under the MPI launcher of a build with MPI (tests with
# REQUIRES: mpi); for Open MPI: as root, more ranks than cores, and without
# the cross-memory-attach copy containers refuse.
if config.dlc_have_mpi and config.dlc_mpiexec:
    config.available_features.add("mpi")
    config.substitutions.append((
        "%mpirun",
        "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
        "OMPI_MCA_rmaps_base_oversubscribe=1 "
        "OMPI_MCA_btl_vader_single_copy_mechanism=none " +
        config.dlc_mpiexec))
