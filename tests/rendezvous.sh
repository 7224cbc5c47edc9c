#!/bin/sh
# Integration test: a rendezvous over tcp that loses a rank, or gets one
# twice, ends at once naming it (docs/distributed.md, "Faults").  Each case
# is timed; the times go to this test's log.
#  1. one launcher of ranks 0-1 of 3 (rank 2 never comes, so both wait in
#     the rendezvous): rank 1 SIGKILLed -> the launcher names it and the
#     job ends within 5 s (not after the launcher's 20 s grace period),
#     rank 0 naming rank 1;
#  2. rank 2's node alone first, its worker SIGKILLed before any store is
#     up (the store never heard from it), then ranks 0-1's node -> ranks 0
#     and 1 fail within 5 s naming rank 2 (not at --distributed-timeout);
#  3. a job of 2 ranks training, then a second process started as rank 1
#     with the same token -> refused within 5 s naming rank 1 and the pid
#     and host that hold it (not after --distributed-timeout), and the job
#     goes on.
# --distributed-timeout is 60 s; a case that has not ended after CAP s is
# killed and fails.
set -u
. "${HG_SRCDIR:-.}/tests/mnist-common.sh"
pids=
trap 'for p in $pids; do kill -KILL $p; done 2>/dev/null; rm -rf "$tmp"' EXIT
LIMIT=5 # seconds to name the rank
CAP=30  # seconds before a case is given up

