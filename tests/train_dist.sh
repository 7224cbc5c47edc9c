#!/bin/sh
# Integration test: data-parallel hgtrain on forked workers (real
# Fashion-MNIST, the mnist task, without dropout and with it: dropout's
# masks are keyed by sample, so a split batch is the same computation as
# the whole one either way).
#  1. equivalence: 1 rank on a global batch of 96 against 2, 3 and 4 ranks
#     with uneven per-rank budgets (one rank holding 0 samples) and against
#     --rank-capacity, with --update-freq 1 and 2 (2 on 3 ranks only under
#     ASan): the same loss at every
#     update and the same parameters and optimizer state after K updates
#     (12; 2 in the ASan build), within 8 times the distance between two
#     equally valid one-rank runs (equiv: docs/reproducibility.md); the
#     same for the small Transformer (bert task with GELU, Adam, sequences
#     of different lengths, loss per masked token); the same with dropout
#     on (mnist 0.3, bert 0.1 with attention dropout: masks keyed by sample);
#  2. resume with 3 ranks: stopped at K/2 and resumed to K == straight to
#     K (part 1's run), bitwise; only rank 0 logs and writes checkpoints;
#  3. faults: SIGKILL of rank 1 mid-epoch (shm and tcp backends) -> the
#     launcher and every other
#     rank exit within 30 s naming rank 1, no process left, nothing in
#     /dev/shm, the last checkpoint intact and resumable; SIGSTOP of rank 1
#     named by the launcher while the others sleep (also with one rank per
#     launcher over tcp); SIGTERM to the
#     launcher -> all ranks stop at the same update, checkpoint_last saved;
#  4. bad launches are refused naming the option;
#  5. the other ways to start a job give bitwise the shm result: the tcp
#     backend, two launchers meeting at tcp://HOST:PORT (tcp://localhost
#     listening on loopback only; a third with the
#     wrong token is refused and does not disturb them), file:// init,
#     Slurm's environment, mpirun (when built with MPI).
set -u
. "${HG_SRCDIR:-.}/tests/mnist-common.sh"
K=${HG_DIST_UPDATES:-12}

fm_shards
run() { # save-dir args...
    d=$1
    shift
    exec_ "$HGTRAIN" --task mnist --data "$tmp/fm" --valid-subset test --dropout 0 \
        --optimizer sgd --momentum 0.9 --lr 0.01 --seed 5 --log-format json \
        --log-interval 1 --validate-interval 0 --save-dir "$tmp/$d" "$@"
}
exec_() { "$@"; }
bg() { # like run, in the background; $! is hgtrain itself (the launcher)
    (
        exec_() { exec "$@"; }
        run "$@"
    ) &
}
losses() { sed -n 's/.*"update": \([0-9]*\),.*"loss": \([0-9.]*\),.*/\1 \2/p' "$1"; }
same_losses() { # a b: every update's loss within 1e-5 (relative)
    losses "$1" >"$tmp/la"
    losses "$2" >"$tmp/lb"
    [ "$(wc -l <"$tmp/la")" -ge "$K" ] && [ "$(wc -l <"$tmp/lb")" = "$(wc -l <"$tmp/la")" ] &&
        paste "$tmp/la" "$tmp/lb" | awk '{ if ($1 != $3) exit 1; d = $2 - $4; if (d < 0) d = -d;
            if (d > 1e-5 * $2 + 1e-4) exit 1 }'
}

versus() { # name ref: its losses and checkpoint against the 1-rank run ref's
    same_losses "$tmp/$2.log" "$tmp/$1.log" ||
        { paste "$tmp/la" "$tmp/lb" | head -n 5; bad "$1: losses differ from 1 rank"; }
    equiv "$1" "$2" || { cat "$tmp/cmp"; bad "$1: differs from 1 rank"; }
    echo "ok: $1 == 1 rank ($(tr '\n' ' ' <"$tmp/cmp"))"
}

