/*===- dlc/runtime.h - The dlc runtime's C API ------------------------------===
 *
 * Loads a compiled module (.dlcm, written by dlc-compile), opens a session
 * on a device and runs the module's functions: `train_step` (one optimizer
 * step), `forward` (inference), and any other function compiled into it.
 * The session owns the module's globals (parameters, BatchNorm state,
 * optimizer state, the step counter, hyperparameters): a call reads them
 * and writes their next values back, so a caller only passes the batch.
 * Communicators connect the processes (ranks) of a data-parallel job.
 *
 * Conventions (as IREE's runtime API):
 *  - Every fallible call returns a dlc_status_t: NULL is success, anything
 *    else an error the caller owns and frees with dlc_status_free.
 *  - Objects are opaque handles made by dlc_X_create/load/open, released
 *    with dlc_X_release. A session keeps its module and device alive.
 *  - The library never exits or aborts on bad input.
 *  - Not thread-safe per session; different sessions are independent.
 *
 *===----------------------------------------------------------------------===*/
#ifndef DLC_RUNTIME_H
#define DLC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===--- Status -----------------------------------------------------------===*/

typedef enum dlc_status_code_e {
  DLC_OK = 0,
  DLC_INVALID_ARGUMENT = 1,    /* a bad value from the caller */
  DLC_NOT_FOUND = 2,           /* a missing file, function, global, key */
  DLC_DATA_LOSS = 3,           /* a corrupt or truncated module/checkpoint */
  DLC_FAILED_PRECONDITION = 4, /* e.g. a checkpoint from another model */
  DLC_RESOURCE_EXHAUSTED = 5,  /* out of memory, disk full */
  DLC_UNIMPLEMENTED = 6,       /* e.g. a module for a target not built in */
  DLC_UNAVAILABLE = 7,         /* e.g. no such device */
  DLC_IO_ERROR = 8,            /* a read/write/rename that failed */
  DLC_INTERNAL = 9,            /* a bug in dlc */
  DLC_DEADLINE_EXCEEDED = 10,  /* e.g. a collective some rank did not join */
} dlc_status_code_t;

typedef struct dlc_status_s *dlc_status_t;

/** The status's code; DLC_OK for NULL. */
dlc_status_code_t dlc_status_code(dlc_status_t status);
/** One line naming the cause (the file, the function, the global, the
 * argument); "" for NULL. Valid until the status is freed. */
const char *dlc_status_message(dlc_status_t status);
void dlc_status_free(dlc_status_t status);

/*===--- Tensors ----------------------------------------------------------===*/

/** Element types, in the order of the module schema's ElementType. */
typedef enum dlc_dtype_e {
  DLC_BOOL, DLC_I8, DLC_I16, DLC_I32, DLC_I64, DLC_U8, DLC_U16, DLC_U32,
  DLC_U64, DLC_F16, DLC_BF16, DLC_F32, DLC_F64,
} dlc_dtype_t;

/** NumPy's name of a dtype ("float32"). */
const char *dlc_dtype_name(dlc_dtype_t dtype);
size_t dlc_dtype_size(dlc_dtype_t dtype);

/** A caller's dense row-major host tensor; the caller owns `data`. */
typedef struct dlc_tensor_s {
  dlc_dtype_t dtype;
  int32_t rank;
  const int64_t *shape;
  void *data;
} dlc_tensor_t;

/** What a module says about one argument, result or global. The strings
 * and shape live as long as the module. */
typedef struct dlc_value_info_s {
  const char *name; /* the ONNX input/output/initializer name */
  const char *role; /* "input", "label", "param", "state", "loss", ... */
  dlc_dtype_t dtype;
  int32_t rank;
  const int64_t *shape;
  int32_t global; /* the global it reads or updates, or -1 */
  /* A class-index label: the number of classes (0 when not a class label)
   * and the index meaning "no class"; a caller can reject bad labels before
   * a call. */
  int64_t num_classes;
  int64_t ignore_index;
} dlc_value_info_t;

/*===--- Modules ----------------------------------------------------------===*/

typedef struct dlc_module_s dlc_module_t;

