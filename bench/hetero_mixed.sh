#!/usr/bin/env bash
# hetero_mixed.sh - planned strategies on the most heterogeneous cluster one
# lent machine gives: its GPU and CPU workers in one job (hgtrain --devices
# cuda:0,cpu:N --distributed-backend shm; the GPU's tensors through its host
# mirror), described to the planner by examples/clusters/cuda1-cpu2.cfg
# with both kinds profiled on the machine (hgplan --profile-out
# --profile-gpus 0 --profile-threads T, T = cores / (N + 1), and the shm
# links of N + 1 workers).  For each strategy, hgplan's simulated step time
# beside the measured one, as bench/hetero_shm.sh does for a slowed CPU
# worker:
#   gpu-only: the GPU alone with the whole batch (no CPU worker): what a
#     user gets without the CPU workers;
#   plain-DP: hgtrain's own data parallelism over all workers, each rank's
#     rows proportional to its measured speed (--max-sentences-per-rank,
#     HetSeq's way);
#   EV-AR CP-AR MP: hgplan's baselines run by --strategy (AllReduce: the
#     PS baselines run too but a GPU PS goes through the host as well);
#   mcmc, mcmc-split: hgtrain --plan mcmc [--plan-split] with the profile.
# The speeds of the two kinds (each alone, updates/s) go into the cluster
# copy as `speed`, the capacities of the CP baselines.  The step time is the
# median over the json log's intervals after the first.
#
# usage: bench/hetero_mixed.sh [BUILD_DIR]      (on a machine with a GPU)
#   env: HG_BENCH_NCPU (CPU workers: 2), HG_BENCH_UPDATES (30),
#        HG_BENCH_BATCH (global batch: 256), HG_BENCH_BUDGET (mcmc's
#        seconds: 15), HG_BENCH_STRATEGIES ("gpu-only plain-DP EV-AR CP-AR
#        MP mcmc mcmc-split"), HG_FASHION_MNIST
# A report, not a test: without a GPU it says so and exits 0.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-.}
HGTRAIN=${HGTRAIN:-$build/hgtrain}
HGPLAN=${HGPLAN:-$build/hgplan}
HGPRE=${HGPREPROCESS:-$build/hgpreprocess}
TESTCUDA=${TEST_CUDA:-$build/tests/test_cuda}
ncpu=${HG_BENCH_NCPU:-2}
updates=${HG_BENCH_UPDATES:-30}
batch=${HG_BENCH_BATCH:-256}
budget=${HG_BENCH_BUDGET:-15}
strategies=${HG_BENCH_STRATEGIES:-gpu-only plain-DP EV-AR CP-AR MP mcmc mcmc-split}
fm=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
interval=$((updates / 4 > 10 ? 10 : (updates / 4 > 0 ? updates / 4 : 1)))
if ! "$TESTCUDA" >/dev/null 2>&1; then
    echo "hetero_mixed.sh: no usable GPU here (tests/test_cuda): not measured"
    exit 0
fi
cores=$(nproc)
threads=$((cores / (ncpu + 1) > 0 ? cores / (ncpu + 1) : 1))
world=$((ncpu + 1))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "date: $(date -u '+%F %T') UTC; $cores cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); GPU: $("$TESTCUDA" 2>/dev/null | grep -m1 -i 'sm_' || echo '?')"
echo "commit: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown); mnist, global batch $batch, $updates updates; cuda:0 + $ncpu CPU workers of $threads threads over shm"
"$HGPRE" images --fashion-mnist "$fm" --out "$work/fm" >"$work/pre.log" 2>&1 ||
    { cat "$work/pre.log"; exit 1; }
pargs=(--task mnist --data "$work/fm" --dropout 0 --batch "$batch" --optimizer sgd)
targs=(--task mnist --data "$work/fm" --valid-subset test --dropout 0 --optimizer sgd
       --momentum 0.9 --lr 0.01 --log-format json --log-interval "$interval"
       --validate-interval 0 --no-save --max-update "$updates" --rebalance-interval 0
       --seed 1 --threads "$threads" --required-batch-size-multiple 1)
