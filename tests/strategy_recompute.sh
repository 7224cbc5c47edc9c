#!/bin/sh
# Integration test: hgtrain --strategy recomputes what a strategy's groups
# ask for (recompute = true; graph/recompute.c): the ops the lowering
# drops are copied into the backward, which reads the copies.  On forked
# CPU workers, against the same strategy without recomputation:
#  1. mnist, data parallel (one group, rows 64/32, parameter servers),
#     model parallel (4 groups on 2 ranks) and split (CP-AR with a
#     model-parallel group): the same losses and parameters bit for bit,
#     and for the first two less activation memory (the plan's line);
#  2. bert with dropout 0.1 (the copies draw the same masks): bit for bit;
#  3. hgtrain --plan baselines --plan-groups 4 on 40 MiB devices: every
#     baseline is out of memory, the planner recomputes, and the run
#     recomputes and gives what 1 rank gives.
set -u
. "${HG_SRCDIR:-.}/tests/strategy-common.sh"
M="--task mnist --data $tmp/fm --dropout 0 --batch 96 --optimizer sgd"
plan() { # baseline groups out args...
    b=$1 g=$2 o=$3
    shift 3
    "$HGPLAN" "$@" --cluster "$tmp/c2.cfg" --search baselines --groups "$g" --baseline "$b" \
        --out "$tmp/$o" >"$tmp/plan.log" 2>&1 || { cat "$tmp/plan.log"; bad "hgplan $b"; }
}
recomp() { # in out: every group recomputes
    sed 's/mode = "\([dm]p\)";/mode = "\1"; recompute = true;/' "$tmp/$1" >"$tmp/$2"
    grep -q 'recompute = true' "$tmp/$2" || bad "$2: the edit did not apply"
}
# the plan's activation memory: a --verbose line
act() { sed -n 's/.*(activations \([0-9.]*\) MiB.*/\1/p' "$tmp/$1.log" | head -n 1; }
bitwise() { # a b [less]: the same losses and parameters; b with less activation memory
    f0=$fail
    fail=0
    la=$(grep -o '"loss": [0-9.]*' "$tmp/$1.log" | tr '\n' ' ')
    lb=$(grep -o '"loss": [0-9.]*' "$tmp/$2.log" | tr '\n' ' ')
    [ -n "$la" ] && [ "$la" = "$lb" ] || bad "$2: losses differ from $1 ($la / $lb)"
    "$CMP" "$tmp/$1/checkpoint_last.h5" "$tmp/$2/checkpoint_last.h5" 0 params >"$tmp/cmp" 2>&1 ||
        { cat "$tmp/cmp"; bad "$2: parameters differ from $1"; }
    grep -q "recomputation in [0-9]* groups\? ([1-9][0-9]* ops)" "$tmp/$2.log" ||
        { grep strategy "$tmp/$2.log"; bad "$2: no recomputation"; }
    a=$(act "$1") b=$(act "$2")
    if [ $# -gt 2 ]; then
        awk -v a="$a" -v b="$b" 'BEGIN { exit !(b + 0 > 0 && b + 0 < a + 0) }' ||
            bad "$2: activations $b MiB, not less than $1's $a MiB"
    fi
    [ $fail = 0 ] && echo "ok: $2 == $1 bit for bit (activations $a -> $b MiB)"
    [ $fail = 0 ] && fail=$f0
}
strat() { # name strategy args...
    sn=$1 sf=$2
    shift 2
    run "$sn" --devices cpu:2 --batch-size 96 --max-update "$K" --cluster-file "$tmp/c2.cfg" \
        --strategy "$tmp/$sf" --required-batch-size-multiple 1 --verbose "$@" >"$tmp/$sn.log" 2>&1 ||
        { cat "$tmp/$sn.log"; bad "$sn exited non-zero"; }
}

# ------------------------------------------------------------ 1. mnist
plan CP-PS 1 dp.cfg $M
plan MP 4 mp.cfg $M
plan CP-AR 3 cp.cfg $M
awk '/id = 1;/ { f = 1 } f && /mode = "dp"/ { print "      mode = \"mp\"; device = \"localhost:1\"; },"
        getline; f = 0; next } { print }' "$tmp/cp.cfg" >"$tmp/split.cfg"
for s in dp mp split; do
    recomp $s.cfg ${s}r.cfg
    strat $s $s.cfg
    strat ${s}r ${s}r.cfg
done
bitwise dp dpr less
bitwise mp mpr less
bitwise split splitr
grep -q "split into [0-9]* pieces" "$tmp/splitr.log" || bad "splitr: not a split strategy"

# ------------------------------------------------------------ 2. bert, dropout
lm_data
plan EV-AR 1 b.cfg --task bert --data "$tmp/lm" --batch 16 --optimizer adam
recomp b.cfg br.cfg
for s in b br; do
    "$HGTRAIN" --task bert --data "$tmp/lm" --dropout 0.1 --optimizer adam --lr 0.0005 --seed 3 \
        --log-format json --log-interval 1 --validate-interval 0 --threads 1 \
        --required-batch-size-multiple 1 --max-sentences 16 --max-update "$K" \
        --save-dir "$tmp/$s" --devices cpu:2 --cluster-file "$tmp/c2.cfg" \
        --strategy "$tmp/$s.cfg" --verbose >"$tmp/$s.log" 2>&1 || { cat "$tmp/$s.log"; bad "bert $s exited non-zero"; }
done
bitwise b br

# ------------------------------------------------------------ 3. planned
sed 's/memory = "4GiB"/memory = "40MiB"/' "$tmp/c2.cfg" >"$tmp/small.cfg"
twice run ref --batch-size 96 --max-update "$K" >"$tmp/ref.log" 2>&1 || { cat "$tmp/ref.log"; bad "1 rank"; }
run planned --devices cpu:2 --batch-size 96 --max-update "$K" --cluster-file "$tmp/small.cfg" \
    --plan baselines --plan-groups 4 --required-batch-size-multiple 1 >"$tmp/planned.log" 2>&1 ||
    { cat "$tmp/planned.log"; bad "--plan baselines exited non-zero"; }
grep -q "every baseline is out of memory" "$tmp/planned.log" ||
    { grep -v '"update"' "$tmp/planned.log" | head -n 20; bad "planned: the baselines fit 40 MiB"; }
grep -q "recomputation in [0-9]* groups\? ([1-9][0-9]* ops)" "$tmp/planned.log" ||
    { grep strategy "$tmp/planned.log"; bad "planned: no recomputation"; }
check planned ref
equiv_summary
exit $fail
