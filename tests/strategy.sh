#!/bin/sh
# Integration test: hgtrain --strategy runs data-parallel-shaped strategies
# written by hgplan for this task (mnist without dropout, SGD with momentum,
# a global batch of 96) on forked CPU workers:
#  1. exactness: EV-AR, EV-PS, CP-AR, CP-PS on 2 ranks (speeds 2 and 1:
#     rows 48/48 or 64/32), CP-PS on 3 ranks, and a hand-edited 3-rank
#     strategy with parameter servers on ranks 0, 1 and 2 for different
#     parameters beside AllReduce ones: the same loss at every update, and
#     after K updates the same parameters and optimizer state as 1 rank on
#     the same global batches (within the reordering's spread: equiv in
#     tests/mnist-common.sh), with
#     --clip-norm and --update-freq 2 too, and with dropout 0.3 (masks
#     keyed by sample) on the mixed one, --update-freq 1 and 2; the same for the small
#     Transformer (bert, Adam) with servers on ranks 0 and 1; 20 (6 under ASan) random
#     data-parallel-shaped strategies on 2-4 ranks (replica counts 0-4 per
#     device, AllReduce or a server on a random rank per group, a random
#     valid execution order, which changes no bit); the mixed
#     one resumed half-way
#     and over tcp is bitwise the straight shm run, and so is it saved
#     with --save-sharded (each server writing the parameters it serves)
#     and resumed from the shards; resumed by plain data parallelism and
#     under another strategy it ends as the straight run (and resumes on 1
#     rank);
#     EV-AR is bitwise the plain 2-rank data parallelism;
#  2. a group with other batch shares runs as a split strategy (1 rank's
#     result; tests/strategy_hybrid.sh); refused, naming the option: a
#     strategy for another batch, for another cluster, a job with another
#     number of ranks, another dropout (tests/strategy_flow.sh: the rest);
#  3. the parameter server (rank 1) killed mid-run: every rank exits within
#     seconds, rank 1 named.
set -u
. "${HG_SRCDIR:-.}/tests/strategy-common.sh"

plan() { # cluster baseline out [task-args...]
    pc=$1 pb=$2 po=$3
    shift 3
    "$HGPLAN" --task mnist --data "$tmp/fm" --dropout 0 --batch 96 --optimizer sgd \
        --cluster "$tmp/$pc.cfg" --search baselines --groups 8 --baseline "$pb" \
        --out "$tmp/$po" "$@" >"$tmp/plan.log" 2>&1 ||
        { cat "$tmp/plan.log"; bad "hgplan $pc $pb"; }
}
for b in EV-AR EV-PS CP-AR CP-PS; do
    plan c2 $b $b.cfg
done
plan c3 CP-PS c3-CP-PS.cfg
plan c3 EV-PS c3-EV-PS.cfg
# parameter servers on ranks 1, 2, 0, ... for the groups in turn, every
# fourth group all-reduced
mixed() { # in out
    awk '/aggregate = "ps"/ { k++
            if (k % 4 == 3) sub(/aggregate = "ps"; ps = "[^"]*";/, "aggregate = \"allreduce\";")
            else sub(/ps = "[^"]*"/, "ps = \"localhost:" (k % 3) "\"") }
         { print }' "$tmp/$1" >"$tmp/$2"
}
mixed c3-CP-PS.cfg c3-mixed.cfg
for r in 0 1 2; do
    grep -q "ps = \"localhost:$r\"" "$tmp/c3-mixed.cfg" || bad "c3-mixed.cfg: no PS on rank $r"
done
grep -q 'aggregate = "allreduce"' "$tmp/c3-mixed.cfg" || bad "c3-mixed.cfg: no AllReduce group"

# ------------------------------------------------------------ 1. exactness
twice run ref --batch-size 96 --max-update "$K" >"$tmp/ref.log" 2>&1 ||
    { cat "$tmp/ref.log"; bad "1 rank"; }
