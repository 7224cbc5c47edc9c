#!/bin/sh
# Golden test of the plan table (docs/planner.md, "The plan table"):
# hgplan --search and hgtrain --plan, on one fixed case, print the text
# tests/plan_table.golden holds once what varies is masked (the search's
# seconds, the temporary and source directories).  The case: mnist without
# dropout, SGD with momentum, a global batch of 96, the two CPUs of
# examples/clusters/shm-2cpu-slow3.cfg (roofline prices), seed 0, the
# search capped at 300 proposals: every number in it is simulated and
# deterministic.  Four tables:
#  1. hgplan --search baselines: every baseline's row, the fastest chosen;
#  2. hgplan --search mcmc --iters 300: the search's row, why it stopped,
#     and the best baseline kept (the search's gain is under the default
#     margin of 10%, the same default as hgtrain's);
#  3. hgtrain --plan baselines on 2 forked workers (one update): the same
#     rows as 1, MP's saying it is chosen only with --plan-split (the
#     tensor-parallel rows TP-E and TP-S are candidates in all four, slower
#     than CP-AR here);
#  4. hgtrain --plan mcmc --plan-iters 300: the search over what hgtrain
#     executes.
# Also asserted apart from the golden file: the baselines' and TP rows of
# 1 and 3 are the same, no simulator internals without --verbose and they
# are there with it.  Without Fashion-MNIST (the hgtrain runs' data) only 1 and 2
# are compared.  HG_UPDATE_GOLDEN=1 rewrites the golden file from this run
# (review its diff before committing it).
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPLAN=${HGPLAN:-$B/hgplan}
HGPRE=${HGPREPROCESS:-$B/hgpreprocess}
SRC=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
GOLDEN=$S/tests/plan_table.golden
EX=$S/examples/clusters
CL=$EX/shm-2cpu-slow3.cfg
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# mask: what varies from run to run and machine to machine
mask() {
    sed -e "s#$tmp#TMP#g" -e "s#$EX#EXAMPLES#g" \
        -e 's/ in [0-9][0-9.]* s: / in T s: /'
}
hgplan_table() { # title args...: the table hgplan prints
    title=$1
    shift
    "$HGPLAN" --task mnist --dropout 0 --optimizer sgd --batch 96 --cluster "$CL" "$@" \
        >"$tmp/hgplan.out" 2>&1 || { cat "$tmp/hgplan.out"; bad "hgplan $*"; }
    echo "== $title"
    sed -n '/^plan: /,/^chosen: /p' "$tmp/hgplan.out" | mask
}
hgtrain_table() { # title args...: the table hgtrain logs, its own lines around it
    title=$1
    shift
    "$HGTRAIN" --task mnist --data "$tmp/fm" --valid-subset test --dropout 0 \
        --optimizer sgd --momentum 0.9 --lr 0.01 --seed 0 --log-format simple \
        --validate-interval 0 --threads 1 --no-save --devices cpu:2 --batch-size 96 \
        --max-update 1 --cluster-file "$CL" "$@" >"$tmp/hgtrain.out" 2>&1 ||
        { cat "$tmp/hgtrain.out"; bad "hgtrain $*"; }
    echo "== $title"
    sed -n '/^| --plan [a-z]* on /,/^| --plan [a-z]*: the strategy/p' "$tmp/hgtrain.out" | mask
}

{
    hgplan_table "hgplan --search baselines" --search baselines
    hgplan_table "hgplan --search mcmc --iters 300 --seed 0" --search mcmc --iters 300 --seed 0
} >"$tmp/got"
cp "$tmp/hgplan.out" "$tmp/mcmc.out"
have_data=0
if [ -f "$SRC/train-images-idx3-ubyte.gz" ]; then
    have_data=1
    "$HGPRE" images --fashion-mnist "$SRC" --out "$tmp/fm" >"$tmp/pre.log" 2>&1 ||
        { cat "$tmp/pre.log"; bad "hgpreprocess images"; exit 1; }
    {
        hgtrain_table "hgtrain --plan baselines" --plan baselines
        hgtrain_table "hgtrain --plan mcmc --plan-iters 300" --plan mcmc --plan-iters 300 \
            --plan-budget 600
    } >>"$tmp/got"
else
    echo "note: no Fashion-MNIST at $SRC: hgtrain's tables are not compared"
fi

if [ "${HG_UPDATE_GOLDEN:-0}" = 1 ]; then
    [ $fail = 0 ] && [ $have_data = 1 ] || { echo "FAIL: not rewriting $GOLDEN"; exit 1; }
    cp "$tmp/got" "$GOLDEN"
    echo "wrote $GOLDEN"
    exit 0
fi
# the golden file's sections this run has (all four with the data)
if [ $have_data = 1 ]; then
    cp "$GOLDEN" "$tmp/want"
else
    awk '/^== hgtrain/ { exit } { print }' "$GOLDEN" >"$tmp/want"
fi
if cmp -s "$tmp/want" "$tmp/got"; then
    echo "ok: the plan tables are the golden file's"
else
    diff "$tmp/want" "$tmp/got"
    bad "the plan tables differ from $GOLDEN (HG_UPDATE_GOLDEN=1 rewrites it)"
fi

# the same rows from both programs: the baselines' (MP's note apart) and
# the tensor-parallel ones (hgtrain runs them on CPU workers)
rows() { # section: the baselines' and TP rows
    awk -v s="$1" '/^== / { on = ($0 == "== " s) } on && /^  (EV|CP|TP)-|^  MP / { print }' \
        "$tmp/got" | sed 's/yes, chosen only with --plan-split$/yes/'
}
if [ $have_data = 1 ]; then
    rows "hgplan --search baselines" >"$tmp/r1"
    rows "hgtrain --plan baselines" >"$tmp/r2"
    [ "$(wc -l <"$tmp/r1")" = 7 ] && cmp -s "$tmp/r1" "$tmp/r2" ||
        { diff "$tmp/r1" "$tmp/r2"; bad "hgplan's and hgtrain's baselines' rows differ"; }
fi
# simulator internals only with --verbose
grep -q -e '^simulator: ' -e 'peak GB:' -e 'accepted' "$tmp/mcmc.out" &&
    bad "hgplan --search mcmc: simulator internals without --verbose"
"$HGPLAN" --task mnist --dropout 0 --optimizer sgd --batch 96 --cluster "$CL" --search mcmc \
    --iters 300 --verbose >"$tmp/verbose.out" 2>&1 || { cat "$tmp/verbose.out"; bad "--verbose"; }
for w in '^simulator: [0-9]* tasks; full ' '^    peak GB: localhost:0=' \
    '^  [0-9]* accepted, [0-9]* improvements; order: '; do
    grep -q "$w" "$tmp/verbose.out" || { cat "$tmp/verbose.out"; bad "--verbose lacks '$w'"; }
done
[ $fail = 0 ] && echo "ok: the same rows from hgplan and hgtrain; internals behind --verbose"
exit $fail
