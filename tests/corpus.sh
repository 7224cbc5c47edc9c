#!/bin/sh
# scripts/make-translation-corpus on whatever English this system ships
# (fortunes, licence texts, package documentation), 300 sentences: aligned
# line counts, no empty lines, no test or valid source in train (also after
# normalisation), Apertium's marks gone, Spanish different from English for
# most lines, the same files for the same seed, BPE shards written.
# SKIP (77) without apertium and its eng-spa mode (Debian: apertium-eng-spa).
set -u
SRC=${HG_SRCDIR:-$(dirname "$0")/..}
PRE=${HG_BUILDDIR:-.}/hgpreprocess
MAKE_CORPUS=$SRC/scripts/make-translation-corpus
if ! command -v apertium >/dev/null 2>&1 || ! echo test | apertium eng-spa >/dev/null 2>&1; then
    echo "SKIP: no apertium with the eng-spa mode (apt-get install apertium apertium-eng-spa)"
    exit 77
fi
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

if ! sh "$MAKE_CORPUS" --out "$tmp/c" --max 300 --seed 3 --bpe-merges 200 \
    --hgpreprocess "$PRE" >"$tmp/log" 2>&1; then
    cat "$tmp/log"
    echo "FAIL: make-translation-corpus"
    exit 1
fi
cat "$tmp/log"

total=0
for s in train valid test; do
    for l in en es; do
        [ -f "$tmp/c/$s.$l" ] || bad "no $s.$l"
    done
    ne=$(wc -l <"$tmp/c/$s.en"); ns=$(wc -l <"$tmp/c/$s.es")
    [ "$ne" = "$ns" ] || bad "$s: $ne English lines, $ns Spanish"
    [ "$ne" -gt 0 ] || bad "$s is empty"
    total=$((total + ne))
    # no empty or blank line, no leading/trailing space
    grep -n -E '^ *$|^ | $' "$tmp/c/$s.en" "$tmp/c/$s.es" | head -3 | sed 's/^/FAIL: blank: /' | grep . && fail=1
    # Apertium's marks are gone (the English never has them)
    grep -n '[*#@~]' "$tmp/c/$s.en" "$tmp/c/$s.es" | head -3 | sed 's/^/FAIL: mark: /' | grep . && fail=1
    # most translations differ from the source
    same=$(paste -d '\t' "$tmp/c/$s.en" "$tmp/c/$s.es" | awk -F '\t' '$1 == $2' | wc -l)
    [ $((same * 10)) -le "$ne" ] || bad "$s: $same of $ne Spanish lines equal the English"
done
[ "$total" -gt 200 ] && [ "$total" -le 300 ] || bad "$total pairs in all (asked for 300)"
grep -q "train $(wc -l <"$tmp/c/train.en"), valid $(wc -l <"$tmp/c/valid.en"), test $(wc -l <"$tmp/c/test.en")" "$tmp/log" ||
    bad "counts not printed"

# split by source: no test or valid sentence (nor its normalised form) in train
norm() { LC_ALL=C awk '{ s = tolower($0); gsub(/[^a-z0-9]/, "", s); print s }' "$1" | sort -u; }
for s in valid test; do
    n=$(norm "$tmp/c/$s.en" | comm -12 - "$(norm "$tmp/c/train.en" >"$tmp/train.norm"; echo "$tmp/train.norm")" | wc -l)
    [ "$n" = 0 ] || bad "$n $s sources are in train"
done
n=$(norm "$tmp/c/valid.en" >"$tmp/v.norm"; norm "$tmp/c/test.en" | comm -12 - "$tmp/v.norm" | wc -l)
[ "$n" = 0 ] || bad "$n test sources are in valid"
# pairs are distinct
d=$(paste "$tmp/c/train.en" "$tmp/c/train.es" | sort | uniq -d | wc -l)
[ "$d" = 0 ] || bad "$d duplicate training pairs"

# BPE shards
for f in codes dict.en.txt dict.es.txt train/shard-00000.h5 valid/shard-00000.h5 test/shard-00000.h5; do
    [ -s "$tmp/c/bin/$f" ] || bad "no bin/$f"
done

# deterministic: the same seed gives the same files, without hgpreprocess
sh "$MAKE_CORPUS" --out "$tmp/d" --max 300 --seed 3 --no-preprocess >"$tmp/log2" 2>&1 ||
    { bad "second run"; cat "$tmp/log2"; }
for s in train valid test; do
    for l in en es; do
        cmp -s "$tmp/c/$s.$l" "$tmp/d/$s.$l" || bad "$s.$l differs between runs with one seed"
    done
done
[ ! -e "$tmp/d/bin" ] || bad "--no-preprocess wrote bin/"

# usage errors
sh "$MAKE_CORPUS" --max lots >"$tmp/log3" 2>&1
[ $? = 2 ] && grep -q -- "--max 'lots'" "$tmp/log3" || bad "bad --max: $(cat "$tmp/log3")"
sh "$MAKE_CORPUS" --frobnicate >"$tmp/log3" 2>&1
[ $? = 2 ] && grep -q -- "--frobnicate" "$tmp/log3" || bad "unknown option: $(cat "$tmp/log3")"

[ $fail = 0 ] || exit 1
echo "corpus: all checks passed"
exit 0
