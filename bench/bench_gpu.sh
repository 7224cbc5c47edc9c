#!/usr/bin/env bash
# bench_gpu.sh - training speed of `hgtrain --devices cuda:0 --task
# translation` (transformer_small and transformer_base shapes) on one GPU:
# target tokens/s of forward + backward + update, achieved model TFLOP/s
# (6 x parameters x tokens per second, the usual model-FLOPs count; the
# attention score products are left out, so it is a lower bound) and
# model-FLOP utilisation against the device's fp32 peak (hgtrain runs fp32
# without TF32), and the same model in PyTorch on the same GPU with the same
# batch shape (bench/torch_translation.py --device cuda), measured in the
# same run, with the ratio ours / PyTorch.
#
# usage: bench/bench_gpu.sh [BUILD_DIR]     (on a machine with a GPU)
#   env: HGTRAIN, HGPREPROCESS (default BUILD_DIR's), TORCH_PYTHON (python3),
#        HG_BENCH_UPDATES (40), HG_BENCH_MAX_TOKENS (8192),
#        HG_GPU_PEAK_TFLOPS (peak; default from the device name: fp32
#        H100 SXM 67, H200 67, A100 19.5, V100 15.7; bf16/fp16 dense tensor
#        cores H100/H200 989, A100 312, V100 125),
#        HG_BENCH_PRECISION (fp32 | bf16 | fp16: ours --bf16/--fp16, PyTorch
#        under torch.autocast with the same dtype),
#        HG_BENCH_ARGS (more hgtrain options, e.g. "--distributed-backend nccl
#        --bucket-cap-mb 25": one GPU running the bucketed NCCL path),
#        HG_BENCH_ARCHS ("transformer_small transformer_base"; also
#        transformer_big: 6+6 layers, d 1024, 16 heads, FFN 4096, e.g. with
#        HG_BENCH_MAX_TOKENS=16384),
#        HG_BENCH_TORCH (1; 0: ours only)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-.}
HGTRAIN=${HGTRAIN:-$build/hgtrain}
HGPRE=${HGPREPROCESS:-$build/hgpreprocess}
py=${TORCH_PYTHON:-python3}
updates=${HG_BENCH_UPDATES:-40}
maxtok=${HG_BENCH_MAX_TOKENS:-8192}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true)
prec=${HG_BENCH_PRECISION:-fp32}
peak=${HG_GPU_PEAK_TFLOPS:-}
if [ -z "$peak" ]; then
    case "$prec:$gpu" in
    fp32:*H100*|fp32:*H200*) peak=67 ;;
    fp32:*A100*) peak=19.5 ;;
    fp32:*V100*) peak=15.7 ;;
    *:*H100*|*:*H200*) peak=989 ;;
    *:*A100*) peak=312 ;;
    *:*V100*) peak=125 ;;
    *) peak=0 ;;
    esac
fi
ours_flag= torch_flag=
[ "$prec" != fp32 ] && ours_flag=--$prec torch_flag="--autocast $prec"
extra=${HG_BENCH_ARGS:-}
archs=${HG_BENCH_ARCHS:-transformer_small transformer_base}
with_torch=${HG_BENCH_TORCH:-1}
echo "date: $(date -u '+%F %T') UTC; GPU: ${gpu:-unknown}; $prec; peak ${peak} TFLOP/s${extra:+; hgtrain $extra}"
"$HGPRE" translation --source-lang en --target-lang es \
    --trainpref "$src/tests/data/corpus" --validpref "$src/tests/data/corpus" \
    --destdir "$work/mt" --bpe-merges 2000 >/dev/null
vs=$(wc -l <"$work/mt/dict.en.txt")
vt=$(wc -l <"$work/mt/dict.es.txt")
printf '%-18s %12s %12s %9s %7s %12s %7s\n' model "ours tok/s" "torch tok/s" ratio TFLOP/s "MFU" "params"
for arch in $archs; do
    case $arch in
    transformer_small) L=3 D=256 H=4 F=1024 ;;
    transformer_base) L=6 D=512 H=8 F=2048 ;;
    transformer_big) L=6 D=1024 H=16 F=4096 ;;
    esac
    "$HGTRAIN" --task translation --data "$work/mt" --source-lang en --target-lang es \
        --arch $arch --optimizer adam --adam-betas '(0.9, 0.98)' --lr 0.0005 \
        --max-tokens "$maxtok" --max-update "$updates" --log-interval $((updates / 2)) \
        --devices cuda:0 --validate-interval 0 --no-save --log-format json $ours_flag $extra \
        >"$work/$arch.log" 2>&1 || { cat "$work/$arch.log"; exit 1; }
    last=$(grep '"update"' "$work/$arch.log" | tail -n 1)
    wps=$(echo "$last" | sed 's/.*"wps": \([0-9.]*\).*/\1/')
    wpb=$(echo "$last" | sed 's/.*"wpb": \([0-9.]*\).*/\1/')
    bsz=$(echo "$last" | sed 's/.*"bsz": \([0-9.]*\).*/\1/')
    np=$(sed -n 's/.*[^0-9]\([0-9][0-9]*\) parameters, .*/\1/p' "$work/$arch.log" | head -n 1)
    B=$(awk -v b="$bsz" 'BEGIN { printf "%d", b + 0.5 }')
    T=$(awk -v w="$wpb" -v b="$bsz" 'BEGIN { printf "%d", w / b + 0.5 }')
    torch=0
    if [ "$with_torch" = 1 ]; then
        line=$("$py" "$src/bench/torch_translation.py" --device cuda --batch "$B" \
            --src-len "$T" --tgt-len "$T" --vsrc $((vs + 4)) --vtgt $((vt + 4)) \
            --layers $L --dim $D --heads $H --ffn $F --steps 30 $torch_flag)
        torch=$(echo "$line" | sed 's/.*tokens_per_s \([0-9.]*\).*/\1/')
    fi
    awk -v m=$arch -v a="$wps" -v b="$torch" -v n="${np:-0}" -v p="$peak" 'BEGIN {
        tf = 6 * n * a / 1e12;
        mfu = p > 0 ? 100 * tf / p : 0;
        printf "%-18s %12.0f %12.0f %9.2f %7.2f %6.1f%% %12d\n", m, a, b, (b > 0 ? a / b : 0), tf, mfu, n }'
    echo "  ($arch: batches of $bsz sentences, $wpb target tokens; torch on $B x $T)"
done
