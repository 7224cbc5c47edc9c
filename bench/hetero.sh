#!/usr/bin/env bash
# hetero.sh - planned strategies executed on a cluster of network
# namespaces (scripts/netns-cluster): two "nodes" of one CPU worker each,
# joined by links shaped to each rate in HG_BENCH_RATES.  For each rate and
# each strategy, hgplan's simulated step time beside the step time measured
# by running `hgtrain --strategy` in the two namespaces over the tcp backend,
# and the plain data-parallel path (no --strategy, --max-sentences per
# rank = half the global batch) as the reference for EV-AR.
# mnist, global batch HG_BENCH_BATCH (128), SGD, one thread per worker.
# The links are measured first in the namespaces (hgplan --profile-links
# tcp, one process per node) and the simulation prices the network with
# that profile; the ops with HG_BENCH_PROFILE's measurements (merged into
# it), or the roofline without one (the cluster file's devices then name
# no profiled device).
#
# usage: bench/hetero.sh [BUILD_DIR]        (as root: it makes namespaces)
#   env: HG_BENCH_RATES ("1gbit 100mbit"; cluster files
#        examples/clusters/netns-2node-{1g,100m}.cfg describe them),
#        HG_BENCH_STRATEGIES ("EV-AR EV-PS CP-AR CP-PS MP mcmc": the
#        baselines, MP with 8 op groups as tests/strategy_mp.sh, and
#        hgplan's own strategy, hgplan --search mcmc --budget
#        HG_BENCH_BUDGET (20 s) --margin HG_BENCH_MARGIN (10, as hgtrain
#        --plan-margin: a smaller predicted gain keeps the best baseline;
#        whatever it writes, split strategies included, run by
#        --strategy)), HG_BENCH_UPDATES
#        (40; the step time is the median over log intervals of 10 after
#        the first), HG_BENCH_BATCH (128), HG_BENCH_PROFILE (an ops
#        profile, hgplan --profile-out), HG_BENCH_LINK_SIZES (message bytes
#        of the link measurement: 1048576,4194304, as tests/netns.sh; tbf
#        passes a 64 KB burst at once, so small messages look faster than
#        the rate and skew the fit: with 4096 among them the 100mbit
#        set-up's AllReduce fit came out at 310 Mbit/s, 70% off its points),
#        HG_FASHION_MNIST, HG_BENCH_KEEP (a directory: the strategy files,
#        plans and logs are copied there at the end), HG_BENCH_TRACE (1:
#        every run also writes hgtrain --trace, kept with HG_BENCH_KEEP)
# Benchmarks are reports, not tests: a run that fails is printed as such.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-.}
HGTRAIN=${HGTRAIN:-$build/hgtrain}
HGPLAN=${HGPLAN:-$build/hgplan}
HGPRE=${HGPREPROCESS:-$build/hgpreprocess}
NC=$src/scripts/netns-cluster
rates=${HG_BENCH_RATES:-1gbit 100mbit}
strategies=${HG_BENCH_STRATEGIES:-EV-AR EV-PS CP-AR CP-PS MP mcmc}
updates=${HG_BENCH_UPDATES:-40}
batch=${HG_BENCH_BATCH:-128}
fm=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
lsizes=${HG_BENCH_LINK_SIZES:-1048576,4194304}
[ "$(id -u)" = 0 ] || { echo "hetero.sh: needs root (network namespaces)" >&2; exit 1; }
work=$(mktemp -d)
name=hgb$$
export HG_NETNS_STATE=$work/state
keep=${HG_BENCH_KEEP:-}
trap '"$NC" down $name >/dev/null 2>&1; [ -n "$keep" ] && mkdir -p "$keep" && cp -r "$work"/*.cfg "$work"/*.plan "$work"/*.log "$work"/*.json "$keep"/ 2>/dev/null; rm -rf "$work"' EXIT
echo "date: $(date -u '+%F %T') UTC; $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown); mnist, global batch $batch, $updates updates, 2 nodes x 1 worker (--threads 1), tcp"
"$HGPRE" images --fashion-mnist "$fm" --out "$work/fm" >"$work/pre.log" 2>&1 ||
    { cat "$work/pre.log"; exit 1; }

# the median step time (s) of a json log's intervals after the first
step_time() {
    sed -n 's/.*"ups": \([0-9.]*\).*/\1/p' "$1" | tail -n +2 | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
             m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
             printf "%.4f", (m > 0 ? 1 / m : 0) }'
}

