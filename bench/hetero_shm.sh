#!/usr/bin/env bash
# hetero_shm.sh - planned strategies on one machine with one worker slowed
# 3x: two forked CPU workers of one thread over shm (hgtrain --devices
# cpu:2 --threads 1 --rank-slowdown 1,3), described to the planner by
# examples/clusters/shm-2cpu-slow3.cfg (device 1 with time_share 0.3333,
# both priced by the profiled device cpu-t1).  For each task and each
# strategy, hgplan's simulated step time beside the step time measured by
# running it, as bench/hetero.sh does over tcp between namespaces, but
# with no root and no network: what is compared is the planner's model of
# a slow device (every compute time divided by time_share) with the
# executor's emulation of one (every compute op slowed 3x, communication
# not; graph/exec.c hg_exec_set_slowdown).
#   tasks: mnist (global batch 128, SGD, dropout 0), bert (the small
#     Transformer of tests/strategy_mp.sh, global batch 32, Adam, dropout 0)
#     and translation (2+2 layers, d 64, FFN 128, 4 heads, global batch 32,
#     Adam, dropout 0); the sequence tasks planned and profiled at the
#     length hgtrain --plan prices (its log says it: the root mean square
#     over the epoch's batches, sorted by length, of their longest sample);
#   ops: measured once per task on this machine (hgplan --profile-out
#     --profile-threads 1 --profile-slowdown F --profile-worlds 2: devices
#     cpu-t1 and cpu-t1-xF, the last process slowed F times as the run
#     slows rank 1, and the shm links of 2 workers);
#   strategies: the baselines EV-AR EV-PS CP-AR CP-PS MP (hgplan --search
#     baselines --baseline B --out S.cfg, MP with --groups 8 as in
#     tests/strategy_mp.sh; run with hgtrain --strategy S.cfg) and mcmc
#     (hgtrain --plan mcmc --plan-budget HG_BENCH_BUDGET: the search
#     restricted to what hgtrain executes, its table logged, then trained
#     with); the pipelines PIPE-U and PIPE-S (hgplan --pipeline uniform or
#     speed --micro-batches HG_BENCH_MICRO (8), 1f1b: one stage per
#     worker); plus plain-DP, hgtrain's own data parallelism (no --strategy,
#     equal --max-sentences per rank), the reference for EV-AR, simulated
#     by hgplan --dp.
# The step time is the median over the json log's intervals after the
# first (HG_BENCH_UPDATES / 4 updates each, 10 from 40 updates on).
#
# usage: bench/hetero_shm.sh [BUILD_DIR]
#   env: HG_BENCH_TASKS ("mnist bert translation"), HG_BENCH_STRATEGIES ("plain-DP EV-AR
#        EV-PS CP-AR CP-PS MP PIPE-U PIPE-S mcmc mcmc-split"), HG_BENCH_UPDATES (40), HG_BENCH_BUDGET
#        (mcmc's seconds: 20), HG_BENCH_CLUSTER (the cluster file),
#        HG_BENCH_SLOWDOWN (--rank-slowdown: 1,3; the cluster file must
#        agree), HG_BENCH_PROFILE_DIR (TASK-LEN-xF.cfg there is used as the ops
#        profile when it exists, else measured and written there),
#        HG_BENCH_PROFILE_REPEATS (7), HG_BENCH_REPEAT (1: each training run
#        that many times, the median of their step times), HG_FASHION_MNIST
# Benchmarks are reports, not tests: a run that fails is printed as such
# and the script goes on.  Run it on an idle machine: the two workers need
# a core each (the slowed one sleeps most of its time).
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-.}
HGTRAIN=${HGTRAIN:-$build/hgtrain}
HGPLAN=${HGPLAN:-$build/hgplan}
HGPRE=${HGPREPROCESS:-$build/hgpreprocess}
tasks=${HG_BENCH_TASKS:-mnist bert translation}
strategies=${HG_BENCH_STRATEGIES:-plain-DP EV-AR EV-PS CP-AR CP-PS MP PIPE-U PIPE-S mcmc mcmc-split}
updates=${HG_BENCH_UPDATES:-40}
budget=${HG_BENCH_BUDGET:-20}
cfg=${HG_BENCH_CLUSTER:-$src/examples/clusters/shm-2cpu-slow3.cfg}
slowdown=${HG_BENCH_SLOWDOWN:-1,3}
repeats=${HG_BENCH_PROFILE_REPEATS:-7}
fm=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
# 4 log intervals or more, of at most 10 updates
interval=$((updates / 4 > 10 ? 10 : (updates / 4 > 0 ? updates / 4 : 1)))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
profdir=${HG_BENCH_PROFILE_DIR:-$work}
mkdir -p "$profdir" || exit 1
echo "date: $(date -u '+%F %T') UTC; $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown); $updates updates, 2 workers x 1 thread over shm, --rank-slowdown $slowdown, cluster $(basename "$cfg")"

