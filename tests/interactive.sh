#!/bin/sh
# Translating one's own text: a transformer_tiny trained for a few updates
# on tests/data, then
#  1. `hgtrain interactive` on stdin and `generate --input FILE` print the
#     same hypotheses as `generate --gen-subset test` on the same sentences
#     preprocessed as a split; and for new sentences preprocessed with the
#     model's codes and dictionaries (--bpe-codes --srcdict --tgtdict, no
#     training data) the same again;
#  2. --n-best 3 --print-scores: 3 "score TAB text" lines per sentence,
#     best first, the first one the 1-best hypothesis;
#  3. bad lines (empty, only unknown characters, longer than the model's
#     positions, invalid UTF-8, a NUL byte) are translated or refused with
#     a message naming the line; one output line each, exit 0;
#  4. hgpreprocess apply-bpe: the codes' segmentation, "@@ " removal gives
#     the text back;
#  5. errors: a missing --input, --n-best above --beam, a missing --srcdict.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPRE=${HGPREPROCESS:-$B/hgpreprocess}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

head -n 30 "$S/tests/data/corpus.en" >"$tmp/test.en"
head -n 30 "$S/tests/data/corpus.es" >"$tmp/test.es"
"$HGPRE" translation --source-lang en --target-lang es --trainpref "$S/tests/data/corpus" \
    --validpref "$tmp/test" --testpref "$tmp/test" --destdir "$tmp/mt" --bpe-merges 300 \
    >"$tmp/pre.log" 2>&1 || { cat "$tmp/pre.log"; echo "FAIL: hgpreprocess translation"; exit 1; }
"$HGTRAIN" --task translation --data "$tmp/mt" --source-lang en --target-lang es \
    --arch transformer_tiny --optimizer adam \
    --lr 0.003 --max-tokens 2048 --seed 3 --threads 1 --log-format simple \
    --save-dir "$tmp/ck" --max-update 40 --validate-interval 0 --max-source-positions 128 \
    >"$tmp/train.log" 2>&1 || { cat "$tmp/train.log"; echo "FAIL: training"; exit 1; }
ck="$tmp/ck/checkpoint_last.h5"
common="--data $tmp/mt --path $ck --threads 1 --beam 3 --max-len-b 20"

# 1. the split, stdin, a file
"$HGTRAIN" generate $common --gen-subset test --results-path "$tmp/split.txt" \
    >"$tmp/split.log" 2>&1 || { cat "$tmp/split.log"; bad "generate --gen-subset test"; }
"$HGTRAIN" interactive $common <"$tmp/test.en" >"$tmp/stdin.txt" 2>"$tmp/stdin.log" ||
    { cat "$tmp/stdin.log"; bad "interactive"; }
"$HGTRAIN" generate $common --input "$tmp/test.en" --results-path "$tmp/file.txt" \
    >"$tmp/file.log" 2>&1 || { cat "$tmp/file.log"; bad "generate --input FILE"; }
[ "$(wc -l <"$tmp/split.txt")" -eq 30 ] || bad "split: $(wc -l <"$tmp/split.txt") lines"
cmp -s "$tmp/split.txt" "$tmp/stdin.txt" || bad "interactive (stdin) differs from the split"
cmp -s "$tmp/split.txt" "$tmp/file.txt" || bad "generate --input FILE differs from the split"
! grep -q '@@' "$tmp/stdin.txt" || bad "BPE left in the interactive output"
# new sentences, preprocessed with the model's codes and dictionaries only
cat >"$tmp/new.en" <<'TXT'
the cat sleeps on the red chair .
where is the station ?
I would like two coffees , please .
this sentence was never seen in training .
TXT
cat >"$tmp/new.es" <<'TXT'
el gato duerme en la silla roja .
¿ dónde está la estación ?
quisiera dos cafés , por favor .
esta frase nunca se vio en el entrenamiento .
TXT
"$HGPRE" translation --source-lang en --target-lang es --testpref "$tmp/new" \
    --destdir "$tmp/new" --bpe-codes "$tmp/mt/codes" --srcdict "$tmp/mt/dict.en.txt" \
    --tgtdict "$tmp/mt/dict.es.txt" >"$tmp/newpre.log" 2>&1 ||
    { cat "$tmp/newpre.log"; bad "hgpreprocess --srcdict --tgtdict"; }
cmp -s "$tmp/mt/dict.en.txt" "$tmp/new/dict.en.txt" && cmp -s "$tmp/mt/dict.es.txt" "$tmp/new/dict.es.txt" ||
    bad "--srcdict/--tgtdict not kept as given"
[ ! -d "$tmp/new/train" ] || bad "a train split written without --trainpref"
"$HGTRAIN" generate --data "$tmp/new" --path "$ck" --threads 1 --beam 3 --max-len-b 20 \
    --gen-subset test --results-path "$tmp/newsplit.txt" >"$tmp/newsplit.log" 2>&1 ||
    { cat "$tmp/newsplit.log"; bad "generate on the new split"; }
