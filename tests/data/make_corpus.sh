#!/bin/sh
# Regenerates tests/data/corpus.{en,es}: about 2000 English sentences from
# the licence texts and package documentation of a Debian system, and their
# Spanish translation by apertium (Debian: apertium-eng-spa). Run by hand;
# the tests use the committed files and need neither the texts nor apertium.
# One sentence per line, no blank lines; consecutive lines come from the
# same document in file order (tests/preprocess.sh cuts documents for lm).
set -eu
out=${1:-$(dirname "$0")}
max=${MAX_SENTENCES:-2000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
    ls /usr/share/common-licenses/* | sort
    find /usr/share/doc -maxdepth 4 -type f \
        \( -name 'README*' -o -name '*.txt' -o -name 'NEWS' -o -name '*.md' -o -name '*.rst' -o -name 'copyright' \) ! -name '*.gz' | sort
} | while read -r f; do
    # one document per file: paragraphs joined, split at sentence ends, kept
    # if 5..30 words of plain prose
    tr -s ' \t\r' '  ' <"$f" | awk 'BEGIN { RS = ""; ORS = "" } { gsub(/\n/, " "); print $0 " " }' |
        sed 's/\([.!?]\) \+\([A-Z]\)/\1\n\2/g' |
        sed 's/^ *//; s/ *$//' |
        sed 's/  */ /g' |
        grep -E '^[A-Z][A-Za-z0-9 ,;:()'"'"'-]+[.!?]$' |
        awk 'NF >= 5 && NF <= 30' |
        grep -v -E 'http|www|@|[A-Z]{4,}' || true
done | awk '!seen[$0]++' | head -n "$max" >"$tmp/en"
# apertium (mode eng-spa) keeps the line structure; unknown words are marked
# "*word", "#word", "@word": drop the marks.
apertium -u eng-spa <"$tmp/en" >"$tmp/es"
[ "$(wc -l <"$tmp/en")" = "$(wc -l <"$tmp/es")" ] || { echo "line counts differ" >&2; exit 1; }
cp "$tmp/en" "$out/corpus.en"
sed 's/[*#@]//g; s/^ *//; s/ *$//; s/  */ /g' "$tmp/es" >"$out/corpus.es"
wc -l "$out/corpus.en" "$out/corpus.es"
