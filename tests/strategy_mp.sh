#!/bin/sh
# Integration test: hgtrain --strategy runs model-parallel strategies
# (every op group whole on one device; controller/mp.c) on forked CPU
# workers, every rank reading the whole global batch:
#  1. exactness: mnist (SGD with momentum, a global batch of 96) with
#     hgplan's MP baseline on 2 ranks and 5 (2 under ASan) random placements of single-op
#     groups on 2 and 3 ranks (seeded), one with --clip-norm, one with
#     dropout 0.3 (bert: 0.1, attention dropout included); the small
#     Transformer (bert, Adam, sequences of different lengths) with the MP
#     baseline and 5 random placements (all random placements, here and
#     below, in a random valid execution order of their own, which every
#     rank follows): the same loss at every update and,
#     after K updates, the same parameters and optimizer state as 1 rank
#     on the same batches (within the reordering's spread: equiv in
#     tests/mnist-common.sh; they are bitwise today);
#     the validation loss of 1 rank; a small translation Transformer with
#     the MP baseline and 3 (2 under ASan) random placements;
#  2. a placement resumed half-way and run over tcp: bitwise the straight
#     shm run; saved with --save-sharded (each parameter written by the
#     rank of its optimizer op), bitwise the one-file checkpoint, and
#     resumed from the shards, bitwise the straight run;
#  3. refused, naming why: a lowered transfer left out (the executor runs
#     the lowering's transfers); --update-freq 2 (strategies mixing model- and
#     data-parallel groups: tests/strategy_hybrid.sh);
#  4. rank 1 killed mid-run: every rank exits within seconds, rank 1 and
#     the tensor waited for named; rank 1 stopped (SIGSTOP): named with
#     the tensor after --distributed-timeout.
set -u
. "${HG_SRCDIR:-.}/tests/strategy-common.sh"
# random placements: every model-parallel group on a device drawn with the seed
place() { # in out seed ranks
    awk -v seed="$3" -v n="$4" 'BEGIN { srand(seed) }
        /mode = "mp"/ { sub(/device = "[^"]*"/, "device = \"localhost:" int(rand() * n) "\"") }
        { print }' "$tmp/$1" >"$tmp/$2"
    cmp -s "$tmp/$1" "$tmp/$2" && bad "$2: the placement did not change"
}

# a random valid execution order (hgplan --random-order): each rank runs
# its forward and backward ops in it, every transfer right after its
# producer (the log says how many ops moved)
reorder() { # cluster strategy seed task-args...
    c=$1 s=$2 o=$3
    shift 3
    "$HGPLAN" "$@" --cluster "$tmp/$c.cfg" --strategy "$tmp/$s" --random-order "$o" \
        --out "$tmp/$s" >"$tmp/plan.log" 2>&1 ||
        { cat "$tmp/plan.log"; bad "hgplan --random-order $o on $s"; }
}
ordered() { # log
    grep -q "planned order ([1-9][0-9]* ops moved)" "$tmp/$1.log" ||
        { head -n 5 "$tmp/$1.log"; bad "$1: not run in its planned order"; }
}
plan() { # cluster baseline groups out task-args...
    c=$1 b=$2 g=$3 o=$4
    shift 4
    "$HGPLAN" "$@" --cluster "$tmp/$c.cfg" --search baselines --groups "$g" --baseline "$b" \
        --out "$tmp/$o" >"$tmp/plan.log" 2>&1 || { cat "$tmp/plan.log"; bad "hgplan $c $b"; }
}
M="--task mnist --data $tmp/fm --dropout 0 --batch 96 --optimizer sgd"
# random placements per model: 5, 2 in the sanitizer build (on 2 and 3
# ranks either way: the same code paths; 3, on 3 ranks, is the one the
# later parts run)
PLACEMENTS="1 2 3 4 5"
[ "${HG_ASAN:-0}" = 1 ] && PLACEMENTS="2 3"
plan c2 MP 8 MP.cfg $M
plan c2 MP 45 MP2-ops.cfg $M
plan c3 MP 45 MP3-ops.cfg $M

# ------------------------------------------------------------ 1. exactness
twice run ref --batch-size 96 --max-update "$K" >"$tmp/ref.log" 2>&1 ||
    { cat "$tmp/ref.log"; bad "1 rank"; }
