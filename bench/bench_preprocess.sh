#!/usr/bin/env bash
# bench_preprocess.sh - hgpreprocess translation throughput on a 1M-sentence
# parallel corpus made here from the committed test corpus (2000 aligned
# en-es lines, repeated with a line number prefix so that sentences differ).
#
# usage: bench/bench_preprocess.sh [BUILD_DIR] [LINES]   (default: . 1000000)
# Prints: preprocess <what> sentences N seconds S sentences_per_s R
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-.}
lines=${2:-1000000}
hgp=$build/hgpreprocess
[ -x "$hgp" ] || { echo "no $hgp: build first (make)"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make_side() { # lang
    awk -v n="$lines" 'BEGIN { i = 0 }
        { a[i++] = $0 }
        END { for (k = 0; k < n; k++) printf "%d %s\n", int(k / i), a[k % i] }' \
        "$src/tests/data/corpus.$1" >"$work/train.$1"
    head -n 2000 "$src/tests/data/corpus.$1" >"$work/valid.$1"
}
make_side en
make_side es
echo "corpus: $(wc -l <"$work/train.en") lines, $(du -sh "$work" | cut -f1)"
echo "load: $(uptime)"

run() { # name args...
    local name=$1
    shift
    local t0 t1
    t0=$(date +%s.%N)
    "$hgp" translation --source-lang en --target-lang es \
        --trainpref "$work/train" --validpref "$work/valid" "$@" >/dev/null
    t1=$(date +%s.%N)
    awk -v n="$lines" -v a="$t0" -v b="$t1" -v w="$name" \
        'BEGIN { printf "preprocess %s sentences %d seconds %.2f sentences_per_s %.0f\n", w, n, b - a, n / (b - a) }'
}
run learn_bpe_10k_merges --bpe-merges 10000 --num-shards 8 --destdir "$work/out1"
run apply_codes --bpe-codes "$work/out1/codes" --num-shards 8 --destdir "$work/out2"
