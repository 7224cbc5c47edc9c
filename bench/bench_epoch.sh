#!/usr/bin/env bash
# bench_epoch.sh - one MNIST epoch end to end: hgtrain (shards written by
# hgpreprocess, loader with prefetch, training steps, no validation, no
# checkpoint) against the same model, batch, optimizer and threads in
# PyTorch (bench/torch_mnist_epoch.py, data in memory).
#
# usage: bench/bench_epoch.sh [BUILD_DIR]     env: HG_BENCH_THREADS (default 2)
# Prints both epoch times and the ratio ours / torch (target <= 1.0).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-.}
threads=${HG_BENCH_THREADS:-2}
fm=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
py=${TORCH_PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "date: $(date -u '+%F %T') UTC; load: $(uptime | sed 's/.*load/load/')"
"$build/hgpreprocess" images --fashion-mnist "$fm" --out "$work/fm" >/dev/null
"$build/hgtrain" --task mnist --data "$work/fm" --valid-subset test --batch-size 64 \
    --optimizer sgd --momentum 0.9 --lr 0.01 --max-epoch 1 --validate-interval 0 \
    --no-save --threads "$threads" --log-format json --log-interval 100000 \
    >"$work/ours.log" 2>&1 || { cat "$work/ours.log"; exit 1; }
ours=$(grep '"update"' "$work/ours.log" | tail -n 1 | sed 's/.*"wall": \([0-9.]*\).*/\1/')
echo "epoch ours seconds $ours updates $(grep -o '"update": [0-9]*' "$work/ours.log" | tail -n 1 | cut -d' ' -f2)"
# PyTorch: its best configuration on this machine (bench/RESULTS.md: the
# OpenBLAS core hgtrain runs, bench/torch-env; mkldnn on)
line=$("$src/bench/torch-env" "$py" "$src/bench/torch_mnist_epoch.py" --data "$fm" --threads "$threads")
echo "$line"
torch=$(echo "$line" | sed 's/.*seconds \([0-9.]*\).*/\1/')
awk -v a="$ours" -v b="$torch" -v t="$threads" \
    'BEGIN { printf "mnist_epoch threads %d ours_s %.1f torch_s %.1f ratio %.2f\n", t, a, b, a / b }'
