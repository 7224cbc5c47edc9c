#!/bin/sh
# bench/planner_accuracy.sh - the planner's simulator against real
# execution: per-update time of hgtrain's data parallelism (every op on
# every worker, the gradient AllReduce) on 1..4 forked CPU workers of this
# machine, measured with hgtrain itself and simulated by hgplan from the
# profiler's measurements.
#
# For each task (mnist: the HetSeq CNN, SGD; bert: the small Transformer,
# 2 layers, d 128, 4 heads, ffn 512, 64 tokens, Adam) and a fixed global
# batch G split evenly over W workers:
#  1. hgplan --profile-out: every op of the task's training graph at the
#     per-worker batches G/4, G/3, G/2, G with 1 thread (2 processes at once
#     on this 2-core machine: every core busy), with all cores, and, for
#     every W whose threads outnumber the cores, with W one-thread
#     processes at once sharing the cores (--profile-workers: cpu-t1-wW);
#     the processes wait for each other after every run, as DP ranks do;
#     and the shm AllReduce of worlds 2..4;
#  2. a cluster per W: W devices on one node joined by shm, each priced by
#     the profiled device of the threads hgtrain gives a worker
#     (cores / W, at least 1: cpu-t2 for W = 1, cpu-t1 for W = 2,
#     cpu-t1-wW beyond); beside it the fluid model of time-sharing, not
#     measured: cpu-t1 with time_share cores / (W * threads) (2/3 of a core
#     each for 3 workers on 2 cores);
#  3. simulated: hgplan --dp (one replica per device, AllReduce, graph order);
#  4. measured: hgtrain --devices cpu:W --batch-size G/W, json log every L
#     updates; the first interval (start-up) is dropped; ms = 1000 / the
#     median of the intervals' updates/s;
#  5. the machine may be shared: every profile and measurement runs under
#     /usr/bin/time and /proc/stat, and is repeated (up to HG_ACC_TRIES
#     times) while other processes (or the hypervisor's steal) used more
#     than HG_ACC_QUIET cores on average during it; the least disturbed try
#     is kept and its foreign load reported;
#  6. the machine's own speed changes by up to a third for minutes at a
#     time (with 2 threads: seen on the bert graph, both in hgplan's
#     profile and in hgtrain): after every run the cpu-t1 and cpu-t2 op
#     sums at batch G are measured again, and a round whose machine moved
#     by more than HG_ACC_STABLE (default 0.06) from its profile is run
#     again (up to HG_ACC_TRIES times; the last is kept, its drift shown);
#  7. ROUNDS times over (profile and measurements again), the median round
#     reported.
# Prints a markdown table: task, workers, threads per worker, measured ms,
# simulated ms, error % ((simulated - measured) / measured), and the fluid
# model's simulated ms and error; then the rounds' tries and drift.
#
# Usage: bench/planner_accuracy.sh from a build directory (HG_BUILDDIR,
# HG_SRCDIR, HGPLAN, HGTRAIN, HGPREPROCESS override; HG_FASHION_MNIST is
# Fashion-MNIST's directory).  HG_ACC_UPDATES (default 130), HG_ACC_LOG
# (log interval, default 10), HG_ACC_ROUNDS (default 3), HG_ACC_TRIES
# (default 6), HG_ACC_QUIET (default 0.1 cores), HG_ACC_STABLE (default
# 0.06), HG_ACC_WORKERS
# (default "1 2 3 4"), HG_ACC_TASKS (default "mnist bert"), HG_ACC_KEEP=DIR
# keeps the logs, profiles and clusters there.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-$(dirname "$0")/..}
HGPLAN=${HGPLAN:-$B/hgplan}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPRE=${HGPREPROCESS:-$B/hgpreprocess}
FM=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
UPDATES=${HG_ACC_UPDATES:-130}
LOGI=${HG_ACC_LOG:-10}
ROUNDS=${HG_ACC_ROUNDS:-3}
TRIES=${HG_ACC_TRIES:-6}
QUIET=${HG_ACC_QUIET:-0.1}
WORKERS=${HG_ACC_WORKERS:-"1 2 3 4"}
TASKS=${HG_ACC_TASKS:-"mnist bert"}
if [ -n "${HG_ACC_KEEP:-}" ]; then
    tmp=$HG_ACC_KEEP
    mkdir -p "$tmp" || exit 1