# ------------------------------------------------------------ 1. equivalence
# (the sanitizer build runs --update-freq 2 on the 3-rank split only: the
# same code paths as the other splits, which --update-freq 1 runs there)
for uf in 1 2; do
    twice run ref$uf --batch-size 96 --update-freq $uf --max-update "$K" >"$tmp/ref$uf.log" 2>&1 ||
        { cat "$tmp/ref$uf.log"; bad "1 rank, update-freq $uf"; continue; }
    for cfg in "2 --max-sentences-per-rank 64,32" "3 --max-sentences-per-rank 48,40,8" \
        "4 --max-sentences-per-rank 40,32,24,0" "2 --rank-capacity 2,1 --batch-size 64"; do
        set -- $cfg
        n=$1
        shift
        [ $uf = 2 ] && [ $n != 3 ] && [ "${HG_ASAN:-0}" = 1 ] && continue # (below)
        name=w$n-$(echo "$*" | tr -c 'a-z0-9\n' _)-uf$uf
        run "$name" --devices cpu:$n --update-freq $uf --max-update "$K" "$@" \
            >"$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log"; bad "$name exited non-zero"; continue; }
        grep -q "backend shm" "$tmp/$name.log" || bad "$name: no 'backend shm' line"
        versus "$name" ref$uf
    done
done

# the small Transformer: bert on tests/data/corpus.en, 16 sequences a step
lm_data
runb() { # save-dir args...
    d=$1
    shift
    "$HGTRAIN" --task bert --data "$tmp/lm" --dropout 0 --activation-fn gelu --optimizer adam \
        --lr 0.0005 --seed 3 --log-format json --log-interval 1 --validate-interval 0 \
        --required-batch-size-multiple 1 --save-dir "$tmp/$d" "$@"
}
for uf in 1 2; do
    twice runb bref$uf --max-sentences 16 --update-freq $uf --max-update "$K" >"$tmp/bref$uf.log" 2>&1 ||
        { cat "$tmp/bref$uf.log"; bad "bert 1 rank, update-freq $uf"; continue; }
    for cfg in "2 10,6" "3 8,5,3" "4 7,0,5,4"; do
        set -- $cfg
        [ $uf = 2 ] && [ $1 != 3 ] && [ "${HG_ASAN:-0}" = 1 ] && continue
        name=bert-w$1-uf$uf
        runb $name --devices cpu:$1 --max-sentences-per-rank $2 --update-freq $uf \
            --max-update "$K" >"$tmp/$name.log" 2>&1 ||
            { cat "$tmp/$name.log"; bad "$name exited non-zero"; continue; }
        versus "$name" bref$uf
    done
done

# dropout on (0.3; bert: 0.1 everywhere, attention dropout included): each
# mask is keyed by its sample and position (docs/reproducibility.md,
# "Dropout"), so uneven budgets and --update-freq 2 still equal 1 rank;
# before, every rank drew masks of its own.  The sanitizer build runs
# --update-freq 1 and one bert split (the same code paths)
DUFS="1 2" BDCFGS="2:10,6 3:8,5,3"
[ "${HG_ASAN:-0}" = 1 ] && DUFS="1" BDCFGS="3:8,5,3"
for uf in $DUFS; do
    twice run dref$uf --batch-size 96 --update-freq $uf --max-update "$K" --dropout 0.3 \
        >"$tmp/dref$uf.log" 2>&1 || { cat "$tmp/dref$uf.log"; bad "dropout: 1 rank"; continue; }
    for cfg in "2 64,32" "3 48,40,8"; do
        set -- $cfg
        name=drop-w$1-uf$uf
        run $name --devices cpu:$1 --max-sentences-per-rank $2 --update-freq $uf \
            --max-update "$K" --dropout 0.3 >"$tmp/$name.log" 2>&1 ||
            { cat "$tmp/$name.log"; bad "$name exited non-zero"; continue; }
        versus "$name" dref$uf
    done
done
twice runb bdref --max-sentences 16 --max-update "$K" --dropout 0.1 >"$tmp/bdref.log" 2>&1 ||
    { cat "$tmp/bdref.log"; bad "bert dropout: 1 rank"; }
