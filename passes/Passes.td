//===- Passes.td - dlc passes ---------------------------------*- tablegen -*-===//
//
// Every knob is a pass option (DESIGN.md): `dlc-compile` builds its pipeline
// from these same passes, and `dlc-opt` runs any of them alone.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_PASSES_TD
#define DLC_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

def DLCFunctionalize : Pass<"dlc-functionalize", "ModuleOp"> {
  let summary = "turns dlc.global reads and writes into arguments and results";
  let description = [{
    Rewrites every function so that it reads each dlc.global it uses from a
    new leading argument and returns each global it writes as a new trailing
    result, making it a pure function of its state. Arguments and results
    carry `dlc.name` (the global's name) and `dlc.role`: `param` for a
    global no function writes, `state` for one some function writes; the
    function's own arguments get role `input` and its results `output`. The
    globals stay as declarations holding the initial values.
  }];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCFuseAttention : Pass<"dlc-fuse-attention", "ModuleOp"> {
  let summary = "forms dlc.attention from the ops exporters emit";
  let description = [{
    Replaces matmul(softmax(matmul(q, kT) * scale + bias), v) (with the
    softmax as the importer decomposes it, the scale a scalar constant
    multiplied or divided, and the bias a masked_fill/Where with -inf or an
    additive term computed from constants) by one dlc.attention, so that
    autodiff uses its gradient rule. Runs before autodiff; where the
    softmax's probabilities have another use, nothing changes.
  }];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCSplitReductions : Pass<"dlc-split-reductions", "ModuleOp"> {
  let summary = "splits reductions too few to fill a GPU into two";
  let description = [{
    A reduction whose rows would each take a block of 1024 threads, yet are
    fewer than two blocks per multiprocessor (BatchNorm statistics of a
    wide stem over a large batch: 64 channels of millions of values),
    leaves most of a GPU idle; so does a reduction across a strided axis
    (channels-last BatchNorm statistics, bias gradients) with fewer rows
    than a wave of threads, whose warps would otherwise read one element
    per memory sector. This pass splits a run of adjacent reduced axes into
    chunks x rest (passes/fusion/Schedule.h chooses how many): a first
    reduction folds each chunk of each row to a partial, a second folds a
    row's partials in chunk order. Fusion keeps them apart (a reduction is
    not recomputed per element of another), so they become two kernels, no
    atomics are needed, and the result is the same bits on every run. For
    the CUDA backend; the CPU's threads are few enough without it.
  }];
  let options = [
    Option<"multiprocessors", "multiprocessors", "int64_t", "132",
           "multiprocessors of the GPU the module is sized for">,
    Option<"threadsPerMultiprocessor", "threads-per-multiprocessor",
           "int64_t", "2048",
           "resident threads a multiprocessor holds">,
  ];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCChannelsLast : Pass<"dlc-channels-last", "ModuleOp"> {
  let summary = "stores convolutions and the work between them channels-last";
  let description = [{
    Tensor-core convolutions read and write NHWC; given NCHW, cuDNN adds
    transposes of its own. This pass gives every float32, float16 and
    bfloat16 dlc.conv (without input dilation), dlc.conv_grad_input and
    dlc.conv_grad_filter the `channels_last` layout ([N, s..., C], filters
    [O, k..., C / groups]) and carries it through elementwise ops,
    broadcasts, reductions (BatchNorm statistics reduce all but the
    innermost axis) and pools (a channels-last pool is a pool over
    [N, 1, s..., C] with a window of 1 over C), so that transposes remain
    only where the layout must change: at the function's arguments and
    results, before matmuls, dropout and other ops that read element
    order. An elementwise op goes channels-last when more of its operands
    are channels-last than channels-first at full size (per-channel
    vectors move for free). The same elements are computed in the same
    order. For the CUDA backend, where dlc-compile --conv-layout chooses it.
  }];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCSortScatters : Pass<"dlc-sort-scatters", "ModuleOp"> {
  let summary = "turns embedding gradients into sorted segment sums";
  let description = [{
    A scatter-add of rows (an embedding's gradient: N token rows added into
    the vocabulary's rows at the tokens' ids) walks every update for each
    target on a GPU. This pass sorts the ids once instead, on the device,
    by counting (rank[t] = the ids smaller than id[t], ties broken by
    position; order[rank[t]] = t: two N x N reductions that fusion makes
    two kernels, with no N x N buffer), finds each id's first sorted
    position (a min-scatter over N positions), and replaces the scatter by
    a dlc.segment_sum whose every element adds its segment's rows from
    there in token order: the scatter's own order, so the result is the
    same bits. For scatters into zeros along axis 0 of
    more than 16 rows (fewer are gathered as they are) up to `max-rows`
    (counting costs N^2) whose indices are one id a row. For the CUDA
    backend; the CPU walks the updates.
  }];
  let options = [
    Option<"maxRows", "max-rows", "int64_t", "16384",
           "the most rows whose ids are sorted by counting">,
  ];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCTensorParallel : Pass<"dlc-tensor-parallel", "ModuleOp"> {
  let summary = "splits MLP blocks over tensor-parallel ranks (Megatron-LM)";
  let description = [{
    Partitions the module for `ranks` tensor-parallel ranks, which each hold
    a slice of the weights of the layers it splits and compute their part of
    those layers. Runs on the imported functions, before dlc-functionalize,
    so that the backward pass dlc-autodiff derives gets its collectives from
    the forward's.

    It splits column-then-row pairs of matmuls, the MLP blocks of
    transformers (Megatron-LM's first pattern): a matmul by a weight (a
    dlc.global, directly or transposed) whose result reaches a second one,
    as its left operand, through pointwise ops alone (a bias add, an
    activation). The first weight is split by output columns and its bias
    with it, the second by input rows, so each rank computes its columns of
    the hidden layer and a partial sum of the output: a dlc.tp_copy goes
    before the first matmul and a dlc.tp_reduce after the second. Their
    gradients are each other (the backward all-reduce lands on the input's
    gradient). Each split global gets `dlc.tp_split` (the dimension) and
    the rank's slice as its type, its initial value staying the whole; the
    module gets `dlc.tensor_parallel = ranks`.

    With `class-function`, a matmul with no partner whose output columns
    (the classes: an LM head, a classifier) a function returns, through a
    bias add at most, is split by its columns too: each rank computes the
    logits of its classes. The function `class-function`, whose output
    dlc-add-loss turns into a cross-entropy, returns them split (its result
    gets `dlc.tp_split`, and the loss reduces the softmax over the ranks);
    every other function joins them with a dlc.all_gather among the tensor
    ranks.

    An embedding, dlc.gather of the rows of a 2-D table global at ids that
    are not constants (a token embedding; a position embedding's constant
    ids stay replicated), is split by its rows: each rank gathers the ids
    among its rows, zeros for the others', and a dlc.tp_reduce sums the
    ranks' (Megatron-LM's vocabulary-parallel embedding).

    Everything else stays replicated, every rank computing it alike: a
    matmul with no partner (but a class head), a hidden layer that something other than a
    pointwise op reads (or that a random draw or a full-size value enters),
    widths not divisible by `ranks`, and a weight that anything outside a
    pair reads, in any function. With `report`, each matmul's decision and
    the reason for a replicated one are printed to standard error.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", "1",
           "the number of tensor-parallel ranks">,
    Option<"report", "report", "bool", "false",
           "print each matmul's partition, and why a replicated one is, to "
           "standard error">,
    Option<"classFunction", "class-function", "std::string",
           /*default=*/"\"\"",
           "the function whose returned class scores a cross-entropy loss "
           "reads (dlc-add-loss's): class heads are split by their columns, "
           "and its scores stay split (none: class heads stay replicated)">,
  ];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCPipelinePartition : Pass<"dlc-pipeline-partition", "ModuleOp"> {
  let summary = "cuts the loss function into balanced pipeline stages by a cost model";
  let description = [{
    Partitions each function that returns a loss (dlc-add-loss's @loss, at
    the size of one micro-batch) into `stages` consecutive pipeline stages.
    Runs after dlc-add-loss (and dlc-mixed-precision) and before
    dlc-autodiff, which gives each backward op its forward op's stage;
    dlc-pipeline-schedule then runs the micro-batches through the stages.

    The ops that read the batch (an input or a label, directly or not) are
    taken in block order, and each costs its roofline (CostModel.h): its
    FLOPs, or its bytes moved times `flops-per-byte` when the memory bound
    is the higher. A stage costs its ops and the activations it receives
    and sends, each byte at `link-flops-per-byte`. An op that does not read
    the batch (a weight's transpose or cast) costs where its first
    batch-reading reader is, and gets no stage: each stage that reads it
    computes it. A backward costs about twice its forward for every op, so
    balancing forward costs balances the step. The cut is the one whose
    costliest stage is the cheapest (exact, by dynamic programming over the
    cut points); among the cuts within 2% of it, the most even one (the
    least sum of squared stage costs), which leaves no stage nearly empty
    when one op (an LM head) bounds the costliest stage.

    Each op that reads the batch gets `dlc.pp_stage` (0 first); the module
    gets `dlc.pipeline_stages`. With `report`, each stage's ops, FLOPs,
    share of the cost, parameters, activation memory per micro-batch and in
    flight under 1F1B (stage s holds min(stages - s, microbatches)
    micro-batches), and bytes sent are printed to standard error, with one
    device's figures for the whole batch.
  }];
  let options = [
    Option<"stages", "stages", "int64_t", "1", "the number of pipeline stages">,
    Option<"microbatches", "microbatches", "int64_t", "1",
           "the micro-batches of a step, for the report's memory in flight">,
    Option<"flopsPerByte", "flops-per-byte", "double", "100",
           "the machine's matrix FLOP rate over its memory bandwidth, at "
           "which an op's bytes cost as much as its FLOPs">,
    Option<"linkFlopsPerByte", "link-flops-per-byte", "double", "1000",
           "the machine's matrix FLOP rate over the bandwidth between two "
           "stages' devices, at which a byte sent or received costs as "
           "much as that many FLOPs">,
    Option<"report", "report", "bool", "false",
           "print the stages and what each costs and holds to standard "
           "error">,
  ];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCPipelineSchedule : Pass<"dlc-pipeline-schedule", "ModuleOp"> {
  let summary = "runs micro-batches through the pipeline stages in a static 1F1B order";
  let description = [{
    Turns each gradient function whose ops carry `dlc.pp_stage`
    (dlc-pipeline-partition, then dlc-autodiff) into one training step over
    `microbatches` micro-batches: its inputs and labels become `microbatches`
    times as large, each micro-batch's rows a dlc.slice of them, and the
    body is repeated once per micro-batch. The loss and each gradient are
    the mean of the micro-batches' (for the mean losses dlc-add-loss forms,
    over equal micro-batches, the whole batch's); a loss divided by a count
    of its labels (cross-entropy's labels not ignored, marked
    `dlc.loss_count`) instead divides each micro-batch's sum by the whole
    batch's count, computed by every stage from the labels first, and the
    micro-batches' losses and gradients are added: one device's, however
    many labels each micro-batch ignores. Runs after dlc-autodiff and
    before dlc-data-parallel and dlc-optimizer.

    Every op that reads a staged value is staged too (a backward op of an
    op without a stage takes its operand's). Where an op of one stage reads
    a value of another, a `dlc.pp_transfer` carries it. The ops are ordered
    by the 1F1B timetable (PipeDream-Flush, Megatron-LM): stage s runs
    min(stages - s - 1, microbatches) forwards, then one backward and one
    forward in turn, then the remaining backwards; each stage's ops, taken
    alone, run in its own 1F1B order, and a transfer comes after the op
    that computes its value and before every op that reads it. Ops without
    a stage (constants, a weight's transpose) are run by every stage that
    reads them, once per step if they read no micro-batch. Each result gets
    the `dlc.pp_stage` of the op that computes it, and the module
    `dlc.microbatches`.
  }];
  let options = [
    Option<"microbatches", "microbatches", "int64_t", "1",
           "the micro-batches of a step">,
  ];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCPipelinePlace : Pass<"dlc-pipeline-place", "ModuleOp"> {
  let summary = "gives every op of a pipelined function the stage that runs it";
  let description = [{
    In a module cut into pipeline stages (`dlc.pipeline_stages`), the
    passes after dlc-pipeline-schedule make and rewrite ops without a
    `dlc.pp_stage` (canonicalization, decomposition, the optimizer's
    update). This pass places every op of each function's body
    (passes/parallel/StagePlacement.h): an op that one stage runs gets that
    stage, an op that every stage runs (a constant, the step counter, the
    count of a batch's labels) none; a value used on a stage that does not
    hold it is an error. dlc-fuse then groups only ops of one stage.

    A global that one stage updates and others read (an embedding tied to
    the LM head) is sent, once updated, to each other stage that reads it
    (`dlc.pp_transfer`), so that every stage starts the next step from the
    same value. Each result held by one stage gets its `dlc.pp_stage`.
    Modules without stages are left alone.
  }];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCDataParallel : Pass<"dlc-data-parallel", "ModuleOp"> {
  let summary = "partitions training over data-parallel ranks: gradient all-reduce in buckets";
  let description = [{
    Every rank runs the same program on its share of the global batch (the
    module is imported at the per-rank batch); the gradients each rank
    returns are averaged over the ranks before the optimizer sees them, so N
    ranks take the step one device takes on the whole batch (for the mean
    losses dlc-add-loss forms, over equal shares). Runs after dlc-autodiff
    and before dlc-optimizer, on every function that returns gradients.

    The gradients are grouped into buckets in the order the backward pass
    produces them (the order of their defining ops), each up to
    `bucket-mb` MiB (25, PyTorch DDP's bucket_cap_mb; a larger gradient is
    a bucket of its own; a gradient of another element type than the one
    before it starts a bucket, since one collective reduces one type), and
    each bucket is one dlc.all_reduce placed right
    after its last gradient is computed, so its communication can overlap
    the rest of the backward pass. The module gets `dlc.data_parallel = N`.
    Per-rank state (BatchNorm statistics) is not reduced.

    The ranks share the program's seed and streams, so each random draw
    over a rank's rows (dlc.dropout of a value the batch reaches, every
    dlc.random_uniform) gets a counter offset of rank * (its element
    count), from a table of every rank's offset through dlc.rank_shard:
    where the batch is the drawn value's outermost dimension, N ranks draw
    the masks and augmentation one process draws for the whole batch, and
    elsewhere still counters of their own. A dropout of a value computed
    from globals alone draws one mask on every rank, as one process does,
    unless its outermost dimension is the rank's batch (the first input's
    or label's).

    With `zero=1` (ZeRO stage 1, DeepSpeed's optimizer state partitioning)
    each bucket is a dlc.reduce_scatter instead: every gradient result
    becomes this rank's shard of the mean gradient (1-D, ceil(elements / N)
    elements), and the module gets `dlc.zero = 1`, from which dlc-optimizer
    updates each rank's shard of the parameters, keeps optimizer state for
    it alone, and all-gathers the updated parameters.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", "1",
           "the number of data-parallel ranks">,
    Option<"bucketMb", "bucket-mb", "double", "25.0",
           "the most MiB of gradients one all-reduce carries">,
    Option<"zero", "zero", "int64_t", "0",
           "the ZeRO stage: 0 all-reduces the gradients, 1 reduce-scatters "
           "them so that each rank's optimizer updates its shard">,
  ];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCDecompose : Pass<"dlc-decompose", "ModuleOp"> {
  let summary = "lowers composite ops and their gradients to basic ops";
  let description = [{
    Rewrites dlc.attention and dlc.cross_entropy, and their gradient ops,
    into matmuls, reductions and elementwise ops, for backends without a
    fused kernel for them, and removes dlc.tp_copy and dlc.stop_gradient
    (identities, which only autodiff reads). Runs after autodiff: the gradients recompute
    what they need from the forward's log-sum-exp (the probabilities of an
    attention, the softmax of a loss) instead of keeping it.
  }];
  let options = [
    Option<"keepAttention", "keep-attention", "bool", "false",
           "leave the dlc.attention and dlc.attention_grad ops that a fused "
           "kernel takes (float32, head sizes up to 128) whole: the CUDA "
           "backend runs them as tiled kernels that never store the scores">,
  ];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCMixedPrecision : Pass<"dlc-mixed-precision", "ModuleOp"> {
  let summary = "computes matmuls and convolutions in bfloat16 or float16";
  let description = [{
    Mixed precision as a per-op policy, in the spirit of PyTorch autocast's
    lists (passes/precision/MixedPrecision.h): matmuls and convolutions
    (and their gradient ops) compute in the low type; reductions, exp, log,
    pow, rsqrt, sqrt, reciprocal, the cross-entropy loss and attention in
    float32; every other op follows its operands: float32 when one of them
    is a float32 value the program computed (a softmax's maximum, a
    normalization's statistics, a residual stream) or a full-size parameter,
    else low when one is low. Parameters and constants that broadcast never
    pull an op up: a bias added to a low product is cast down, as
    autocast's Linear casts its bias. Casts are inserted once per value
    (once per use for parameters and constants) next to what they convert,
    so fusion folds them into neighbouring kernels, and function results
    are cast back to their declared types. Runs before autodiff: the
    backward ops inherit the forward's types through the gradient rules
    (a cast's gradient is the cast back), parameters stay float32
    arguments the optimizer updates (master weights), and a parameter
    used twice has its gradients summed in float32. `low-ops` and
    `fp32-ops` (op names) move ops between the lists.
  }];
  let options = [
    Option<"precision", "precision", "::mlir::dlc::LowPrecision",
           /*default=*/"::mlir::dlc::LowPrecision::Bf16", "the low type",
           [{::mlir::dlc::enumValues<::mlir::dlc::LowPrecision>()}]>,
    ListOption<"lowOps", "low-ops", "std::string",
               "ops computed in the low type besides the default list">,
    ListOption<"float32Ops", "fp32-ops", "std::string",
               "ops computed in float32 besides the default list">,
  ];
  let dependentDialects = ["::mlir::dlc::DLCDialect",
                           "::mlir::func::FuncDialect"];
}

def DLCAutodiff : Pass<"dlc-autodiff", "ModuleOp"> {
  let summary = "builds the gradient function of a loss function";
  let description = [{
    Reverse-mode differentiation through each op's GradientOpInterface.
    For the function `function`, whose first result is a scalar float loss,
    adds `<function>_grad` with the same arguments returning the original
    results followed by the gradient of the loss with respect to each
    trainable parameter: each float argument with role `param` whose name
    does not match `freeze` and on which the loss depends through float
    values. Gradient results carry `dlc.name` and role `gradient`.

    Before building anything, every op between the parameters and the loss
    is checked for a gradient rule; all that lack one are reported in one
    error. With `vjp`, the function may have any results: `<function>_vjp`
    takes one extra cotangent argument per float result and returns the
    results followed by the gradient of every float argument (this is how
    each op's rule is tested).
  }];
  let options = [
    Option<"functionName", "function", "std::string", /*default=*/"\"loss\"",
           "the function to differentiate">,
    Option<"freeze", "freeze", "std::string", /*default=*/"\"\"",
           "a regular expression (llvm::Regex, matched against the whole "
           "name) of parameters kept fixed">,
    Option<"vjp", "vjp", "bool", /*default=*/"false",
           "differentiate every float argument against result cotangents">,
    Option<"lossScale", "loss-scale", "bool", /*default=*/"false",
           "start the loss gradient from a new f32 argument `dlc.loss_scale` "
           "(role `loss_scale`) instead of 1, as GradScaler scales the loss">,
  ];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCAugment : Pass<"dlc-augment", "ModuleOp"> {
  let summary = "random data augmentation of the training function's images";
  let description = [{
    Replaces each image argument ([N, C, H, W], float) of `function` by its
    augmented form, computed in the function on the device that trains:
    `transforms` lists, in order, `hflip`, `vflip` (each sample mirrored
    when its draw is below 0.5), `crop:P` (zero padding of P, then a
    random H x W window), `rotate:D` (a random angle uniform in [-D, D]
    degrees about the center, bilinear, zero outside) and
    `normalize:MEAN/STD` (per-channel, comma-separated lists, or one value),
    as torchvision's functional transforms compute them. Each sample draws
    its own parameters from dlc.random_uniform under `@"dlc.rng_seed"`
    (declared, and advanced per step, when the function has no dropout),
    so runs are reproducible and resume exactly. Runs before
    dlc-functionalize; the inference function is left as it is.
  }];
  let options = [
    Option<"functionName", "function", "std::string",
           /*default=*/"\"forward_train\"", "the training model function">,
    Option<"transforms", "transforms", "std::string", /*default=*/"\"\"",
           "comma-separated: hflip, vflip, crop:P, rotate:D, "
           "normalize:MEAN/STD">,
  ];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCAddLoss : Pass<"dlc-add-loss", "ModuleOp"> {
  let summary = "builds the loss function from a model function";
  let description = [{
    Adds `@loss` next to the model function `function`: the same arguments
    plus, for losses that compare with a target, a new argument named by
    `label` (default `labels`, role `label`); it returns the loss (a float scalar, role
    `loss`) followed by the model function's `state` results. The losses,
    with PyTorch's definitions (mean reduction):
    - `cross_entropy`: class scores on the last axis of `output`; integer
      labels (int64) of the output's shape without that axis; labels equal
      to `ignore-index` count neither in the sum nor in the mean;
      `label-smoothing` mixes in the uniform distribution
      (torch.nn.CrossEntropyLoss). The label argument records
      `dlc.num_classes` and `dlc.ignore_index` for data loaders. Scores
      split by their classes over tensor-parallel ranks (`dlc.tp_split` on
      the output, from dlc-tensor-parallel) give the same loss, each rank
      reading its classes' (Megatron-LM's vocabulary-parallel
      cross-entropy);
    - `mse`, `l1`: squared and absolute error against a label of the
      output's type (torch.nn.MSELoss, L1Loss);
    - `bce_with_logits`: binary cross-entropy on logits, label of the
      output's type (torch.nn.BCEWithLogitsLoss);
    - `model`: `output` already is the loss (one element).
  }];
  let options = [
    Option<"functionName", "function", "std::string",
           /*default=*/"\"forward_train\"", "the model function">,
    Option<"loss", "loss", "::mlir::dlc::LossKind",
           /*default=*/"::mlir::dlc::LossKind::CrossEntropy", "the loss",
           [{::mlir::dlc::enumValues<::mlir::dlc::LossKind>()}]>,
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "the model output the loss is computed from (default: the only "
           "output); unnamed outputs are result<i>">,
    Option<"label", "label", "std::string", /*default=*/"\"labels\"",
           "the name of the new label argument">,
    Option<"ignoreIndex", "ignore-index", "int64_t", /*default=*/"-100",
           "cross_entropy: the label value that is ignored">,
    Option<"labelSmoothing", "label-smoothing", "double", /*default=*/"0.0",
           "cross_entropy: the weight of the uniform distribution, in [0, 1]">,
  ];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCOptimizer : Pass<"dlc-optimizer", "ModuleOp"> {
  let summary = "builds train_step: the loss gradient and an optimizer step";
  let description = [{
    Adds `@train_step` from the gradient function `function` (as built by
    dlc-autodiff): it computes the loss and gradients, optionally clips them
    by their global norm, and updates every parameter that has a gradient
    with torch.optim's update rule (`sgd` with momentum, dampening,
    Nesterov and weight decay; `adam`; `adamw` with decoupled weight
    decay). The optimizer state, the step counter and the hyperparameters
    that may change between steps (learning rate, weight decay) become new
    dlc.global declarations (zeros, 0, and the option values) and
    arguments of train_step with roles `optimizer_state`, `step` and
    `hyperparameter`, so the runtime changes them without recompiling.
    The learning rate of a step is `lr` times the schedule's factor at the
    step count s (HuggingFace's definitions): `constant` (s / warmup during
    warmup, then 1), `linear` (then decaying linearly to 0 at total-steps),
    `cosine` (then 0.5 (1 + cos(pi progress))), both staying 0 after
    total-steps.

    When the gradient function takes a loss scale (an f32 argument with
    role `loss_scale`, from dlc-autodiff's loss-scale), train_step is also
    torch.cuda.amp.GradScaler: the scale becomes the global
    `dlc.loss_scale` (initially `init-scale`); the gradients are multiplied
    by its reciprocal before clipping; a step whose gradients hold an inf
    or NaN leaves the parameters and optimizer state as they were, halves
    the scale (`backoff-factor`) and counts in `dlc.skipped_steps`; after
    `growth-interval` clean steps in a row the scale doubles
    (`growth-factor`; `dlc.loss_scale_growth_tracker` counts them).
    `dlc.step` counts every call (the schedule's step); Adam's bias
    corrections and SGD's first step use the steps not skipped, as
    torch.optim's own count does.

    Under mixed precision (a parameter cast to bf16 or fp16), train_step
    reads the parameter's 16-bit copy instead of casting it (a global
    `<param>@bf16` or `<param>@fp16`, role `weight_copy`, whose `dlc.copy_of`
    names the parameter; its initial value is the cast of the parameter's),
    and the update writes the next copy from the new float32 value
    (`low-precision-copies`).

    Under ZeRO-1 (a module with `dlc.zero = 1` from dlc-data-parallel,
    every gradient this rank's 1-D shard of its parameter's, marked
    `dlc.sharded`), each rank updates `dlc.rank_shard` of each parameter
    and keeps optimizer state for that shard alone (globals marked
    `dlc.sharded` with the parameter's type); the clipping norm's squares
    and the loss scale's inf probe are summed over the ranks; the updated
    shards are `dlc.all_gather`ed into the parameters, one collective per
    gradient bucket and element type.

    Results: the loss, the metrics `lr` (and `grad_norm` when clipping;
    `loss_scale`, the scale this step used, and `skipped_steps` under loss
    scaling), then the new parameters, state, optimizer state and step
    count, each named as its argument.
  }];
  let options = [
    Option<"functionName", "function", "std::string",
           /*default=*/"\"loss_grad\"", "the gradient function">,
    Option<"optimizer", "optimizer", "::mlir::dlc::OptimizerKind",
           /*default=*/"::mlir::dlc::OptimizerKind::Sgd", "the update rule",
           [{::mlir::dlc::enumValues<::mlir::dlc::OptimizerKind>()}]>,
    Option<"lr", "lr", "double", /*default=*/"1e-3",
           "the base learning rate (initial value of dlc.lr)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0", "sgd">,
    Option<"dampening", "dampening", "double", /*default=*/"0.0", "sgd">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false", "sgd">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1.0",
           "the weight decay (initial value of dlc.weight_decay); negative "
           "means the optimizer's default: 0, or 0.01 for adamw">,
    ListOption<"betas", "betas", "double",
               "adam, adamw: beta1,beta2 (default 0.9,0.999)">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "adam, adamw">,
    Option<"clipGradNorm", "clip-grad-norm", "double", /*default=*/"0.0",
           "scale the gradients so that their global 2-norm is at most "
           "this (0: off), as torch.nn.utils.clip_grad_norm_">,
    Option<"schedule", "schedule", "::mlir::dlc::LrSchedule",
           /*default=*/"::mlir::dlc::LrSchedule::Constant",
           "the learning rate's factor after warmup",
           [{::mlir::dlc::enumValues<::mlir::dlc::LrSchedule>()}]>,
    Option<"warmupSteps", "warmup-steps", "int64_t", /*default=*/"0",
           "steps of linear warmup from 0">,
    Option<"totalSteps", "total-steps", "int64_t", /*default=*/"0",
           "linear, cosine: the step at which the rate reaches 0">,
    Option<"initScale", "init-scale", "double", /*default=*/"65536.0",
           "loss scaling: the first scale (GradScaler's init_scale)">,
    Option<"growthFactor", "growth-factor", "double", /*default=*/"2.0",
           "loss scaling: the scale's factor after growth-interval clean "
           "steps">,
    Option<"backoffFactor", "backoff-factor", "double", /*default=*/"0.5",
           "loss scaling: the scale's factor after an inf or NaN">,
    Option<"growthInterval", "growth-interval", "int64_t",
           /*default=*/"2000", "loss scaling: clean steps before growing">,
    Option<"lowPrecisionCopies", "low-precision-copies", "bool",
           /*default=*/"true",
           "read each parameter that mixed precision casts to bf16/fp16 "
           "from a copy in that type, written by the update">,
  ];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

//===----------------------------------------------------------------------===//
// Fusion and memory
//===----------------------------------------------------------------------===//

def DLCFuse : Pass<"dlc-fuse", "ModuleOp"> {
  let summary = "groups elementwise, data-movement and reduction ops into "
                "dlc.fusion kernels";
  let description = [{
    Visits each function's ops from last to first. An op that no group has
    claimed starts one; a producer joins the group of its users when all of
    them are in it (or run after the group, making the producer an extra
    result) and the cost-aware control function agrees: no recomputation
    of transcendental ops or reductions at broadcast indices, reductions
    and pooling only where read at the group's index, at most
    `max-group-size` ops. Matmuls and convolutions stay outside (library
    calls), reshapes outside groups stay views, splat constants are cloned
    into the groups that use them. Afterwards every other op that has a
    generated kernel is inside exactly one dlc.fusion. A matmul or
    convolution whose only user is a fusion starting with a per-channel
    bias add (and a ReLU) gets `dlc.epilogue = "bias"` (`"bias_relu"`): the
    mark a library with fused epilogues (cuBLASLt, cuDNN) acts on.
  }];
  let options = [
    Option<"maxGroupSize", "max-group-size", "unsigned", /*default=*/"64",
           "the most ops one fusion may hold">,
  ];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCRematerialize : Pass<"dlc-rematerialize", "ModuleOp"> {
  let summary = "recomputes cheap values at distant uses instead of keeping them";
  let description = [{
    For each value of at least `min-bytes` computed by an elementwise op or
    a view, and each use at least `min-distance` ops after its definition:
    clones the chain of elementwise ops and views that computes it from
    values alive at that use anyway (function arguments, constants, values
    read there or later), at most `max-chain` ops, right before the use.
    The original then dies at its last near use, and fusion folds the clone
    into the distant consumer's kernel. Runs before dlc-fuse.
  }];
  let options = [
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"1 << 20",
           "the smallest value worth recomputing, in bytes">,
    Option<"minDistance", "min-distance", "int64_t", /*default=*/"32",
           "how many ops after its definition a use is distant">,
    Option<"maxChain", "max-chain", "unsigned", /*default=*/"8",
           "the most ops cloned for one use">,
  ];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCPlanMemory : Pass<"dlc-plan-memory", "ModuleOp"> {
  let summary = "assigns each intermediate value an offset in a static arena";
  let description = [{
    For each function: arguments, constants and views keep their own
    storage; a returned value is computed into its result; every other
    value gets an offset in the function's arena, reusing memory of values
    whose lifetimes (definition to last use, views included) do not
    overlap, greedily by decreasing size. Records `dlc.arena_offsets` (one
    per result, -1 outside the arena) on each op, and `dlc.arena_size`
    (the peak) and `dlc.intermediate_bytes` (the sum without reuse) on the
    function. Offsets are multiples of 64 bytes. With
    keep-epilogue-operands, a matmul marked with a library epilogue
    (`dlc.epilogue`, dlc-fuse) keeps its operands live until the fusion
    that is its epilogue, so a backend folding the epilogue into the library
    call (cuBLASLt) can write that fusion's result from within the call.
  }];
  let options = [
    Option<"keepEpilogueOperands", "keep-epilogue-operands", "bool",
           /*default=*/"false",
           "keep marked matmuls' operands live until their epilogue "
           "fusion">,
  ];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

#endif // DLC_PASSES_TD