else
    tmp=$(mktemp -d) || exit 1
    trap 'rm -rf "$tmp"' EXIT
fi
cores=$(nproc)
die() { echo "planner_accuracy: $*" >&2; exit 1; }

# ------------------------------------------------------------ data
for t in $TASKS; do
    case $t in
    mnist)
        [ -f "$FM/train-images-idx3-ubyte.gz" ] || die "no Fashion-MNIST at $FM"
        [ -d "$tmp/fm" ] || "$HGPRE" images --fashion-mnist "$FM" --out "$tmp/fm" \
            >"$tmp/pre-fm.log" 2>&1 || die "hgpreprocess images (see $tmp/pre-fm.log)"
        ;;
    bert)
        # documents of 15 sentences as tests/train_bert.sh: 93% of the
        # instances fill all 64 positions, so a batch is 64 tokens long
        awk 'NR % 15 == 0 { print "" } { print }' "$S/tests/data/corpus.en" >"$tmp/lm.txt"
        [ -d "$tmp/lm" ] || "$HGPRE" lm --input "$tmp/lm.txt" --destdir "$tmp/lm" \
            --bpe-merges 500 --max-seq-len 64 --max-predictions 10 --seed 7 \
            >"$tmp/pre-lm.log" 2>&1 || die "hgpreprocess lm (see $tmp/pre-lm.log)"
        ;;
    *) die "unknown task $t (mnist, bert)" ;;
    esac
done