/** Reads and verifies a .dlcm file (schema, version, every reference in
 * its plans). A truncated or corrupt file is DLC_DATA_LOSS naming it. */
dlc_status_t dlc_module_load_file(const char *path, dlc_module_t **out);
/** The same from memory (copied; `name` is used in messages). */
dlc_status_t dlc_module_load_memory(const void *data, size_t size,
                                    const char *name, dlc_module_t **out);
void dlc_module_release(dlc_module_t *module);

/** "cpu" or "cuda". */
const char *dlc_module_target(const dlc_module_t *module);
/** The model file's name the module was compiled from. */
const char *dlc_module_model_name(const dlc_module_t *module);
/** The data-parallel ranks the module was compiled for (dlc-compile --dp
 * N): N processes run it, each on its share of every global batch, with a
 * communicator of N ranks (dlc_session_set_comm). 1 when not partitioned
 * (0 for NULL). */
int32_t dlc_module_data_parallel_ranks(const dlc_module_t *module);
/** The ranks of each tensor-parallel group the module was compiled for
 * (dlc-compile --tp T): a job runs it on its data-parallel ranks times T
 * processes, rank r being tensor rank r % T of data-parallel replica r / T.
 * 1 when not partitioned (0 for NULL). */
int32_t dlc_module_tensor_parallel_ranks(const dlc_module_t *module);
/** The pipeline stages the module was cut into (dlc-compile --pp P): a job
 * runs it on its data-parallel ranks times P processes, rank r running
 * stage r / D for data-parallel rank r % D. 1 when not cut (0 for NULL). */
int32_t dlc_module_pipeline_stages(const dlc_module_t *module);
/** The globals whose value each rank holds its own shard of (dlc-compile
 * --zero 1: the optimizer state), 0 when none (or for NULL). Each rank's
 * dlc_session_get_global of one reads its own shard. */
int32_t dlc_module_sharded_globals(const dlc_module_t *module);

size_t dlc_module_global_count(const dlc_module_t *module);
dlc_status_t dlc_module_global_info(const dlc_module_t *module, size_t index,
                                    dlc_value_info_t *out);
/** The shape of sharded global `index`'s whole value, whose flattened
 * elements [r s, (r + 1) s) data-parallel replica r holds (s = its shard's
 * elements; zeros past the end; with tensor parallelism, the whole is the
 * tensor rank's slice): `*rank` dimensions at `*shape`, valid while the
 * module lives. DLC_INVALID_ARGUMENT for a global that is not sharded,
 * DLC_UNAVAILABLE for a module compiled before dlc recorded it. */
dlc_status_t dlc_module_global_whole_shape(const dlc_module_t *module,
                                           size_t index, int32_t *rank,
                                           const int64_t **shape);

/** The dimension along which each tensor-parallel rank holds its own
 * slice of global `index` (tensor rank t of T holds slice t of T equal ones;
 * dlc_session_get_global reads the rank's; for a sharded global, a
 * dimension of its whole shape, the slice it holds a shard of), or -1 when
 * every rank holds it whole (or for NULL or an index out of range). */
int32_t dlc_module_global_tp_split(const dlc_module_t *module, size_t index);
/** The equal blocks along that dimension, each split so (3 for a fused QKV
 * projection: a slice is the rank's part of Q, then of K, then of V); 1
 * for a plain split, a global held whole, NULL or an index out of range. */
int32_t dlc_module_global_tp_split_groups(const dlc_module_t *module,
                                          size_t index);

size_t dlc_module_function_count(const dlc_module_t *module);
/** Function `index`'s name ("forward", "train_step"). */
const char *dlc_module_function_name(const dlc_module_t *module,
                                     size_t index);
/** The caller-facing signature of a function: its inputs are the
 * arguments that read no global, its outputs the results that update no
 * global, each in the module's order. */
dlc_status_t dlc_module_function_signature(const dlc_module_t *module,
                                           const char *function,
                                           size_t *num_inputs,
                                           size_t *num_outputs);
dlc_status_t dlc_module_function_input(const dlc_module_t *module,
                                       const char *function, size_t index,
                                       dlc_value_info_t *out);