for cfg in $BDCFGS; do
    name=bert-drop-w${cfg%%:*}
    runb $name --devices cpu:${cfg%%:*} --max-sentences-per-rank ${cfg#*:} --max-update "$K" --dropout 0.1 \
        >"$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log"; bad "$name exited non-zero"; continue; }
    versus "$name" bdref
done

# a rank without samples adds exact zeros: 4 ranks (40,32,24,0) == 3 ranks
run w3z --devices cpu:3 --max-sentences-per-rank 40,32,24 --max-update "$K" >"$tmp/w3z.log" 2>&1 ||
    bad "3 ranks 40,32,24"
"$CMP" "$tmp/w3z/checkpoint_last.h5" "$tmp/w4-__max_sentences_per_rank_40_32_24_0-uf1/checkpoint_last.h5" \
    0 >"$tmp/cmp" 2>&1 || { cat "$tmp/cmp"; bad "a rank with no samples changed the result"; }

# gradient buckets (--bucket-cap-mb, all-reduced from the backward; a rank
# without samples queues them all in the update): the same sums as one
# AllReduce after the backward, bitwise, whatever the bucket size
for cap in 0 0.2; do
    run bk$cap --devices cpu:4 --max-sentences-per-rank 40,32,24,0 --max-update "$K" \
        --bucket-cap-mb $cap >"$tmp/bk$cap.log" 2>&1 || { cat "$tmp/bk$cap.log"; bad "--bucket-cap-mb $cap"; }
    "$CMP" "$tmp/bk$cap/checkpoint_last.h5" \
        "$tmp/w4-__max_sentences_per_rank_40_32_24_0-uf1/checkpoint_last.h5" 0 >"$tmp/cmp" 2>&1 ||
        { cat "$tmp/cmp"; bad "--bucket-cap-mb $cap changed the result"; }
done
grep -q 'gradients in [0-9]* buckets of at most 0.2 MiB' "$tmp/bk0.2.log" || bad "no bucket line"
nb=$(sed -n 's/.*gradients in \([0-9]*\) buckets.*/\1/p' "$tmp/bk0.2.log")
[ "${nb:-0}" -ge 3 ] || bad "0.2 MiB buckets of the CNN's 8 gradients: $nb"
grep -q 'buckets' "$tmp/bk0.log" && bad "--bucket-cap-mb 0 still made buckets"
# one rank with a named backend runs the collectives anyway (world 1): the
# bucketed path gives the 1-rank result bitwise
run w1bk --batch-size 96 --max-update "$K" --distributed-backend shm --bucket-cap-mb 0.2 \
    >"$tmp/w1bk.log" 2>&1 || { cat "$tmp/w1bk.log"; bad "1 rank, --distributed-backend shm"; }
grep -q 'gradients in [0-9]* buckets of at most 0.2 MiB' "$tmp/w1bk.log" ||
    { cat "$tmp/w1bk.log"; bad "1 rank with shm: no buckets"; }
"$CMP" "$tmp/w1bk/checkpoint_last.h5" "$tmp/ref1/checkpoint_last.h5" 0 >"$tmp/cmp" 2>&1 ||
    { cat "$tmp/cmp"; bad "1 rank with shm buckets differs from 1 rank"; }

# ---------------------------------------------------------------- 2. resume
# stopped half-way and resumed: bitwise the straight run of part 1 with the
# same ranks and budgets (w3-...-uf1, K updates)
s3=w3-__max_sentences_per_rank_48_40_8-uf1
H=$((K / 2))
run r3 --devices cpu:3 --max-sentences-per-rank 48,40,8 --max-update $H >"$tmp/r3a.log" 2>&1 ||
    bad "3 ranks to $H"
run r3 --devices cpu:3 --max-sentences-per-rank 48,40,8 --max-update "$K" >"$tmp/r3b.log" 2>&1 ||
    bad "3 ranks resumed to $K"