step_time() { # the median step time (s) of a json log's intervals after the first
    sed -n 's/.*"ups": \([0-9.]*\).*/\1/p' "$1" | tail -n +2 | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
             m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
             printf "%.5f", (m > 0 ? 1 / m : 0) }'
}
ms() { awk -v s="$1" 'BEGIN { if (s + 0 > 0) printf "%.1f", s * 1000; else print "-" }'; }
train() { # tag args...
    tag=$1
    shift
    "$HGTRAIN" "${targs[@]}" "$@" >"$work/$tag.log" 2>&1 || { tail -n 3 "$work/$tag.log" >&2; return 1; }
}
mixed=(--devices "cuda:0,cpu:$ncpu" --distributed-backend shm)

# each kind alone: its speed (the capacities) and the gpu-only row
train gpu-alone --devices cuda:0 --max-sentences "$batch" || exit 1
train cpu-alone --devices cpu --max-sentences "$batch" || exit 1
tg=$(step_time "$work/gpu-alone.log") tc=$(step_time "$work/cpu-alone.log")
echo "alone at batch $batch: cuda:0 $(ms "$tg") ms, one CPU worker of $threads threads $(ms "$tc") ms"
cfg=$work/cluster.cfg
sg=$(awk -v g="$tg" -v c="$tc" 'BEGIN { printf "%.4f", c / g }')
sed -e "s/count = 2;/count = $ncpu;/" \
    -e "s/profile = \"cuda-0\";/profile = \"cuda-0\"; speed = $sg;/" \
    -e "s/profile = \"cpu-t5\";/profile = \"cpu-t$threads\"; speed = 1.0;/" \
    "$src/examples/clusters/cuda1-cpu2.cfg" >"$cfg"
"$HGPLAN" --cluster "$cfg" | grep 'rank capacities'
prof=$work/profile.cfg
"$HGPLAN" "${pargs[@]}" --profile-out "$prof" --profile-threads "$threads" --profile-gpus 0 \
    --profile-worlds "$world" >"$work/profile.log" 2>&1 ||
    { tail -n 5 "$work/profile.log"; echo "the profile failed"; exit 1; }

printf '%-10s %13s %13s %9s\n' strategy "simulated ms" "measured ms" "meas/sim"
row() { # strategy simulated-s measured-s|failed
    ratio=$(awk -v a="$3" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }')
    meas=failed
    [ "$3" = failed ] || meas=$(ms "$3")
    printf '%-10s %13s %13s %9s\n' "$1" "$(ms "$2")" "$meas" "$ratio"
}
for s in $strategies; do
    sim=- meas=failed
    case $s in
    gpu-only)
        meas=$tg
        ;;
    plain-DP)
        # rows per rank proportional to the measured speeds, at least one
        rows=$(awk -v b="$batch" -v n="$ncpu" -v s="$sg" 'BEGIN {
            c = int(b / (s + n)); if (c < 1) c = 1; g = b - n * c
            printf "%d", g; for (i = 0; i < n; i++) printf ",%d", c }')
        train plain-DP "${mixed[@]}" --max-sentences-per-rank "$rows" &&
            meas=$(step_time "$work/plain-DP.log")
        s="plain-DP ($rows)"
        ;;
    mcmc|mcmc-split)
        split=()
        [ "$s" = mcmc-split ] && split=(--plan-split)
        train "$s" "${mixed[@]}" --max-sentences "$batch" --cluster-file "$cfg" --plan mcmc \
            --plan-budget "$budget" --plan-profile "$prof" "${split[@]}" &&
            meas=$(step_time "$work/$s.log")
        sim=$(sed -n 's/.*"message": " *[A-Za-z+-]*  *\([0-9.]*\) s  .*  <- chosen".*/\1/p' "$work/$s.log" | head -n 1)
        ;;
    *)
        groups=()
        [ "$s" = MP ] && groups=(--groups 8)
        if "$HGPLAN" "${pargs[@]}" --cluster "$cfg" --profile "$prof" --search baselines \
            "${groups[@]}" --baseline "$s" --out "$work/$s.cfg" >"$work/$s.plan" 2>&1; then
            sim=$(awk -v s="$s" '$1 == s && $3 == "s" { print $2; exit }' "$work/$s.plan")
            train "$s" "${mixed[@]}" --max-sentences "$batch" --cluster-file "$cfg" \
                --strategy "$work/$s.cfg" && meas=$(step_time "$work/$s.log")
        else
            tail -n 3 "$work/$s.plan" >&2
        fi
        ;;
    esac
    row "$s" "${sim:--}" "$meas"
done