dlc_status_t dlc_module_function_output(const dlc_module_t *module,
                                        const char *function, size_t index,
                                        dlc_value_info_t *out);

/*===--- Devices ----------------------------------------------------------===*/

typedef struct dlc_device_s dlc_device_t;

/** "cpu" (a thread pool of `num_threads`; 0 = one per core this process
 * may run on, at most the machine's cores divided among the ranks a
 * launcher started on it), or "cuda" /
 * "cuda:N" (GPU N, "cuda" = 0; num_threads is ignored). An unknown spec is
 * DLC_INVALID_ARGUMENT; a GPU that cannot be opened (no driver, one older
 * than dlc's CUDA, no such device, a build without CUDA) is
 * DLC_UNAVAILABLE with the reason. */
dlc_status_t dlc_device_create(const char *spec, int32_t num_threads,
                               dlc_device_t **out);
void dlc_device_release(dlc_device_t *device);

/*===--- Sessions ---------------------------------------------------------===*/

typedef struct dlc_session_s dlc_session_t;

/** Opens a session: allocates the globals (initialized from the module's
 * initial values when it has them, zeros otherwise) and each function's
 * arena on the device. */
dlc_status_t dlc_session_create(dlc_module_t *module, dlc_device_t *device,
                                dlc_session_t **out);
void dlc_session_release(dlc_session_t *session);

/** Runs `function`: `inputs` and `outputs` are its caller-facing inputs and
 * outputs (dlc_module_function_signature), checked against their dtypes
 * and shapes (a mismatch names the input and what was expected). Outputs
 * may share memory with no input and no other output. Globals are read and
 * updated in place. With `inputs` NULL and `num_inputs` 0 the call takes
 * the oldest inputs dlc_session_stage_inputs handed over for `function`
 * (DLC_FAILED_PRECONDITION when there are none); staged inputs are used up
 * once the call's outputs pass their checks, whether or not it then
 * succeeds (a call rejected for its arguments leaves them staged). A call
 * that brings its own inputs while two calls' inputs wait is
 * DLC_FAILED_PRECONDITION. */
dlc_status_t dlc_session_call(dlc_session_t *session, const char *function,
                              const dlc_tensor_t *inputs, size_t num_inputs,
                              const dlc_tensor_t *outputs,
                              size_t num_outputs);

/** Hands the inputs of a later call of `function` (one that takes inputs)
 * to the session ahead of it: they are checked and copied now (the
 * caller's buffers may be reused when this returns), to device memory on a
 * stream of their own on a GPU, so that staging the next batch before
 * calling the current step overlaps the copy with that step's computation.
 * At most two calls' inputs per function wait at a time
 * (DLC_FAILED_PRECONDITION beyond). */
dlc_status_t dlc_session_stage_inputs(dlc_session_t *session,
                                      const char *function,
                                      const dlc_tensor_t *inputs,
                                      size_t num_inputs);

/** Copies a global's current value out of / into the session; `bytes` must
 * be its exact size. Unknown names are DLC_NOT_FOUND. A module trained in
 * mixed precision keeps 16-bit copies of its parameters (role
 * "weight_copy"): setting a parameter updates its copies, and setting a
 * copy itself is DLC_INVALID_ARGUMENT. */
dlc_status_t dlc_session_get_global(dlc_session_t *session, const char *name,
                                    void *data, size_t bytes);
dlc_status_t dlc_session_set_global(dlc_session_t *session, const char *name,
                                    const void *data, size_t bytes);

/** Turns per-step timing of every call on (nonzero) or off (the default;
 * on costs two clock reads per step of a plan). */
dlc_status_t dlc_session_set_profiling(dlc_session_t *session,
                                       int32_t enabled);
/** The seconds the last call waited, idle, for its collectives to finish
 * (a partitioned module's all-reduces, a pipeline stage's transfers; 0
 * without them); the rest of the call was busy. DLC_UNAVAILABLE where the
 * device does not measure it (CUDA, whose collectives run on a stream of their
 * own). */
dlc_status_t dlc_session_collective_wait(const dlc_session_t *session,
                                         double *seconds);
