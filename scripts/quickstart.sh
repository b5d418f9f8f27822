#!/usr/bin/env bash
# The quick start: set up and build dlc, export a small PyTorch MLP to ONNX,
# compile it into a CPU training binary and train it (the loss falls, the
# held-out accuracy rises, the trained model is exported back to ONNX); then
# import it into the dlc dialect, run it on the reference evaluator and train
# it there 20 steps, beside PyTorch.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${DLC_BUILD_DIR:-$root/build}"
work="$build/quickstart"

bash "$root/scripts/build.sh"
mkdir -p "$work"
/usr/bin/python3 "$root/examples/quickstart/make_model.py" --out "$work"

echo "== dlc-compile mlp.onnx --train --loss cross_entropy --optimizer adamw --lr 1e-2 --batch-size 32 --emit=exe -o train_mlp"
"$build/bin/dlc-compile" "$work/mlp.onnx" --train --loss cross_entropy \
  --optimizer adamw --lr 1e-2 --batch-size 32 --report-memory --emit=exe \
  -o "$work/train_mlp"
echo "== ./train_mlp --data quadrants.npz --epochs 4 --eval-data quadrants_eval.npz --export trained.onnx"
rm -rf "$work/checkpoints" "$work/compiled_metrics.jsonl"
"$work/train_mlp" --data "$work/quadrants.npz" --epochs 4 --threads 2 \
  --eval-data "$work/quadrants_eval.npz" --checkpoint-dir "$work/checkpoints" \
  --checkpoint-every 256 --log "$work/compiled_metrics.jsonl" \
  --export "$work/trained.onnx"

echo "== dlc-translate --import-onnx mlp.onnx --batch-size 4 (first lines)"
"$build/bin/dlc-translate" --import-onnx "$work/mlp.onnx" --batch-size 4 \
  --mlir-elide-elementsattrs-if-larger=8 -o "$work/mlp.mlir"
head -n 12 "$work/mlp.mlir"

echo "== dlc-run --interpret mlp.onnx --inputs inputs.npz --outputs outputs.npz"
"$build/bin/dlc-run" --interpret "$work/mlp.onnx" --batch-size 4 \
  --inputs "$work/inputs.npz" --outputs "$work/outputs.npz"
/usr/bin/python3 "$root/examples/quickstart/compare.py" \
  "$work/outputs.npz" "$work/expected.npz"

echo "== dlc-compile mlp.onnx --train --loss cross_entropy --optimizer adamw --lr 1e-2 --batch-size 8 --emit=mlir"
"$build/bin/dlc-compile" "$work/mlp.onnx" --train --loss cross_entropy \
  --optimizer adamw --lr 1e-2 --batch-size 8 --emit=mlir \
  -o "$work/train.mlir"
grep -o 'func.func @[a-z_]*' "$work/train.mlir"

echo "== dlc-run --interpret --train train.mlir --data train.npz --steps 20 --no-shuffle"
"$build/bin/dlc-run" --interpret --train "$work/train.mlir" \
  --data "$work/train.npz" --steps 20 --no-shuffle \
  --log "$work/metrics.jsonl" > /dev/null
/usr/bin/python3 "$root/examples/quickstart/compare_training.py" \
  "$work/metrics.jsonl" "$work/expected_losses.json"
