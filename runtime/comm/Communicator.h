//===- Communicator.h - Collectives between the ranks of a job --*- C++ -*-===//
//
// Data parallelism (DESIGN.md decision 9) runs one process per device,
// started by an existing launcher (mpirun, srun); the ranks exchange
// gradients and parameters through a Communicator. This interface is what
// the C API's dlc_comm_t wraps and what plan-level collectives will call.
//
// Every collective works in place on host memory, over float32, float64,
// bfloat16 and float16 (broadcast and all_gather move any dtype's bytes).
// 16-bit data is summed in float32 and rounded to its own type once at the
// end, so that N ranks' sum is as exact as float32 allows, not rounded N-1
// times; a mean is that float32 sum divided by the number of ranks, then
// rounded.
//
// Every call returns a dlc_status_t. A collective that has not completed
// `timeout()` seconds after this rank entered it fails with
// DLC_DEADLINE_EXCEEDED naming the collective, its size and, where the
// implementation can tell, the ranks that had not joined; the communicator
// is then unusable (its collectives may be half-done on other ranks) and
// every later call is DLC_FAILED_PRECONDITION.
//
// The public calls check their arguments once, here, and pass valid ones on
// to the implementation's do* functions, so each implementation only moves
// data. Every rank must call the same collectives in the same order with
// the same counts, dtype, op and root; a mismatch is undefined (MPI's own
// rule), not diagnosed. So the checks come in two kinds:
// - rank-independent ones (dtype, op, root, the counts' values) reject the
//   call identically on every rank: no rank enters the collective and the
//   communicator stays usable;
// - rank-local ones (a NULL buffer or counts array, overlapping or
//   misplaced in-place buffers) depend on this rank's own pointers: this
//   rank skips a collective the others may enter, which would silently
//   pair its next collective with their current one. They make the
//   communicator failed instead, like a timeout (later calls
//   DLC_FAILED_PRECONDITION), and the other ranks time out cleanly.
// Any error from the implementation (an MPI error, a timeout, a C++
// exception such as running out of memory) fails the communicator too.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_COMM_COMMUNICATOR_H
#define DLC_RUNTIME_COMM_COMMUNICATOR_H

#include "dlc/runtime.h"

#include <cstddef>
#include <memory>
#include <string>

namespace dlc {

/// What a launcher told this process through its environment.
struct LaunchInfo {
  /// "Open MPI", "PMI", "Slurm"; empty without a launcher.
  std::string launcher;
  int rank = 0;
  int size = 1;
  /// The rank among this machine's ranks (which GPU it takes), -1 when the
  /// launcher does not say.
  int localRank = -1;
  /// How many ranks run on this machine (which share its cores), -1 when
  /// the launcher does not say.
  int localSize = -1;
};

/// Reads the launcher's variables: Open MPI's OMPI_COMM_WORLD_SIZE, _RANK,
/// _LOCAL_RANK, _LOCAL_SIZE; PMI_SIZE, PMI_RANK (MPICH's Hydra, Intel MPI;
/// local rank and size MPI_LOCALRANKID, MPI_LOCALNRANKS); Slurm's
/// SLURM_STEP_NUM_TASKS, SLURM_PROCID, SLURM_LOCALID,
/// SLURM_STEP_TASKS_PER_NODE. Slurm's size is the job step's, which only srun
/// sets: a batch script run without srun also has SLURM_NTASKS and
/// SLURM_PROCID, but is one process, not rank 0 of SLURM_NTASKS. The first
/// launcher whose size and rank are both set and valid wins; mpi communicators
/// still trust MPI's own rank and size.
LaunchInfo detectLaunch();

class Communicator {
public:
  virtual ~Communicator() = default;

  /// "local" or "mpi".
  virtual const char *kind() const = 0;
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// This rank's index among the ranks on its machine (0 without a
  /// launcher), which picks its GPU.
  int localRank() const { return localRank_; }
  /// Seconds a collective may take on this rank before it fails.
  double timeout() const { return timeout_; }