/** A module cut into pipeline stages: each stage's ranks update only the
 * globals of their stage. This collective of every rank copies each such
 * global from its stage to every other rank, so that dlc_session_get_global
 * reads the whole trained model anywhere (call it before a checkpoint or an
 * export; a call of a function that runs whole, such as forward, gathers
 * first by itself). Nothing to do for other modules. */
dlc_status_t dlc_session_gather_stages(dlc_session_t *session);
/** Writes what profiling has measured so far to `path`: one JSON object a
 * line per step of each function that ran ("function", "kind", "step" (its
 * number and ONNX node), "calls", "ms", "ms_per_call"), slowest first. */
dlc_status_t dlc_session_write_profile(dlc_session_t *session,
                                       const char *path);

/*===--- Checkpoints and export -------------------------------------------===*/

/** Integer metadata saved beside the globals (a runner's data position,
 * epoch, shuffle seed). */
typedef struct dlc_metadata_s dlc_metadata_t;
dlc_status_t dlc_metadata_create(dlc_metadata_t **out);
void dlc_metadata_release(dlc_metadata_t *metadata);
dlc_status_t dlc_metadata_set(dlc_metadata_t *metadata, const char *key,
                              int64_t value);
/** DLC_NOT_FOUND when the key is absent. */
dlc_status_t dlc_metadata_get(const dlc_metadata_t *metadata, const char *key,
                              int64_t *value);
/** The number of keys, and entry `index` of them in byte order of the keys
 * (DLC_INVALID_ARGUMENT past the last): a caller can list what a checkpoint
 * holds without knowing its keys. `*key` lives as long as `metadata` is
 * not changed. */
size_t dlc_metadata_count(const dlc_metadata_t *metadata);
dlc_status_t dlc_metadata_entry(const dlc_metadata_t *metadata, size_t index,
                                const char **key, int64_t *value);

/** Writes every global and `metadata` (may be NULL) as a new checkpoint in
 * `directory` (created if needed), named by the current step: to a
 * temporary file, flushed, renamed, then the LATEST marker updated the
 * same way. On any failure (a full disk) the previous checkpoint and
 * marker are untouched. Keeps the newest `keep` checkpoints (0 = all).
 * A module with sharded globals (dlc_module_sharded_globals) saves a set:
 * every rank of the session's communicator calls this together, each
 * writing its own shards, rank 0 the rest and then LATEST once all are on
 * disk; a failure on any rank fails the call on all of them and leaves
 * LATEST as it was (DLC_FAILED_PRECONDITION without a communicator). In a
 * pipeline every rank of the job calls it, once dlc_session_gather_stages
 * has given each every stage's globals: stage 0's replicas write the set
 * and the other stages learn whether they did. A tensor-parallel module
 * (sharded or not) saves one file of the whole values instead, every rank
 * calling this together and rank 0 writing. The directory must be one all
 * ranks share. */
dlc_status_t dlc_session_save_checkpoint(dlc_session_t *session,
                                         const char *directory,
                                         const dlc_metadata_t *metadata,
                                         int32_t keep);
/** Restores the checkpoint LATEST names in `directory` (or `directory` is
 * a checkpoint file itself): every global, and its metadata into
 * `*metadata` if not NULL (a new object the caller releases). A checkpoint
 * of another model is DLC_FAILED_PRECONDITION; a corrupt one
 * DLC_DATA_LOSS; both leave the session unchanged. A module with sharded
 * globals restores the set's shared part and this rank's own shards (its
 * communicator's rank; a set written by another number of ranks is
 * DLC_FAILED_PRECONDITION, a missing shard file DLC_DATA_LOSS); a
 * tensor-parallel one takes its slice (and shard) of each whole value. */
dlc_status_t dlc_session_load_checkpoint(dlc_session_t *session,
                                         const char *directory,
                                         dlc_metadata_t **metadata);

/** Writes the model the module was compiled from with the session's
 * current parameters and state as its initializers, through a temporary
 * file and a rename. DLC_FAILED_PRECONDITION when the module kept no ONNX
 * model; DLC_DATA_LOSS when that model is malformed or already holds one
 * of the initializers; DLC_RESOURCE_EXHAUSTED when the file would pass
 * protobuf's 2 GiB or the disk is full; DLC_NOT_FOUND when the directory
 * does not exist; DLC_IO_ERROR for any other failed write. */