grep -q "loaded .*checkpoint_last.h5: epoch 1, step $H, $H updates" "$tmp/r3b.log" ||
    { cat "$tmp/r3b.log"; bad "3 ranks: resume did not load the $H-update checkpoint"; }
"$CMP" "$tmp/r3/checkpoint_last.h5" "$tmp/$s3/checkpoint_last.h5" 0 >"$tmp/cmp" 2>&1 ||
    { cat "$tmp/cmp"; bad "3 ranks: resumed run differs from the straight one"; }
[ "$(grep -c '"update"' "$tmp/$s3.log")" = "$K" ] ||
    bad "3 ranks: $(grep -c '"update"' "$tmp/$s3.log") update lines, want $K (rank 0 alone logs)"

# ---------------------------------------------------------------- 3. faults
kill_test() { # name backend
    k=$1
    bg "$k" --devices cpu:3 --distributed-backend "$2" --batch-size 32 --max-update 100000 \
        --save-interval-updates 10 --distributed-timeout 120 >"$tmp/$k.log" 2>&1
    lp=$!
    i=0
    while [ ! -f "$tmp/$k/checkpoint_last.h5" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
    sleep 0.3
    victim=$(pgrep -P $lp -x hgtrain-r1)
    others=$(pgrep -P $lp | tr '\n' ' ')
    if [ -z "$victim" ]; then
        bad "$k: no process named hgtrain-r1 under the launcher"
        kill $lp
        return
    fi
    t0=$(date +%s)
    kill -9 "$victim"
    wait $lp
    rc=$?
    dt=$(($(date +%s) - t0))
    [ $rc -ne 0 ] || bad "$k: launcher exited 0 after a worker was killed"
    [ $dt -le 30 ] || bad "$k: the job took $dt s to stop after SIGKILL of rank 1"
    grep -q "rank 1 (pid $victim) was killed by signal 9" "$tmp/$k.log" ||
        { cat "$tmp/$k.log"; bad "$k: the launcher did not name the killed rank"; }
    grep -q "rank 0: .*rank 1 .*\(exited\|failed\|closed\)" "$tmp/$k.log" ||
        { cat "$tmp/$k.log"; bad "$k: rank 0 did not name rank 1"; }
    for p in $others; do
        kill -0 "$p" 2>/dev/null && bad "$k: worker $p still alive"
    done
    # the launcher's segment is named after its pid (other jobs may run)
    [ "$(ls /dev/shm 2>/dev/null | grep -c "^hgcomm\.$lp\.")" = 0 ] ||
        bad "$k: segments left in /dev/shm"
    "$CMP" "$tmp/$k/checkpoint_last.h5" "$tmp/$k/checkpoint_last.h5" 0 >/dev/null 2>&1 ||
        bad "$k: checkpoint_last.h5 unreadable after the kill"
    last=$(sed -n 's/.*"update": \([0-9]*\),.*/\1/p' "$tmp/$k.log" | tail -n 1)
    saved=$(( (last / 10) * 10 ))
    run "$k" --devices cpu:3 --distributed-backend "$2" --batch-size 32 \
        --max-update $((saved + 5)) >"$tmp/$k-2.log" 2>&1 ||
        { cat "$tmp/$k-2.log"; bad "$k: resume after the kill"; }
    grep -q "loaded .* $saved updates" "$tmp/$k-2.log" ||
        { head -n 5 "$tmp/$k-2.log"; bad "$k: resume after the kill did not load update $saved"; }
    echo "ok: $k: SIGKILL of rank 1 stopped the job in ${dt}s; resumed from update $saved"
}
kill_test kill-shm shm
kill_test kill-tcp tcp

bg term --devices cpu:2 --batch-size 32 --max-update 100000 >"$tmp/term.log" 2>&1
lp=$!
wait_update "$tmp/term.log" 5
kill -TERM $lp
wait $lp
rc=$?
[ $rc = 1 ] || bad "SIGTERM to the launcher: exit $rc, want 1"
grep -q "stopped by signal" "$tmp/term.log" || { cat "$tmp/term.log"; bad "no 'stopped by signal'"; }
[ -f "$tmp/term/checkpoint_last.h5" ] || bad "SIGTERM: no checkpoint_last.h5"
[ -z "$(pgrep -P $lp)" ] || bad "SIGTERM: workers left"

grep -q "saved and stopped cleanly" "$tmp/term.log" || { cat "$tmp/term.log"; bad "SIGTERM: no clean stop reported"; }
grep -q "exited with status" "$tmp/term.log" && bad "SIGTERM reported as a failure"

# SIGSTOP of rank 1: the waiting ranks sleep (CPU < 5%), the launcher names
# rank 1 after min(30 s, --distributed-timeout / 2) and ends the job
bg stop --devices cpu:3 --batch-size 32 --max-update 100000 --distributed-timeout 8 \
    >"$tmp/stop.log" 2>&1
lp=$!
wait_update "$tmp/stop.log"
victim=$(pgrep -P $lp -x hgtrain-r1)
waiter=$(pgrep -P $lp -x hgtrain-r2)
t0=$(date +%s)
kill -STOP "$victim"
sleep 1
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }
c0=$(cpu "$waiter")
sleep 2
c1=$(cpu "$waiter")
wait $lp
rc=$?
dt=$(($(date +%s) - t0))
tck=$(getconf CLK_TCK)
echo "ok?: SIGSTOP: a waiting rank used $((c1 - c0)) ticks of $((2 * tck)) in 2 s; the job ended in ${dt}s"
[ -n "$c0" ] && [ -n "$c1" ] && [ $((c1 - c0)) -le $((2 * tck / 20)) ] ||
    bad "SIGSTOP: the waiting rank spun ($c0 -> $c1 ticks in 2 s)"
