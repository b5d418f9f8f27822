#!/usr/bin/env python3
"""Faults of a data-parallel run (issue 15): a rank that stops answering or
dies makes the job end within --comm-timeout, no checkpoint is left half
written, and a run resumed from the last checkpoint goes on bit for bit.

    rank_fault_check.py --dlc-compile BIN --dlc-run BIN --mpirun BIN
        --work DIR [--zero]

The test MLP (tools/dlc-run/test/Inputs/mlp.onnxtxt) is compiled with --dp
2 and buckets of 32 bytes (each gradient a collective of its own, several
in flight when a rank stops: after the first times out, the others must
fail at once, not wait out the timeout each) and trained by `mpirun -np 2` with a checkpoint every CHECKPOINT_EVERY
steps and --comm-timeout TIMEOUT, on and on, until rank 1 gets a signal:

  stop  SIGSTOP: rank 1 is alive but answers nothing. Rank 0's next
        collective times out; it must fail with the message naming the
        all-reduce, its rank and rank 1, within TIMEOUT + SLACK seconds of
        the signal, and mpirun must then end the job (non-zero).
  kill  SIGKILL: mpirun itself sees rank 1 die and ends rank 0 at once;
        the job must end non-zero within TIMEOUT + SLACK seconds.

After each, the checkpoint folder holds only whole checkpoints (LATEST
names one that loads), and a run resumed from it for RESUMED_STEPS steps
logs the same bytes as a run that goes straight to the same step.
With --zero the module shards its optimizer state (dlc-compile --zero 1):
its checkpoints are sets of a head and one shard file per rank, written by
both ranks and committed together, and rank 0 may stall in a
reduce-scatter or all-gather as well.
SLACK (10 s) covers mpirun's own teardown on a busy 2-core machine. Prints
one line per case; exit code 1 on any failure.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
MODEL = os.path.join(ROOT, "tools", "dlc-run", "test", "Inputs", "mlp.onnxtxt")
MAKE_DATA = os.path.join(ROOT, "tools", "dlc-run", "test", "Inputs",
                         "make_train_data.py")
TIMEOUT = 3
SLACK = 10
CHECKPOINT_EVERY = 50
RESUMED_STEPS = 20
MPI_ENVIRONMENT = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}
# Rank 0 stalls in train_step's gradient all-reduce (float32) or in the
# runner's average of the logged values (float64), whichever it reached;
# with --zero, also in a reduce-scatter, an all-gather, or the ranks'
# agreement that a checkpoint's parts are written (float64).
TIMED_OUT = re.compile(r"dlc-run: error: (step \d+|.*: the checkpoint of "
                       r"step \d+): .*"
                       r"(all_reduce|reduce_scatter|all_gather) of \d+ "
                       r"float(32|64) elements \(collective \d+ of this "
                       r"communicator\) timed out after 3 s on rank 0 of 2; "
                       r"rank 1 did not join or answer")


class CheckError(Exception):
    pass


def rank_pids(mpirun_pid):
    """The ranks mpirun started, by OMPI_COMM_WORLD_RANK."""
    pids = {}
    children = subprocess.run(["pgrep", "-P", str(mpirun_pid)],
                              capture_output=True, text=True).stdout.split()
    for pid in children:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(item.split(b"=", 1) for item in
                           f.read().split(b"\0") if b"=" in item)
        except OSError:
            continue
        rank = env.get(b"OMPI_COMM_WORLD_RANK")
        if rank is not None:
            pids[int(rank)] = int(pid)
    return pids


def latest_step(folder):
    try:
        with open(os.path.join(folder, "LATEST")) as f:
            name = f.read().strip()
    except OSError:
        return None
    match = re.fullmatch(r"step-(\d+)(-[0-9a-f]{8})?\.dlcc", name)
    return int(match.group(1)) if match else None


def fault(args, module, data, folder, signum):
    """Trains until a checkpoint exists, signals rank 1 and returns the
    seconds the job took to end after it and rank 0's stderr."""
    err_path = os.path.join(args.work, f"fault-{signum}.err")
    with open(err_path, "w") as err:
        job = subprocess.Popen(
            [args.mpirun, "-np", "2", args.dlc_run, module, "--data", data,
             "--steps", "100000000", "--seed", "7", "--threads", "1",
             "--checkpoint-dir", folder, "--checkpoint-every",
             str(CHECKPOINT_EVERY), "--comm-timeout", str(TIMEOUT)],
            stdout=subprocess.DEVNULL, stderr=err,
            env=dict(os.environ, **MPI_ENVIRONMENT))
    try:
        deadline = time.monotonic() + 120
        while latest_step(folder) is None or len(rank_pids(job.pid)) < 2:
            if job.poll() is not None or time.monotonic() > deadline:
                raise CheckError("the job ended or saved no checkpoint "
                                 "before the signal")
            time.sleep(0.1)
        victim = rank_pids(job.pid)[1]
        signalled = time.monotonic()
        os.kill(victim, signum)
        try:
            code = job.wait(timeout=TIMEOUT + SLACK)
        except subprocess.TimeoutExpired:
            raise CheckError(f"the job still runs {TIMEOUT + SLACK} s after "
                             f"the signal")
        seconds = time.monotonic() - signalled
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
        for pid in rank_pids(job.pid).values():
            os.kill(pid, signal.SIGKILL)
    if code == 0:
        raise CheckError("the job exited 0 after a rank failed")
    with open(err_path) as f:
        return seconds, f.read()


