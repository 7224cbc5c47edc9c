#!/bin/sh
# hgscore, the program: score line format, standard input, --tokenize,
# exit statuses and messages. Then, when Python's sacrebleu can be
# imported (python3 -c 'import sacrebleu'; PYTHON overrides python3), the
# same numbers as sacreBLEU on the committed corpus against perturbed
# copies of itself, and the same 13a tokens for every line (that part is
# skipped otherwise; tests/test_bleu checks committed sacreBLEU values).
set -u
SCORE=${HG_BUILDDIR:-.}/hgscore
SRC=${HG_SRCDIR:-$(dirname "$0")/..}
DATA=$SRC/tests/data
PY=${PYTHON:-python3}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# perturbed hypotheses: drop every 7th word, swap words of every 3rd line,
# replace a word of every 4th, truncate every 5th line, keep the rest
awk '{ if (NR % 4 == 1 && NF > 3) $3 = "otra";
       out = ""; for (i = 1; i <= NF; i++) if (i % 7) out = out (out == "" ? "" : " ") $i;
       if (NR % 3 == 0 && NF > 2) { t = $1; $1 = $2; $2 = t; out = $0 }
       if (NR % 5 == 0) { out = ""; for (i = 1; i <= NF / 2; i++) out = out (i > 1 ? " " : "") $i }
       print out }' "$DATA/corpus.es" >"$tmp/hyp.es"
cp "$DATA/corpus.es" "$tmp/ref.es"

"$SCORE" --ref "$tmp/ref.es" --hyp "$tmp/hyp.es" --chrf >"$tmp/out" 2>&1 || { bad "hgscore failed"; cat "$tmp/out"; }
cat "$tmp/out"
grep -q -E '^BLEU = [0-9]+\.[0-9]{2} [0-9.]+/[0-9.]+/[0-9.]+/[0-9.]+ \(BP = [0-9.]+ ratio = [0-9.]+ hyp_len = [0-9]+ ref_len = [0-9]+\)$' "$tmp/out" ||
    bad "BLEU line format"
grep -q -E '^chrF2 = [0-9]+\.[0-9]{2}$' "$tmp/out" || bad "chrF line format"
"$SCORE" --ref "$tmp/ref.es" --chrf <"$tmp/hyp.es" >"$tmp/out2" 2>&1
cmp -s "$tmp/out" "$tmp/out2" || bad "standard input gives another score"
"$SCORE" --ref "$tmp/ref.es" --hyp "$tmp/ref.es" >"$tmp/out2" 2>&1
grep -q '^BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000' "$tmp/out2" ||
    bad "reference against itself: $(cat "$tmp/out2")"

# errors: line counts (both files and counts), bad UTF-8 (file:line:col),
# missing file, usage
head -n 10 "$tmp/hyp.es" >"$tmp/short.es"
"$SCORE" --ref "$tmp/ref.es" --hyp "$tmp/short.es" >"$tmp/log" 2>&1; rc=$?
lines=$(wc -l <"$tmp/ref.es")
[ $rc = 1 ] && grep -q "short.es has 10 lines but .*ref.es has $lines lines" "$tmp/log" ||
    bad "line count message (rc $rc): $(cat "$tmp/log")"
{ head -n 4 "$tmp/hyp.es"; printf 'abc \300\257 def\n'; tail -n +6 "$tmp/hyp.es"; } >"$tmp/bad.es"
"$SCORE" --ref "$tmp/ref.es" --hyp "$tmp/bad.es" >"$tmp/log" 2>&1; rc=$?
[ $rc = 1 ] && grep -q "bad.es:5:5: invalid UTF-8" "$tmp/log" || bad "UTF-8 message (rc $rc): $(cat "$tmp/log")"
"$SCORE" --ref "$tmp/nothing.es" --hyp "$tmp/hyp.es" >"$tmp/log" 2>&1; rc=$?
[ $rc = 1 ] && grep -q "nothing.es" "$tmp/log" || bad "missing file (rc $rc): $(cat "$tmp/log")"
"$SCORE" --hyp "$tmp/hyp.es" >"$tmp/log" 2>&1; rc=$?
[ $rc = 2 ] && grep -q -- "--ref" "$tmp/log" || bad "no --ref: rc $rc"
"$SCORE" --ref "$tmp/ref.es" --bogus >"$tmp/log" 2>&1; rc=$?
[ $rc = 2 ] && grep -q -- "--bogus" "$tmp/log" || bad "unknown option: rc $rc"
printf 'Hello, world! $1,000.50\n' | "$SCORE" --tokenize - >"$tmp/log" 2>&1
[ "$(cat "$tmp/log")" = 'Hello , world ! $ 1,000.50' ] || bad "--tokenize: $(cat "$tmp/log")"

# ------------------------------------------------------------ sacreBLEU
if ! "$PY" -c 'import sacrebleu' >/dev/null 2>&1; then
    [ $fail = 0 ] || exit 1
    echo "score: checks passed; sacreBLEU comparison SKIPPED (no python sacrebleu)"
    exit 0
fi
cat "$DATA/corpus.en" "$DATA/corpus.es" "$tmp/hyp.es" >"$tmp/all.txt"
"$SCORE" --tokenize "$tmp/all.txt" >"$tmp/tok.hg" || bad "--tokenize failed"
"$PY" - "$tmp" <<'PYEOF' || bad "sacreBLEU comparison"
import sys
import sacrebleu
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
d = sys.argv[1]
rd = lambda p: [l.rstrip() for l in open(p, encoding='utf-8', newline='\n')]
tok = Tokenizer13a()
ours = rd(d + '/tok.hg')
theirs = [tok(l) for l in rd(d + '/all.txt')]
bad = [i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
ok = len(ours) == len(theirs) and not bad
for i in bad[:5]:
    print('13a line %d: hgscore %r, sacreBLEU %r' % (i + 1, ours[i], theirs[i]))
hyp, ref = rd(d + '/hyp.es'), rd(d + '/ref.es')
b = sacrebleu.corpus_bleu(hyp, [ref])
c = sacrebleu.corpus_chrf(hyp, [ref])
want = [str(b), 'chrF2 = %.2f' % c.score]
got = open(d + '/out', encoding='utf-8').read().split('\n')[:2]
print('sacreBLEU %s: %s | %s' % (sacrebleu.__version__, want[0], want[1]))
if got != want:
    print('hgscore:   %s | %s' % tuple(got))
    ok = False
sys.exit(0 if ok else 1)
PYEOF
[ $fail = 0 ] || exit 1
echo "score: all checks passed (same as sacreBLEU)"
exit 0
