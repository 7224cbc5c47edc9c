#!/bin/sh
# Integration test: hgtrain --strategy FILE needs nothing the file already
# says (docs/planner.md, "hgtrain --strategy"); mnist on forked CPU workers:
#  1. a strategy file that hgplan wrote with its defaults (no --optimizer)
#     trains with --devices alone (no --max-sentences, no --cluster-file,
#     hgtrain's default optimizer: one default for both): the cluster file
#     it names is found beside it, its global batch of 90 is the batch, and
#     all of it is trained every step (rows 45,45: the default batch
#     multiple 8 cuts nothing); the same options given on the command line
#     agree with it and give the same losses;
#  2. each difference from the file (optimizer both ways, dropout, batch,
#     devices, cluster, another model, a tensor-parallel group beside
#     groups that are not, which hgtrain does not run yet) is refused with exit 2 before any
#     worker starts (no rank opened its HG_TRACE_SAMPLES file), in one
#     message printed once that names the option and both values; three
#     differences at once come in one message, each named once;
#  3. a file written before the options were recorded (no graph.optimizer,
#     no graph.options) still loads, and another dropout is refused by its
#     op count, once, before the fork.
set -u
. "${HG_SRCDIR:-.}/tests/strategy-common.sh"
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
PLAN=$(abs "$HGPLAN")
# written in $tmp with a relative --cluster: cluster.file = "c2.cfg", which
# hgtrain finds beside the strategy from the build directory
planin() { # out args...
    po=$1
    shift
    (cd "$tmp" && "$PLAN" --task mnist --data "$tmp/fm" --batch 90 --cluster c2.cfg \
        --search baselines --groups 8 --baseline EV-AR --out "$po" "$@") >"$tmp/plan.log" 2>&1 ||
        { cat "$tmp/plan.log"; bad "hgplan $po"; }
}
planin ev.cfg --dropout 0
planin ev-adam.cfg --dropout 0 --optimizer adam
grep -q 'optimizer = "sgd"' "$tmp/ev.cfg" && grep -q '("dropout", "0")' "$tmp/ev.cfg" ||
    { head -n 6 "$tmp/ev.cfg"; bad "ev.cfg: graph.optimizer and graph.options not recorded"; }
[ -f c2.cfg ] && bad "a c2.cfg in the build directory would hide the lookup beside the strategy"

T="--task mnist --data $tmp/fm --valid-subset test --seed 5 --log-format json --log-interval 1
    --validate-interval 0 --threads 1 --max-update 3"
# ----------------------------------------------- 1. the file alone trains
# shellcheck disable=SC2086 # $T is a list of options
"$HGTRAIN" $T --dropout 0 --save-dir "$tmp/alone" --devices cpu:2 --strategy "$tmp/ev.cfg" \
    >"$tmp/alone.log" 2>&1 || { cat "$tmp/alone.log"; bad "the strategy file alone"; }
grep -q "strategy .*ev.cfg: data parallel, rows 45,45 of 90" "$tmp/alone.log" ||
    { head -n 5 "$tmp/alone.log"; bad "alone: no 'rows 45,45 of 90' line"; }
[ "$(grep -c '"bsz": 90.0' "$tmp/alone.log")" = 3 ] ||
    { grep '"update"' "$tmp/alone.log"; bad "alone: not 90 samples in each of 3 steps"; }
grep -q "not multiples of --required-batch-size-multiple" "$tmp/alone.log" &&
    bad "alone: the default batch multiple cut the strategy's rows"
# shellcheck disable=SC2086
"$HGTRAIN" $T --dropout 0 --save-dir "$tmp/given" --devices cpu:2 --strategy "$tmp/ev.cfg" \
    --max-sentences 90 --cluster-file "$tmp/c2.cfg" --optimizer sgd >"$tmp/given.log" 2>&1 ||
    { cat "$tmp/given.log"; bad "the strategy with the options it names"; }
K=3
same_losses "$tmp/alone.log" "$tmp/given.log" ||
    { paste "$tmp/la" "$tmp/lb"; bad "given: other losses than the file alone"; }
echo "ok: a strategy file alone with --devices trains its batch of 90 on its cluster"

# -------------------------------------------------- 2. each difference
"$PLAN" --model vgg19 --batch 16 --cluster "$tmp/c2.cfg" --search baselines --groups 8 \
    --out "$tmp/vgg.cfg" >"$tmp/plan.log" 2>&1 || { cat "$tmp/plan.log"; bad "hgplan vgg19"; }
