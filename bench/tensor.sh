#!/usr/bin/env bash
# tensor.sh - tensor parallelism against the rest, measured: two forked
# CPU workers of one thread over shm, the second slowed 2x (hgtrain
# --devices cpu:2 --threads 1 --rank-slowdown 1,2; the cluster
# examples/clusters/shm-2cpu-slow2-40mb.cfg with the memory cap lifted),
# training a BERT whose feed-forward layer is most of the work (1 layer,
# d 256, FFN 8192, a global batch of 16; HG_BENCH_MODEL sets other
# --bert-* options).  Each row is simulated by hgplan (with the ops
# profile of these two workers) and measured by training with it, side by
# side in one run:
#   TP-S, TP-E  hgplan --tensor speed|even: every op in one tensor-parallel
#               group, shards in proportion to speed (2:1) or even;
#   EV-AR, CP-AR  data parallelism, even or by capacity (hgplan
#               --baseline, 8 op groups);
#   MP          HeteroG's model-parallel placement with its order;
#   PIPE-U, PIPE-S  hgplan's pipeline baselines (4 micro-batches a stage).
# Printed: each row's simulated and measured step time and their ratio,
# and TP-S's measured speedup over the fastest other row.  The step time
# is the median over the json log's intervals after the first
# (bench/hetero-tasks.sh).  No memory cap: tensor parallelism here holds
# more than a pipeline (the replicated ops' activations are whole on
# every rank), so a cap cannot shut data parallelism out and keep it.
#
# usage: bench/tensor.sh [BUILD_DIR]
#   env: HG_BENCH_UPDATES (40), HG_BENCH_REPEAT (1: each run that many
#        times, the median), HG_BENCH_PROFILE_DIR (the ops profile is
#        cached there), HG_BENCH_BATCH (16), HG_BENCH_MODEL
# Benchmarks are reports, not tests: a run that fails is printed as such
# and the script goes on.  Run it on an idle machine: the two workers need
# a core each.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-.}
HGTRAIN=${HGTRAIN:-$build/hgtrain}
HGPLAN=${HGPLAN:-$build/hgplan}
HGPRE=${HGPREPROCESS:-$build/hgpreprocess}
updates=${HG_BENCH_UPDATES:-40}
fm=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
slowdown=1,2
interval=$((updates / 4 > 10 ? 10 : (updates / 4 > 0 ? updates / 4 : 1)))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
profdir=${HG_BENCH_PROFILE_DIR:-$work}
mkdir -p "$profdir" || exit 1
read -r -a model <<<"${HG_BENCH_MODEL:---bert-layers 1 --bert-embed-dim 256 --bert-ffn-dim 8192 --activation-fn gelu}"
sed "s/memory = \"40MB\"/memory = \"11GiB\"/" "$src/examples/clusters/shm-2cpu-slow2-40mb.cfg" \
    >"$work/c.cfg"
echo "date: $(date -u '+%F %T') UTC; $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown); $updates updates, 2 workers x 1 thread over shm, --rank-slowdown $slowdown"

. "$src/bench/hetero-tasks.sh"

sim_of() { awk -v r="$1" '$1 == r && $3 == "s" { print $2; exit }' "$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }
row() { # strategy simulated-s measured-s|failed
    local meas=failed
    [ "$3" = failed ] || meas=$(ms "$3")
    printf '%-9s %13s %13s %9s\n' "$1" "$(ms "$2")" "$meas" "$(ratio "$3" "$2")"
}

HG_BENCH_BATCH=${HG_BENCH_BATCH:-16}
set_task bert || { echo "bert: no data" >&2; exit 1; }
pargs+=("${model[@]}")
targs+=("${model[@]}")
priced_len bert || { echo "bert: --plan failed" >&2; exit 1; }
prof=$profdir/bert-tp-$len-x2.cfg
if [ ! -s "$prof" ]; then
    "$HGPLAN" "${pargs[@]}" --profile-out "$prof" --profile-threads 1 --profile-worlds 2 \
        --profile-slowdown 2 --profile-repeats 7 >"$work/profile.log" 2>&1 ||
        { tail -n 3 "$work/profile.log" >&2; echo "the ops profile failed"; exit 1; }
fi
plan=("${pargs[@]}" --profile "$prof" --cluster "$work/c.cfg")
echo
echo "bert ${model[*]}, global batch $batch, priced at length $len"
for k in speed even; do
    "$HGPLAN" "${plan[@]}" --tensor "$k" --out "$work/tp-$k.cfg" >"$work/tp-$k.plan" 2>&1 ||
        tail -n 3 "$work/tp-$k.plan" >&2
done
for b in EV-AR CP-AR MP; do
    "$HGPLAN" "${plan[@]}" --search baselines --groups 8 --baseline "$b" --out "$work/$b.cfg" \
        >"$work/$b.plan" 2>&1 || tail -n 3 "$work/$b.plan" >&2
done
for k in uniform speed; do
    "$HGPLAN" "${plan[@]}" --pipeline "$k" --out "$work/pipe-$k.cfg" >"$work/pipe-$k.plan" 2>&1 ||
        tail -n 3 "$work/pipe-$k.plan" >&2
done
printf '%-9s %13s %13s %9s\n' strategy "simulated ms" "measured ms" "meas/sim"
best=0 best_name=-
run_row() { # name strategy-file plan-file plan-row
    local t=failed
    [ -s "$2" ] && t=$(measure "$1" --max-sentences "$batch" --cluster-file "$work/c.cfg" \
        --strategy "$2")
    row "$1" "$(sim_of "$4" "$3")" "$t"
    eval "t_${1//-/_}=\$t"
}
run_row TP-S "$work/tp-speed.cfg" "$work/tp-speed.plan" TP-S
run_row TP-E "$work/tp-even.cfg" "$work/tp-even.plan" TP-E
for b in EV-AR CP-AR MP; do
    run_row "$b" "$work/$b.cfg" "$work/$b.plan" "$b"
done
run_row PIPE-U "$work/pipe-uniform.cfg" "$work/pipe-uniform.plan" pipeline
run_row PIPE-S "$work/pipe-speed.cfg" "$work/pipe-speed.plan" pipeline
for n in EV_AR CP_AR MP PIPE_U PIPE_S; do
    t=$(eval "echo \$t_$n")
    [ "$t" = failed ] && continue
    awk -v t="$t" -v b="$best" 'BEGIN { exit !(b == 0 || t < b) }' && best=$t best_name=${n//_/-}
done
echo "TP-S's speedup, measured: $(ratio "$best" "$t_TP_S")x over the fastest other row ($best_name)"
