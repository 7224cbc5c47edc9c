#!/bin/sh
# scripts/demo-translation (the README's first job) on the small corpus in
# tests/data with transformer_tiny for a few seconds: it stops at the clock,
# keeps checkpoints for the curve, scores them, and ends with BLEU and chrF
# on the test split; the hypotheses file has one line per test sentence.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
"$S/scripts/demo-translation" --build "$B" --out "$tmp/d" --small --minutes 0.15 \
    --arch transformer_tiny --curve 20 -- --threads 1 >"$tmp/out" 2>&1 ||
    { cat "$tmp/out"; bad "demo-translation failed"; }
grep -q '^| --stop-time-hours 0.0025 reached after update' "$tmp/out" ||
    bad "no stop at the clock"
grep -q '^| update 20: valid BLEU [0-9.]*, chrF2 [0-9.]*$' "$tmp/out" || bad "no curve point"
grep -q '"num_updates": 20, "valid_bleu": [0-9.]*' "$tmp/d/train.log" ||
    bad "curve point not in the json log"
grep -q '^| Generate test with beam=5: BLEU = [0-9.]* ' "$tmp/out" || bad "no test BLEU line"
grep -q '^| Generate test with beam=5: chrF2 = [0-9.]*$' "$tmp/out" || bad "no test chrF line"
n=$(wc -l <"$tmp/d/test.hyp" 2>/dev/null || echo 0)
[ "$n" -eq 200 ] || bad "test.hyp: $n lines, want 200"
"$S/scripts/demo-translation" --bogus >"$tmp/e" 2>&1 && bad "--bogus accepted"
grep -q 'unknown option --bogus' "$tmp/e" || bad "--bogus: $(cat "$tmp/e")"
[ $fail = 0 ] && echo "ok  demo-translation: $(grep '^| Generate test' "$tmp/out" | head -1)"
exit $fail
