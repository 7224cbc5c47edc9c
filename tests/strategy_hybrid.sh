#!/bin/sh
# Integration test: hgtrain --strategy runs strategies whose op groups
# split the batch differently (model-parallel groups beside data-parallel
# ones, replica counts that differ per group, zero on some devices;
# controller/hybrid.c) on forked CPU workers:
#  1. exactness: 8 random strategies (4 in the sanitizer build) of one op
#     per group on mnist (SGD with momentum, a global batch of 96) on 2 to
#     4 ranks, half of them in a random valid execution order: each group
#     model parallel on a random device (35%) or data parallel with 0-4
#     replicas per device, AllReduce or a server on a random rank (the
#     AllReduce groups' weights held and updated by every rank of their
#     pieces, asserted from the log); CP-AR with one group made model
#     parallel (the same); 3 (2) on bert (Adam, sequences of
#     different lengths) and 2 (1) on a small translation Transformer (SGD;
#     the loss and the NLL split too), and on both the data-parallel
#     baselines and hgtrain --plan mcmc: the same loss at every update
#     and, after K updates, the same parameters and optimizer state as 1
#     rank on the same batches (within the reordering's spread: equiv in
#     tests/mnist-common.sh); --trace writes each rank's timeline of its last step;
#     A whole epoch of bert (its last batch 11 samples; 267 samples, 59
#     under ASan): 9 pieces train it, 15 drop it with a warning;
#  2. a random strategy resumed half-way and run over tcp: bitwise the
#     straight shm run;
#  3. refused, naming why: --update-freq 2;
#  4. rank 1 killed mid-run: every rank exits within seconds, rank 1 named.
set -u
. "${HG_SRCDIR:-.}/tests/strategy-common.sh"
sed 's/"three"/"four"/; /model = "slow"/ s/count = 2/count = 3/' "$tmp/c3.cfg" >"$tmp/c4.cfg"

# a random mix: each group (one per op from --groups large) model parallel
# on a random device, or data parallel with 0-4 replicas per device (at
# least one) aggregated by AllReduce or a server on a random device
mix() { # seed ranks in out
    awk -v seed="$1" -v n="$2" 'BEGIN { srand(seed) }
        /mode = "dp"/ {
            getline; e = /},$/ ? "}," : "}"
            if (rand() < 0.35) {
                print "      mode = \"mp\"; device = \"localhost:" int(rand() * n) "\"; " e
                next
            }
            t = 0
            for (i = 0; i < n; i++) { r[i] = int(rand() * 5); t += r[i] }
            if (t == 0) r[int(rand() * n)] = 1 + int(rand() * 4)
            s = ""
            for (i = 0; i < n; i++) s = s (i ? ", " : "") "(\"localhost:" i "\", " r[i] ")"
            print "      mode = \"dp\"; replicas = (" s ");"
            if (rand() < 0.4) print "      aggregate = \"allreduce\"; " e
            else print "      aggregate = \"ps\"; ps = \"localhost:" int(rand() * n) "\"; " e
            next }
        { print }' "$tmp/$3" >"$tmp/$4"
    grep -q 'mode = "mp"' "$tmp/$4" && grep -q 'mode = "dp"' "$tmp/$4" ||
        bad "$4: not a mix of model- and data-parallel groups"
}
plan() { # cluster baseline groups out task-args...
    c=$1 b=$2 g=$3 o=$4
    shift 4
    "$HGPLAN" "$@" --cluster "$tmp/$c.cfg" --search baselines --groups "$g" --baseline "$b" \
        --out "$tmp/$o" >"$tmp/plan.log" 2>&1 || { cat "$tmp/plan.log"; bad "hgplan $c $b"; }
}
is_split() { # log: the line of a split strategy
    grep -q "strategy .*: the batch of [0-9]* split into [0-9]* pieces" "$tmp/$1.log" ||
        { head -n 3 "$tmp/$1.log"; bad "$1: no 'split into pieces' line"; return 1; }
}

