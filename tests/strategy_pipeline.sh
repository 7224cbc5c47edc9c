#!/bin/sh
# Integration test: hgtrain --strategy runs pipelines (the strategy file's
# `pipeline` block: micro-batches through the groups' devices as stages,
# gpipe or 1f1b; planner/pipeline.c lowers it, controller/hybrid.c runs
# it) on forked CPU workers:
#  1. exactness against 1 rank on the same global batches (the losses at
#     every update, then parameters and optimizer state within the
#     reordering's spread: equiv, tests/mnist-common.sh), for mnist (SGD
#     with momentum, a batch of 96) on 2 and 3 stages, uniform, speed-
#     proportional and random stage boundaries (hgplan --pipeline), M in
#     {1, 2, 3, 7, 8} (7 does not divide 96), both schedules, one with
#     dropout 0.3, one in a random execution order, one whose second stage
#     is data parallel over two devices (2:1), one whose last stage
#     recomputes its activations; 4 stages (2:1:1:1) with speed and
#     random boundaries, M in {1, 3, 8}, both schedules; --update-freq 2
#     (an update sums two global batches, each the pipeline's
#     micro-batches) against 1 rank with --update-freq 2, both schedules,
#     M = 7, and the data-parallel stage (its all-reduced sums carried
#     over the micro-batches: hg_exec_grad_carry); the small Transformer
#     (bert, Adam) and the translation Transformer (label smoothing) on 2
#     and 3 stages, and 10 random pipelines each (hgplan --pipeline random
#     with its seed) on 2, 3 and 4 stages, M from 1 to 16 of a batch of
#     16, both schedules, all against one 1-rank run per task;
#  2. each rank runs its micro-steps in the schedule's order (--trace):
#     gpipe every forward before every backward; 1f1b the last stage one
#     forward and one backward in turn, the first of 2 stages runs ahead by
#     one micro-batch;
#  3. refused before training, naming why: stages that are not
#     consecutive (the forward goes back to a device it left), more
#     micro-batches than samples, an unknown schedule;
#  4. memory is real: on a cluster whose devices hold 35 MB, data
#     parallelism (EV-AR) is refused naming the device and the bytes, the
#     pipeline trains, and so does what hgplan's search chooses there; --clip-norm; resumed across strategies (pipeline ->
#     data parallel -> pipeline: what 1 rank -> data parallel -> 1 rank
#     gives) and over tcp; rank 1 killed mid-pipeline: the job ends within seconds naming
#     it, no worker left.
set -u
. "${HG_SRCDIR:-.}/tests/strategy-common.sh"
M="--task mnist --data $tmp/fm --dropout 0 --batch 96 --optimizer sgd"
pipe() { # cluster kind micro schedule out task-args... (hgplan --pipeline)
    c=$1 k=$2 m=$3 sc=$4 o=$5
    shift 5
    "$HGPLAN" "$@" --cluster "$tmp/$c.cfg" --pipeline "$k" --micro-batches "$m" \
        --schedule "$sc" --out "$tmp/$o" >"$tmp/plan.log" 2>&1 ||
        { cat "$tmp/plan.log"; bad "hgplan --pipeline $k $m $sc"; return 1; }
    grep -q "^pipeline = { micro_batches = $m; schedule = \"$sc\"; };" "$tmp/$o" ||
        { cat "$tmp/$o"; bad "$o: no pipeline block"; }
}
is_pipe() { # name stages micro schedule
    grep -q "a pipeline of $2 stages, the batch of [0-9]* in $3 micro-batches, $4 schedule" \
        "$tmp/$1.log" || { head -n 3 "$tmp/$1.log"; bad "$1: no 'pipeline' line"; }
}
# seq_cases RUNNER REF PREFIX "TASK-ARGS" "CLUSTER RANKS KIND MICRO SCHEDULE [SEED]"...:
# each case planned (hgplan --seed SEED, 0 without), run by RUNNER (runb,
# runt) and checked against REF (one reference serves every case: the
# same global batches); named PREFIX KIND RANKS, or with a seed
# PREFIX-rRANKS-MICRO-SCHEDULE-SEED
seq_cases() {
    sr=$1 sref=$2 sp=$3 sa=$4
    shift 4
    for x in "$@"; do
        set -- $x
        name=$sp$3$2
        [ $# -ge 6 ] && name=$sp-r$2-$4-$5-$6
        pipe "$1" "$3" "$4" "$5" "$name.cfg" $sa --seed "${6:-0}" || continue
        "$sr" "$name" --devices cpu:$2 --cluster-file "$tmp/$1.cfg" --strategy "$tmp/$name.cfg" \
            >"$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log"; bad "$name exited non-zero"; continue; }
        is_pipe "$name" "$2" "$4" "$5"
        check "$name" "$sref"
    done
}
# cases RUNNER REF PREFIX "TASK-ARGS" CASES: seq_cases on CASES' lines
cases() {
    cifs=$IFS
    IFS=$nl
    set -- "$1" "$2" "$3" "$4" $5
    IFS=$cifs
    seq_cases "$@"
}