strat() { # name ranks cluster strategy args...
    name=$1 n=$2 c=$3 s=$4
    shift 4
    run "$name" --devices cpu:$n --batch-size 96 --max-update "$K" --cluster-file "$tmp/$c.cfg" \
        --strategy "$tmp/$s" "$@" >"$tmp/$name.log" 2>&1 ||
        { cat "$tmp/$name.log"; bad "$name exited non-zero"; return 1; }
    grep -q "strategy .*$s: model parallel, the whole batch of 96 on every rank" "$tmp/$name.log" ||
        { head -n 3 "$tmp/$name.log"; bad "$name: no 'model parallel' line"; }
}
strat mp 2 c2 MP.cfg && check mp ref
for seed in $PLACEMENTS; do
    n=$((2 + seed % 2))
    place MP$n-ops.cfg rand$seed.cfg $seed $n
    reorder c$n rand$seed.cfg $seed $M
    strat rand$seed $n c$n rand$seed.cfg && check rand$seed ref && ordered rand$seed
done
twice run refc --batch-size 96 --max-update "$K" --clip-norm 1 >"$tmp/refc.log" 2>&1 || bad "1 rank, clipped"
strat rand3-clip 3 c3 rand3.cfg --clip-norm 1 && check rand3-clip refc
grep -q '"clip": 100.0' "$tmp/rand3-clip.log" || bad "rand3-clip: nothing was clipped"
# validation: rank 0 runs it on the parameters gathered from their owners;
# on a split of the test images' first 960 (the 10000 of the test split
# took 96 s of the sanitizer build's run, the same path 10 times over)
{ printf '\0\0\10\3\0\0\3\300\0\0\0\34\0\0\0\34'
  gunzip -c "$SRC/t10k-images-idx3-ubyte.gz" | tail -c +17 | head -c $((960 * 784)); } >"$tmp/vimg"
{ printf '\0\0\10\1\0\0\3\300'; gunzip -c "$SRC/t10k-labels-idx1-ubyte.gz" | tail -c +9 | head -c 960; } >"$tmp/vlab"
"$HGPRE" images --images "$tmp/vimg" --labels "$tmp/vlab" --out "$tmp/fm" --prefix valid \
    >"$tmp/prev.log" 2>&1 || { cat "$tmp/prev.log"; bad "hgpreprocess: 960 test images"; }
run v1 --batch-size 96 --max-update 2 --validate-interval 1 --validate-interval-updates 2 \
    --valid-subset valid >"$tmp/v1.log" 2>&1 || bad "1 rank, validated"
run v3 --devices cpu:3 --batch-size 96 --max-update 2 --validate-interval 1 --validate-interval-updates 2 \
    --valid-subset valid --cluster-file "$tmp/c3.cfg" --strategy "$tmp/rand3.cfg" >"$tmp/v3.log" 2>&1 ||
    { cat "$tmp/v3.log"; bad "rand3, validated"; }
grep -q '"valid_subset": "valid"' "$tmp/v1.log" || bad "v1: not validated on the 960 images"
v1=$(grep -o '"valid_loss": [0-9.]*, .*"valid_accuracy": [0-9.]*' "$tmp/v1.log")
v3=$(grep -o '"valid_loss": [0-9.]*, .*"valid_accuracy": [0-9.]*' "$tmp/v3.log")
[ -n "$v1" ] && [ "$v1" = "$v3" ] || bad "rand3: validation '$v3', 1 rank '$v1'"
# dropout on (0.3; planned for the graph with its DROPOUT nodes): every
# rank's DROPOUT draws the masks 1 rank draws (keyed by sample and
# position: docs/reproducibility.md, "Dropout")
plan c3 MP 45 MP3-drop.cfg $M --dropout 0.3
place MP3-drop.cfg randd.cfg 3 3
twice run refd --batch-size 96 --max-update "$K" --dropout 0.3 >"$tmp/refd.log" 2>&1 ||
    { cat "$tmp/refd.log"; bad "1 rank, dropout"; }
strat randd 3 c3 randd.cfg --dropout 0.3 && check randd refd

# the small Transformer: Adam, two state tensors per parameter, shapes that
# change with every batch
lm_data
BM="--task bert --data $tmp/lm --dropout 0 --activation-fn gelu --batch 16 --optimizer adam"
plan c2 MP 8 bMP.cfg $BM
plan c2 MP 500 bMP2-ops.cfg $BM
plan c3 MP 500 bMP3-ops.cfg $BM
twice runb bref >"$tmp/bref.log" 2>&1 || { cat "$tmp/bref.log"; bad "bert 1 rank"; }
stratb() { # name ranks cluster strategy
    runb "$1" --devices cpu:$2 --cluster-file "$tmp/$3.cfg" --strategy "$tmp/$4" \
        >"$tmp/$1.log" 2>&1 || { cat "$tmp/$1.log"; bad "$1 exited non-zero"; return 1; }
    grep -q "model parallel, the whole batch of 16 on every rank" "$tmp/$1.log" ||
        { head -n 3 "$tmp/$1.log"; bad "$1: no 'model parallel' line"; }
}
stratb bmp 2 c2 bMP.cfg && check bmp bref
for seed in $PLACEMENTS; do
    n=$((2 + seed % 2))
    place bMP$n-ops.cfg brand$seed.cfg $seed $n
    reorder c$n brand$seed.cfg $seed $BM
    stratb brand$seed $n c$n brand$seed.cfg && check brand$seed bref && ordered brand$seed