[ $rc -ne 0 ] && [ $dt -le 20 ] || bad "SIGSTOP: exit $rc after ${dt}s"
grep -q "rank 1 (pid $victim) has been stopped (signal 19" "$tmp/stop.log" ||
    { cat "$tmp/stop.log"; bad "SIGSTOP: the launcher did not name rank 1"; }
grep -q "hgtrain: rank [02] (pid [0-9]*) exited" "$tmp/stop.log" &&
    bad "SIGSTOP: the launcher blamed a waiting rank"
[ -z "$(pgrep -P $lp)" ] || bad "SIGSTOP: workers left"

# --------------------------------------------------------------- 4. refused
expect() { # pattern exit args...
    pat=$1
    want=$2
    shift 2
    run bad "$@" >"$tmp/bad.log" 2>&1
    rc=$?
    [ $rc = "$want" ] && grep -q -- "$pat" "$tmp/bad.log" ||
        { cat "$tmp/bad.log"; bad "'$*': exit $rc, want $want and '$pat'"; }
}
expect "max-sentences-per-rank has 2 entries for a world of 3" 1 --devices cpu:3 \
    --max-sentences-per-rank 1,2 --max-update 1
expect "devices cpu:0" 2 --devices cpu:0 --batch-size 8
expect "shm joins processes of one node" 2 --devices cpu:2 --distributed-world-size 4 \
    --distributed-backend shm --batch-size 8
expect "needs --distributed-init-method" 2 --devices cpu:2 --distributed-world-size 4 \
    --batch-size 8
expect "cuda" 2 --devices cuda:0 --batch-size 8

# ------------------------------------------------------- 5. other launchers
# (3 updates: how a job starts changes its rendezvous and transport, not
# its arithmetic; 3 compare that as well as more, as 6 did)
base() { # save-dir args: 2 ranks, 64 + 32 samples, 1 thread each
    d=$1
    shift
    run "$d" --max-sentences-per-rank 64,32 --max-update 3 --threads 1 "$@"
}
same_as_shm() { # name dir
    "$CMP" "$tmp/l-shm/checkpoint_last.h5" "$tmp/$2/checkpoint_last.h5" 0 >"$tmp/cmp" 2>&1 ||
        { cat "$tmp/cmp"; bad "$1: differs from the shm run"; }
}
base l-shm --devices cpu:2 >"$tmp/l-shm.log" 2>&1 || bad "shm reference"
base l-tcp --devices cpu:2 --distributed-backend tcp >"$tmp/l-tcp.log" 2>&1 ||
    { cat "$tmp/l-tcp.log"; bad "--distributed-backend tcp"; }