# ------------------------------------------------------------ 1. exactness
M="--task mnist --data $tmp/fm --dropout 0 --batch 96 --optimizer sgd"
plan c2 EV-PS 45 ev2.cfg $M
plan c3 EV-PS 45 ev3.cfg $M
plan c4 EV-PS 45 ev4.cfg $M
plan c2 CP-AR 8 CP-AR.cfg $M
twice run ref --batch-size 96 --max-update "$K" >"$tmp/ref.log" 2>&1 || { cat "$tmp/ref.log"; bad "1 rank"; }
strat() { # name ranks cluster strategy args...
    name=$1 n=$2 c=$3 s=$4
    shift 4
    run "$name" --devices cpu:$n --batch-size 96 --max-update "$K" --cluster-file "$tmp/$c.cfg" \
        --strategy "$tmp/$s" --required-batch-size-multiple 1 "$@" >"$tmp/$name.log" 2>&1 ||
        { cat "$tmp/$name.log"; bad "$name exited non-zero"; return 1; }
    is_split "$name"
}
allreduced() { # log: its parameters all-reduced among their pieces' ranks (0: none)
    n=$(sed -n 's/.*; \([0-9]*\) parameters all-reduced among the ranks of their pieces.*/\1/p' \
        "$tmp/$1.log" | head -n 1)
    echo "${n:-0}"
}
replicated() { # log: its parameters updated on several ranks from one gradient (0: none)
    n=$(sed -n 's/.*; \([0-9]*\) parameters updated on every rank of their update op.*/\1/p' \
        "$tmp/$1.log" | head -n 1)
    echo "${n:-0}"
}
# The sanitizer build runs fewer random strategies of each kind (mixes on
# 2, 3 and 4 ranks, in the given and in a random order; one bert and one
# translation mix fewer): the same code paths, 40% of this test's time
if [ "${HG_ASAN:-0}" = 1 ]; then
    MIXES="1 2 5 6" BMIXES="1 2" TMIXES="1"
else
    MIXES="1 2 3 4 5 6 7 8" BMIXES="1 2 3" TMIXES="1 2"
fi
np=0
nar=0
nrep=0
for seed in $MIXES; do
    n=$((2 + seed % 3))
    mix $seed $n ev$n.cfg m$seed.cfg
    # seeds 5-8 in a random valid order (hgplan writes its list schedule's):
    # each rank runs its pieces' ops in it as far as the pieces' gradient
    # sums allow
    [ $seed -ge 5 ] && { "$HGPLAN" $M --cluster "$tmp/c$n.cfg" --strategy "$tmp/m$seed.cfg" \
        --random-order $seed --out "$tmp/m$seed.cfg" >"$tmp/plan.log" 2>&1 ||
        { cat "$tmp/plan.log"; bad "hgplan --random-order on m$seed"; }; }
    strat m$seed $n c$n m$seed.cfg && check m$seed ref
    grep -q "planned order ([1-9][0-9]* ops moved)" "$tmp/m$seed.log" ||
        bad "m$seed: not run in its planned order"
    np=$((np + $(sed -n 's/.*split into \([0-9]*\) pieces.*/\1/p' "$tmp/m$seed.log")))
    nar=$((nar + $(allreduced m$seed)))
    nrep=$((nrep + $(replicated m$seed)))
done
# the mixes' AllReduce groups: parameters held by every rank of their pieces
[ "$nar" -gt 0 ] || bad "the mixes all-reduce no parameter among their pieces' ranks"
# gradients made on one rank, update ops on several: each of those ranks
# updates its own copy (the simulator's pricing; no parameter travels)
[ "$nrep" -gt 0 ] || bad "the mixes update no parameter on several ranks from one gradient"
echo "ok: $(echo $MIXES | wc -w) random mixes on 2-4 ranks ($np pieces, $nar parameters all-reduced among their pieces' ranks, $nrep updated on several ranks) == 1 rank"
# group 3 of CP-AR model parallel on rank 1 (a mix tests/strategy_mp.sh
# once refused)
awk '/id = 3;/ { f = 1 } f && /mode = "dp"/ { print "      mode = \"mp\"; device = \"localhost:1\"; },"
        getline; f = 0; next } { print }' "$tmp/CP-AR.cfg" >"$tmp/cpar-mp3.cfg"
