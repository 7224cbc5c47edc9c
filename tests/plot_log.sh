#!/bin/sh
# scripts/plot-log on a json log of a short real run (mnist) plus a BLEU
# line: a PNG comes out; a log without training lines is an error. SKIP
# (77) without gnuplot.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
command -v gnuplot >/dev/null 2>&1 || { echo "SKIP: no gnuplot"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
cat >"$tmp/log.json" <<'LOG'
{"epoch": 1, "update": 10, "step": 10, "steps": 50, "loss": 9.1, "nll_loss": 8.9, "ppl": 477.7}
{"epoch": 1, "update": 20, "step": 20, "steps": 50, "loss": 7.5, "nll_loss": 7.2, "ppl": 147.0}
{"epoch": 1, "valid_subset": "valid", "valid_loss": 7.9, "valid_nll_loss": 7.6, "valid_ppl": 194.0, "num_updates": 20}
{"num_updates": 20, "bleu": 3.5}
{"epoch": 2, "update": 30, "step": 10, "steps": 50, "loss": 6.0, "nll_loss": 5.6, "ppl": 48.5}
{"epoch": 2, "valid_subset": "valid", "valid_loss": 6.4, "valid_nll_loss": 6.1, "valid_ppl": 68.6, "num_updates": 30}
{"num_updates": 30, "bleu": 8.25}
LOG
"$S/scripts/plot-log" "$tmp/log.json" "$tmp/out.png" >"$tmp/out" 2>&1 || { cat "$tmp/out"; bad "plot-log failed"; }
[ "$(head -c 4 "$tmp/out.png" 2>/dev/null | od -An -c | tr -d ' ')" = "211PNG" ] ||
    bad "not a PNG: $(head -c 8 "$tmp/out.png" | od -An -c)"
echo '{"nothing": 1}' >"$tmp/empty.json"
"$S/scripts/plot-log" "$tmp/empty.json" "$tmp/e.png" >"$tmp/out" 2>&1 && bad "an empty log was accepted"
grep -q "no training lines" "$tmp/out" || bad "empty log: $(cat "$tmp/out")"
[ $fail = 0 ] && echo PASS
exit $fail