# ------------------------------------------------------------ 1. exactness
twice run ref --batch-size 96 --max-update "$K" >"$tmp/ref.log" 2>&1 ||
    { cat "$tmp/ref.log"; bad "1 rank"; }
strat() { # name ranks cluster strategy stages micro schedule args...
    name=$1 n=$2 c=$3 s=$4 ns=$5 mi=$6 sc=$7
    shift 7
    run "$name" --devices cpu:$n --batch-size 96 --max-update "$K" --cluster-file "$tmp/$c.cfg" \
        --strategy "$tmp/$s" "$@" >"$tmp/$name.log" 2>&1 ||
        { cat "$tmp/$name.log"; bad "$name exited non-zero"; return 1; }
    is_pipe "$name" "$ns" "$mi" "$sc"
}
# name cluster ranks kind micro schedule [seed]
CASES="u2-4-1f1b c2 2 uniform 4 1f1b
s2-3-gpipe c2 2 speed 3 gpipe
u3-8-1f1b c3 3 uniform 8 1f1b
s3-1-gpipe c3 3 speed 1 gpipe
r2-7-1f1b c2 2 random 7 1f1b 1
r3-2-gpipe c3 3 random 2 gpipe 2
r3-7-1f1b c3 3 random 7 1f1b 3
r2-8-gpipe c2 2 random 8 gpipe 4
s4-1-1f1b c4 4 speed 1 1f1b
r4-3-gpipe c4 4 random 3 gpipe 5
s4-8-gpipe c4 4 speed 8 gpipe
r4-8-1f1b c4 4 random 8 1f1b 6"
# the sanitizer build: the same code paths on fewer cases (those the later
# parts use, one random, one of 4 stages)
ASAN=${HG_ASAN:-0}
[ "$ASAN" = 1 ] && CASES=$(echo "$CASES" | sed -n '1p;3p;5p;12p')
nl='
'
oifs=$IFS
IFS=$nl
for x in $CASES; do
    IFS=$oifs
    set -- $x
    name=$1 c=$2 n=$3 k=$4 m=$5 sc=$6 seed=${7:-0}
    pipe "$c" "$k" "$m" "$sc" "$name.cfg" $M --seed "$seed" || continue
    strat "$name" "$n" "$c" "$name.cfg" "$n" "$m" "$sc" && check "$name" ref
done
IFS=$oifs
# --update-freq 2: each update sums two global batches, each run as the
# pipeline's micro-batches; the loss weighted by both batches' samples, as
# 1 rank's with --update-freq 2.  The data-parallel stage (localhost:1
# and localhost:2, 2:1) runs it too: localhost:2's update reads the
# stage's all-reduced sums outside its grad block, summed over the
# micro-batches beside it (hg_exec_grad_carry).
twice run refu --batch-size 96 --max-update "$K" --update-freq 2 >"$tmp/refu.log" 2>&1 ||
    { cat "$tmp/refu.log"; bad "1 rank, update-freq 2"; }
pipe c3 uniform 4 1f1b u3.cfg $M
sed -E 's/mode = "mp"; device = "localhost:(1|2)";/mode = "dp"; replicas = (("localhost:1", 2), ("localhost:2", 1)); aggregate = "allreduce";/' \
    "$tmp/u3.cfg" >"$tmp/dps.cfg"
[ "$(grep -c 'mode = "dp"' "$tmp/dps.cfg")" = 2 ] || bad "dps.cfg: the edit did not apply"
# name cluster ranks stages kind micro schedule
UCASES="uf-u2-4-1f1b c2 2 2 uniform 4 1f1b
uf-s2-7-gpipe c2 2 2 speed 7 gpipe
uf-dps c3 3 2 - 4 1f1b"
[ "$ASAN" = 1 ] && UCASES=$(echo "$UCASES" | sed -n '2p;3p')
IFS=$nl
for x in $UCASES; do
    IFS=$oifs
    set -- $x
    name=$1 c=$2 n=$3 ns=$4 k=$5 m=$6 sc=$7 f=dps.cfg
    [ "$k" = - ] || { f=$name.cfg; pipe "$c" "$k" "$m" "$sc" "$f" $M || continue; }
    strat "$name" "$n" "$c" "$f" "$ns" "$m" "$sc" --update-freq 2 && check "$name" refu