# ------------------------------------------------------------ per task
G_mnist=96
G_bert=48
plan_args() { # task -> hgplan's graph options
    case $1 in
    mnist) echo "--task mnist --optimizer sgd --batch $G_mnist" ;;
    bert) echo "--task bert --data $tmp/lm --optimizer adam --batch $G_bert --seq-len 64" ;;
    esac
}
train_args() { # task workers
    case $1 in
    mnist) echo "--task mnist --data $tmp/fm --valid-subset test --optimizer sgd --momentum 0.9 \
        --lr 0.01 --batch-size $((G_mnist / $2)) --required-batch-size-multiple 1" ;;
    bert) echo "--task bert --data $tmp/lm --optimizer adam --lr 0.0001 \
        --max-sentences $((G_bert / $2)) --required-batch-size-multiple 1" ;;
    esac
}
threads_for() { # workers -> hgtrain's threads per worker: cores / W, at least 1
    _n=$((cores / $1))
    [ "$_n" -ge 1 ] || _n=1
    echo "$_n"
}
shared_workers() { # the worker counts whose threads outnumber the cores (comma list)
    for _w in $WORKERS; do
        [ $((_w * $(threads_for "$_w"))) -gt "$cores" ] && echo "$_w"
    done | paste -sd, -
}
cluster() { # workers file [fluid] (shell functions share variables: _-names are theirs)
    _th=$(threads_for "$1")
    _prof=cpu-t$_th
    _share=1
    if [ $(($1 * _th)) -gt "$cores" ]; then
        if [ -n "${3:-}" ]; then # the fluid model: each gets cores / (W * threads)
            _share=$(awk -v c="$cores" -v w="$1" -v t="$_th" 'BEGIN { printf "%.6f", c / (w * t) }')
        else # measured: the profiled device of W one-thread workers sharing the cores
            _prof=cpu-t1-w$1
        fi
    fi
    cat >"$2" <<EOF
# $1 forked CPU workers of this machine ($cores cores), as hgtrain --devices cpu:$1 runs
# them: $_th thread(s) each, priced by the profiled device $_prof; time_share $_share:
# the fraction of that device each worker gets when the workers outnumber the cores.
name = "local-w$1";
nodes = (
    {
        name = "localhost";
        devices = ( { kind = "cpu"; model = "hgtrain worker"; count = $1; memory = "11GiB";
                      peak_flops = "217GFLOP/s"; memory_bandwidth = "20GB/s";
                      profile = "$_prof"; time_share = $_share; } );
        intra = { kind = "shm"; bandwidth = "12GB/s"; latency = "1us"; };
    }
);
EOF
}
# jiffies the machine spent busy (user, nice, system, irq, softirq, steal)
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
HZ=$(getconf CLK_TCK)
quiet_run() { # log cmd...: runs cmd > log; retries while others used > QUIET cores;
    # sets $foreign (cores others used during the kept try)
    _log=$1
    shift
    _best=
    _try=1
    while [ "$_try" -le "$TRIES" ]; do
        _b0=$(busy)
        /usr/bin/time -f "%e %U %S" -o "$_log.time" "$@" >"$_log.try" 2>&1 || { cat "$_log.try" >"$_log"; return 1; }
        _b1=$(busy)
        _f=$(awk -v b0="$_b0" -v b1="$_b1" -v hz="$HZ" '{ own = $2 + $3; f = ((b1 - b0) / hz - own) / $1;
            if (f < 0) f = 0; printf "%.3f", f }' "$_log.time")
        if [ -z "$_best" ] || awk -v f="$_f" -v b="$_best" 'BEGIN { exit !(f < b) }'; then
            _best=$_f
            mv "$_log.try" "$_log"
        fi
        awk -v f="$_f" -v q="$QUIET" 'BEGIN { exit !(f <= q) }' && break
        echo "  (others used $_f cores during $(basename "$_log"): again)" >&2
        sleep 5
        _try=$((_try + 1))
    done
    rm -f "$_log.try"
    foreign=$_best
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
    print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $cores cores ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
rm -f "$tmp/rows" "$tmp/stability"
shared=$(shared_workers)
# seconds of device $2's ops at batch $3 in profile $1 (nodes x measured time)
prof_sum() {
    awk -v dev="$2" -v b="$3" '
        /device = / { d = $0; sub(/.*device = "/, "", d); sub(/".*/, "", d)
                      n = $0; sub(/.*nodes = /, "", n); sub(/;.*/, "", n) }
        /batch = \[/ { if (d != dev) next
                      x = $0; sub(/.*batch = \[/, "", x); sub(/\].*/, "", x)
                      t = $0; sub(/.*time = \[/, "", t); sub(/\].*/, "", t)
                      k = split(x, xs, ", "); split(t, ts, ", ")
                      for (i = 1; i <= k; i++) if (xs[i] + 0 == b + 0) s += n * ts[i] }
        END { printf "%.6f", s }' "$1"
}
# the machine's speed now against profile $1 at batch $2: the largest
# relative change of cpu-t1's and cpu-t2's op sums (a quick re-measurement)
drift() {
    # shellcheck disable=SC2046
    "$HGPLAN" $(plan_args "$t") --profile-out "$tmp/check.cfg" --profile-batches "$2" \
        --profile-worlds none --profile-repeats 7 >"$tmp/check.log" 2>&1 ||
        die "hgplan --profile-out (see $tmp/check.log)"
    _d=0
    for _dev in cpu-t1 cpu-t2; do
        _a=$(prof_sum "$1" "$_dev" "$2")
        _b=$(prof_sum "$tmp/check.cfg" "$_dev" "$2")
        _d=$(awk -v a="$_a" -v b="$_b" -v d="$_d" 'BEGIN { x = a > 0 ? b / a - 1 : 0
            if (x < 0) x = -x; printf "%.4f", (x > d ? x : d) }')
    done
    echo "$_d"
}
STABLE=${HG_ACC_STABLE:-0.06}
gbatch() { case $1 in mnist) echo "$G_mnist" ;; bert) echo "$G_bert" ;; esac; }
# One round of task $t, number $r: the profile, then per W the two
# simulations, the run, and the machine's speed measured again.  Writes
# $tmp/round; sets maxd (the largest speed change from the profile).
one_round() {
    rm -f "$tmp/round"
    # shellcheck disable=SC2046
    quiet_run "$tmp/$t-prof-$r.log" "$HGPLAN" $(plan_args "$t") --profile-out "$tmp/$t-prof-$r.cfg" \
        --profile-batches "$batches" --profile-repeats 15 \
        ${shared:+--profile-workers "$shared"} ||
        die "hgplan --profile-out (see $tmp/$t-prof-$r.log)"
    fprof=$foreign
    maxd=0
    for w in $WORKERS; do
        for m in measured fluid; do
            cluster "$w" "$tmp/w$w-$m.cfg" "$([ $m = fluid ] && echo fluid)"
            # shellcheck disable=SC2046
            "$HGPLAN" $(plan_args "$t") --cluster "$tmp/w$w-$m.cfg" --profile "$tmp/$t-prof-$r.cfg" \
                --dp >"$tmp/$t-sim-$m-$w-$r.log" 2>&1 ||
                die "hgplan --dp (see $tmp/$t-sim-$m-$w-$r.log)"
        done
        sim=$(awk '$1 == "dp" { printf "%.3f", $2 * 1000 }' "$tmp/$t-sim-measured-$w-$r.log")
        simf=$(awk '$1 == "dp" { printf "%.3f", $2 * 1000 }' "$tmp/$t-sim-fluid-$w-$r.log")
        # shellcheck disable=SC2046
        quiet_run "$tmp/$t-run-$w-$r.log" "$HGTRAIN" $(train_args "$t" "$w") --devices "cpu:$w" \
            --max-update "$UPDATES" --log-format json --log-interval "$LOGI" \
            --validate-interval 0 --no-save --save-dir "$tmp/save" ||
            die "hgtrain (see $tmp/$t-run-$w-$r.log)"
        # update counts are multiples of LOGI; other lines end an epoch
        meas=$(sed -n 's/.*"update": \([0-9]*\),.*"ups": \([0-9.]*\),.*/\1 \2/p' \
            "$tmp/$t-run-$w-$r.log" | awk -v l="$LOGI" '$1 % l == 0 && $1 > l { print 1000 / $2 }' |
            median)
        echo "$t $w $(threads_for "$w") $r $meas $sim $fprof $foreign $simf" >>"$tmp/round"
        d=$(drift "$tmp/$t-prof-$r.cfg" "$G")
        maxd=$(awk -v a="$d" -v b="$maxd" 'BEGIN { print (a > b ? a : b) }')
    done
}
for t in $TASKS; do
    G=$(gbatch "$t")
    batches=$(for w in 4 3 2 1; do echo $((G / w)); done | sort -n | uniq | paste -sd, -)
    for r in $(seq 1 "$ROUNDS"); do
        try=1
        while one_round && awk -v d="$maxd" -v s="$STABLE" 'BEGIN { exit !(d > s) }' &&
            [ "$try" -lt "$TRIES" ]; do
            echo "  ($t round $r: the machine's speed moved by up to $(awk -v d="$maxd" 'BEGIN { printf "%.0f", d * 100 }')% from the profile's: again)" >&2
            try=$((try + 1))
        done
        cat "$tmp/round" >>"$tmp/rows"
        echo "$t $r $try $maxd" >>"$tmp/stability"
    done