strat() { # name ranks cluster strategy rows args...
    name=$1 n=$2 c=$3 s=$4 rows=$5
    shift 5
    run "$name" --devices cpu:$n --batch-size 96 --max-update "$K" --cluster-file "$tmp/$c.cfg" \
        --strategy "$tmp/$s" "$@" >"$tmp/$name.log" 2>&1 ||
        { cat "$tmp/$name.log"; bad "$name exited non-zero"; return; }
    grep -q "strategy .*$s: data parallel, rows $rows of 96" "$tmp/$name.log" ||
        { head -n 3 "$tmp/$name.log"; bad "$name: no 'rows $rows' line"; }
}
strat ev-ar 2 c2 EV-AR.cfg 48,48 && check ev-ar ref
strat ev-ps 2 c2 EV-PS.cfg 48,48 && check ev-ps ref
strat cp-ar 2 c2 CP-AR.cfg 64,32 && check cp-ar ref
strat cp-ps 2 c2 CP-PS.cfg 64,32 && check cp-ps ref
strat c3-cp-ps 3 c3 c3-CP-PS.cfg 48,24,24 && check c3-cp-ps ref
strat c3-mixed 3 c3 c3-mixed.cfg 48,24,24 && check c3-mixed ref
grep -q "2 parameters all-reduced, 6 on parameter servers" "$tmp/c3-mixed.log" ||
    bad "c3-mixed: not 2 parameters all-reduced and 6 on parameter servers"
twice run refc --batch-size 96 --max-update "$K" --clip-norm 1 >"$tmp/refc.log" 2>&1 || bad "1 rank, clipped"
strat c3-mixed-clip 3 c3 c3-mixed.cfg 48,24,24 --clip-norm 1 && check c3-mixed-clip refc
grep -q '"clip": 100.0' "$tmp/c3-mixed-clip.log" || bad "c3-mixed-clip: nothing was clipped"
twice run refu --batch-size 96 --max-update "$K" --update-freq 2 >"$tmp/refu.log" 2>&1 ||
    bad "1 rank, update-freq 2"
strat c3-mixed-uf2 3 c3 c3-mixed.cfg 48,24,24 --update-freq 2 && check c3-mixed-uf2 refu
# dropout on (0.3; planned for the graph with its DROPOUT nodes): the masks
# are keyed by sample and position (docs/reproducibility.md, "Dropout"), so
# parameter servers beside AllReduce on uneven rows equal 1 rank, with
# --update-freq 2 too
plan c3 CP-PS c3-CP-PS-drop.cfg --dropout 0.3
mixed c3-CP-PS-drop.cfg c3-mixed-drop.cfg
DUFS="1 2"
[ "${HG_ASAN:-0}" = 1 ] && DUFS="1" # the sanitizer build: the same code paths
for uf in $DUFS; do
    twice run refd$uf --batch-size 96 --max-update "$K" --update-freq $uf --dropout 0.3 \
        >"$tmp/refd$uf.log" 2>&1 || { cat "$tmp/refd$uf.log"; bad "1 rank, dropout"; }
    strat c3-mixed-drop$uf 3 c3 c3-mixed-drop.cfg 48,24,24 --update-freq $uf --dropout 0.3 &&
        check c3-mixed-drop$uf refd$uf
done

# 20 random data-parallel-shaped strategies on 2-4 ranks, drawn from
# hgplan's EV-PS with a seed each: replica counts 0-4 per device (zero on
# some: ranks with no rows), every group AllReduce (40%) or a parameter
# server on a random rank (also one with no rows)
sed 's/"three"/"four"/; /model = "slow"/ s/count = 2/count = 3/' "$tmp/c3.cfg" >"$tmp/c4.cfg"
for n in 2 3 4; do plan c$n EV-PS ev$n.cfg; done
randomize() { # seed ranks strategy
    awk -v seed="$1" -v n="$2" 'BEGIN { srand(seed); t = 0
            for (i = 0; i < n; i++) { r[i] = int(rand() * 5); t += r[i] }
            if (t == 0) r[int(rand() * n)] = 1 + int(rand() * 4)
            s = ""; for (i = 0; i < n; i++) s = s (i ? ", " : "") "(\"localhost:" i "\", " r[i] ")"
            rep = "replicas = (" s ");" }
        /mode = "dp"/ { sub(/replicas = \(.*\);/, rep) }
        /aggregate = "ps"/ { if (rand() < 0.4) sub(/aggregate = "ps"; ps = "[^"]*";/, "aggregate = \"allreduce\";")
            else sub(/ps = "[^"]*"/, "ps = \"localhost:" int(rand() * n) "\"") }
        { print }' "$3"
}
# and a random valid execution order each (hgplan --random-order): the
# forward and backward run in it (the log says how many ops moved)
reorder() { # cluster strategy seed
    "$HGPLAN" --task mnist --data "$tmp/fm" --dropout 0 --batch 96 --optimizer sgd \
        --cluster "$tmp/$1.cfg" --strategy "$tmp/$2" --random-order "$3" --out "$tmp/$2" \
        >"$tmp/plan.log" 2>&1 || { cat "$tmp/plan.log"; bad "hgplan --random-order $3 on $2"; }
}
# (6 in the sanitizer build: the same kinds of strategy, 2 to 4 ranks each
# twice, 2 with a rank of no rows at least)
NRAND=20 ZMIN=3
[ "${HG_ASAN:-0}" = 1 ] && NRAND=6 ZMIN=2
zero=0 nrand=0
for seed in $(seq 1 $NRAND); do
    n=$((2 + seed % 3))
    randomize $seed $n "$tmp/ev$n.cfg" >"$tmp/r$seed.cfg"
    # r1 also without an order (ids; hgplan writes its list schedule's)
    [ $seed = 1 ] && awk '/^order = \[/ { skip = 1 } skip { if (/\];/) skip = 0; next } { print }' \
        "$tmp/r1.cfg" >"$tmp/r1-ids.cfg"
    reorder c$n r$seed.cfg $seed
    run r$seed --devices cpu:$n --batch-size 96 --max-update "$K" --cluster-file "$tmp/c$n.cfg" \
        --strategy "$tmp/r$seed.cfg" --required-batch-size-multiple 1 >"$tmp/r$seed.log" 2>&1 ||
        { cat "$tmp/r$seed.log"; bad "random strategy $seed exited non-zero"; continue; }
    check r$seed ref
    grep -q "planned order ([1-9][0-9]* ops moved)" "$tmp/r$seed.log" ||
        { head -n 5 "$tmp/r$seed.log"; bad "random strategy $seed: not run in its planned order"; }
    grep -q "rows .*\b0\b.* of 96\|rows 0," "$tmp/r$seed.log" && zero=$((zero + 1))
    nrand=$((nrand + 1))