. "$src/bench/hetero-tasks.sh"

row() { # task strategy simulated-s measured-s|failed
    ratio=$(awk -v a="$4" -v b="$3" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }')
    meas=failed
    [ "$4" = failed ] || meas=$(ms "$4")
    printf '%-6s %-9s %13s %13s %9s\n' "$1" "$2" "$(ms "$3")" "$meas" "$ratio"
}

printf '%-6s %-9s %13s %13s %9s\n' task strategy "simulated ms" "measured ms" "meas/sim"
for task in $tasks; do
    set_task "$task" || { echo "$task: no data" >&2; continue; }
    # the length --plan prices, for hgplan's baselines and the profile too
    priced_len "$task" || { echo "$task: --plan failed" >&2; continue; }
    echo "$task: priced at length $len"
    prof=$profdir/$task-$len-x${slowdown##*,}.cfg
    if [ ! -s "$prof" ]; then
        "$HGPLAN" "${pargs[@]}" --profile-out "$prof" --profile-threads 1 --profile-worlds 2 \
            --profile-slowdown "${slowdown##*,}" --profile-repeats "$repeats" \
            >"$work/$task-profile.log" 2>&1 ||
            { tail -n 3 "$work/$task-profile.log" >&2; echo "$task: the ops profile failed"; continue; }
    fi
    for s in $strategies; do
        sim=- meas=failed
        case $s in
        plain-DP)
            # hgtrain's own data parallelism: equal budgets, AllReduce buckets
            "$HGPLAN" "${pargs[@]}" --cluster "$cfg" --profile "$prof" --dp \
                >"$work/$task-$s.plan" 2>&1 &&
                sim=$(awk '$1 == "dp" && $3 == "s" { print $2; exit }' "$work/$task-$s.plan")
            meas=$(measure "$task-$s" --max-sentences $((batch / 2)))
            ;;
        mcmc|mcmc-split)
            # planned by hgtrain (executable strategies only), its table
            # logged; mcmc-split: split strategies too (--plan-split)
            split=()
            [ "$s" = mcmc-split ] && split=(--plan-split)
            meas=$(measure "$task-$s" --max-sentences "$batch" --cluster-file "$cfg" --plan mcmc \
                --plan-budget "$budget" --plan-profile "$prof" "${split[@]}")
            sim=$(sed -n 's/.*"message": " *[A-Za-z+-]*  *\([0-9.]*\) s  .*  <- chosen".*/\1/p' "$work/$task-$s.log" | head -n 1)
            ;;
        PIPE-U|PIPE-S)
            # a pipeline over the two workers, one stage each: equal forward
            # op counts (PIPE-U) or forward time in proportion to speed
            # (PIPE-S), HG_BENCH_MICRO micro-batches, 1f1b
            kind=uniform
            [ "$s" = PIPE-S ] && kind=speed
            if ! "$HGPLAN" "${pargs[@]}" --cluster "$cfg" --profile "$prof" --pipeline "$kind" \
                --micro-batches "${HG_BENCH_MICRO:-8}" --out "$work/$task-$s.cfg" \
                >"$work/$task-$s.plan" 2>&1; then
                tail -n 3 "$work/$task-$s.plan" >&2
                row "$task" "$s" - failed
                continue
            fi
            sim=$(awk '$1 == "pipeline" && $3 == "s" { print $2; exit }' "$work/$task-$s.plan")
            meas=$(measure "$task-$s" --max-sentences "$batch" --cluster-file "$cfg" \
                --strategy "$work/$task-$s.cfg")
            ;;
        *)
            groups=()
            [ "$s" = MP ] && groups=(--groups 8)
            if ! "$HGPLAN" "${pargs[@]}" --cluster "$cfg" --profile "$prof" --search baselines \
                "${groups[@]}" --baseline "$s" --out "$work/$task-$s.cfg" \
                >"$work/$task-$s.plan" 2>&1; then
                tail -n 3 "$work/$task-$s.plan" >&2
                row "$task" "$s" - failed
                continue
            fi
            sim=$(awk -v s="$s" '$1 == s && $3 == "s" { print $2; exit }' "$work/$task-$s.plan")
            meas=$(measure "$task-$s" --max-sentences "$batch" --cluster-file "$cfg" \
                --strategy "$work/$task-$s.cfg")
            ;;
        esac
        row "$task" "$s" "${sim:--}" "$meas"
    done
done