done
echo "| task (global batch) | workers | threads/worker | measured ms | simulated ms | error % | fluid model: simulated ms, error % | rounds: measured / simulated ms (foreign load, cores: profile / run) |"
echo "|---|---|---|---|---|---|---|---|"
for t in $TASKS; do
    G=$(gbatch "$t")
    for w in $WORKERS; do
        awk -v t="$t" -v w="$w" '$1 == t && $2 == w' "$tmp/rows" >"$tmp/sel"
        m=$(cut -d' ' -f5 "$tmp/sel" | median)
        s=$(cut -d' ' -f6 "$tmp/sel" | median)
        sf=$(cut -d' ' -f9 "$tmp/sel" | median)
        all=$(awk '{ printf "%s%.1f/%.1f (%.2f/%.2f)", (NR > 1 ? ", " : ""), $5, $6, $7, $8 }' "$tmp/sel")
        awk -v t="$t" -v g="$G" -v w="$w" -v th="$(threads_for "$w")" -v m="$m" -v s="$s" -v sf="$sf" \
            -v all="$all" 'BEGIN { printf "| %s (%d) | %d | %d | %.1f | %.1f | %+.1f | %.1f, %+.1f | %s |\n",
            t, g, w, th, m, s, (s - m) / m * 100, sf, (sf - m) / m * 100, all }'
    done
done
echo
echo "Rounds kept (task round: tries, largest speed change of the machine from the profile's during the round, re-measured after every run):"
awk '{ printf "%s%s %s: %d, %.1f%%", (NR > 1 ? "; " : ""), $1, $2, $3, $4 * 100 } END { print "" }' "$tmp/stability"
