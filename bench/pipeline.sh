#!/usr/bin/env bash
# pipeline.sh - a pipeline where nothing else fits: two forked CPU workers
# of one thread over shm, the second slowed 2x (hgtrain --devices cpu:2
# --threads 1 --rank-slowdown 1,2), each with a memory cap below what data
# parallelism, model parallelism and one device alone need
# (examples/clusters/shm-2cpu-slow2-40mb.cfg; HG_BENCH_CAP sets another).
# Each row is simulated by hgplan and measured by training with it, side by
# side in one run:
#   planned   hgplan --search mcmc on the capped cluster: every strategy of
#             the previous space is out of memory there, and it chooses a
#             pipeline (its whole table is printed first);
#   PIPE-U, PIPE-S  hgplan's pipeline baselines on the capped cluster (one
#             stage per worker, equal forward op counts or forward time in
#             proportion to speed, 4 micro-batches per stage, 1f1b);
#   MP        the best of the previous space that keeps every device's
#             parameters apart: HeteroG's model-parallel placement (hgplan
#             --baseline MP --groups 8) with its list-scheduled order;
#   mcmc-old  hgtrain --plan mcmc without --plan-split: the search over the
#             previous space (no pipelines), planned anew by hgtrain.
# MP and mcmc-old do not fit under the cap (hgtrain refuses them, which is
# checked and printed), so they run on the same cluster with the cap
# lifted: what the previous space would give if the model fitted.
# Printed: each row's simulated and measured step time and their ratio
# (every pipeline row should be within 15% of its simulation), and the
# planned pipeline's speedup over MP and over mcmc-old, measured (target
# for MP: 1.5x).  The step time is the median over the json log's
# intervals after the first (bench/hetero-tasks.sh).
#
# usage: bench/pipeline.sh [BUILD_DIR]
#   env: HG_BENCH_TASKS ("mnist bert"; translation needs a cap of its own:
#        hgtrain holds its buffers at the longest sample, the planner prices
#        the mean length), HG_BENCH_UPDATES (40), HG_BENCH_CAP (the memory of
#        each device: 40MB for mnist, 30MB for bert), HG_BENCH_ITERS
#        (hgplan's proposals, 400), HG_BENCH_BUDGET (mcmc-old's seconds, 20),
#        HG_BENCH_REPEAT (1: each training run that many times, the median),
#        HG_BENCH_PROFILE_DIR (TASK-LEN-x2.cfg there is the ops profile when
#        it exists, else measured and written there), HG_BENCH_BATCH,
#        HG_FASHION_MNIST
# Benchmarks are reports, not tests: a run that fails is printed as such
# and the script goes on.  Run it on an idle machine: the two workers need
# a core each.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-.}
HGTRAIN=${HGTRAIN:-$build/hgtrain}
HGPLAN=${HGPLAN:-$build/hgplan}
HGPRE=${HGPREPROCESS:-$build/hgpreprocess}
tasks=${HG_BENCH_TASKS:-mnist bert}
updates=${HG_BENCH_UPDATES:-40}
# each device's memory: below what the previous space needs for the task
# (data parallelism, MP, one device alone, recomputation, its search)
default_cap() { case $1 in bert) echo 30MB ;; *) echo 40MB ;; esac; }
iters=${HG_BENCH_ITERS:-400}
budget=${HG_BENCH_BUDGET:-20}
fm=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
slowdown=1,2
interval=$((updates / 4 > 10 ? 10 : (updates / 4 > 0 ? updates / 4 : 1)))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
profdir=${HG_BENCH_PROFILE_DIR:-$work}
mkdir -p "$profdir" || exit 1
# the cluster with the cap lifted (the capped one per task, below)
sed "s/memory = \"40MB\"/memory = \"11GiB\"/" "$src/examples/clusters/shm-2cpu-slow2-40mb.cfg" \
    >"$work/nocap.cfg"
echo "date: $(date -u '+%F %T') UTC; $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown); $updates updates, 2 workers x 1 thread over shm, --rank-slowdown $slowdown"

. "$src/bench/hetero-tasks.sh"

# the simulated time of a plan table's row ROW in FILE
sim_of() { awk -v r="$1" '$1 == r && $3 == "s" { print $2; exit }' "$2"; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }

row() { # task strategy cluster simulated-s measured-s|failed
    local meas=failed
    [ "$5" = failed ] || meas=$(ms "$5")
    printf '%-11s %-9s %-6s %13s %13s %9s\n' "$1" "$2" "$3" "$(ms "$4")" "$meas" "$(ratio "$5" "$4")"
}