done
IFS=$oifs
# a random execution order of its own (hgplan --random-order): the
# schedule keys follow it (not in the sanitizer build, nor dropout)
[ "$ASAN" = 1 ] || {
pipe c3 random 4 1f1b ro.cfg $M --seed 9
"$HGPLAN" $M --cluster "$tmp/c3.cfg" --strategy "$tmp/ro.cfg" --random-order 9 --out "$tmp/ro.cfg" \
    >"$tmp/plan.log" 2>&1 || { cat "$tmp/plan.log"; bad "hgplan --random-order"; }
grep -q '^pipeline = { micro_batches = 4' "$tmp/ro.cfg" || bad "ro.cfg: --random-order lost the pipeline"
strat ro 3 c3 ro.cfg 3 4 1f1b && check ro ref
# a data-parallel stage (dps.cfg above): the last two of three stages
# made one, replicated 2:1 over localhost:1 and localhost:2 (each takes
# its share of every micro-batch; the stage's gradients all-reduced
# between them)
strat dps 3 c3 dps.cfg 2 4 1f1b && check dps ref
grep -q "op pieces per rank [0-9]*,\([0-9]*\),\1" "$tmp/dps.log" ||
    { grep strategy "$tmp/dps.log"; bad "dps: the stage's two devices run different numbers of pieces"; }
# the last stage recomputing its activations before its backward
sed 's/mode = "mp"; device = "localhost:1"; }/mode = "mp"; device = "localhost:1"; recompute = true; }/' \
    "$tmp/u2-4-1f1b.cfg" >"$tmp/rec.cfg"
strat rec 2 c2 rec.cfg 2 4 1f1b && check rec ref
grep -q "recomputation in 1 group ([1-9][0-9]* ops)" "$tmp/rec.log" ||
    { grep strategy "$tmp/rec.log"; bad "rec: nothing recomputed"; }
# dropout 0.3: the masks keyed by sample, whatever micro-batch holds it
pipe c3 uniform 3 1f1b drop.cfg $M --dropout 0.3
twice run refd --batch-size 96 --max-update "$K" --dropout 0.3 >"$tmp/refd.log" 2>&1 ||
    { cat "$tmp/refd.log"; bad "1 rank, dropout"; }
strat drop 3 c3 drop.cfg 3 3 1f1b --dropout 0.3 && check drop refd
}

# the small Transformer: Adam, shapes that change with every batch
lm_data
BM="--task bert --data $tmp/lm --dropout 0 --activation-fn gelu --batch 16 --optimizer adam"
twice runb bref >"$tmp/bref.log" 2>&1 || { cat "$tmp/bref.log"; bad "bert 1 rank"; }
# random pipelines (hgplan --pipeline random: boundaries from the seed)
# on 2, 3 and 4 stages, M from 1 to 16 of the 16 sentences, both
# schedules, against the same reference (the same global batches);
# cluster ranks kind micro schedule [seed]
BC="c2 2 uniform 4 1f1b
c3 3 speed 3 gpipe
c2 2 random 1 gpipe 11
c2 2 random 5 1f1b 12
c2 2 random 16 gpipe 13
c3 3 random 2 1f1b 14
c3 3 random 7 gpipe 15
c3 3 random 4 1f1b 16
c4 4 random 3 gpipe 17
c4 4 random 8 1f1b 18
c4 4 random 6 gpipe 19
c4 4 random 1 1f1b 20"
[ "$ASAN" = 1 ] && BC=$(echo "$BC" | sed -n '2p;5p;10p')
cases runb bref b "$BM" "$BC"

# the translation Transformer: encoder-decoder, label smoothing
mt_data
TM="--task translation --data $tmp/mt $TA --batch 16 --optimizer adam"
twice runt tref >"$tmp/tref.log" 2>&1 || { cat "$tmp/tref.log"; bad "translation 1 rank"; }
TC="c2 2 uniform 2 gpipe
c3 3 speed 3 1f1b
c2 2 random 3 1f1b 21
c2 2 random 8 gpipe 22
c2 2 random 1 1f1b 23
c3 3 random 5 gpipe 24
c3 3 random 16 1f1b 25
c3 3 random 2 gpipe 26
c4 4 random 4 1f1b 27
c4 4 random 7 gpipe 28
c4 4 random 2 1f1b 29
c4 4 random 12 gpipe 30"
[ "$ASAN" = 1 ] && TC=$(echo "$TC" | sed -n '2p;7p;9p')
cases runt tref t "$TM" "$TC"