  /// Reduces `count` elements of `data` over all ranks, in place: their sum,
  /// or their mean (the sum divided by size()).
  dlc_status_t allReduce(void *data, size_t count, dlc_dtype_t dtype,
                         dlc_reduce_op_t op);
  /// Reduces `send` over all ranks and leaves block r of the result on rank
  /// r: `counts` has size() entries (the same on every rank), `send` holds
  /// their sum of elements, block r starts after counts[0..r-1] and `recv`
  /// receives counts[rank()] elements. The buffers must not overlap.
  dlc_status_t reduceScatter(const void *send, void *recv, const size_t *counts,
                             dlc_dtype_t dtype, dlc_reduce_op_t op);
  /// Concatenates every rank's `send` (counts[r] elements on rank r) into
  /// `recv` on every rank, in rank order. `send` may be this rank's own
  /// block of `recv` (in place); otherwise they must not overlap.
  dlc_status_t allGather(const void *send, void *recv, const size_t *counts,
                         dlc_dtype_t dtype);
  /// Copies `root`'s `count` elements of `data` to every rank's `data`.
  dlc_status_t broadcast(void *data, size_t count, dlc_dtype_t dtype, int root);
  /// Returns once every rank has entered it.
  dlc_status_t barrier();
  /// Sends `count` elements of `data` to rank `peer`, whose matching recv()
  /// takes them, and returns once `data` may be reused; recv() receives
  /// `count` elements from `peer`'s matching send() into `data`. Pipeline
  /// stages hand each other activations and gradients this way. Messages
  /// between two ranks arrive in the order they were sent; as collectives,
  /// a transfer not done within timeout() fails the communicator. `peer`
  /// must be another rank (a rank-local check: a bad one fails the
  /// communicator).
  dlc_status_t send(const void *data, size_t count, dlc_dtype_t dtype,
                    int peer);
  dlc_status_t recv(void *data, size_t count, dlc_dtype_t dtype, int peer);
  /// send() without waiting: `data` must stay as it is until waitSends()
  /// returns, which waits for every send started since the last. A rank
  /// that only blocks in recv() and collectives, never in its sends, cannot
  /// be left waiting for a peer that is itself blocked sending to it (a
  /// large send completes only once its receive is posted): pipeline
  /// stages send each other activations and gradients both ways.
  dlc_status_t startSend(const void *data, size_t count, dlc_dtype_t dtype,
                         int peer);
  dlc_status_t waitSends();
  /// recv() without waiting: `data` is this receive's until waitRecv(`id`)
  /// returns; `id` names it. Receives are waited for in the order they
  /// were started.
  dlc_status_t startRecv(void *data, size_t count, dlc_dtype_t dtype,
                         int peer, uint64_t &id);
  dlc_status_t waitRecv(uint64_t id);
  /// Moves the started sends and receives along without waiting (on the
  /// thread that calls the communicator); false once none is left in
  /// flight.
  virtual bool progressTransfers() { return false; }
  /// Splits the ranks into groups, as MPI_Comm_split: every rank calls it,
  /// and the ranks passing one `color` (0 or more) form the communicator
  /// `out`, ranked by `key`, ties by rank(). `out` has this communicator's
  /// timeout and localRank() (a GPU stays its rank's), and lives apart from
  /// it. The colors are all-gathered first, within the timeout, so a rank
  /// that never splits fails the others instead of hanging them. MPI's
  /// split itself cannot time out: a rank that fails just as the gathering
  /// ends leaves the others blocked in it (abort() ends them). Tensor and
  /// pipeline parallelism make their groups this way.
  dlc_status_t split(int color, int key, std::unique_ptr<Communicator> &out);
  /// Ends every rank of the job at once with exit code `code` (a rank that
  /// failed alone, so that the others do not wait out their timeout in a
  /// collective it will never join). A communicator of one process exits
  /// it. Does not return.
  [[noreturn]] virtual void abort(int code) = 0;

protected:
  Communicator(int rank, int size, int localRank, double timeout)
      : rank_(rank), size_(size), localRank_(localRank), timeout_(timeout) {}