done
# dropout 0.1 everywhere, attention dropout included
plan c3 MP 500 bMP3-drop.cfg $BM --dropout 0.1
place bMP3-drop.cfg brandd.cfg 3 3
twice runb bdref --dropout 0.1 >"$tmp/bdref.log" 2>&1 || { cat "$tmp/bdref.log"; bad "bert 1 rank, dropout"; }
runb brandd --devices cpu:3 --cluster-file "$tmp/c3.cfg" --strategy "$tmp/brandd.cfg" --dropout 0.1 \
    >"$tmp/brandd.log" 2>&1 || { cat "$tmp/brandd.log"; bad "brandd exited non-zero"; }
check brandd bdref

# a small translation Transformer (encoder-decoder, label smoothing: the
# loss and the NLL are two ops, possibly on two ranks; source and target
# lengths change with every batch): the MP baseline and 3 random placements
mt_data
TM="--task translation --data $tmp/mt $TA --batch 16 --optimizer adam"
plan c2 MP 8 tMP.cfg $TM
plan c2 MP 1000 tMP2-ops.cfg $TM
plan c3 MP 1000 tMP3-ops.cfg $TM
twice runt tref >"$tmp/tref.log" 2>&1 || { cat "$tmp/tref.log"; bad "translation 1 rank"; }
stratt() { # name ranks cluster strategy
    runt "$1" --devices cpu:$2 --cluster-file "$tmp/$3.cfg" --strategy "$tmp/$4" \
        >"$tmp/$1.log" 2>&1 || { cat "$tmp/$1.log"; bad "$1 exited non-zero"; return 1; }
    grep -q "model parallel, the whole batch of 16 on every rank" "$tmp/$1.log" ||
        { head -n 3 "$tmp/$1.log"; bad "$1: no 'model parallel' line"; }
}
stratt tmp 2 c2 tMP.cfg && check tmp tref
TPLACEMENTS="1 2 3"
[ "${HG_ASAN:-0}" = 1 ] && TPLACEMENTS="2 3" # (as above)
for seed in $TPLACEMENTS; do
    n=$((2 + seed % 2))
    place tMP$n-ops.cfg trand$seed.cfg $seed $n
    reorder c$n trand$seed.cfg $seed $TM
    stratt trand$seed $n c$n trand$seed.cfg && check trand$seed tref && ordered trand$seed
done
for t in tmp $(for seed in $TPLACEMENTS; do echo trand$seed; done); do # the NLL, counted by its op's rank
    grep -o '"nll_loss": [0-9.]*' "$tmp/tref.log" >"$tmp/na"
    grep -o '"nll_loss": [0-9.]*' "$tmp/$t.log" >"$tmp/nb"
    [ -s "$tmp/na" ] && cmp -s "$tmp/na" "$tmp/nb" || bad "$t: nll_loss differs from 1 rank"
done

# ---------------------------------------- 2. resumed half-way, over tcp
R="--devices cpu:3 --batch-size 96 --cluster-file $tmp/c3.cfg --strategy $tmp/rand3.cfg"
resume_tcp rand3 $R
# --save-sharded: each parameter's owner (the rank of its optimizer op)
# writes it and its optimizer state, not gathered to rank 0 first: the
# checkpoint half-way is bitwise the one-file one (resume_tcp's, in
# $tmp/half), and resumed from its shards the run is bitwise the straight one
run shard $R --max-update $((K / 2)) --save-sharded >"$tmp/shard1.log" 2>&1 ||
    { cat "$tmp/shard1.log"; bad "rand3 sharded to update $((K / 2))"; }
[ "$(ls "$tmp/shard" | grep -c '^checkpoint_last\.h5\..*\.shard[0-2]-of-[23]$')" -ge 2 ] ||
    { ls "$tmp/shard"; bad "rand3 sharded: want a shard per owner (2 or 3)"; }
"$CMP" "$tmp/half/checkpoint_last.h5" "$tmp/shard/checkpoint_last.h5" 0 >"$tmp/cmp" 2>&1 ||
    { cat "$tmp/cmp"; bad "rand3 sharded: the shards differ from the one-file checkpoint"; }