grep -q "backend tcp" "$tmp/l-tcp.log" || bad "no 'backend tcp' line"
same_as_shm "tcp backend" l-tcp

. "$S/tests/port-common.sh"
port=$(free_ports 5) || exit 1
tok=0123456789abcdef0123456789abcdef
two() { # name init-args...: rank 0 in the background, rank 1 here
    name=$1
    shift
    (HG_JOB_TOKEN=$tok base "$name" --distributed-world-size 2 --distributed-rank 0 "$@" \
        >"$tmp/$name-0.log" 2>&1) &
    p0=$!
    HG_JOB_TOKEN=$tok base "$name" --distributed-world-size 2 --distributed-rank 1 "$@" \
        >"$tmp/$name-1.log" 2>&1 || { cat "$tmp/$name-1.log"; bad "$name: rank 1 failed"; }
    wait $p0 || { cat "$tmp/$name-0.log"; bad "$name: rank 0 failed"; }
    same_as_shm "$name" "$name"
}
two l-tcpinit --distributed-init-method tcp://127.0.0.1:$port
# tcp://localhost: the store listens on loopback only, never on all interfaces
lport=$((port + 3))
(HG_JOB_TOKEN=$tok base l-lo --distributed-world-size 2 --distributed-rank 0 \
    --distributed-init-method tcp://localhost:$lport >"$tmp/l-lo-0.log" 2>&1) &
p0=$!
i=0
listen=
while [ $i -lt 100 ] && [ -z "$listen" ] && command -v ss >/dev/null; do
    listen=$(ss -Hltn "sport = :$lport" 2>/dev/null | awk '{ print $4 }' | tr '\n' ' ')
    [ -z "$listen" ] && sleep 0.1
    i=$((i + 1))
done
if command -v ss >/dev/null; then
    case "$listen" in
    127.*:$lport\ | \[::1\]:$lport\ ) ;;
    *) bad "tcp://localhost: the store listens on '$listen' (want loopback only)" ;;
    esac
fi
HG_JOB_TOKEN=$tok base l-lo --distributed-world-size 2 --distributed-rank 1 \
    --distributed-init-method tcp://localhost:$lport >"$tmp/l-lo-1.log" 2>&1 ||
    { cat "$tmp/l-lo-1.log"; bad "tcp://localhost: rank 1"; }