fm_shards
args() { # save-dir
    echo --task mnist --data "$tmp/fm" --valid-subset test --optimizer sgd --lr 0.01 \
        --log-format json --log-interval 1 --validate-interval 0 --save-dir "$tmp/$1" \
        --max-sentences 32 --threads 1 --max-update 100000 --distributed-backend tcp \
        --distributed-timeout 60
}
export HG_JOB_TOKEN=0123456789abcdef0123456789abcdef
. "$S/tests/port-common.sh"
port=$(free_ports 3) || exit 1
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
within() { awk -v t="$1" -v l="$2" 'BEGIN { exit !(t <= l) }'; }
node() { # log port devices rank world: starts a launcher in the background, sets $!
    # shellcheck disable=SC2046
    "$HGTRAIN" $(args "$1") --devices "cpu:$3" --distributed-rank "$4" \
        --distributed-world-size "$5" --distributed-init-method "tcp://127.0.0.1:$2" \
        >"$tmp/$1.log" 2>&1 &
}
worker() { # launcher-pid rank: the worker's pid, once it runs (at most 30 s)
    i=0
    while [ $i -lt 300 ]; do
        wp=$(pgrep -P "$1" -x "hgtrain-r$2") && { echo "$wp"; return 0; }
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}
# await PID T0 [PATTERN LOG]: waits for PID to end (at most CAP s from T0,
# then kills it); sets rc, dt (T0 to its end) and named (T0 to PATTERN's
# first appearance in LOG, "never" if it did not)
await() {
    named=never
    while kill -0 "$1" 2>/dev/null && within "$(since "$2")" $CAP; do
        [ $# -ge 4 ] && [ "$named" = never ] && grep -q "$3" "$4" && named=$(since "$2")
        sleep 0.05
    done
    kill -0 "$1" 2>/dev/null && kill -KILL "$1" 2>/dev/null
    wait "$1"
    rc=$?
    dt=$(since "$2")
    [ $# -ge 4 ] && [ "$named" = never ] && grep -q "$3" "$4" && named=$dt
    :
}

# 1. one launcher: rank 1 killed while waiting for rank 2
node one "$port" 2 0 3
la=$!
pids="$pids $la"
w1=$(worker $la 1) || bad "1: no worker hgtrain-r1"
sleep 2 # both are in the rendezvous now (rank 2 never comes)
t0=$(now)
kill -KILL "$w1"
await $la "$t0" "rank 0: .*rank 1 (pid $w1 on" "$tmp/one.log"
echo "time: 1. rank 1 SIGKILLed in the rendezvous: rank 0 named it after ${named}s, the job ended after ${dt}s (exit $rc; limit ${LIMIT}s)"
grep -q "hgtrain: rank 1 (pid $w1) was killed by signal 9" "$tmp/one.log" ||
    bad "1: the launcher did not name rank 1"
[ "$named" != never ] && within "$named" $LIMIT ||
    { cat "$tmp/one.log"; bad "1: rank 0 did not name rank 1 within ${LIMIT}s (${named})"; }
[ $rc -ne 0 ] && within "$dt" $LIMIT || bad "1: exit $rc after ${dt}s"
grep -q "did not stop within" "$tmp/one.log" && bad "1: the launcher had to kill rank 0"

# 2. rank 2 killed before the store is up, then ranks 0-1 start
node two-b $((port + 1)) 1 2 3
lb=$!
pids="$pids $lb"
w2=$(worker $lb 2) || bad "2: no worker hgtrain-r2"
sleep 1 # it retries connecting to a store that is not up
t0=$(now)
kill -KILL "$w2"
node two-a $((port + 1)) 2 0 3
la=$!
pids="$pids $la"
await $la "$t0" "rank [01]: .*rank 2 (pid $w2 on" "$tmp/two-a.log"
echo "time: 2. rank 2 SIGKILLed before the store heard from it: ranks 0-1 named it after ${named}s, their job ended after ${dt}s (exit $rc; limit ${LIMIT}s)"
[ "$named" != never ] && within "$named" $LIMIT ||
    { cat "$tmp/two-a.log" "$tmp/two-b.log"; bad "2: rank 2 not named within ${LIMIT}s (${named})"; }
[ $rc -ne 0 ] && within "$dt" $LIMIT || bad "2: exit $rc after ${dt}s"
await $lb "$t0"
grep -q "hgtrain: rank 2 (pid $w2) was killed by signal 9" "$tmp/two-b.log" ||
    { cat "$tmp/two-b.log"; bad "2: rank 2's launcher did not name it"; }

# 3. a second process as rank 1 of a running job
node dup-0 $((port + 2)) 1 0 2
l0=$!
node dup-1 $((port + 2)) 1 1 2
l1=$!
pids="$pids $l0 $l1"
wait_update "$tmp/dup-0.log"
h1=$(worker $l1 1)
t0=$(now)
node dup-2 $((port + 2)) 1 1 2
l2=$!
pids="$pids $l2"
await $l2 "$t0" "rank 1 of this job is already held by pid $h1 on $(hostname)" "$tmp/dup-2.log"
echo "time: 3. a second process as rank 1: refused after ${named}s, it ended after ${dt}s (exit $rc; limit ${LIMIT}s)"
[ "$named" != never ] && within "$named" $LIMIT ||
    { cat "$tmp/dup-2.log"; bad "3: the second rank 1 not refused naming the holder within ${LIMIT}s (${named})"; }
[ $rc -ne 0 ] && within "$dt" $LIMIT || bad "3: exit $rc after ${dt}s"
# the job goes on: 3 more updates after the refusal
u=$(grep -o '"update": [0-9]*' "$tmp/dup-0.log" | tail -n 1 | grep -o '[0-9]*$')
wait_update "$tmp/dup-0.log" $((${u:-0} + 3))
kill -0 $l0 2>/dev/null && kill -0 $l1 2>/dev/null &&
    grep -q "\"update\": $((${u:-0} + 3))," "$tmp/dup-0.log" ||
    { tail -n 5 "$tmp/dup-0.log" "$tmp/dup-1.log"; bad "3: the job holding rank 1 did not go on"; }
grep -q "job failed" "$tmp/dup-0.log" "$tmp/dup-1.log" && bad "3: the refusal failed the job"
kill -TERM $l0 $l1 2>/dev/null
t0=$(now)
await $l0 "$t0"
await $l1 "$t0"

[ $fail = 0 ] && echo PASS
exit $fail