strat cpar-mp3 2 c2 cpar-mp3.cfg && check cpar-mp3 ref
# CP-AR's other groups split 64/32 across both ranks: their weights are
# all-reduced, not sent from an owner
[ "$(allreduced cpar-mp3)" -gt 0 ] || bad "cpar-mp3: no parameter all-reduced among its pieces' ranks"
# --trace: every rank writes its last step's timeline (Chrome trace JSON),
# compute on track 0, transfers (started, then waited for) on track 1
strat trace 2 c2 cpar-mp3.cfg --trace "$tmp/tr.json" && for r in 0 1; do
    f=$tmp/tr.rank$r.json
    [ "$(grep -c "\"ph\": \"X\", \"pid\": $r, \"tid\": 0" "$f" 2>/dev/null)" -ge 10 ] ||
        bad "--trace: rank $r's $f has fewer than 10 ops"
    grep -q "\"name\": \"\(recv\|send\) #[0-9]*\", \"cat\": \"[a-z]*\", \"ph\": \"X\", \"pid\": $r, \"tid\": 1" "$f" ||
        bad "--trace: rank $r's $f has no transfer"
    tail -n 1 "$f" | grep -q '^]}$' || bad "--trace: rank $r's $f does not end the JSON"
done

# the small Transformer: Adam, two state tensors per parameter, shapes that
# change with every batch
S=${HG_SRCDIR:-.}
lm_data
BM="--task bert --data $tmp/lm --dropout 0 --activation-fn gelu --batch 16 --optimizer adam"
plan c2 EV-PS 500 bev2.cfg $BM
plan c3 EV-PS 500 bev3.cfg $BM
twice runb bref >"$tmp/bref.log" 2>&1 || { cat "$tmp/bref.log"; bad "bert 1 rank"; }
# the data-parallel baselines (CP-PS: tests/strategy.sh) and hgtrain's own
# MCMC search (--plan mcmc, a fixed number of proposals)
for b in EV-AR EV-PS CP-AR; do
    plan c2 $b 8 b$b.cfg $BM
    runb b$b --devices cpu:2 --cluster-file "$tmp/c2.cfg" --strategy "$tmp/b$b.cfg" \
        >"$tmp/b$b.log" 2>&1 || { cat "$tmp/b$b.log"; bad "bert $b exited non-zero"; continue; }
    check b$b bref
done
runb bmcmc --devices cpu:2 --cluster-file "$tmp/c2.cfg" --plan mcmc --plan-iters 300 --plan-split \
    >"$tmp/bmcmc.log" 2>&1 || { cat "$tmp/bmcmc.log"; bad "bert --plan mcmc exited non-zero"; }
grep -q 'stopped after 300 proposals in [0-9.]* s: the cap of 300 proposals' "$tmp/bmcmc.log" ||
    { grep -v '"update"' "$tmp/bmcmc.log" | head -n 30; bad "bert --plan mcmc: no search"; }
check bmcmc bref
for seed in $BMIXES; do
    n=$((2 + seed % 2))
    mix $seed $n bev$n.cfg bm$seed.cfg
    runb bm$seed --devices cpu:$n --cluster-file "$tmp/c$n.cfg" --strategy "$tmp/bm$seed.cfg" \
        >"$tmp/bm$seed.log" 2>&1 || { cat "$tmp/bm$seed.log"; bad "bm$seed exited non-zero"; continue; }
    is_split bm$seed && check bm$seed bref
done

# dropout on (mnist 0.3; bert 0.1, attention dropout included): the
# masks are keyed by sample and position (docs/reproducibility.md,
# "Dropout"), so a split into pieces on several ranks still equals 1 rank
twice run dref --batch-size 96 --max-update "$K" --dropout 0.3 >"$tmp/dref.log" 2>&1 ||
    { cat "$tmp/dref.log"; bad "dropout: 1 rank"; }