for task in $tasks; do
    set_task "$task" || { echo "$task: no data" >&2; continue; }
    priced_len "$task" || { echo "$task: --plan failed" >&2; continue; }
    prof=$profdir/$task-$len-x2.cfg
    if [ ! -s "$prof" ]; then
        "$HGPLAN" "${pargs[@]}" --profile-out "$prof" --profile-threads 1 --profile-worlds 2 \
            --profile-slowdown 2 --profile-repeats 7 >"$work/$task-profile.log" 2>&1 ||
            { tail -n 3 "$work/$task-profile.log" >&2; echo "$task: the ops profile failed"; continue; }
    fi
    plan=("${pargs[@]}" --profile "$prof")
    cap=${HG_BENCH_CAP:-$(default_cap "$task")}
    sed "s/memory = \"40MB\"/memory = \"$cap\"/" "$src/examples/clusters/shm-2cpu-slow2-40mb.cfg" \
        >"$work/cap.cfg"
    echo
    echo "$task (global batch $batch, priced at length $len): hgplan --search mcmc on the cluster capped at $cap a device"
    "$HGPLAN" "${plan[@]}" --cluster "$work/cap.cfg" --search mcmc --iters "$iters" \
        --out "$work/planned.cfg" >"$work/planned.plan" 2>&1 ||
        { tail -n 3 "$work/planned.plan" >&2; echo "$task: hgplan failed"; continue; }
    sed -n '/^plan:/,/^chosen:/p' "$work/planned.plan" | grep -v '^search\|^  stopped'
    grep -q '^pipeline = ' "$work/planned.cfg" || echo "$task: hgplan did not choose a pipeline"
    sim_planned=$(sed -n 's/^  [A-Za-z-]*  *\([0-9.]*\) s .*<- chosen$/\1/p' "$work/planned.plan" | head -n 1)
    # the previous space's strategies: MP, refused under the cap
    "$HGPLAN" "${plan[@]}" --cluster "$work/nocap.cfg" --search baselines --groups 8 \
        --baseline MP --out "$work/mp.cfg" >"$work/mp.plan" 2>&1 ||
        { tail -n 3 "$work/mp.plan" >&2; echo "$task: hgplan MP failed"; continue; }
    if train mp-cap --max-sentences "$batch" --cluster-file "$work/cap.cfg" --strategy "$work/mp.cfg" 2>/dev/null; then
        echo "$task: MP trained under the cap of $cap"
    else
        echo "$task: MP under the cap: $(grep -m1 -o 'device [^ ]* (rank [0-9]*) would hold.*' "$work/mp-cap.log")"
    fi
    for k in uniform speed; do
        "$HGPLAN" "${plan[@]}" --cluster "$work/cap.cfg" --pipeline "$k" --out "$work/pipe-$k.cfg" \
            >"$work/pipe-$k.plan" 2>&1 || tail -n 3 "$work/pipe-$k.plan" >&2
    done
    echo
    printf '%-11s %-9s %-6s %13s %13s %9s\n' task strategy cap "simulated ms" "measured ms" "meas/sim"
    t_planned=$(measure planned --max-sentences "$batch" --cluster-file "$work/cap.cfg" --strategy "$work/planned.cfg")
    row "$task" planned "$cap" "${sim_planned:--}" "$t_planned"
    for k in uniform speed; do
        name=PIPE-U
        [ $k = speed ] && name=PIPE-S
        t=failed
        [ -s "$work/pipe-$k.cfg" ] &&
            t=$(measure "pipe-$k" --max-sentences "$batch" --cluster-file "$work/cap.cfg" --strategy "$work/pipe-$k.cfg")
        row "$task" "$name" "$cap" "$(sim_of pipeline "$work/pipe-$k.plan")" "$t"
    done
    t_mp=$(measure mp --max-sentences "$batch" --cluster-file "$work/nocap.cfg" --strategy "$work/mp.cfg")
    row "$task" MP none "$(sim_of MP "$work/mp.plan")" "$t_mp"
    t_old=$(measure mcmc-old --max-sentences "$batch" --cluster-file "$work/nocap.cfg" --plan mcmc --plan-budget "$budget" \
        --plan-profile "$prof")
    sim_old=$(sed -n 's/.*"message": " *[A-Za-z+-]*  *\([0-9.]*\) s  .*  <- chosen".*/\1/p' \
        "$work/mcmc-old.log" | head -n 1)
    row "$task" mcmc-old none "${sim_old:--}" "$t_old"
    echo "$task: the planned pipeline's speedup, measured: $(ratio "$t_mp" "$t_planned")x over MP" \
        "(simulated $(ratio "$(sim_of MP "$work/mp.plan")" "$sim_planned")x)," \
        "$(ratio "$t_old" "$t_planned")x over mcmc-old (simulated $(ratio "$sim_old" "$sim_planned")x)"
done
