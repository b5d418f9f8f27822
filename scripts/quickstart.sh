#!/usr/bin/env bash
# The quick start: set up and build dlc, export a small PyTorch MLP to ONNX,
# import it into the dlc dialect and run it on the reference evaluator, then
# compile it for training and train it 20 steps, beside PyTorch.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${DLC_BUILD_DIR:-$root/build}"
work="$build/quickstart"

bash "$root/scripts/build.sh"
mkdir -p "$work"
/usr/bin/python3 "$root/examples/quickstart/make_model.py" --out "$work"

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
