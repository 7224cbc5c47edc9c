#!/usr/bin/env bash
# bench_dist.sh - training speed of forked data-parallel workers on this
# machine: updates/s of the mnist CNN (Fashion-MNIST, global batch 128)
# and of the small Transformer (bert task, 2 layers, d 128, global batch 32
# sequences of <= 64 tokens) with 1 worker using every core against W
# workers sharing them (--devices cpu:W, threads = cores / W), same global
# batch, same updates, measured in the same run.  Prints updates/s and the
# ratio W workers / 1 worker (1.0: data parallelism costs nothing here).
# MNIST also runs in PyTorch DistributedDataParallel (gloo, the same world,
# threads, global batch and model; bench/torch_ddp_mnist.py, data in
# memory) and prints ours / PyTorch (updates/s, > 1: we are faster).
#
# usage: bench/bench_dist.sh [BUILD_DIR]    env: HG_BENCH_UPDATES (200),
#        HG_BENCH_WORKERS (2), HG_FASHION_MNIST
set -euo pipefail
py=${TORCH_PYTHON:-/usr/bin/python3}
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-.}
updates=${HG_BENCH_UPDATES:-200}
workers=${HG_BENCH_WORKERS:-2}
fm=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
cores=$(nproc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "date: $(date -u '+%F %T') UTC; $cores cores; load: $(uptime | sed 's/.*load/load/')"
"$build/hgpreprocess" images --fashion-mnist "$fm" --out "$work/fm" >/dev/null
awk 'NR % 15 == 0 { print "" } { print }' "$src/tests/data/corpus.en" >"$work/lm.txt"
"$build/hgpreprocess" lm --input "$work/lm.txt" --destdir "$work/lm" --bpe-merges 500 \
    --max-seq-len 64 --max-predictions 10 --dupe-factor 5 --seed 7 >/dev/null

# updates/s over the second half of the run (plans built, caches warm)
ups() { grep '"update"' "$1" | tail -n 1 | sed 's/.*"ups": \([0-9.]*\).*/\1/'; }
one() { # name log-file args...
    local name=$1 log=$2
    shift 2
    "$build/hgtrain" "$@" --max-update "$updates" --log-interval $((updates / 2)) \
        --log-format json --validate-interval 0 --no-save >"$log" 2>&1 ||
        { cat "$log"; exit 1; }
}
split() { # global n -> "a,b,..." over the workers (multiples of 8 where possible)
    awk -v n="$1" -v w="$workers" 'BEGIN { b = int(n / w / 8) * 8; if (b < 1) b = int(n / w);
        s = ""; r = n; for (i = 1; i <= w; i++) { v = (i < w) ? b : r; r -= v;
        s = s (i > 1 ? "," : "") v } print s }'
}
for model in mnist bert; do
    if [ $model = mnist ]; then
        args=(--task mnist --data "$work/fm" --valid-subset test --optimizer sgd --momentum 0.9
              --lr 0.01 --dropout 0)
        global=128
    else
        args=(--task bert --data "$work/lm" --optimizer adam --lr 0.0005 --dropout 0)
        global=32
    fi
    one "$model-1" "$work/$model-1.log" "${args[@]}" --max-sentences $global --threads "$cores"
    per=$((cores / workers > 0 ? cores / workers : 1))
    one "$model-$workers" "$work/$model-w.log" "${args[@]}" --devices cpu:$workers \
        --max-sentences-per-rank "$(split $global)" --threads $per
    a=$(ups "$work/$model-1.log")
    b=$(ups "$work/$model-w.log")
    awk -v m=$model -v a="$a" -v b="$b" -v w="$workers" -v c="$cores" -v g=$global \
        'BEGIN { printf "%-6s global batch %3d: 1 worker x %d threads %7.2f updates/s | %d workers x %d threads %7.2f updates/s | ratio %.2f\n",
                 m, g, c, a, w, (c / w >= 1 ? c / w : 1), b, b / a }'
    if [ $model = mnist ] && "$py" -c 'import torch' 2>/dev/null; then
        for w in 1 "$workers"; do
            t=$((cores / w > 0 ? cores / w : 1))
            ours=$a
            [ "$w" = 1 ] || ours=$b
            line=$("$src/bench/torch-env" "$py" "$src/bench/torch_ddp_mnist.py" \
                --world "$w" --threads "$t" --batch $global --updates "$updates")
            echo "       $line"
            torch=$(echo "$line" | sed 's/.*updates_per_s \([0-9.]*\).*/\1/')
            awk -v w="$w" -v o="$ours" -v t="$torch" \
                'BEGIN { printf "mnist  %d worker(s): ours %.2f vs PyTorch DDP %.2f updates/s: ratio %.2f\n", w, o, t, o / t }'
        done
    fi
done
