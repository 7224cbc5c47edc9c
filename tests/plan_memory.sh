#!/bin/sh
# Integration test: the planner prices every device's peak memory at the
# longest training sample, the length hgtrain --strategy checks a strategy
# against before the fork (docs/planner.md, "Memory at the longest
# sample"), while compute stays priced at the length given.  Translation
# (the small Transformer of tests/strategy-common.sh, Adam, a global batch
# of 64; the corpus's longest sample is 116 tokens, the batches' root mean
# square 49) on two CPU workers of 40 MB each
# (examples/clusters/shm-2cpu-slow2-40mb.cfg, roofline prices):
#  1. the same strategy's peak as hgplan writes it (the strategy file's
#     predicted peak_memory) and as hgtrain --strategy's check finds it
#     (its refusal on 1 MB devices names the bytes): equal to 0.1 MB;
#  2. hgplan --seq-len 49: the data-parallel baselines, which fit at 49
#     but not at 116, are out of memory in its table; what it chooses
#     hgtrain --strategy accepts and trains;
#  3. hgtrain --plan baselines --plan-split: the same rows out of memory,
#     and the strategy it chooses passes its own check and trains.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPLAN=${HGPLAN:-$B/hgplan}
HGPRE=${HGPREPROCESS:-$B/hgpreprocess}
C40=$S/examples/clusters/shm-2cpu-slow2-40mb.cfg
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

c=$S/tests/data/corpus
head -n 200 "$c.en" >"$tmp/valid.en"
head -n 200 "$c.es" >"$tmp/valid.es"
"$HGPRE" translation --source-lang en --target-lang es --trainpref "$c" \
    --validpref "$tmp/valid" --destdir "$tmp/mt" --bpe-merges 500 >"$tmp/pre.log" 2>&1 ||
    { cat "$tmp/pre.log"; echo "FAIL: hgpreprocess translation"; exit 1; }
TA="--source-lang en --target-lang es --dropout 0 --activation-fn gelu --encoder-layers 1
    --decoder-layers 1 --encoder-embed-dim 32 --decoder-embed-dim 32 --encoder-ffn-embed-dim 64
    --decoder-ffn-embed-dim 64 --encoder-attention-heads 2 --decoder-attention-heads 2"
# shellcheck disable=SC2086
plan() { # cluster out args...: hgplan's table to $tmp/out.plan, its strategy to $tmp/out.cfg
    pc=$1 po=$2
    shift 2
    "$HGPLAN" --task translation --data "$tmp/mt" $TA --batch 64 --optimizer adam \
        --cluster "$pc" --verbose --out "$tmp/$po.cfg" "$@" >"$tmp/$po.plan" 2>&1 ||
        { cat "$tmp/$po.plan"; bad "hgplan $po"; }
}
# shellcheck disable=SC2086
train() { # cluster name args...: one update of 64 sentences on two workers
    tc=$1 tn=$2
    shift 2
    "$HGTRAIN" --task translation --data "$tmp/mt" $TA --optimizer adam --lr 0.001 \
        --threads 1 --required-batch-size-multiple 1 --max-sentences 64 --max-update 1 \
        --validate-interval 0 --no-save --devices cpu:2 --cluster-file "$tc" "$@" \
        >"$tmp/$tn.log" 2>&1
}
peak0() { # strategy file: device 0's predicted peak in MB
    sed -n 's/.*peak_memory = (("[^"]*", \([0-9.e+]*\)).*/\1/p' "$1" | awk '{ printf "%.1f", $1 / 1e6 }'
}

# 1. one figure: hgplan's predicted peak is the one hgtrain's check finds
sed 's/memory = "40MB"/memory = "4GiB"/' "$C40" >"$tmp/big.cfg"
sed 's/memory = "40MB"/memory = "1MB"/' "$C40" >"$tmp/tiny.cfg"
plan "$tmp/big.cfg" cpar --search baselines --seq-len 49
grep -q '^memory priced at the longest training sample, 116 (the train split of --data), compute at --seq-len 49$' \
    "$tmp/cpar.plan" || { cat "$tmp/cpar.plan"; bad "hgplan: no line of the memory's length"; }
want=$(peak0 "$tmp/cpar.cfg")
[ -n "$want" ] || { cat "$tmp/cpar.cfg"; bad "no predicted peak in the strategy file"; }
train "$tmp/tiny.cfg" tiny --strategy "$tmp/cpar.cfg" && bad "1 MB devices: the strategy was accepted"
got=$(sed -n 's/.*device [^ ]* (rank 0) would hold \([0-9.]*\) MB at its planned peak.*/\1/p' \
    "$tmp/tiny.log" | head -n 1)
if [ -n "$want" ] && [ "$got" = "$want" ]; then
    echo "ok: rank 0's planned peak: hgplan $want MB, hgtrain --strategy's check $got MB"
else
    cat "$tmp/tiny.log"
    bad "rank 0's planned peak: hgplan ${want:-none} MB, hgtrain's check ${got:-none} MB"
fi

# 2. hgplan at the batches' length on 40 MB devices: the rows that fit
# only at that length are out of memory, and what it picks hgtrain runs
plan "$C40" c40 --search baselines --seq-len 49
for row in EV-PS EV-AR CP-PS CP-AR; do
    grep -q "^  $row  *[0-9.]* s  [0-9.]* GB on [^ ]*  *no: OOM on " "$tmp/c40.plan" ||
        { cat "$tmp/c40.plan"; bad "hgplan on 40 MB: $row not out of memory"; }
done
grep -q '^chosen: ' "$tmp/c40.plan" || { cat "$tmp/c40.plan"; bad "hgplan on 40 MB: nothing chosen"; }
chosen=$(sed -n 's/^chosen: \([A-Za-z-]*\),.*/\1/p' "$tmp/c40.plan")
grep -q "^  $chosen  *[0-9.]* s  [0-9.]* GB on [^ ]*  *yes" "$tmp/c40.plan" ||
    { cat "$tmp/c40.plan"; bad "hgplan on 40 MB: chose $chosen, which does not fit"; }
train "$C40" c40run --strategy "$tmp/c40.cfg" ||
    { cat "$tmp/c40run.log"; bad "hgtrain refused hgplan's choice on 40 MB devices"; }
grep -q '| done: 1 updates' "$tmp/c40run.log" || bad "hgplan's choice: no update"
[ $fail = 0 ] &&
    echo "ok: hgplan chose $chosen on 40 MB devices (data parallelism out of memory), hgtrain ran it"

# 3. hgtrain --plan prices memory where its own check does
train "$C40" planned --plan baselines --plan-split ||
    { cat "$tmp/planned.log"; bad "hgtrain --plan on 40 MB devices"; }
grep -q 'longest 116: memory priced at the longest)' "$tmp/planned.log" ||
    { head -n 3 "$tmp/planned.log"; bad "hgtrain --plan: no line of the memory's length"; }
for row in EV-PS EV-AR CP-PS CP-AR; do
    grep -q "^  $row  *[0-9.]* s  [0-9.]* GB on [^ ]*  *no: OOM on " "$tmp/planned.log" ||
        { head -n 20 "$tmp/planned.log"; bad "hgtrain --plan on 40 MB: $row not out of memory"; }
done
grep -q '| done: 1 updates' "$tmp/planned.log" || bad "hgtrain --plan: no update"
[ $fail = 0 ] && echo "ok: hgtrain --plan on 40 MB devices: $(sed -n 's/^chosen: //p' "$tmp/planned.log")"
[ $fail = 0 ] && echo "PASS"
exit $fail
