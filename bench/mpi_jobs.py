"""What the CPU-rank benchmarks share: the Open MPI settings of the build
machine and a command runner that stops the benchmark on a failure."""

import os
import subprocess
import sys

# Open MPI as root, more ranks than the build machine's 2 cores, and no
# cross-memory-attach single copy (refused inside containers).
MPI_ENVIRONMENT = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}


def run(cmd, extra=None):
    """Runs `cmd` under MPI_ENVIRONMENT (and `extra`); exits with its
    standard error when it fails, else returns the completed process."""
    proc = subprocess.run([str(c) for c in cmd], capture_output=True,
                          text=True,
                          env=dict(os.environ, **MPI_ENVIRONMENT,
                                   **(extra or {})))
    if proc.returncode != 0:
        sys.exit(f"{' '.join(str(c) for c in cmd)} failed:\n{proc.stderr}")
    return proc