# (planned for the graph with its DROPOUT nodes)
plan c3 EV-PS 45 evd3.cfg $M --dropout 0.3
mix 1 3 evd3.cfg dm1.cfg
strat dm1 3 c3 dm1.cfg --dropout 0.3 && check dm1 dref
twice runb bdref --dropout 0.1 >"$tmp/bdref.log" 2>&1 || { cat "$tmp/bdref.log"; bad "bert dropout: 1 rank"; }
plan c3 EV-PS 500 bevd3.cfg $BM --dropout 0.1
mix 1 3 bevd3.cfg bdm1.cfg
runb bdm1 --devices cpu:3 --cluster-file "$tmp/c3.cfg" --strategy "$tmp/bdm1.cfg" --dropout 0.1 \
    >"$tmp/bdm1.log" 2>&1 || { cat "$tmp/bdm1.log"; bad "bdm1 exited non-zero"; }
is_split bdm1 && check bdm1 bdref

# a whole epoch of the corpus's first 400 lines (267 samples: 16 batches
# of 16, the last of 11): a strategy of fewer pieces than 11 cuts that one
# at scaled bounds, each piece one row at least; one of more pieces cannot,
# and drops it with a warning (every rank alike).  The sanitizer build
# takes the first 106 lines (59 samples: 3 batches of 16, the last of 11;
# the whole epoch was 40% of this test's time there)
EL=400 ES=267 EB=16
[ "${HG_ASAN:-0}" = 1 ] && EL=106 ES=59 EB=3
lm_data $EL lme
grep -q -- "-> $ES instances" "$tmp/prelm.log" ||
    { cat "$tmp/prelm.log"; bad "the corpus's first $EL lines: not $ES samples"; }