  /// The collectives on checked arguments (counts within what the
  /// implementation takes, see maxCount()).
  virtual dlc_status_t doAllReduce(void *data, size_t count, dlc_dtype_t dtype,
                                   dlc_reduce_op_t op) = 0;
  virtual dlc_status_t doReduceScatter(const void *send, void *recv,
                                       const size_t *counts, dlc_dtype_t dtype,
                                       dlc_reduce_op_t op) = 0;
  virtual dlc_status_t doAllGather(const void *send, void *recv,
                                   const size_t *counts, dlc_dtype_t dtype) = 0;
  virtual dlc_status_t doBroadcast(void *data, size_t count, dlc_dtype_t dtype,
                                   int root) = 0;
  virtual dlc_status_t doBarrier() = 0;
  /// The transfers on checked arguments; a communicator without them (one
  /// of a single rank never gets this far) is DLC_UNIMPLEMENTED.
  virtual dlc_status_t doSend(const void *data, size_t count, dlc_dtype_t dtype,
                              int peer);
  virtual dlc_status_t doRecv(void *data, size_t count, dlc_dtype_t dtype,
                              int peer);
  /// By default a started send completes at once (doSend).
  virtual dlc_status_t doStartSend(const void *data, size_t count,
                                   dlc_dtype_t dtype, int peer) {
    return doSend(data, count, dtype, peer);
  }
  virtual dlc_status_t doWaitSends() { return nullptr; }
  /// By default a started receive completes at once (doRecv).
  virtual dlc_status_t doStartRecv(void *data, size_t count, dlc_dtype_t dtype,
                                   int peer, uint64_t &) {
    return doRecv(data, count, dtype, peer);
  }
  virtual dlc_status_t doWaitRecv(uint64_t) { return nullptr; }
  /// The split of every rank into groups, once split() found that this
  /// rank's group (of `color`, ordered by `key`) has `size` ranks and
  /// ranks it `rank`.
  virtual dlc_status_t doSplit(int color, int key, int rank, int size,
                               std::unique_ptr<Communicator> &out) = 0;
  /// The most elements one collective may move (MPI counts are int).
  virtual size_t maxCount() const = 0;

  /// Marks the communicator unusable after `status` (a timeout, an MPI
  /// error, a rank-local rejection) and returns `status`; NULL passes.
  dlc_status_t fail(dlc_status_t status);
  bool failed() const { return !failure_.empty(); }

private:
  /// DLC_FAILED_PRECONDITION after an earlier failure.
  dlc_status_t checkUsable(const char *collective) const;
  /// The rank-independent check of per-rank `counts` (size() entries):
  /// sets `total` to their sum, which must be at most maxCount().
  dlc_status_t checkTotal(const char *collective, const size_t *counts,
                          size_t &total) const;
  /// The rank-local checks of reduce_scatter's (`gather` false) or
  /// all_gather's buffers: present, and apart unless all_gather is in place.
  dlc_status_t checkBuffers(const char *collective, const void *send,
                            const void *recv, const size_t *counts,
                            size_t total, dlc_dtype_t dtype, bool gather) const;
  /// Runs the implementation's collective, turning a C++ exception into a
  /// status; any error marks the communicator failed.
  template <typename Body> dlc_status_t run(const char *collective, Body body);

  int rank_;
  int size_;
  int localRank_;
  double timeout_;
  /// The message of the failure that made this communicator unusable.
  std::string failure_;
};

/// Whether `dtype` is one of the four a collective can reduce.
bool isReducibleDtype(dlc_dtype_t dtype);

/// NumPy's name of `dtype` ("float32"), or "unknown dtype N".
std::string dtypeName(dlc_dtype_t dtype);

/// The checks of a reduction's dtype and op (DLC_INVALID_ARGUMENT naming
/// `collective`), shared by every communicator's all_reduce and
/// reduce_scatter, host or device.
dlc_status_t checkReduction(const char *collective, dlc_dtype_t dtype,
                            dlc_reduce_op_t op);

/// The rank-local check of a buffer of `count` elements at `data`, named
/// `name` in the message: DLC_INVALID_ARGUMENT when it is NULL but `count`
/// is not 0.
dlc_status_t checkPointer(const char *collective, const char *name,
                          const void *data, size_t count);

/// Opens a communicator: `kind` is "local" (this process alone, rank 0 of
/// 1), "mpi" (every rank of the MPI job; MPI is initialized if the host
/// program has not done it) or "auto" (mpi under a launcher of more than one
/// rank, local otherwise). `timeout` is in seconds, positive (infinity
/// waits forever).
dlc_status_t openCommunicator(const std::string &kind, double timeout,
                              std::unique_ptr<Communicator> &out);

/// A communicator of this process alone (comm/LocalCommunicator.cpp).
std::unique_ptr<Communicator> createLocalCommunicator(double timeout);

/// An MPI communicator over MPI_COMM_WORLD (comm/MpiCommunicator.cpp, or
/// comm/NoMpi.cpp's DLC_UNAVAILABLE in a build without MPI). `launch`
/// supplies the local rank when the launcher sets one.
dlc_status_t createMpiCommunicator(const LaunchInfo &launch, double timeout,
                                   std::unique_ptr<Communicator> &out);

} // namespace dlc

/// The object behind dlc_comm_t.
struct dlc_comm_s {
  std::unique_ptr<dlc::Communicator> comm;
};

#endif // DLC_RUNTIME_COMM_COMMUNICATOR_H