dlc_status_t dlc_session_export_onnx(dlc_session_t *session,
                                     const char *path);

/*===--- Communicators ----------------------------------------------------===*/

/* The ranks of a job started by a launcher (`mpirun -np N`, `srun`), one
 * process each, exchange host buffers through a communicator. Every rank
 * calls the same collectives in the same order with the same counts, dtype,
 * op and root. Reductions take float32, float64, bfloat16 and float16; the
 * 16-bit types are summed in float32 and rounded once.
 *
 * A collective not complete `timeout_seconds` after this rank entered it is
 * DLC_DEADLINE_EXCEEDED naming it, its size and, as far as the other ranks
 * answer, the ranks that had not joined; the communicator is then broken
 * and every later collective DLC_FAILED_PRECONDITION (the process should
 * exit; its launcher ends the other ranks). MPI cannot cancel a
 * collective: after DLC_DEADLINE_EXCEEDED (or DLC_UNAVAILABLE from MPI)
 * the buffers passed to the failed call may still be read and written by
 * MPI, and must not be freed or reused until the process exits.
 *
 * Arguments are checked before any rank communicates. A rejection every
 * rank makes alike (a dtype, op or root out of range, counts too large) is
 * DLC_INVALID_ARGUMENT or DLC_UNIMPLEMENTED and leaves the communicator
 * usable. A rejection of this rank's own pointers (a NULL buffer or counts
 * array, overlapping buffers) means this rank skips a collective the others
 * may enter, which would pair its later collectives with the wrong ones:
 * it is DLC_INVALID_ARGUMENT and fails the communicator like a timeout
 * (later calls DLC_FAILED_PRECONDITION; the other ranks time out).
 *
 * With MPI, dlc needs MPI_THREAD_SERIALIZED: a communicator may be used
 * from any thread, one call at a time. The level is process-wide: the host
 * program's own MPI calls and the calls on several communicators must not
 * run at the same time either. */

typedef enum dlc_reduce_op_e {
  DLC_REDUCE_SUM = 0,
  DLC_REDUCE_MEAN = 1, /* the sum divided by the number of ranks */
} dlc_reduce_op_t;

typedef struct dlc_comm_s dlc_comm_t;

/** `kind` is "local" (this process alone: rank 0 of 1), "mpi" (every rank
 * of the MPI job, in a build with MPI; DLC_UNAVAILABLE otherwise) or "auto"
 * ("mpi" when a launcher started more than one rank, found from Open MPI's,
 * PMI's or srun's variables, not those of a bare sbatch script; "local"
 * otherwise). MPI is initialized here (MPI_THREAD_SERIALIZED) unless the
 * host program did it first, in which case it must have asked for
 * MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE (DLC_FAILED_PRECONDITION
 * naming the level otherwise) and it is the host's to finalize. Otherwise
 * releasing the last communicator finalizes MPI if it happens on the
 * thread that opened the first (MPI finalizes on the thread that
 * initialized it); on another thread MPI stays initialized, for a later
 * release on that thread or the host's MPI_Finalize there. MPI cannot be
 * initialized twice in a process: open one communicator per run. Opening
 * is itself collective and fails after the timeout like one.
 * `timeout_seconds` must be positive (INFINITY, or anything over 1e9,
 * waits forever). */
dlc_status_t dlc_comm_open(const char *kind, double timeout_seconds,
                           dlc_comm_t **out);
void dlc_comm_release(dlc_comm_t *comm);

/** "local" or "mpi"; "" for NULL. */
const char *dlc_comm_kind(const dlc_comm_t *comm);
/** This process's rank, 0 to size - 1 (0 for NULL). */
int32_t dlc_comm_rank(const dlc_comm_t *comm);
/** The number of ranks (0 for NULL). */
int32_t dlc_comm_size(const dlc_comm_t *comm);
/** The rank among the ranks on this machine, which picks its GPU: the
 * launcher's local rank, or MPI's count of the ranks sharing memory (0 for
 * NULL). */
int32_t dlc_comm_local_rank(const dlc_comm_t *comm);

