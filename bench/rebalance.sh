#!/usr/bin/env bash
# rebalance.sh - does --rebalance-interval find the budgets a user would set
# by hand?  Forked CPU workers train the mnist CNN (Fashion-MNIST, 128
# samples per rank and step at capacity 1) with the last worker slowed
# (--rank-slowdown: it sleeps f-1 times its compute time, so no core is
# taken), on 2 and 3 workers, slowed 2x and 3x, three ways (3 workers on
# a 2-core machine: all slowed 2x more, e.g. 2,2,6 for 3x, so that they
# need 1.25 cores and do not slow each other):
#   equal      static equal budgets (--rebalance-interval 0);
#   oracle     static budgets from the true slowdown (--rank-capacity
#              1,...,1/f): what a user who knows the slowdown sets;
#   rebalance  --rebalance-interval N from equal budgets.
# Then a slowdown that changes mid-run: 2 workers pinned one per core, a
# busy loop started on the second worker's core after a third of the run
# (a neighbour's job), equal budgets against --rebalance-interval.
#
# Prints per run samples/s and updates/s over the second half of the run,
# the largest per-rank share of the step spent waiting at collectives (the
# json log's "wait" / ("compute" + "wait"), averaged over that half), the
# final capacities and, for rebalance, the update after which every
# decision stays within 5% of the final capacities (converged); then
# rebalance / oracle (target >= 0.95) and rebalance / equal.
#
# usage: bench/rebalance.sh [BUILD_DIR]   env: HG_BENCH_UPDATES (160),
#        HG_BENCH_INTERVAL (10), HG_BENCH_WORKERS ("2 3"), HG_BENCH_MIDRUN
#        (1: the load that starts mid-run; 0: not), HG_FASHION_MNIST
set -euo pipefail
build=${1:-.}
updates=${HG_BENCH_UPDATES:-160}
interval=${HG_BENCH_INTERVAL:-10}
fm=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
work=$(mktemp -d)
hog=
cleanup() { [ -n "$hog" ] && kill "$hog" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
echo "date: $(date -u '+%F %T') UTC; $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'); load: $(uptime | sed 's/.*load average: //')"
echo "updates $updates, --rebalance-interval $interval, 128 samples per rank at capacity 1"
"$build/hgpreprocess" images --fashion-mnist "$fm" --out "$work/fm" >/dev/null

train() { # log args...: in the background; $! is the launcher
    local log=$1
    shift
    "$build/hgtrain" --task mnist --data "$work/fm" --optimizer sgd --momentum 0.9 \
        --lr 0.01 --dropout 0 --batch-size 128 --threads 1 --max-update "$updates" \
        --log-format json --log-interval 1 --validate-interval 0 --no-save "$@" \
        >"$log" 2>&1 &
}
# samples/s, updates/s, largest mean wait share over updates > from
measure() { # log from
    grep '"update"' "$1" | awk -v from="$2" '
        { u = $0; sub(/.*"update": /, "", u); u += 0
          b = $0; sub(/.*"bsz": /, "", b); b += 0
          w = $0; sub(/.*"wall": /, "", w); w += 0
          if (u == from) { w0 = w; u0 = u }
          if (u <= from) next
          s += b; w1 = w; u1 = u
          c = $0; sub(/.*"compute": \[/, "", c); sub(/\].*/, "", c)
          t = $0; sub(/.*"wait": \[/, "", t); sub(/\].*/, "", t)
          n = split(c, cc, ", "); split(t, tt, ", ")
          for (i = 1; i <= n; i++) if (cc[i] + tt[i] > 0) share[i] += tt[i] / (cc[i] + tt[i])
          k++ }
        END { m = 0; for (i in share) if (share[i] / k > m) m = share[i] / k
              printf "%.1f %.3f %.3f", s / (w1 - w0), (u1 - u0) / (w1 - w0), m }'
}
caps() { # log: the last decision's capacities, or "-"
    local c
    c=$(sed -n 's/.*"rebalance": [0-9]*,.*"capacity": \[\([^]]*\)\].*/\1/p' "$1" | tail -n 1 | tr -d ' ')
    echo "${c:--}"
}
converged() { # log [after]: the first decision from which on all are within 5% of the last
    sed -n 's/.*"rebalance": \([0-9]*\),.*"capacity": \[\([^]]*\)\].*/\1 \2/p' "$1" | tr -d ',' |
        awk -v after="${2:-0}" '$1 > after { n++; u[n] = $1; for (i = 2; i <= NF; i++) c[n, i] = $i; nf = NF }
            END { if (!n) { print "-"; exit } k = n
                  for (j = n; j >= 1; j--) { ok = 1
                      for (i = 2; i <= nf; i++) { d = c[j, i] - c[n, i]; if (d < 0) d = -d
                          if (d > 0.05 * c[n, i]) ok = 0 }
                      if (!ok) break; k = j }
                  print u[k] }'
}
line() { # label log from
    set -- "$1" "$2" "$3" $(measure "$2" "$3")
    printf "  %-10s %8s samples/s %7s updates/s  wait %4.1f%%  capacities %s\n" \
        "$1" "$4" "$5" "$(awk -v m="$6" 'BEGIN { print 100 * m }')" "$(caps "$2")"
}
half=$((updates / 2))
for w in ${HG_BENCH_WORKERS:-2 3}; do
    for f in 2 3; do
        # 3 workers on 2 cores: every worker slowed 2x more, so that they
        # use 1.25 cores at most and slow each other as little as 2 do
        base=1
        [ "$w" -gt "$(nproc)" ] && base=2
        sd=$(awk -v w=$w -v f=$f -v b=$base 'BEGIN { s = ""; for (i = 1; i < w; i++) s = s b ","; print s b * f }')
        oc=$(awk -v w=$w -v f=$f 'BEGIN { s = ""; for (i = 1; i < w; i++) s = s "1,"; printf "%s%.4f\n", s, 1 / f }')
        echo "$w workers, --rank-slowdown $sd:"
        train "$work/eq.log" --devices cpu:$w --rank-slowdown "$sd" --rebalance-interval 0
        wait $!
        train "$work/or.log" --devices cpu:$w --rank-slowdown "$sd" --rank-capacity "$oc"
        wait $!
        train "$work/rb.log" --devices cpu:$w --rank-slowdown "$sd" --rebalance-interval "$interval"
        wait $!
        line equal "$work/eq.log" $half
        line oracle "$work/or.log" $half
        line rebalance "$work/rb.log" $half
        set -- $(measure "$work/eq.log" $half) $(measure "$work/or.log" $half) $(measure "$work/rb.log" $half)
        awk -v e="$1" -v o="$4" -v r="$7" -v c="$(converged "$work/rb.log")" 'BEGIN {
            printf "  rebalance / oracle %.3f, rebalance / equal %.3f (samples/s); converged at update %s\n", r / o, r / e, c }'
    done
