#!/bin/sh
# Integration test of the translation task: hgpreprocess translation on
# tests/data/corpus.{en,es} (its first 200 lines as valid), then hgtrain
# --task translation --arch transformer_tiny with fairseq's recipe (Adam
# 0.9/0.98, inverse_sqrt with warmup, --max-tokens):
#  1. 20 updates lower the logged loss and nll_loss (label smoothing 0.1:
#     they differ); validation logs nll_loss and ppl = 2^nll_loss;
#     --profile-ops counts views and bytes copied;
#  2. stopped at 10 and resumed to 20 == straight to 20 (logged loss,
#     params and optimizer state bitwise);
#  3. two forked workers with budgets 1024,512 tokens and --dropout 0;
#  4. bad options are named;
#  5. --share-all-embeddings on a --joined-dictionary preprocess.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPRE=${HGPREPROCESS:-$B/hgpreprocess}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

head -n 200 "$S/tests/data/corpus.en" >"$tmp/valid.en"
head -n 200 "$S/tests/data/corpus.es" >"$tmp/valid.es"
"$HGPRE" translation --source-lang en --target-lang es --trainpref "$S/tests/data/corpus" \
    --validpref "$tmp/valid" --destdir "$tmp/mt" --bpe-merges 500 >"$tmp/pre.log" 2>&1 ||
    { cat "$tmp/pre.log"; echo "FAIL: hgpreprocess translation"; exit 1; }
run() { # save-dir args...
    d=$1
    shift
    "$HGTRAIN" --task translation --data "$tmp/mt" --source-lang en --target-lang es \
        --arch transformer_tiny --optimizer adam --adam-betas '(0.9, 0.98)' --lr 0.001 \
        --lr-scheduler inverse_sqrt --warmup-updates 50 --max-tokens 1024 --seed 3 \
        --threads 1 --log-format simple --save-dir "$tmp/$d" "$@"
}
field_at() { # log update field
    grep -E "\\| update $2 " "$1" | sed "s/.*| $3 \\([0-9.]*\\).*/\\1/"
}

# 1. train 20 updates, validate at 20 (this is also the straight run of 2.)
run ck1 --max-update 20 --log-interval 5 --validate-interval-updates 20 --profile-ops \
    >"$tmp/out" 2>&1 || { cat "$tmp/out"; bad "hgtrain --task translation exited non-zero"; }
cat "$tmp/out"
# --profile-ops: the attention gradients' slices are views (3 layers of
# self-attention with dq, dk, dv each, at least), copies are counted
grep -E '\| op profile: .* kernel calls per pass over [0-9]+ nodes \([0-9]+ reshapes and slices are views, [0-9]+ optimizer nodes fused\); [0-9]+\.[0-9]+ MB copied by layout ops per pass' "$tmp/out" >"$tmp/prof" ||
    bad "no --profile-ops summary"
views=$(sed 's/.*(\([0-9]*\) reshapes and slices are views.*/\1/' "$tmp/prof")
[ "${views:-0}" -ge 9 ] || bad "--profile-ops: ${views:-no} views"
first=$(field_at "$tmp/out" 5 loss)
last=$(field_at "$tmp/out" 20 loss)
nfirst=$(field_at "$tmp/out" 5 nll_loss)
nlast=$(field_at "$tmp/out" 20 nll_loss)
awk -v f="$first" -v l="$last" 'BEGIN { exit !(f > 0 && l < f - 0.3) }' ||
    bad "loss did not fall: $first -> $last"
awk -v f="$nfirst" -v l="$nlast" 'BEGIN { exit !(f > 0 && l < f - 0.3) }' ||
    bad "nll_loss did not fall: $nfirst -> $nlast"
[ "$last" != "$nlast" ] || bad "loss == nll_loss with label smoothing 0.1"
vline=$(grep "valid on 'valid' subset" "$tmp/out" | head -n 1)
echo "$vline" | grep -q '| loss [0-9.]* | nll_loss [0-9.]* | ppl [0-9.]*' ||
    bad "validation line without nll_loss/ppl: $vline"
echo "$vline" | awk '{ for (i = 1; i <= NF; i++) { if ($i == "nll_loss") n = $(i + 1);
    if ($i == "ppl") p = $(i + 1) } }
    END { d = 2 ^ n - p; exit !(n > 0 && d < 0.01 * p && d > -0.01 * p) }' ||
    bad "valid ppl is not 2^nll_loss: $vline"

# 2. stop at 10, resume to 20 == straight to 20
run ck2 --max-update 10 --validate-interval 0 >"$tmp/a.log" 2>&1 || bad "run to 10"
run ck2 --max-update 20 --validate-interval 0 --log-interval 5 >"$tmp/b.log" 2>&1 ||
    bad "resume to 20"
grep -q 'loaded .*checkpoint_last.h5: epoch 1, step 10, 10 updates' "$tmp/b.log" ||
    { cat "$tmp/b.log"; bad "resume did not load the 10-update checkpoint"; }