refused() { # name 'message' args...: exit 2, the message once, no rank started
    rn=$1 msg=$2
    shift 2
    rm -f "$tmp"/trace.rank*
    # shellcheck disable=SC2086
    HG_TRACE_SAMPLES="$tmp/trace" "$HGTRAIN" $T --save-dir "$tmp/$rn" "$@" >"$tmp/$rn.log" 2>&1
    rc=$?
    f0=$fail
    [ $rc = 2 ] || bad "$rn: exit $rc, want 2"
    [ "$(grep -cF -- "$msg" "$tmp/$rn.log")" = 1 ] || bad "$rn: '$msg' not printed once"
    [ "$(grep -c '^hgtrain: ' "$tmp/$rn.log")" = 1 ] || bad "$rn: not one error"
    grep -q 'rank [0-9]' "$tmp/$rn.log" && bad "$rn: a rank reported"
    ls "$tmp"/trace.rank* >/dev/null 2>&1 && bad "$rn: a rank started"
    [ "$fail" = "$f0" ] && echo "ok: $rn refused before the fork: $msg"
    [ "$fail" = "$f0" ] || cat "$tmp/$rn.log"
}
S="--devices cpu:2 --strategy $tmp/ev.cfg"
# shellcheck disable=SC2086 # $S is a list of options
{
    refused optimizer "--optimizer adam: the strategy was planned with --optimizer sgd" \
        --dropout 0 --optimizer adam $S
    refused optimizer-default \
        "--optimizer sgd (the default): the strategy was planned with --optimizer adam" \
        --dropout 0 --devices cpu:2 --strategy "$tmp/ev-adam.cfg"
    refused dropout "--dropout 0.1: the strategy was planned with --dropout 0" --dropout 0.1 $S
    refused dropout-unset \
        "--dropout not given (the task's default): the strategy was planned with --dropout 0" $S
    refused batch "--max-sentences 64: the strategy was planned for a global batch of 90" \
        --dropout 0 --max-sentences 64 $S
    refused devices "--devices cpu:3: 3 ranks, the strategy was planned for 2 devices" \
        --dropout 0 --devices cpu:3 --strategy "$tmp/ev.cfg"
    refused cluster "c3.cfg: cluster three has 3 devices (localhost:0, localhost:1, localhost:2), the strategy was planned for cluster two's 2 (localhost:0, localhost:1)" \
        --dropout 0 --cluster-file "$tmp/c3.cfg" $S
    refused model "--task mnist: the strategy was planned for the model vgg19" \
        --devices cpu:2 --strategy "$tmp/vgg.cfg"
    refused three "ev.cfg: 3 differences from this run:" \
        --optimizer adam --dropout 0.5 --max-sentences 64 $S
}
# a tensor-parallel group beside others that are not (hgplan plans and
# simulates it; hgtrain runs every group tensor parallel only so far):
# refused before the fork, naming the group
awk '/mode = "dp"; replicas = / && !d { sub(/mode = "dp"; replicas = /, "mode = \"tp\"; shards = ");
         sub(/\);$/, "); },"); d = 1; skip = 1; print; next }
     skip && /aggregate/ { skip = 0; next } { print }' "$tmp/ev.cfg" >"$tmp/tp.cfg"
grep -q 'mode = "tp"; shards = (("localhost:0", 1), ("localhost:1", 1)); },' "$tmp/tp.cfg" ||
    { head -n 12 "$tmp/tp.cfg"; bad "tp.cfg: no tensor-parallel group"; }
refused tensor "which is not tensor parallel: hgtrain runs a strategy whose every group is tensor parallel only so far" \
    --dropout 0 --devices cpu:2 --strategy "$tmp/tp.cfg"
for m in "--optimizer adam: the" "--dropout 0.5: the" "--max-sentences 64: the"; do
    [ "$(grep -cF -- "$m" "$tmp/three.log")" = 1 ] || bad "three: '$m' not named once"
done

# ------------------------------------------------ 3. a file of before
awk '/^    optimizer = / { next } /^    options = / { print " };"; next } { print }' \
    "$tmp/ev.cfg" >"$tmp/old.cfg"
grep -q 'optimizer\|options' "$tmp/old.cfg" && bad "old.cfg: the options are still there"
# shellcheck disable=SC2086
"$HGTRAIN" $T --dropout 0 --save-dir "$tmp/old" --devices cpu:2 --cluster-file "$tmp/c2.cfg" \
    --strategy "$tmp/old.cfg" >"$tmp/old.log" 2>&1 || { cat "$tmp/old.log"; bad "old.cfg"; }
refused old "old.cfg:3: graph.n_ops = 45, graph mnist has 49 ops" --dropout 0.5 \
    --devices cpu:2 --cluster-file "$tmp/c2.cfg" --strategy "$tmp/old.cfg"
exit $fail