plan c4 EV-PS 500 bev4.cfg $BM
mix 11 4 bev4.cfg b4m.cfg
for x in bm2:2 b4m:4; do
    name=${x%:*} n=${x#*:}
    runb e$name --devices cpu:$n --cluster-file "$tmp/c$n.cfg" --strategy "$tmp/$name.cfg" \
        --data "$tmp/lme" --max-update 0 --max-epoch 1 --no-save >"$tmp/e$name.log" 2>&1 ||
        { tail -n 5 "$tmp/e$name.log"; bad "$name: a whole epoch"; continue; }
    p=$(sed -n 's/.*split into \([0-9]*\) pieces.*/\1/p' "$tmp/e$name.log")
    u=$(grep -c '"update"' "$tmp/e$name.log")
    if [ "${p:-0}" -le 11 ]; then
        [ "$u" = $((EB + 1)) ] && ! grep -q 'smaller than the split' "$tmp/e$name.log" ||
            bad "$name ($p pieces): $u updates in the epoch, want $((EB + 1)) and no warning"
    else
        [ "$u" = $EB ] && grep -q "step [0-9]*'s batch of 11 samples is smaller than the split strategy's pieces" \
            "$tmp/e$name.log" || bad "$name ($p pieces): $u updates, want $EB and the warning"
    fi
    echo "ok: $name ($p pieces): a whole epoch in $u updates"
done

# a small translation Transformer (encoder-decoder; the loss and the NLL
# are two ops, both split), SGD with momentum: the attention key biases
# have a true gradient of zero (softmax ignores a constant added to every
# score), which Adam turns the rounding of any other summation order into
# full steps of (plain 2-rank data parallelism with Adam is 1.0e-5 off one
# rank there); the data-parallel baselines, hgtrain's MCMC search and 2
# random mixes
mt_data
TM="--task translation --data $tmp/mt $TA --batch 16 --optimizer sgd"
plan c2 EV-PS 1000 tev2.cfg $TM
runt() { # save-dir args...
    d=$1
    shift
    "$HGTRAIN" --task translation --data "$tmp/mt" $TA --optimizer sgd --momentum 0.9 --lr 0.05 \
        --seed 3 --log-format json --log-interval 1 --validate-interval 0 --threads 1 \
        --required-batch-size-multiple 1 --max-sentences 16 --max-update "$K" \
        --save-dir "$tmp/$d" "$@"
}
twice runt tref >"$tmp/tref.log" 2>&1 || { cat "$tmp/tref.log"; bad "translation 1 rank"; }
same_nll() { # name
    grep -o '"nll_loss": [0-9.]*' "$tmp/tref.log" >"$tmp/na"
    grep -o '"nll_loss": [0-9.]*' "$tmp/$1.log" >"$tmp/nb"
    [ -s "$tmp/na" ] && cmp -s "$tmp/na" "$tmp/nb" || bad "$1: nll_loss differs from 1 rank"
}
for b in EV-AR EV-PS CP-AR CP-PS; do
    plan c2 $b 8 t$b.cfg $TM
    runt t$b --devices cpu:2 --cluster-file "$tmp/c2.cfg" --strategy "$tmp/t$b.cfg" \
        >"$tmp/t$b.log" 2>&1 || { cat "$tmp/t$b.log"; bad "translation $b exited non-zero"; continue; }
    check t$b tref && same_nll t$b
done
runt tmcmc --devices cpu:2 --cluster-file "$tmp/c2.cfg" --plan mcmc --plan-iters 300 --plan-split \
    >"$tmp/tmcmc.log" 2>&1 || { cat "$tmp/tmcmc.log"; bad "translation --plan mcmc exited non-zero"; }
check tmcmc tref && same_nll tmcmc
for seed in $TMIXES; do
    mix $seed 2 tev2.cfg tm$seed.cfg
    runt tm$seed --devices cpu:2 --cluster-file "$tmp/c2.cfg" --strategy "$tmp/tm$seed.cfg" \
        >"$tmp/tm$seed.log" 2>&1 || { cat "$tmp/tm$seed.log"; bad "tm$seed exited non-zero"; continue; }
    is_split tm$seed && check tm$seed tref && same_nll tm$seed
done

# ---------------------------------------- 2. resumed half-way, over tcp
HY="--devices cpu:3 --batch-size 96 --cluster-file $tmp/c3.cfg --strategy $tmp/m1.cfg
   --required-batch-size-multiple 1"
resume_tcp m1 $HY

# ------------------------------------------------------------- 3. refused
run bad --devices cpu:2 --batch-size 96 --cluster-file "$tmp/c2.cfg" --strategy "$tmp/m6.cfg" \
    --required-batch-size-multiple 1 --update-freq 2 --max-update 1 >"$tmp/bad.log" 2>&1 &&
    bad "--update-freq 2 accepted"
grep -q "a model-parallel strategy runs one micro-batch per update so far" \
    "$tmp/bad.log" || { cat "$tmp/bad.log"; bad "--update-freq 2: not refused by name"; }
echo "ok: refusals"

# ------------------------------------------------------ 4. rank 1 killed
(
    exec "$HGTRAIN" --task mnist --data "$tmp/fm" --dropout 0 --optimizer sgd --lr 0.01 \
        --seed 5 --log-format json --log-interval 1 --validate-interval 0 --threads 1 \
        --save-dir "$tmp/kill" --devices cpu:3 --batch-size 96 --max-update 100000 \
        --distributed-timeout 10 --cluster-file "$tmp/c3.cfg" --strategy "$tmp/m1.cfg" \
        --required-batch-size-multiple 1 >"$tmp/kill.log" 2>&1
) &
lp=$!
wait_update "$tmp/kill.log"
victim=$(pgrep -P $lp -x hgtrain-r1)
others=$(pgrep -P $lp | grep -vx "${victim:-x}")
[ -n "$victim" ] || { cat "$tmp/kill.log"; bad "kill: no process named hgtrain-r1"; kill $lp; }
t0=$(date +%s)
kill -KILL "$victim"
wait $lp
rc=$?
dt=$(($(date +%s) - t0))
[ $rc -ne 0 ] && [ $dt -le 16 ] || bad "kill: exit $rc after ${dt}s"
for p in $others; do
    kill -0 "$p" 2>/dev/null && bad "kill: worker $p still alive"
done
grep -q "rank 1 (pid $victim) was killed by signal 9" "$tmp/kill.log" ||
    { cat "$tmp/kill.log"; bad "kill: the launcher did not name rank 1"; }
echo "ok: rank 1 killed: the job ended in ${dt}s naming rank 1"
equiv_summary
exit $fail