/** Replaces `count` elements of `data` with their sum or mean over all
 * ranks. */
dlc_status_t dlc_comm_all_reduce(dlc_comm_t *comm, void *data, size_t count,
                                 dlc_dtype_t dtype, dlc_reduce_op_t op);
/** Reduces `send` over all ranks and leaves block r of the result in rank
 * r's `recv`: `counts` has one entry per rank (the same on every rank),
 * `send` holds their sum of elements in rank order and `recv`
 * counts[rank]. The buffers must not overlap (a rank-local rejection,
 * above). */
dlc_status_t dlc_comm_reduce_scatter(dlc_comm_t *comm, const void *send,
                                     void *recv, const size_t *counts,
                                     dlc_dtype_t dtype, dlc_reduce_op_t op);
/** Concatenates every rank's `send` (counts[r] elements on rank r) into
 * every rank's `recv`, in rank order; any dtype. `send` may be the
 * caller's own block of `recv` (in place); otherwise they must not
 * overlap (a rank-local rejection, above). */
dlc_status_t dlc_comm_all_gather(dlc_comm_t *comm, const void *send, void *recv,
                                 const size_t *counts, dlc_dtype_t dtype);
/** Copies rank `root`'s `count` elements of `data` into every rank's
 * `data`; any dtype. */
dlc_status_t dlc_comm_broadcast(dlc_comm_t *comm, void *data, size_t count,
                                dlc_dtype_t dtype, int32_t root);
/** Returns once every rank has entered it. */
dlc_status_t dlc_comm_barrier(dlc_comm_t *comm);
/** Sends `count` elements of `data` to rank `peer`, whose matching
 * dlc_comm_recv takes them; returns once `data` may be reused. Messages
 * between two ranks arrive in the order they were sent. */
dlc_status_t dlc_comm_send(dlc_comm_t *comm, const void *data, size_t count,
                           dlc_dtype_t dtype, int32_t peer);
/** Receives `count` elements from rank `peer`'s matching dlc_comm_send into
 * `data`. */
dlc_status_t dlc_comm_recv(dlc_comm_t *comm, void *data, size_t count,
                           dlc_dtype_t dtype, int32_t peer);
/** Splits the ranks into groups, as MPI_Comm_split: every rank calls it,
 * and the ranks passing the same `color` (0 or more) form the new
 * communicator `*out`, ranked by `key`, ties by rank. It keeps `comm`'s
 * timeout and local rank, lives apart from `comm` and is released with
 * dlc_comm_release. A rank that never calls it fails the others after the
 * timeout (MPI's split itself cannot time out: a rank failing just as the
 * colors are gathered leaves the others blocked; dlc_comm_abort ends
 * them). Every rank takes part even without `out` (DLC_INVALID_ARGUMENT
 * after). */
dlc_status_t dlc_comm_split(dlc_comm_t *comm, int32_t color, int32_t key,
                            dlc_comm_t **out);
/** Ends every rank of the job at once with exit code `code`: for a rank
 * that failed alone, whose peers would otherwise wait out their timeout in
 * a collective it never joins. With MPI, MPI_Abort (the launcher ends the
 * other processes); a "local" communicator exits this process. Does not
 * return (a NULL `comm` returns at once). */
void dlc_comm_abort(dlc_comm_t *comm, int32_t code);

/** Hands `session` the communicator its module's data-parallel all-reduces
 * run on (a module compiled with dlc-compile --dp N, whose train_step
 * averages the gradients over N ranks): `comm` must have N ranks. The
 * session borrows it, so it must outlive the session's calls; NULL detaches
 * it. A function with all-reduces fails without one; the others (forward)
 * run on one rank alone. On a CUDA device, where the collectives run on
 * NCCL, this opens the ranks' NCCL communicator from `comm` (so every rank
 * must call it, as a collective, bounded by `comm`'s timeout); each rank of
 * a machine must run on its own GPU (cuda:<dlc_comm_local_rank>).
 * DLC_UNAVAILABLE where NCCL cannot be opened. */
dlc_status_t dlc_session_set_comm(dlc_session_t *session, dlc_comm_t *comm);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLC_RUNTIME_H */