# ------------------------------------- 2. the schedule's order, as traced
# each rank's compute ops of the last step by phase, runs of one phase
# squeezed: "FB" is every forward, then every backward
runs() { # trace
    python3 - "$1" <<'EOF'
import json, re, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"]
      if e.get("ph") == "X" and e["tid"] == 0 and e.get("cat") in ("forward", "backward")]
ev.sort(key=lambda e: e["ts"])
print(re.sub(r"(.)\1+", r"\1", "".join(e["cat"][0].upper() for e in ev)))
EOF
}
if command -v python3 >/dev/null; then
    for sc in 1f1b gpipe; do
        pipe c2 uniform 4 "$sc" tr-$sc.cfg $M || continue
        run tr-$sc --devices cpu:2 --batch-size 96 --max-update 2 --cluster-file "$tmp/c2.cfg" \
            --strategy "$tmp/tr-$sc.cfg" --trace "$tmp/tr-$sc.json" >"$tmp/tr-$sc.log" 2>&1 ||
            { cat "$tmp/tr-$sc.log"; bad "tr-$sc exited non-zero"; continue; }
        r0=$(runs "$tmp/tr-$sc.rank0.json") r1=$(runs "$tmp/tr-$sc.rank1.json")
        # 4 micro-batches on 2 stages: 1f1b F0 F1 B0 F2 B1 F3 B2 B3 on the
        # first, F0 B0 F1 B1 F2 B2 F3 B3 on the last
        want0=FB want1=FB
        [ "$sc" = 1f1b ] && want0=FBFBFB want1=FBFBFBFB
        [ "$r0" = "$want0" ] && [ "$r1" = "$want1" ] ||
            bad "tr-$sc: ranks ran $r0 and $r1, the $sc schedule is $want0 and $want1"
        echo "ok: tr-$sc: ranks ran $r0 and $r1"
    done
else
    echo "no python3: the schedule's order is not checked"
fi

# ------------------------------------------------------------ 3. refused
refused() { # name pattern strategy
    run "$1" --devices cpu:2 --batch-size 96 --max-update 1 --cluster-file "$tmp/c2.cfg" \
        --strategy "$tmp/$3" >"$tmp/$1.log" 2>&1 && bad "$1: accepted"
    grep -q "$2" "$tmp/$1.log" || { cat "$tmp/$1.log"; bad "$1: no '$2'"; }
    grep -q '"update": 1' "$tmp/$1.log" && bad "$1: trained"
}
plan_mp() { "$HGPLAN" $M --cluster "$tmp/c2.cfg" --search baselines --groups 45 --baseline MP \
    --out "$tmp/mp.cfg" >"$tmp/plan.log" 2>&1 || { cat "$tmp/plan.log"; bad "hgplan MP"; }; }
plan_mp
# the MP baseline's groups go back and forth between the two devices
sed '/^order/i pipeline = { micro_batches = 2; schedule = "1f1b"; };' "$tmp/mp.cfg" >"$tmp/back.cfg"
refused back "a stage must hold consecutive ops" back.cfg
sed 's/micro_batches = 4/micro_batches = 200/' "$tmp/tr-1f1b.cfg" >"$tmp/many.cfg"
refused many "pipeline: 200 micro-batches, but the batch has 96 samples" many.cfg
sed 's/schedule = "1f1b"/schedule = "zigzag"/' "$tmp/tr-1f1b.cfg" >"$tmp/zig.cfg"
refused zig 'schedule "zigzag": expected "gpipe" or "1f1b"' zig.cfg

# ------------------------------------------------------- 4. memory, the rest
cp "${HG_SRCDIR:-.}/examples/clusters/shm-2cpu-35mb.cfg" "$tmp/cap.cfg"
"$HGPLAN" $M --cluster "$tmp/cap.cfg" --search baselines --baseline EV-AR --out "$tmp/ev.cfg" \
    >"$tmp/plan.log" 2>&1 || { cat "$tmp/plan.log"; bad "hgplan EV-AR on cap"; }
run capev --devices cpu:2 --batch-size 96 --max-update 1 --cluster-file "$tmp/cap.cfg" \
    --strategy "$tmp/ev.cfg" >"$tmp/capev.log" 2>&1 && bad "capev: data parallelism fit in 35 MB"