def resume_matches(args, module, data, folder, tag):
    """Resumes the last checkpoint for RESUMED_STEPS steps and compares the
    log with a straight run to the same step."""
    step = latest_step(folder)
    target = step + RESUMED_STEPS
    straight = os.path.join(args.work, f"{tag}-straight.jsonl")
    resumed = os.path.join(args.work, f"{tag}-resumed.jsonl")
    for path in (straight, resumed):
        if os.path.exists(path):
            os.remove(path)
    common = ["--threads", "1", "--steps", str(target)]
    env = dict(os.environ, **MPI_ENVIRONMENT)
    for extra, log in ((["--data", data, "--seed", "7"], straight),
                       (["--data", data, "--resume", folder], resumed)):
        subprocess.run([args.mpirun, "-np", "2", args.dlc_run, module, *extra,
                        *common, "--log", log], check=True, env=env,
                       capture_output=True, timeout=300)
    with open(straight) as f:
        want = f.readlines()[step:]
    with open(resumed) as f:
        got = f.readlines()
    if got != want:
        raise CheckError(f"the run resumed at step {step} logs other "
                         f"numbers than the straight run")
    names = os.listdir(folder)
    leftovers = [n for n in names if not re.fullmatch(
        r"step-\d+(-[0-9a-f]{8}(\.shard-\d{4})?)?\.dlcc|LATEST", n)]
    if leftovers:
        raise CheckError(f"half-written files in {folder}: {leftovers}")
    # Every set on disk is whole: a head and, sharded, each rank's part.
    heads = {n[:-len(".dlcc")] for n in names
             if re.fullmatch(r"step-\d+(-[0-9a-f]{8})?\.dlcc", n)}
    for name in names:
        match = re.fullmatch(r"(step-\d+-[0-9a-f]{8})\.shard-\d{4}\.dlcc",
                             name)
        if match and match.group(1) not in heads:
            raise CheckError(f"{name} in {folder} belongs to no checkpoint")
    if args.zero:
        for head in heads:
            for rank in range(2):
                if f"{head}.shard-{rank:04d}.dlcc" not in names:
                    raise CheckError(f"{head} in {folder} lacks rank "
                                     f"{rank}'s part")
    return step


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dlc-compile", required=True)
    p.add_argument("--dlc-run", required=True)
    p.add_argument("--mpirun", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--zero", action="store_true",
                   help="shard the optimizer state (dlc-compile --zero 1)")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    data = os.path.join(args.work, "data.npz")
    subprocess.run([sys.executable, MAKE_DATA, "classes", data, "64"],
                   check=True)
    module = os.path.join(args.work, "dp2.dlcm")
    subprocess.run([args.dlc_compile, MODEL, "--train", "--batch-size", "8",
                    "--dp", "2", "--dp-bucket-mb", "0.00003",
                    "--optimizer", "adamw", "--lr", "0.01",
                    *(["--zero", "1"] if args.zero else []),
                    "-o", module], check=True)
    failed = 0
    for name, signum in (("stop", signal.SIGSTOP), ("kill", signal.SIGKILL)):
        folder = os.path.join(args.work, f"ckpt-{name}")
        subprocess.run(["rm", "-rf", folder], check=True)
        try:
            seconds, stderr = fault(args, module, data, folder, signum)
            if signum == signal.SIGSTOP and not TIMED_OUT.search(stderr):
                raise CheckError("rank 0 did not report the timed-out "
                                 "all-reduce: " + stderr.strip()[-400:])
            step = resume_matches(args, module, data, folder, name)
            print(f"PASS {name}: the job ended {seconds:.1f} s after the "
                  f"signal (timeout {TIMEOUT} s); resumed at step {step} "
                  f"bit for bit", flush=True)
        except (CheckError, subprocess.SubprocessError, OSError) as e:
            print(f"FAIL {name}: {e}", flush=True)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