lb=$(field_at "$tmp/b.log" 20 loss)
[ -n "$lb" ] && [ "$lb" = "$last" ] || bad "loss at 20 after resume $lb, straight $last"
[ "$(field_at "$tmp/b.log" 20 nll_loss)" = "$nlast" ] || bad "nll_loss at 20 after resume"
if command -v h5diff >/dev/null 2>&1; then
    for grp in /params /optimizer; do
        h5diff "$tmp/ck1/checkpoint_last.h5" "$tmp/ck2/checkpoint_last.h5" $grp $grp \
            >"$tmp/diff" 2>&1 || { head -n 20 "$tmp/diff"; bad "resumed $grp differ"; }
    done
else
    echo "note: h5diff missing, exactness not compared"
fi

# 3. two workers, heterogeneous budgets, no dropout
run ck3 --devices cpu:2 --max-tokens-per-rank 1024,512 --dropout 0 --max-update 6 \
    --log-interval 3 --validate-interval 0 --no-save >"$tmp/w2.log" 2>&1 ||
    { cat "$tmp/w2.log"; bad "2 workers"; }
grep -q 'ranks 0-1 of 2' "$tmp/w2.log" || { cat "$tmp/w2.log"; bad "not 2 ranks"; }
w2=$(field_at "$tmp/w2.log" 6 nll_loss)
[ -n "$w2" ] || { cat "$tmp/w2.log"; bad "2 workers: no nll_loss at update 6"; }

# 4. bad options are named
run ck4 --max-update 1 --encoder-attention-heads 5 --no-save >"$tmp/e" 2>&1
[ $? -ne 0 ] && grep -q -- '--encoder-attention-heads 5 does not divide --encoder-embed-dim 64' \
    "$tmp/e" || { cat "$tmp/e"; bad "--encoder-attention-heads 5 not refused by name"; }
run ck4 --max-update 1 --share-all-embeddings --no-save >"$tmp/e" 2>&1
[ $? -ne 0 ] && grep -q -- '--share-all-embeddings requires a joined dictionary' "$tmp/e" ||
    { cat "$tmp/e"; bad "--share-all-embeddings without a joined dictionary accepted"; }
run ck4 --max-update 1 --bf16 --no-save >"$tmp/e" 2>&1
[ $? -ne 0 ] && grep -q -- '--bf16/--fp16: mixed precision is a GPU feature' "$tmp/e" ||
    { cat "$tmp/e"; bad "--bf16 on the CPU accepted"; }

# 5. a joined dictionary: one embedding table for source, target and output
"$HGPRE" translation --source-lang en --target-lang es --trainpref "$S/tests/data/corpus" \
    --validpref "$tmp/valid" --destdir "$tmp/mtj" --bpe-codes "$tmp/mt/codes" \
    --joined-dictionary >"$tmp/prej.log" 2>&1 || { cat "$tmp/prej.log"; bad "joined preprocess"; }
"$HGTRAIN" --task translation --data "$tmp/mtj" --source-lang en --arch transformer_tiny \
    --share-all-embeddings --optimizer adam --lr 0.001 --max-tokens 1024 --threads 1 \
    --max-update 3 --log-interval 1 --validate-interval 0 --no-save --log-format simple \
    >"$tmp/sh.log" 2>&1 || { cat "$tmp/sh.log"; bad "--share-all-embeddings run"; }
sp=$(sed -n 's/^| \([0-9]*\) parameters.*/\1/p' "$tmp/sh.log")
up=$(sed -n 's/^| \([0-9]*\) parameters.*/\1/p' "$tmp/out")
[ -n "$sp" ] && [ -n "$up" ] && [ "$sp" -lt "$up" ] || bad "shared: $sp parameters, separate $up"

# 6. --stop-time-hours: two workers agree to stop at the clock (no update
# cap), the last validation is kept as checkpoint_best
"$HGTRAIN" --task translation --data "$tmp/mt" --source-lang en --target-lang es \
    --arch transformer_tiny --lr 0.001 --max-tokens 1024 --devices cpu:2 --threads 1 \
    --stop-time-hours 0.0008 --validate-interval-updates 10 --no-epoch-checkpoints \
    --log-format simple --save-dir "$tmp/ckt" >"$tmp/st.log" 2>&1 ||
    { cat "$tmp/st.log"; bad "--stop-time-hours run"; }
grep -q '^| --stop-time-hours 0.0008 reached after update' "$tmp/st.log" ||
    bad "--stop-time-hours: no stop line"
[ -f "$tmp/ckt/checkpoint_best.h5" ] && [ -f "$tmp/ckt/checkpoint_last.h5" ] ||
    bad "--stop-time-hours: checkpoint_best/_last missing: $(ls "$tmp/ckt")"

[ $fail = 0 ] && echo "ok  translation: loss $first -> $last, nll_loss $nfirst -> $nlast," \
    "resume exact, 2 workers nll_loss $w2"
exit $fail