done
[ $zero -ge $ZMIN ] || bad "random strategies: only $zero with a rank of no rows"
# rows that are not multiples of a --required-batch-size-multiple given
# (8): said (without one, a strategy's rows are trained exactly)
run r3-cut --devices cpu:2 --batch-size 96 --max-update 1 --cluster-file "$tmp/c2.cfg" \
    --strategy "$tmp/r3.cfg" --no-save --required-batch-size-multiple 8 >"$tmp/r3-cut.log" 2>&1 ||
    bad "r3 with multiple 8"
grep -q "rows .* not multiples of --required-batch-size-multiple 8" "$tmp/r3-cut.log" ||
    { grep -v '"update"' "$tmp/r3-cut.log"; bad "r3: cut rows not reported"; }
echo "ok: $nrand random strategies on 2-4 ranks ($zero with a rank of no rows), each in a random order, == 1 rank"
# the order changes no arithmetic: r1 in the id order is bitwise r1
run r1-ids --devices cpu:3 --batch-size 96 --max-update "$K" --cluster-file "$tmp/c3.cfg" \
    --strategy "$tmp/r1-ids.cfg" --required-batch-size-multiple 1 >"$tmp/r1-ids.log" 2>&1 ||
    { cat "$tmp/r1-ids.log"; bad "r1 in the id order exited non-zero"; }
grep -q "planned order" "$tmp/r1-ids.log" && bad "r1-ids: the id order reported as planned"
"$CMP" "$tmp/r1/checkpoint_last.h5" "$tmp/r1-ids/checkpoint_last.h5" 0 >"$tmp/cmp" 2>&1 ||
    { cat "$tmp/cmp"; bad "r1: its random order differs from the id order"; }
echo "ok: r1 in a random order is bitwise r1 in the id order"

# resumed half-way (the servers' optimizer state went through rank 0's
# checkpoint) and over tcp: bitwise the straight shm run
M="--devices cpu:3 --batch-size 96 --cluster-file $tmp/c3.cfg --strategy $tmp/c3-mixed.cfg"
resume_tcp c3-mixed $M
# --save-sharded (docs/distributed.md): each server writes the parameters
# it serves with their optimizer state, which no other rank holds (not
# gathered to rank 0 first): the checkpoint half-way is bitwise the
# one-file one (resume_tcp's, in $tmp/half), and resumed from its shards
# the run is bitwise the straight one
run shard $M --max-update $((K / 2)) --save-sharded >"$tmp/shard1.log" 2>&1 ||
    { cat "$tmp/shard1.log"; bad "c3-mixed sharded to update $((K / 2))"; }
[ "$(ls "$tmp/shard" | grep -c '^checkpoint_last\.h5\..*\.shard[0-2]-of-3$')" = 3 ] ||
    { ls "$tmp/shard"; bad "c3-mixed sharded: want a shard per server"; }
"$CMP" "$tmp/half/checkpoint_last.h5" "$tmp/shard/checkpoint_last.h5" 0 >"$tmp/cmp" 2>&1 ||
    { cat "$tmp/cmp"; bad "c3-mixed sharded: the shards differ from the one-file checkpoint"; }
