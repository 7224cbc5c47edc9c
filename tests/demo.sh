#!/bin/sh
# scripts/demo-translation (the README's first job) on the small corpus in
# tests/data with transformer_tiny, stopped at a number of updates
# (--max-update 25; its budget of minutes is never reached), so that nothing
# depends on the machine's speed: the checkpoints kept for the curve every
# 10 updates are scored, and it ends with BLEU and chrF on the test split;
# the hypotheses file has one line per test sentence.  The stop at the
# clock that the demo relies on is tested by tests/train_translation.sh.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
"$S/scripts/demo-translation" --build "$B" --out "$tmp/d" --small --minutes 30 \
    --arch transformer_tiny --curve 10 -- --threads 1 --max-update 25 >"$tmp/out" 2>&1 ||
    { cat "$tmp/out"; bad "demo-translation failed"; }
for u in 10 20; do
    grep -q "^| update $u: valid BLEU [0-9.]*, chrF2 [0-9.]*\$" "$tmp/out" ||
        bad "no curve point at update $u"
    grep -q "\"num_updates\": $u, \"valid_bleu\": [0-9.]*" "$tmp/d/train.log" ||
        bad "curve point $u not in the json log"
done
grep -q -e '--stop-time-hours .* reached' "$tmp/out" && bad "stopped at the clock, not at update 25"
grep -q '^| Generate test with beam=5: BLEU = [0-9.]* ' "$tmp/out" || bad "no test BLEU line"
grep -q '^| Generate test with beam=5: chrF2 = [0-9.]*$' "$tmp/out" || bad "no test chrF line"
n=$(wc -l <"$tmp/d/test.hyp" 2>/dev/null || echo 0)
[ "$n" -eq 200 ] || bad "test.hyp: $n lines, want 200"
[ "$(grep -c '^|   .*  ->  ' "$tmp/out")" -eq 3 ] || { cat "$tmp/out"; bad "no translations of own sentences"; }
"$S/scripts/demo-translation" --bogus >"$tmp/e" 2>&1 && bad "--bogus accepted"
grep -q 'unknown option --bogus' "$tmp/e" || bad "--bogus: $(cat "$tmp/e")"
[ $fail = 0 ] && echo "ok  demo-translation: $(grep '^| Generate test' "$tmp/out" | head -1)"
exit $fail