# run_job TAG ARGS...: two launchers, one per node; prints the step time
port=$((22000 + $$ % 20000))
run_job() {
    tag=$1
    shift
    port=$((port + 1))
    for r in 0 1; do
        HG_JOB_TOKEN=0123456789abcdef0123456789abcdef "$NC" exec $name $r "$HGTRAIN" \
            --task mnist --data "$work/fm" --valid-subset test --optimizer sgd \
            --momentum 0.9 --lr 0.01 --log-format json --log-interval 10 \
            --validate-interval 0 --no-save --threads 1 --max-update "$updates" \
            --rebalance-interval 0 \
            --distributed-world-size 2 --distributed-rank $r --distributed-timeout 120 \
            --distributed-init-method "tcp://$HG_NETNS_SUBNET.1:$port" \
            ${HG_BENCH_TRACE:+--trace "$work/$tag.json"} "$@" \
            >"$work/$tag-$r.log" 2>&1 &
        eval "p$r=\$!"
    done
    # shellcheck disable=SC2154
    wait "$p0"; rc0=$?
    # shellcheck disable=SC2154
    wait "$p1"; rc1=$?
    if [ $rc0 -ne 0 ] || [ $rc1 -ne 0 ]; then
        echo "failed"
        tail -n 3 "$work/$tag-0.log" "$work/$tag-1.log" >&2
    else
        step_time "$work/$tag-0.log"
    fi
}

# measure_links RATE: hgplan --profile-links tcp in both nodes; rank 0
# writes $work/RATE-links.cfg (HG_BENCH_PROFILE's entries merged in)
measure_links() {
    lport=$((port + 1000))
    for r in 0 1; do
        # shellcheck disable=SC2086
        HG_JOB_TOKEN=0123456789abcdef0123456789abcdef "$NC" exec $name $r "$HGPLAN" \
            --profile-links tcp --distributed-world-size 2 --distributed-rank $r \
            --distributed-init-method "tcp://$HG_NETNS_SUBNET.1:$lport" \
            --distributed-timeout 300 --profile-sizes "$lsizes" --profile-repeats 5 \
            --profile-warmup 1 ${HG_BENCH_PROFILE:+--profile "$HG_BENCH_PROFILE"} \
            --profile-out "$work/$1-links.cfg" >"$work/$1-links-$r.log" 2>&1 &
        eval "l$r=\$!"
    done
    # shellcheck disable=SC2154
    wait "$l0"; rc0=$?
    # shellcheck disable=SC2154
    wait "$l1"; rc1=$?
    if [ $rc0 -ne 0 ] || [ $rc1 -ne 0 ]; then
        tail -n 3 "$work/$1-links-0.log" "$work/$1-links-1.log" >&2
        return 1
    fi
    sed -n "s/^  tcp /  $1: measured tcp /p" "$work/$1-links-0.log"
}

export HG_NETNS_SUBNET=10.$((100 + $$ % 100)).$(($$ % 200))
printf '%-8s %-8s %12s %12s %10s\n' link strategy "simulated s" "measured s" "meas/sim"
for rate in $rates; do
    case $rate in
    1gbit) cfg=$src/examples/clusters/netns-2node-1g.cfg ;;
    100mbit) cfg=$src/examples/clusters/netns-2node-100m.cfg ;;
    *) echo "hetero.sh: no cluster file for rate $rate" >&2; exit 1 ;;
    esac
    "$NC" up $name "$rate,$rate" >/dev/null || exit 1
    measure_links "$rate" || { echo "hetero.sh: the link measurement failed" >&2; exit 1; }
    prof="--profile $work/$rate-links.cfg"
    if [ -z "${HG_BENCH_PROFILE:-}" ]; then
        # no ops measured: the devices are priced by the roofline
        sed '/profile = "cpu-t1";/d' "$cfg" >"$work/$rate-cluster.cfg"
        cfg=$work/$rate-cluster.cfg
    fi
    dp=$(run_job "$rate-dp" --max-sentences $((batch / 2)))
    printf '%-8s %-8s %12s %12s %10s\n' "$rate" "plain-DP" "-" "$dp" "-"
    for s in $strategies; do
        case $s in
        mcmc) how=(--search mcmc --budget "${HG_BENCH_BUDGET:-20}"
                   --margin "${HG_BENCH_MARGIN:-10}") row=hgplan ;;
        MP) how=(--search baselines --groups 8 --baseline MP) row=MP ;;
        *) how=(--search baselines --baseline "$s") row=$s ;;
        esac
        # shellcheck disable=SC2086
        "$HGPLAN" --task mnist --data "$work/fm" --batch "$batch" --optimizer sgd \
            --cluster "$cfg" $prof "${how[@]}" \
            --out "$work/$rate-$s.cfg" >"$work/$rate-$s.plan" 2>&1 ||
            { tail -n 3 "$work/$rate-$s.plan"; continue; }
        sim=$(awk -v s="$row" '$1 == s && $3 == "s" { print $2; exit }' "$work/$rate-$s.plan")
        meas=$(run_job "$rate-$s" --max-sentences "$batch" --strategy "$work/$rate-$s.cfg" \
            --cluster-file "$cfg")
        ratio=$(awk -v a="$meas" -v b="$sim" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }')
        printf '%-8s %-8s %12s %12s %10s\n' "$rate" "$s" "$sim" "$meas" "$ratio"
    done
    "$NC" down $name
done