run shard $M --max-update "$K" --save-sharded >"$tmp/shard2.log" 2>&1 ||
    { cat "$tmp/shard2.log"; bad "c3-mixed sharded resumed"; }
grep -q "loaded .* $((K / 2)) updates" "$tmp/shard2.log" ||
    bad "c3-mixed sharded: the resume did not load update $((K / 2))"
"$CMP" "$tmp/c3-mixed/checkpoint_last.h5" "$tmp/shard/checkpoint_last.h5" 0 >"$tmp/cmp" 2>&1 ||
    { cat "$tmp/cmp"; bad "c3-mixed sharded: resumed from shards differs from the straight run"; }
echo "ok: c3-mixed with --save-sharded: the servers' shards, resumed bitwise"
# the checkpoint of c3-mixed half-way resumed under other strategies:
# plain data parallelism with the same rows and the c3 CP-PS baseline
# (every server on rank 0) end as the straight c3-mixed run; one rank
# resumes it too (with other batches: a new segment, docs/distributed.md)
for x in one plain3 cpps3; do
    rm -rf "$tmp/$x"
    mkdir -p "$tmp/$x"
    cp "$tmp/half/checkpoint_last.h5" "$tmp/$x/"
done
run one --batch-size 96 --max-update "$K" >"$tmp/one.log" 2>&1 || bad "c3-mixed resumed on 1 rank"
# (the strategy's batch multiple, 1: the same epoch plan goes on)
run plain3 --devices cpu:3 --max-sentences-per-rank 48,24,24 --max-update "$K" \
    --required-batch-size-multiple 1 >"$tmp/plain3.log" 2>&1 ||
    bad "c3-mixed resumed by plain data parallelism"
run cpps3 --devices cpu:3 --batch-size 96 --cluster-file "$tmp/c3.cfg" \
    --strategy "$tmp/c3-CP-PS.cfg" --max-update "$K" >"$tmp/cpps3.log" 2>&1 ||
    bad "c3-mixed resumed under CP-PS"
for x in one plain3 cpps3; do
    grep -q "loaded .* $((K / 2)) updates" "$tmp/$x.log" ||
        { head -n 5 "$tmp/$x.log"; bad "$x: the resume did not load update $((K / 2))"; }
    [ $x = one ] && continue
    # as the straight runs (c3-mixed's, and 1 rank's, which it equals)
    equiv $x ref || { cat "$tmp/cmp"; bad "c3-mixed resumed as $x: differs from the straight run"; }
done
echo "ok: c3-mixed's checkpoint resumed by plain data parallelism and under CP-PS: as the straight run; on 1 rank"

# the small Transformer (bert, Adam: two state tensors per parameter,
# sequences of different lengths): CP-PS with the servers on ranks 0 and 1
# in turn
S=${HG_SRCDIR:-.}
lm_data
"$HGPLAN" --task bert --data "$tmp/lm" --dropout 0 --activation-fn gelu --batch 16 --optimizer adam \
    --cluster "$tmp/c2.cfg" --search baselines --groups 8 --baseline CP-PS \
    --out "$tmp/bert-cp-ps.cfg" >"$tmp/plan.log" 2>&1 || { cat "$tmp/plan.log"; bad "hgplan bert"; }
awk '/aggregate = "ps"/ { k++; sub(/ps = "[^"]*"/, "ps = \"localhost:" (k % 2) "\"") } { print }' \
    "$tmp/bert-cp-ps.cfg" >"$tmp/bert-ps01.cfg"
twice runb bref >"$tmp/bref.log" 2>&1 || { cat "$tmp/bref.log"; bad "bert 1 rank"; }
runb bert-ps01 --devices cpu:2 --cluster-file "$tmp/c2.cfg" --strategy "$tmp/bert-ps01.cfg" \
    >"$tmp/bert-ps01.log" 2>&1 || { cat "$tmp/bert-ps01.log"; bad "bert-ps01 exited non-zero"; }
grep -q "rows 10,6 of 16; 0 parameters all-reduced" "$tmp/bert-ps01.log" ||
    { head -n 3 "$tmp/bert-ps01.log"; bad "bert-ps01: not rows 10,6, every parameter on a PS"; }
check bert-ps01 bref

# EV-AR is plain data parallelism: bitwise
run plain2 --devices cpu:2 --batch-size 48 --max-update "$K" >"$tmp/plain2.log" 2>&1 ||
    bad "plain 2 ranks"
