#!/usr/bin/env bash
# bench_translation.sh - training speed of `hgtrain --task translation
# --arch transformer_small` (3+3 layers, d 256, 4 heads, ffn 1024, dropout
# 0.1, label smoothing 0.1, Adam) in target tokens/s of forward + backward +
# update, against the same model in PyTorch on the same threads and the
# same batch shape (bench/torch_translation.py: B sentences of the average
# source/target length of our batches, no padding), measured in the same
# run. Prints both and the ratio ours / PyTorch (target >= 1.0).
#
# usage: bench/bench_translation.sh [BUILD_DIR]
#   env: HG_BENCH_THREADS (2), HG_BENCH_UPDATES (60), HG_BENCH_MAX_TOKENS
#        (2048), HG_BENCH_DATA (a preprocessed translation dir; default:
#        tests/data/corpus.{en,es} with 2000 BPE merges)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-.}
threads=${HG_BENCH_THREADS:-2}
updates=${HG_BENCH_UPDATES:-60}
maxtok=${HG_BENCH_MAX_TOKENS:-2048}
py=${TORCH_PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "date: $(date -u '+%F %T') UTC; threads $threads; load: $(uptime | sed 's/.*load/load/')"
data=${HG_BENCH_DATA:-}
if [ -z "$data" ]; then
    data=$work/mt
    "$build/hgpreprocess" translation --source-lang en --target-lang es \
        --trainpref "$src/tests/data/corpus" --validpref "$src/tests/data/corpus" \
        --destdir "$data" --bpe-merges 2000 >/dev/null
fi
"$build/hgtrain" --task translation --data "$data" --source-lang en --target-lang es \
    --arch transformer_small --optimizer adam --adam-betas '(0.9, 0.98)' --lr 0.0005 \
    --max-tokens "$maxtok" --max-update "$updates" --log-interval $((updates / 2)) \
    --threads "$threads" --validate-interval 0 --no-save --log-format json \
    >"$work/ours.log" 2>&1 || { cat "$work/ours.log"; exit 1; }
last=$(grep '"update"' "$work/ours.log" | tail -n 1)
wps=$(echo "$last" | sed 's/.*"wps": \([0-9.]*\).*/\1/')
wpb=$(echo "$last" | sed 's/.*"wpb": \([0-9.]*\).*/\1/')
bsz=$(echo "$last" | sed 's/.*"bsz": \([0-9.]*\).*/\1/')
vs=$(wc -l <"$data/dict.en.txt")
vt=$(wc -l <"$data/dict.es.txt")
B=$(awk -v b="$bsz" 'BEGIN { printf "%d", b + 0.5 }')
T=$(awk -v w="$wpb" -v b="$bsz" 'BEGIN { printf "%d", w / b + 0.5 }')
echo "ours  transformer_small: $wps target tokens/s (batches of $bsz sentences, $wpb target tokens)"
line=$("$src/bench/torch-env" "$py" "$src/bench/torch_translation.py" --threads "$threads" \
    --batch "$B" --src-len "$T" --tgt-len "$T" --vsrc $((vs + 4)) --vtgt $((vt + 4)))
echo "$line ($B x $T)"
torch=$(echo "$line" | sed 's/.*tokens_per_s \([0-9.]*\).*/\1/')
awk -v a="$wps" -v b="$torch" 'BEGIN { printf "ratio ours / torch (tokens/s): %.2f\n", a / b }'