grep -q "device localhost:[01] (rank [01]) would hold [0-9.]* MB at its planned peak, above its memory of 35.0 MB" \
    "$tmp/capev.log" || { cat "$tmp/capev.log"; bad "capev: no device and bytes named"; }
pipe cap speed 8 1f1b cap8.cfg $M
strat cap8 2 cap cap8.cfg 2 8 1f1b && check cap8 ref
# what the search plans there: no baseline fits, the pipeline row does
"$HGPLAN" $M --cluster "$tmp/cap.cfg" --search mcmc --iters 100 --out "$tmp/capmc.cfg" \
    >"$tmp/capmc.plan" 2>&1 || { cat "$tmp/capmc.plan"; bad "hgplan mcmc on cap"; }
grep -q "^chosen: \(pipeline\|PIPE-[US]\), because" "$tmp/capmc.plan" ||
    { cat "$tmp/capmc.plan"; bad "capmc: the search did not choose a pipeline"; }
mc=$(sed -n 's/^pipeline = { micro_batches = \([0-9]*\); schedule = "\([a-z0-9]*\)".*/\1 \2/p' "$tmp/capmc.cfg")
[ -n "$mc" ] || bad "capmc.cfg: no pipeline block"
set -- $mc
strat capmc 2 cap capmc.cfg 2 "${1:-0}" "${2:-x}" && check capmc ref
twice run refc --batch-size 96 --max-update "$K" --clip-norm 1 >"$tmp/refc.log" 2>&1 || bad "1 rank, clipped"
strat clip 3 c3 u3-8-1f1b.cfg 3 8 1f1b --clip-norm 1 && check clip refc
grep -q '"clip": 100.0' "$tmp/clip.log" || bad "clip: nothing was clipped"
# pipeline to K/3, data parallel to 2K/3, pipeline to K: what 1 rank
# does resuming from data parallelism at the same points (a resume on
# another cluster cuts the rest of the epoch into batches of its own)
P="--devices cpu:2 --batch-size 96 --cluster-file $tmp/c2.cfg --strategy $tmp/u2-4-1f1b.cfg"
# (updates A1, A2, A3: thirds of K, at least one each; --max-update 0
# would be no limit)
A3=$((K >= 3 ? K : 3)) A1=$((K >= 3 ? K / 3 : 1)) A2=$((K >= 3 ? 2 * K / 3 : 2))
across() { # save-dir args of the first and last thirds...
    ad=$1
    shift
    run "$ad" "$@" --max-update "$A1" &&
        run "$ad" --devices cpu:2 --batch-size 48 --max-update "$A2" &&
        run "$ad" "$@" --max-update "$A3"
}
twice across aref --batch-size 96 >"$tmp/aref.log" 2>&1 || { cat "$tmp/aref.log"; bad "across: 1 rank"; }
across across $P >"$tmp/across.log" 2>&1 || { cat "$tmp/across.log"; bad "across: pipeline"; }
grep -q "loaded .* $A2 updates" "$tmp/across.log" || bad "across: no resume at $A2"
check across aref
resume_tcp u2-4-1f1b $P
# rank 1 killed mid-pipeline
(
    exec "$HGTRAIN" --task mnist --data "$tmp/fm" --dropout 0 --optimizer sgd --lr 0.01 \
        --seed 5 --log-format json --log-interval 1 --validate-interval 0 --threads 1 \
        --save-dir "$tmp/kill" --devices cpu:3 --batch-size 96 --max-update 100000 \
        --distributed-timeout 10 --cluster-file "$tmp/c3.cfg" --strategy "$tmp/u3-8-1f1b.cfg" \
        >"$tmp/kill.log" 2>&1
) &
lp=$!
wait_update "$tmp/kill.log"
victim=$(pgrep -P $lp -x hgtrain-r1)
others=$(pgrep -P $lp | grep -vx "${victim:-x}")
[ -n "$victim" ] || { cat "$tmp/kill.log"; bad "kill: no hgtrain-r1"; kill $lp; }
t0=$(date +%s)
kill -KILL "$victim"
wait $lp
rc=$?
dt=$(($(date +%s) - t0))
echo "kill: the job ended ${dt}s after rank 1 was killed (exit $rc; limit 30 s)"
[ $rc -ne 0 ] && [ $dt -le 30 ] || bad "kill: exit $rc after ${dt}s"
for p in $others; do
    kill -0 "$p" 2>/dev/null && bad "kill: worker $p still alive"
done
grep -q "rank 1 (pid $victim) was killed by signal 9" "$tmp/kill.log" ||
    { cat "$tmp/kill.log"; bad "kill: the launcher did not name rank 1"; }
equiv_summary
exit $fail