wait $p0 || { cat "$tmp/l-lo-0.log"; bad "tcp://localhost: rank 0"; }
# an intruder with another token is refused; the job carries on
(HG_JOB_TOKEN=$tok base l-tok --distributed-world-size 2 --distributed-rank 0 \
    --distributed-init-method tcp://127.0.0.1:$((port + 1)) >"$tmp/l-tok-0.log" 2>&1) &
p0=$!
HG_JOB_TOKEN=ffffffffffffffffffffffffffffffff base l-tok-x --distributed-world-size 2 \
    --distributed-rank 1 --distributed-init-method tcp://127.0.0.1:$((port + 1)) \
    --distributed-timeout 10 >"$tmp/l-tok-x.log" 2>&1 && bad "a wrong token was accepted"
grep -qi "token" "$tmp/l-tok-x.log" || { cat "$tmp/l-tok-x.log"; bad "wrong token: no message"; }
grep -q "$tok" "$tmp"/l-tok-*.log && bad "the token was printed"
HG_JOB_TOKEN=$tok base l-tok --distributed-world-size 2 --distributed-rank 1 \
    --distributed-init-method tcp://127.0.0.1:$((port + 1)) >"$tmp/l-tok-1.log" 2>&1 ||
    { cat "$tmp/l-tok-1.log"; bad "rank 1 after the intruder"; }
wait $p0 || { cat "$tmp/l-tok-0.log"; bad "rank 0 after the intruder"; }
same_as_shm "after an intruder" l-tok

# one rank per launcher (tcp): each launcher watches its rank, so a stopped
# rank is named there too, and rank 0 fails naming it
(
    export HG_JOB_TOKEN=$tok
    exec_() { exec "$@"; }
    run l-stop --max-sentences-per-rank 64,32 --threads 1 --max-update 100000 \
        --distributed-timeout 4 --distributed-world-size 2 --distributed-rank 1 \
        --distributed-init-method tcp://127.0.0.1:$((port + 4))
) >"$tmp/l-stop-1.log" 2>&1 &
l1=$!
(HG_JOB_TOKEN=$tok run l-stop --max-sentences-per-rank 64,32 --threads 1 --max-update 100000 \
    --distributed-timeout 4 --distributed-world-size 2 --distributed-rank 0 \
    --distributed-init-method tcp://127.0.0.1:$((port + 4)) >"$tmp/l-stop-0.log" 2>&1) &
p0=$!
wait_update "$tmp/l-stop-0.log"
victim=$(pgrep -P $l1 -x hgtrain-r1)
[ -n "$victim" ] && kill -STOP "$victim"
wait $l1
rc1=$?
wait $p0
rc0=$?
[ $rc1 -ne 0 ] && [ $rc0 -ne 0 ] && grep -q "rank 1 (pid $victim) has been stopped" "$tmp/l-stop-1.log" &&
    grep -q "rank 0: .*rank 1" "$tmp/l-stop-0.log" ||
    { tail -n 3 "$tmp/l-stop-0.log" "$tmp/l-stop-1.log"; bad "tcp, one rank per launcher: SIGSTOP of rank 1 not named (exit $rc0/$rc1)"; }

# file:// init: rank 0 makes the token, writes it 0600, removes it at the end
two l-file --distributed-init-method "file://$tmp/job.init"
[ -e "$tmp/job.init" ] && bad "file:// init file left behind"

# Slurm: rank, world and the first host from the environment
(SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_NODELIST=localhost SLURM_JOB_ID=$((port + 2)) \
    HG_JOB_TOKEN=$tok base l-slurm >"$tmp/l-slurm-0.log" 2>&1) &
p0=$!
SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_NODELIST=localhost SLURM_JOB_ID=$((port + 2)) \
    HG_JOB_TOKEN=$tok base l-slurm >"$tmp/l-slurm-1.log" 2>&1 ||
    { cat "$tmp/l-slurm-1.log"; bad "Slurm rank 1"; }
wait $p0 || { cat "$tmp/l-slurm-0.log"; bad "Slurm rank 0"; }
grep -q "rank 0 of 2 (slurm), backend tcp" "$tmp/l-slurm-0.log" || bad "Slurm: no job line"
same_as_shm "Slurm" l-slurm

# mpirun
if command -v mpirun >/dev/null 2>&1 && grep -q 'define HG_HAVE_MPI 1' "$B/config.h" 2>/dev/null; then
    # Open MPI's components leak at exit by design: no leak check there
    [ "${HG_ASAN:-0}" = 1 ] && ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    ASAN_OPTIONS=${ASAN_OPTIONS:-} \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
        mpirun -np 2 "$HGTRAIN" --task mnist --data "$tmp/fm" --valid-subset test --dropout 0 \
        --optimizer sgd --momentum 0.9 --lr 0.01 --seed 5 --log-format json --log-interval 1 \
        --validate-interval 0 --save-dir "$tmp/l-mpi" --max-sentences-per-rank 64,32 \
        --max-update 3 --threads 1 >"$tmp/l-mpi.log" 2>&1 || { cat "$tmp/l-mpi.log"; bad "mpirun"; }
    grep -q "backend mpi" "$tmp/l-mpi.log" || bad "mpirun: no 'backend mpi' line"
    same_as_shm "mpirun" l-mpi
else
    echo "note: no MPI build or no mpirun: the mpirun launch is not tested"
fi

equiv_summary
[ $fail = 0 ] && echo PASS
exit $fail
