#!/bin/sh
# Integration test: Ctrl-C stops now (docs/distributed.md, "Stopping").
#  1. one process, validating on the 10,000 test images: the first SIGINT
#     finishes the update in flight, writes checkpoint_last.h5 and exits 1
#     without the final validation, saying so at once and at the end; the
#     checkpoint resumes; timed against the validation it skipped;
#  2. one process, SIGINT twice: it quits at once (exit 130), saying so;
#     checkpoint_last.h5 is the one written before, whole, and resumes;
#  3. 2 forked ranks, SIGINT to the launcher alone: once, a clean stop
#     without validation (exit 1); twice, the job quits at once (exit
#     130), no worker left, the last checkpoint whole.
set -u
. "${HG_SRCDIR:-.}/tests/mnist-common.sh"

fm_shards
# bg NAME ARGS...: hgtrain in the background ($! is hgtrain itself)
bg() {
    n=$1
    shift
    (exec "$HGTRAIN" --task mnist --data "$tmp/fm" --valid-subset test --batch-size 64 \
        --optimizer sgd --lr 0.01 --seed 3 --log-format json --log-interval 1 \
        --save-dir "$tmp/$n" "$@" >"$tmp/$n.log" 2>&1) &
}
# resumes NAME: checkpoint_last.h5 loads, one more update
resumes() {
    "$HGTRAIN" --task mnist --data "$tmp/fm" --valid-subset test --batch-size 64 \
        --optimizer sgd --lr 0.01 --seed 3 --validate-interval 0 --save-dir "$tmp/$1" \
        --max-update 1000 --max-epoch 1 --no-save >"$tmp/$1.resume.log" 2>&1 &
    rp=$!
    i=0
    while ! grep -q "loaded .*checkpoint_last.h5" "$tmp/$1.resume.log" 2>/dev/null &&
        kill -0 $rp 2>/dev/null && [ $i -lt 600 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    kill $rp 2>/dev/null
    wait $rp 2>/dev/null
    grep -q "loaded .*checkpoint_last.h5" "$tmp/$1.resume.log" ||
        { cat "$tmp/$1.resume.log"; bad "$1: checkpoint_last.h5 does not resume"; }
}
ms() { date +%s%N | cut -c1-13; }
# the second SIGINT must come while an update is in flight: updates slowed
# 20 times (3 in the sanitizer build, whose updates are slow already)
SLOW=20
[ "${HG_ASAN:-0}" = 1 ] && SLOW=3

# ------------------------------------------------ 1. once: stop now
# how long the validation takes that a stop skips (the same job, timed)
# (not in the sanitizer build: 20 s there)
tv="not timed"
if [ "${HG_ASAN:-0}" != 1 ]; then
    t0=$(ms)
    "$HGTRAIN" --task mnist --data "$tmp/fm" --valid-subset test --batch-size 64 --optimizer sgd \
        --lr 0.01 --seed 3 --max-update 1 --save-dir "$tmp/v" --no-save >"$tmp/v.log" 2>&1 ||
        { cat "$tmp/v.log"; bad "a validated run"; }
    tv="$(($(ms) - t0)) ms"
fi
bg one --max-epoch 1
wait_update "$tmp/one.log" 5
t0=$(ms)
kill -INT $!
wait $!
rc=$?
dt=$(($(ms) - t0))
[ $rc = 1 ] || bad "one SIGINT: exit $rc, want 1"
grep -q "stopping after the update in flight, then writing checkpoint_last.h5 (no final validation); Ctrl-C again to quit at once" \
    "$tmp/one.log" || { tail -n 5 "$tmp/one.log"; bad "one SIGINT: no line saying what happens now"; }
grep -q "stopped by signal 2 after update [0-9]*; wrote checkpoint_last.h5; the final validation skipped" \
    "$tmp/one.log" || { tail -n 5 "$tmp/one.log"; bad "one SIGINT: no closing line"; }
grep -q '"valid_loss"' "$tmp/one.log" && bad "one SIGINT: validated anyway"
resumes one
echo "ok: one SIGINT: stopped in ${dt} ms without the final validation (a run of 1 update and that validation: ${tv}), checkpoint_last.h5 resumes"

# ------------------------------------------------ 2. twice: quit at once
bg two --max-epoch 1 --save-interval-updates 3 --rank-slowdown $SLOW
wait_update "$tmp/two.log" 4
cp "$tmp/two/checkpoint_last.h5" "$tmp/two.before.h5" 2>/dev/null
t0=$(ms)
kill -INT $!
sleep 0.2
kill -INT $!
wait $!
rc=$?
dt=$(($(ms) - t0))
[ $rc = 130 ] || bad "two SIGINTs: exit $rc, want 130"
grep -q "quitting at once; checkpoint_last.h5 is the last one written" "$tmp/two.log" ||
    { tail -n 5 "$tmp/two.log"; bad "two SIGINTs: no line saying so"; }
[ "$dt" -lt 5000 ] || bad "two SIGINTs: ${dt} ms to quit"
resumes two
echo "ok: two SIGINTs: quit in ${dt} ms (exit 130), checkpoint_last.h5 whole and resumes"

# ------------------------------------------------ 3. a launcher of 2 ranks
bg l1 --max-epoch 1 --devices cpu:2
wait_update "$tmp/l1.log" 5
kill -INT $!
wait $!
rc=$?
[ $rc = 1 ] && grep -q "stopped by a signal: 2 of 2 ranks on this node saved and stopped cleanly" \
    "$tmp/l1.log" || { tail -n 5 "$tmp/l1.log"; bad "2 ranks, one SIGINT: exit $rc, no clean stop"; }
grep -q '"valid_loss"' "$tmp/l1.log" && bad "2 ranks, one SIGINT: validated anyway"
resumes l1
bg l2 --max-epoch 1 --devices cpu:2 --save-interval-updates 3 --rank-slowdown $SLOW,$SLOW
wait_update "$tmp/l2.log" 4
lp=$!
workers=$(pgrep -P $lp)
t0=$(ms)
kill -INT $lp
sleep 0.2
kill -INT $lp
wait $lp
rc=$?
dt=$(($(ms) - t0))
[ $rc = 130 ] && grep -q "quit at once on a second Ctrl-C; checkpoint_last.h5 is the last one written" \
    "$tmp/l2.log" || { tail -n 5 "$tmp/l2.log"; bad "2 ranks, two SIGINTs: exit $rc, no line"; }
for p in $workers; do
    kill -0 "$p" 2>/dev/null && bad "2 ranks, two SIGINTs: worker $p still alive"
done
resumes l2
echo "ok: 2 ranks: one SIGINT stops cleanly without validating; two quit in ${dt} ms (exit 130)"
exit $fail
