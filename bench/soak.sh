#!/bin/sh
# bench/soak.sh - a long run of the mnist task on 3 forked workers with
# the resident memory of the launcher and of each worker sampled at an
# interval; at the end the job is stopped with SIGTERM (a clean stop) and
# the growth of each process's RSS from the first sample after the
# warm-up to the last is checked against 1%.
#
#   bench/soak.sh [SECONDS [INTERVAL]]     (default 3600 and 60)
#
# from a build directory (HGTRAIN, HGPREPROCESS, HG_FASHION_MNIST
# override). Under an ASan build (../configure --enable-asan) run it with
# SECONDS=600 and SOAK_RSS_CHECK=0: any sanitizer report in the log fails
# it, and the RSS is printed but not judged (ASan's quarantine keeps freed
# memory, up to 256 MiB per process by default, so RSS grows by design).
# Not part of `make check`; figures go to bench/RESULTS.md ("Soak").
set -u
B=${HG_BUILDDIR:-.}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPRE=${HGPREPROCESS:-$B/hgpreprocess}
SRC=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
DUR=${1:-3600}
INT=${2:-60}
WARM=${SOAK_WARMUP:-$((DUR / 6))}   # samples before this are the warm-up
RSS_CHECK=${SOAK_RSS_CHECK:-1}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
"$HGPRE" images --fashion-mnist "$SRC" --out "$tmp/fm" >"$tmp/pre.log" 2>&1 ||
    { cat "$tmp/pre.log"; exit 1; }

( exec "$HGTRAIN" --task mnist --data "$tmp/fm" --valid-subset test --devices cpu:3 \
    --batch-size 96 --optimizer sgd --momentum 0.9 --lr 0.01 --max-epoch 100000 \
    --save-interval-updates 500 --keep-interval-updates 2 --log-interval 50 \
    --log-format simple --save-dir "$tmp/ck" ) >"$tmp/train.log" 2>&1 &
lp=$!
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
i=0
while [ -z "$(pgrep -P $lp -x hgtrain-r2)" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
pids="$lp $(pgrep -P $lp | tr '\n' ' ')"
echo "| t (s) | update | launcher KiB | rank 0 KiB | rank 1 KiB | rank 2 KiB |"
echo "|---|---|---|---|---|---|"
t=0
while [ $t -le "$DUR" ] && kill -0 $lp 2>/dev/null; do
    up=$(sed -n 's/.*| update \([0-9]*\) .*/\1/p' "$tmp/train.log" | tail -n 1)
    line="| $t | ${up:-0}"
    for p in $pids; do line="$line | $(rss "$p")"; done
    echo "$line |" | tee -a "$tmp/rss"
    [ $t -ge "$DUR" ] && break
    sleep "$INT"
    t=$((t + INT))
done
kill -TERM $lp 2>/dev/null
wait $lp
rc=$?
fail=0
[ $rc -eq 1 ] && grep -q "stopped cleanly" "$tmp/train.log" ||
    { tail -n 5 "$tmp/train.log"; echo "FAIL: the SIGTERM stop was not clean (exit $rc)"; fail=1; }
if grep -q "ERROR: \(AddressSanitizer\|LeakSanitizer\)\|runtime error:" "$tmp/train.log"; then
    grep -A 20 "ERROR: \|runtime error:" "$tmp/train.log" | head -n 40
    echo "FAIL: sanitizer report"
    fail=1
fi
# growth per process from the first sample at or after the warm-up
awk -F'|' -v warm="$WARM" '
    $2 + 0 >= warm && NF >= 7 { for (c = 4; c <= 7; c++) { if (!(c in first)) first[c] = $c + 0; last[c] = $c + 0 } }
    END {
        bad = 0
        split("launcher rank0 rank1 rank2", name, " ")
        for (c = 4; c <= 7; c++) {
            if (!(c in first) || first[c] == 0) { print "no samples after the warm-up"; exit 1 }
            g = (last[c] - first[c]) / first[c] * 100
            printf "%s: %d -> %d KiB (%+.2f%%)\n", name[c - 3], first[c], last[c], g
            if (g >= 1) bad = 1
        }
        exit bad
    }' "$tmp/rss" || if [ "$RSS_CHECK" = 0 ]; then
        echo "note: RSS grew by 1% or more after the warm-up (not judged: SOAK_RSS_CHECK=0)"
    else
        echo "FAIL: RSS grew by 1% or more after the warm-up"
        fail=1
    fi
[ $fail -eq 0 ] && echo "PASS: soak ($DUR s, $(sed -n 's/.*| update \([0-9]*\) .*/\1/p' "$tmp/train.log" | tail -n 1) updates)"
exit $fail
