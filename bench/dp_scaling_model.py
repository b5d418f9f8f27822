"""A model, not a measurement: data-parallel scaling from dlc's bucket plan.

Reads a gradient function partitioned by dlc-data-parallel (dlc IR text,
weights elided) and models each all-reduce as an NCCL ring: a bucket of S
bytes on N ranks takes ALPHA + 2 (N - 1) / N * S / BUSBW. The
communication stream takes the buckets in order, each once backward has
produced it; when that is comes from the matmul FLOPs before the bucket's
all-reduce in the body, as a fraction of backward's (the ops after the
cross-entropy). Backward is 2/3 of the step. Prints the plan and, per rank
count and bus bandwidth, the communication time, what is left exposed after
backward ends, and the efficiency step / (step + exposed).

  dlc-translate --import-onnx gpt2.onnx --for-training --batch-size 8 -o - |
    dlc-opt - --dlc-fuse-attention --dlc-functionalize \\
      '--dlc-add-loss=loss=cross_entropy label=labels' --dlc-autodiff \\
      --dlc-data-parallel=ranks=8 --mlir-elide-elementsattrs-if-larger=16 \\
      -o gpt2-dp.mlir
  python3 bench/dp_scaling_model.py gpt2-dp.mlir --step-ms 126.8 43
"""

import argparse
import re

BYTES = {"f32": 4, "f64": 8, "bf16": 2, "f16": 2}


def shape(tensor_type):
    dims = tensor_type[len("tensor<"):-1].split("x")
    return [int(d) for d in dims[:-1]], dims[-1]


def size_of(tensor_type):
    dims, element = shape(tensor_type)
    n = BYTES[element]
    for d in dims:
        n *= d
    return n


def bucket_plan(path):
    """[(bytes, ready as a fraction of backward)] in issue order."""
    text = open(path).read()
    body = text[text.index("func.func @loss_grad"):]
    body = body[:body.index("\n  }\n")]
    flops, forward, buckets = 0, None, []
    for line in body.split("\n"):
        types = re.findall(r"tensor<[^>]+>", line.split(" : ")[-1])
        if " dlc.matmul " in line:
            lhs, result = shape(types[0])[0], shape(types[-1])[0]
            n = 2 * lhs[-1]
            for d in result:
                n *= d
            flops += n
        if forward is None and " dlc.cross_entropy " in line:
            forward = flops
        if " dlc.all_reduce " in line:
            buckets.append((sum(size_of(t) for t in types), flops))
    backward = flops - forward
    return [(b, (f - forward) / backward) for b, f in buckets], forward, flops


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("module")
    p.add_argument("--step-ms", type=float, nargs="+", required=True,
                   help="one GPU's step times to model")
    p.add_argument("--ranks", type=int, nargs="+", default=[2, 4, 8])
    p.add_argument("--busbw", type=float, nargs="+", default=[400, 100],
                   help="NCCL bus bandwidths, GB/s")
    p.add_argument("--alpha-us", type=float, default=30)
    args = p.parse_args()
    plan, forward, total = bucket_plan(args.module)
    print(f"matmul FLOPs a step: forward {forward / 1e12:.2f} T, "
          f"backward {(total - forward) / 1e12:.2f} T")
    for i, (size, ready) in enumerate(plan):
        print(f"bucket {i}: {size / 2**20:.1f} MiB, ready at {ready:.2f} "
              f"of backward")
    print(f"{sum(s for s, _ in plan) / 2**20:.1f} MiB in {len(plan)} "
          f"buckets")
    print("| ranks | bus bandwidth | step | all-reduce | exposed | "
          "efficiency |")
    for ranks in args.ranks:
        for busbw in args.busbw:
            for step in args.step_ms:
                backward = step * 2 / 3
                clock = busy = 0.0
                for size, ready in plan:
                    ms = (args.alpha_us / 1e3 + 2 * (ranks - 1) / ranks *
                          size / (busbw * 1e9) * 1e3)
                    busy += ms
                    clock = max(clock, ready * backward) + ms
                exposed = max(0.0, clock - backward)
                print(f"| {ranks} | {busbw:.0f} GB/s | {step} ms | "
                      f"{busy:.2f} ms | {exposed:.2f} ms | "
                      f"{100 * step / (step + exposed):.1f}% |")


if __name__ == "__main__":
    main()