done

# a slowdown that appears mid-run: a busy loop on worker 1's core
if [ "${HG_BENCH_MIDRUN:-1}" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
    third=$((updates / 3))
    echo "2 workers pinned to cores 0 and 1, a busy loop on core 1 from update $third:"
    for mode in equal rebalance; do
        extra=()
        extra=(--rebalance-interval 0)
        [ $mode = rebalance ] && extra=(--rebalance-interval "$interval")
        train "$work/$mode-mid.log" --devices cpu:2 "${extra[@]}"
        lp=$!
        while ! grep -q '"update": 1,' "$work/$mode-mid.log" 2>/dev/null; do sleep 0.05; done
        taskset -a -p -c 0 "$(pgrep -P $lp -x hgtrain-r0)" >/dev/null
        taskset -a -p -c 1 "$(pgrep -P $lp -x hgtrain-r1)" >/dev/null
        while ! grep -q "\"update\": $third," "$work/$mode-mid.log" 2>/dev/null; do sleep 0.05; done
        taskset -c 1 sh -c 'while :; do :; done' &
        hog=$!
        wait $lp
        kill $hog
        wait $hog 2>/dev/null || true
        hog=
    done
    line equal "$work/equal-mid.log" $half
    line rebalance "$work/rebalance-mid.log" $half
    set -- $(measure "$work/equal-mid.log" $half) $(measure "$work/rebalance-mid.log" $half)
    awk -v e="$1" -v r="$4" -v c="$(converged "$work/rebalance-mid.log" $third)" 'BEGIN {
        printf "  rebalance / equal %.3f (samples/s); converged at update %s after the load began\n", r / e, c }'
fi
