#!/bin/sh
# Integration test of the bert task: hgpreprocess lm on tests/data/corpus.en,
# then hgtrain --task bert:
#  1. 20 Adam updates lower the logged loss; validation reports accuracy;
#     a checkpoint is written;
#  2. stopped at 10 and resumed to 20 == straight to 20 (params, optimizer
#     state and logged loss bitwise);
#  3. --dropout 0 builds a graph without dropout ops; bad options are named.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPRE=${HGPREPROCESS:-$B/hgpreprocess}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# documents of 15 sentences, as tests/preprocess.sh
awk 'NR % 15 == 0 { print "" } { print }' "$S/tests/data/corpus.en" >"$tmp/lm.txt"
"$HGPRE" lm --input "$tmp/lm.txt" --destdir "$tmp/lm" --bpe-merges 500 \
    --max-seq-len 64 --max-predictions 10 --seed 7 >"$tmp/pre.log" 2>&1 ||
    { cat "$tmp/pre.log"; echo "FAIL: hgpreprocess lm"; exit 1; }
run() { # save-dir args...
    d=$1
    shift
    "$HGTRAIN" --task bert --data "$tmp/lm" --max-sentences 16 --optimizer adam \
        --lr 0.001 --seed 3 --log-format simple --save-dir "$tmp/$d" "$@"
}
loss_at() { # log update
    grep -E "\\| update $2 " "$1" | sed 's/.*| loss \([0-9.]*\).*/\1/'
}

# 1. train, validate on the train split (lm writes no other)
run ck1 --max-update 20 --log-interval 5 --valid-subset train >"$tmp/out" 2>&1 ||
    { cat "$tmp/out"; bad "hgtrain --task bert exited non-zero"; }
cat "$tmp/out"
first=$(loss_at "$tmp/out" 5)
last=$(loss_at "$tmp/out" 20)
awk -v f="$first" -v l="$last" 'BEGIN { exit !(f > 0 && l < f - 0.3) }' ||
    bad "loss did not fall: $first -> $last"
grep -q "valid on 'train' subset .*| accuracy 0\\.[0-9]*" "$tmp/out" || bad "no validation accuracy"
[ -f "$tmp/ck1/checkpoint_last.h5" ] || bad "no checkpoint_last.h5"

# 2. stop at 10, resume to 20 == straight to 20
run ck2 --max-update 10 --validate-interval 0 >"$tmp/a.log" 2>&1 || bad "run to 10"
run ck2 --max-update 20 --validate-interval 0 --log-interval 5 >"$tmp/b.log" 2>&1 ||
    bad "resume to 20"
grep -q 'loaded .*checkpoint_last.h5: epoch 1, step 10, 10 updates' "$tmp/b.log" ||
    { cat "$tmp/b.log"; bad "resume did not load the 10-update checkpoint"; }
run ck3 --max-update 20 --validate-interval 0 --log-interval 5 >"$tmp/c.log" 2>&1 ||
    bad "run to 20"
lb=$(loss_at "$tmp/b.log" 20)
lc=$(loss_at "$tmp/c.log" 20)
[ -n "$lb" ] && [ "$lb" = "$lc" ] || bad "loss at 20 after resume $lb, straight $lc"
if command -v h5diff >/dev/null 2>&1; then
    for grp in /params /optimizer; do
        h5diff "$tmp/ck2/checkpoint_last.h5" "$tmp/ck3/checkpoint_last.h5" $grp $grp \
            >"$tmp/diff" 2>&1 || { head -n 20 "$tmp/diff"; bad "resumed $grp differ"; }
    done
else
    echo "note: h5diff missing, exactness not compared"
fi

# 3. --dropout 0: 9 dropout ops (and their backward) fewer with 2 layers,
# 7 with the fused attention (the CPU's default), whose attention dropout
# is inside the op
ops() { sed -n 's/.*parameters, \([0-9]*\) ops (train).*/\1/p' "$1"; }
run ck4 --max-update 1 --validate-interval 0 --no-save >"$tmp/d1" 2>&1 || bad "dropout 0.1 run"
run ck4 --max-update 1 --validate-interval 0 --no-save --dropout 0 >"$tmp/d0" 2>&1 ||
    bad "dropout 0 run"
[ "$(ops "$tmp/d1")" -eq $(($(ops "$tmp/d0") + 14)) ] 2>/dev/null ||
    bad "ops with dropout $(ops "$tmp/d1"), without $(ops "$tmp/d0")"
run ck4 --max-update 1 --validate-interval 0 --no-save --attention unfused >"$tmp/u1" 2>&1 ||
    bad "dropout 0.1 unfused run"
run ck4 --max-update 1 --validate-interval 0 --no-save --dropout 0 --attention unfused \
    >"$tmp/u0" 2>&1 || bad "dropout 0 unfused run"
[ "$(ops "$tmp/u1")" -eq $(($(ops "$tmp/u0") + 18)) ] 2>/dev/null ||
    bad "unfused: ops with dropout $(ops "$tmp/u1"), without $(ops "$tmp/u0")"
run ck5 --max-update 1 --bert-heads 3 --no-save >"$tmp/e" 2>&1
[ $? -ne 0 ] && grep -q -- '--bert-heads 3 does not divide --bert-embed-dim 128' "$tmp/e" ||
    { cat "$tmp/e"; bad "--bert-heads 3 not refused by name"; }
run ck5 --max-update 1 --dropout 1 --no-save >"$tmp/e" 2>&1
[ $? -ne 0 ] && grep -q -- "--dropout: expected a number in \\[0,1), got '1'" "$tmp/e" ||
    { cat "$tmp/e"; bad "--dropout 1 not refused by name"; }
run ck5 --max-update 1 --bert-max-positions 32 --validate-interval 0 --no-save >"$tmp/e" 2>&1
[ $? -ne 0 ] && grep -q -- 'sequences of 64 positions, --bert-max-positions 32' "$tmp/e" ||
    { cat "$tmp/e"; bad "--bert-max-positions 32 < L not refused"; }

[ $fail = 0 ] && echo "ok  bert: loss $first -> $last, resume exact, dropout 0 has no dropout ops"
exit $fail