"$CMP" "$tmp/plain2/checkpoint_last.h5" "$tmp/ev-ar/checkpoint_last.h5" 0 >"$tmp/cmp" 2>&1 ||
    { cat "$tmp/cmp"; bad "EV-AR differs from plain data parallelism"; }

# ------------------------------------------------------------- 2. refused
expect() { # pattern args...
    pat=$1
    shift
    run bad "$@" >"$tmp/bad.log" 2>&1
    rc=$?
    [ $rc != 0 ] && grep -q -- "$pat" "$tmp/bad.log" ||
        { cat "$tmp/bad.log"; bad "'$*': exit $rc, want an error and '$pat'"; }
}
awk '/id = 3;/ { f = 1 } f && /replicas/ { sub(/\("localhost:1", 2\)/, "(\"localhost:1\", 1)"); f = 0 }
     { print }' "$tmp/CP-AR.cfg" >"$tmp/uneven.cfg"
cmp -s "$tmp/CP-AR.cfg" "$tmp/uneven.cfg" && bad "uneven.cfg: the edit did not apply"
# a group with other batch shares is no longer refused: a split strategy
# (tests/strategy_hybrid.sh)
run uneven --devices cpu:2 --batch-size 96 --max-update "$K" --cluster-file "$tmp/c2.cfg" \
    --strategy "$tmp/uneven.cfg" >"$tmp/uneven.log" 2>&1 || { cat "$tmp/uneven.log"; bad "uneven"; }
grep -q "uneven.cfg: the batch of 96 split into 3 pieces" "$tmp/uneven.log" ||
    { head -n 3 "$tmp/uneven.log"; bad "uneven: not run as a split strategy"; }
check uneven ref
# (before the fork, naming the option: tests/strategy_flow.sh)
expect "--max-sentences 64: the strategy was planned for a global batch of 96" \
    --devices cpu:2 --batch-size 64 --cluster-file "$tmp/c2.cfg" --strategy "$tmp/EV-AR.cfg"
expect "cluster two has 2 devices (localhost:0, localhost:1), the strategy was planned for cluster three's 3" \
    --devices cpu:2 --batch-size 96 --cluster-file "$tmp/c2.cfg" --strategy "$tmp/c3-mixed.cfg"
expect "--devices cpu:3: 3 ranks, the strategy was planned for 2 devices" \
    --devices cpu:3 --batch-size 96 --cluster-file "$tmp/c2.cfg" --strategy "$tmp/EV-AR.cfg"
expect "--dropout 0.5: the strategy was planned with --dropout 0" \
    --devices cpu:2 --batch-size 96 --cluster-file "$tmp/c2.cfg" --strategy "$tmp/EV-AR.cfg" \
    --dropout 0.5
echo "ok: refusals"

# ------------------------------------------------- 3. the PS rank is killed
sed 's/ps = "localhost:[0-9]"/ps = "localhost:1"/' "$tmp/c3-EV-PS.cfg" >"$tmp/ps1.cfg"
(
    exec "$HGTRAIN" --task mnist --data "$tmp/fm" --dropout 0 --optimizer sgd --lr 0.01 \
        --seed 5 --log-format json --log-interval 1 --validate-interval 0 --threads 1 \
        --save-dir "$tmp/kill" --devices cpu:3 --batch-size 96 --max-update 100000 \
        --distributed-timeout 10 --cluster-file "$tmp/c3.cfg" --strategy "$tmp/ps1.cfg" \
        >"$tmp/kill.log" 2>&1
) &
lp=$!
wait_update "$tmp/kill.log"
victim=$(pgrep -P $lp -x hgtrain-r1)
others=$(pgrep -P $lp | grep -vx "${victim:-x}")
if [ -z "$victim" ]; then
    cat "$tmp/kill.log"
    bad "PS kill: no process named hgtrain-r1 under the launcher"
    kill $lp
fi
t0=$(date +%s)
kill -9 "$victim"
wait $lp
rc=$?
dt=$(($(date +%s) - t0))
[ $rc -ne 0 ] && [ $dt -le 10 ] || bad "PS kill: exit $rc after ${dt}s"
grep -q "rank 1 (pid $victim) was killed by signal 9" "$tmp/kill.log" ||
    { cat "$tmp/kill.log"; bad "PS kill: the launcher did not name rank 1"; }
grep -q "hgtrain: rank [02]: .*rank 1" "$tmp/kill.log" ||
    { cat "$tmp/kill.log"; bad "PS kill: no other rank named rank 1"; }
for p in $others; do
    kill -0 "$p" 2>/dev/null && bad "PS kill: worker $p still alive"
done
echo "ok: the PS rank killed: the job ended in ${dt}s naming rank 1"
equiv_summary
exit $fail