"$HGTRAIN" interactive $common --batch-size 2 --buffer-size 3 <"$tmp/new.en" \
    >"$tmp/newint.txt" 2>"$tmp/newint.log" || { cat "$tmp/newint.log"; bad "interactive (new)"; }
[ "$(wc -l <"$tmp/newint.txt")" -eq 4 ] || bad "new: $(wc -l <"$tmp/newint.txt") lines, want 4"
cmp -s "$tmp/newsplit.txt" "$tmp/newint.txt" || bad "new sentences: interactive differs from the split"
grep -q '^| Generate test with beam=3: BLEU = ' "$tmp/newsplit.log" || bad "no BLEU on the new split"

# 2. n-best
"$HGTRAIN" generate $common --input "$tmp/new.en" --n-best 3 --print-scores \
    >"$tmp/nb.txt" 2>"$tmp/nb.log" || { cat "$tmp/nb.log"; bad "--n-best 3"; }
[ "$(wc -l <"$tmp/nb.txt")" -eq 12 ] || bad "--n-best 3: $(wc -l <"$tmp/nb.txt") lines, want 12"
awk -F'\t' 'NF != 2 { n++ } NR % 3 != 1 && $1 > prev + 1e-9 { n++ } { prev = $1 }
    END { exit n > 0 }' "$tmp/nb.txt" || { cat "$tmp/nb.txt"; bad "--n-best not best first"; }
awk -F'\t' 'NR % 3 == 1 { print $2 }' "$tmp/nb.txt" | cmp -s - "$tmp/newint.txt" ||
    bad "--n-best's first hypotheses are not the 1-best"

# 3. bad lines
{
    echo "the house"
    echo ""
    echo "☃☃☃ 漢字"
    i=0; while [ $i -lt 150 ]; do printf 'house '; i=$((i + 1)); done; echo
    printf 'bad \377\376 bytes\n'
    printf 'nul\000byte\n'
    echo "the end"
} >"$tmp/bad.txt"
"$HGTRAIN" interactive $common <"$tmp/bad.txt" >"$tmp/bad.out" 2>"$tmp/bad.log"
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/bad.log"; bad "bad lines: exit $rc"; }
[ "$(wc -l <"$tmp/bad.out")" -eq 7 ] || bad "bad lines: $(wc -l <"$tmp/bad.out") output lines, want 7"
grep -q '<stdin>:3: every token is unknown to dict.en.txt' "$tmp/bad.log" || bad "unknown-only line: no message"
grep -q '<stdin>:4: .*more than the model.s --max-source-positions 128: not translated' "$tmp/bad.log" ||
    bad "too long line: no message"
grep -q '<stdin>:5:5: invalid UTF-8 (byte 0xff): not translated' "$tmp/bad.log" || bad "bad UTF-8: no message"
grep -q '<stdin>:6:4: NUL byte in text: not translated' "$tmp/bad.log" || bad "NUL: no message"
sed -n '4,6p' "$tmp/bad.out" | grep -q . && bad "refused lines were not left empty"
[ -n "$(sed -n 1p "$tmp/bad.out")" ] && [ -n "$(sed -n 7p "$tmp/bad.out")" ] ||
    bad "good lines around the bad ones not translated"

# 4. apply-bpe
"$HGPRE" apply-bpe --codes "$tmp/mt/codes" --input "$tmp/new.en" --output "$tmp/new.bpe" \
    >"$tmp/ab.log" 2>&1 || { cat "$tmp/ab.log"; bad "apply-bpe"; }
grep -q '@@ ' "$tmp/new.bpe" || bad "apply-bpe split no word"
sed 's/@@ //g' "$tmp/new.bpe" | cmp -s - "$tmp/new.en" || bad "apply-bpe: removing @@ does not give the text back"
"$HGPRE" apply-bpe --codes "$tmp/mt/codes" <"$tmp/new.en" | cmp -s - "$tmp/new.bpe" ||
    bad "apply-bpe on stdin differs"

# 5. errors
"$HGTRAIN" generate $common --input "$tmp/nope.en" >"$tmp/e" 2>&1
[ $? -eq 1 ] && grep -q -- "--input $tmp/nope.en: No such file" "$tmp/e" || { cat "$tmp/e"; bad "missing --input"; }
"$HGTRAIN" interactive $common --n-best 4 </dev/null >"$tmp/e" 2>&1
[ $? -eq 2 ] && grep -q -- "--n-best 4 is more than --beam 3" "$tmp/e" || { cat "$tmp/e"; bad "--n-best > --beam"; }
"$HGPRE" translation --source-lang en --target-lang es --testpref "$tmp/new" --destdir "$tmp/x" \
    --bpe-codes "$tmp/mt/codes" --srcdict "$tmp/nope.txt" --tgtdict "$tmp/mt/dict.es.txt" >"$tmp/e" 2>&1
[ $? -eq 1 ] && grep -q "nope.txt" "$tmp/e" && [ ! -e "$tmp/x" ] || { cat "$tmp/e"; bad "missing --srcdict"; }

cat "$tmp/stdin.log"
[ $fail = 0 ] && echo "ok  interactive: stdin/file == split, new text via --srcdict/--tgtdict, n-best, bad lines, apply-bpe"
exit $fail