run shard $R --max-update "$K" --save-sharded >"$tmp/shard2.log" 2>&1 ||
    { cat "$tmp/shard2.log"; bad "rand3 sharded resumed"; }
grep -q "loaded .* $((K / 2)) updates" "$tmp/shard2.log" ||
    bad "rand3 sharded: the resume did not load update $((K / 2))"
"$CMP" "$tmp/rand3/checkpoint_last.h5" "$tmp/shard/checkpoint_last.h5" 0 >"$tmp/cmp" 2>&1 ||
    { cat "$tmp/cmp"; bad "rand3 sharded: resumed from shards differs from the straight run"; }
echo "ok: rand3 with --save-sharded: the owners' shards, resumed bitwise"

# ------------------------------------------------------------- 3. refused
expect() { # pattern args...
    pat=$1
    shift
    run bad "$@" >"$tmp/bad.log" 2>&1
    rc=$?
    [ $rc != 0 ] && grep -q -- "$pat" "$tmp/bad.log" ||
        { cat "$tmp/bad.log"; bad "'$*': exit $rc, want an error and '$pat'"; }
}
expect "a model-parallel strategy runs one micro-batch per update so far" \
    --devices cpu:2 --batch-size 96 --cluster-file "$tmp/c2.cfg" --strategy "$tmp/MP.cfg" \
    --update-freq 2
# the executor runs the lowering's transfers (the simulator's): one of them
# left out (a planted bug, HG_TEST_DROP_TRANSFER) is refused, naming the
# tensor no transfer brings
export HG_TEST_DROP_TRANSFER=0
expect "but the lowering's transfers do not bring it" \
    --devices cpu:2 --batch-size 96 --cluster-file "$tmp/c2.cfg" --strategy "$tmp/MP.cfg"
unset HG_TEST_DROP_TRANSFER
echo "ok: refusals"

# ---------------------------------------- 4. rank 1 killed, rank 1 stopped
hit() { # name signal timeout: run rand3 and send rank 1 the signal at update 3
    (
        exec "$HGTRAIN" --task mnist --data "$tmp/fm" --dropout 0 --optimizer sgd --lr 0.01 \
            --seed 5 --log-format json --log-interval 1 --validate-interval 0 --threads 1 \
            --save-dir "$tmp/$1" --devices cpu:3 --batch-size 96 --max-update 100000 \
            --distributed-timeout "$3" --cluster-file "$tmp/c3.cfg" --strategy "$tmp/rand3.cfg" \
            >"$tmp/$1.log" 2>&1
    ) &
    lp=$!
    wait_update "$tmp/$1.log"
    victim=$(pgrep -P $lp -x hgtrain-r1)
    others=$(pgrep -P $lp | grep -vx "${victim:-x}")
    if [ -z "$victim" ]; then
        cat "$tmp/$1.log"
        bad "$1: no process named hgtrain-r1 under the launcher"
        kill $lp
    fi
    t0=$(date +%s)
    kill -"$2" "$victim"
    wait $lp
    rc=$?
    dt=$(($(date +%s) - t0))
    [ $rc -ne 0 ] && [ $dt -le $(($3 + 6)) ] || bad "$1: exit $rc after ${dt}s"
    for p in $others; do
        kill -0 "$p" 2>/dev/null && bad "$1: worker $p still alive"
    done
}
hit kill KILL 10
grep -q "rank 1 (pid $victim) was killed by signal 9" "$tmp/kill.log" ||
    { cat "$tmp/kill.log"; bad "kill: the launcher did not name rank 1"; }
grep -q "hgtrain: rank [02]: .*\(receive\|send\) of tensor [^ ]* (transfer [0-9]*, update [0-9]*) \(from\|to\) rank 1" "$tmp/kill.log" ||
    { cat "$tmp/kill.log"; bad "kill: no other rank named rank 1 and the tensor"; }
echo "ok: rank 1 killed: the job ended in ${dt}s naming rank 1"
# stopped: the waits' deadline (--distributed-timeout) names rank 1 and the tensor
hit stop STOP 4
grep -q "hgtrain: rank [02]: .*\(receive\|send\) of tensor [^ ]* (transfer [0-9]*, update [0-9]*) \(from\|to\) rank 1: .*rank 1" "$tmp/stop.log" ||
    { cat "$tmp/stop.log"; bad "stop: no other rank named rank 1 and the tensor"; }
kill -9 "$victim" 2>/dev/null
echo "ok: rank 1 stopped: the job ended in ${dt}s naming rank 1"
equiv_summary
exit $fail
