#!/bin/sh
# The commands of README.md and docs/tasks.md run as written, in a fresh
# directory, with the build directory on PATH (as after make install):
# README's Data section (preprocess with a test split, train, generate
# --gen-subset test, interactive), docs/tasks.md's bert and translation
# examples one after the other (each with its own --save-dir) and its
# generate and interactive lines on the translation run's checkpoints,
# and scripts/demo-translation (the README's first command) run from
# another folder, shrunk by its own options. Their placeholder inputs (corpus.txt, corpus.en, ...) are
# made from tests/data. SKIP (77) without python3 (the block extractor).
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
B=$(cd "$B" && pwd)
S=$(cd "$S" && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
PATH="$B:$PATH"
export PATH

# block FILE ANCHOR: the code block of FILE (``` fenced, or indented by 4
# spaces) that contains ANCHOR, as a shell script
block() {
    python3 - "$1" "$2" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
blocks, cur, fenced = [], None, False
for i, l in enumerate(lines):
    if l.startswith("```"):
        if fenced:
            blocks.append(cur); cur = None; fenced = False
        else:
            cur, fenced = [], True
        continue
    if fenced:
        cur.append(l); continue
    if l.startswith("    ") and (cur is not None or i == 0 or lines[i - 1].strip() == ""):
        if cur is None:
            cur = []
        cur.append(l[4:]); continue
    if cur is not None and l.strip() == "" and i + 1 < len(lines) and lines[i + 1].startswith("    "):
        cur.append(""); continue
    if cur is not None:
        blocks.append(cur); cur = None
if cur:
    blocks.append(cur)
hits = [b for b in blocks if any(sys.argv[2] in l for l in b)]
if len(hits) != 1:
    sys.exit("%s: %d blocks contain %r" % (sys.argv[1], len(hits), sys.argv[2]))
print("set -e")
print("\n".join(hits[0]))
PY
}
# run NAME FILE ANCHOR [FILTER]: runs the block (lines matching FILTER left out)
run() {
    block "$2" "$3" >"$tmp/$1.sh" || { bad "$1: block not found"; return; }
    [ -n "${4:-}" ] && { grep -v -e "$4" "$tmp/$1.sh" >"$tmp/$1.f"; mv "$tmp/$1.f" "$tmp/$1.sh"; }
    t0=$(date +%s)
    (cd "$tmp/w" && sh "$tmp/$1.sh") >"$tmp/$1.log" 2>&1 ||
        { cat "$tmp/$1.sh" "$tmp/$1.log"; bad "$1: $2's commands failed"; }
    echo "$1: $(($(date +%s) - t0)) s"
}

# tests/data as the commands see it: the sanitizer build gives them the
# first 400 of the corpus's 2000 sentence pairs (the same commands and code
# paths; generating and scoring 2000 sentences with beam 5 took 2 of its
# 2.5 minutes)
mkdir -p "$tmp/w/tests"
D=$tmp/w/tests/data
if [ "${HG_ASAN:-0}" = 1 ]; then
    mkdir "$D"
    for f in "$S"/tests/data/*; do ln -s "$f" "$D/"; done
    for l in en es; do
        rm "$D/corpus.$l"
        head -n 400 "$S/tests/data/corpus.$l" >"$D/corpus.$l"
    done
else
    ln -s "$S/tests/data" "$D"
fi
cp "$D/corpus.en" "$tmp/w/corpus.en"
cp "$D/corpus.es" "$tmp/w/corpus.es"
head -n 100 "$D/corpus.en" >"$tmp/w/valid.en"
head -n 100 "$D/corpus.es" >"$tmp/w/valid.es"
sed -n 101,150p "$D/corpus.en" >"$tmp/w/test.en"
sed -n 101,150p "$D/corpus.es" >"$tmp/w/test.es"
awk 'NR % 15 == 0 { print "" } { print }' "$D/corpus.en" >"$tmp/w/corpus.txt"

skip_fm=""
[ -d /usr/share/datasets/fashion-mnist ] || skip_fm="fashion-mnist"
run readme-data "$S/README.md" "hgpreprocess batches --data data-bin/en-es/train" "$skip_fm"
run readme-translate "$S/README.md" "hgtrain interactive --data data-bin/en-es"
[ "$(wc -l <"$tmp/w/hyp.txt" 2>/dev/null)" = "$(wc -l <"$D/corpus.en")" ] ||
    bad "README: generate wrote no hypothesis per test sentence"
grep -q 'Generate test with beam=5: BLEU' "$tmp/readme-translate.log" || bad "README: no BLEU line"
run tasks-bert "$S/docs/tasks.md" "hgtrain --task bert --data data-bin/lm"
run tasks-mt "$S/docs/tasks.md" "hgtrain --task translation --data data-bin/mt"
[ -f "$tmp/w/checkpoints/bert/checkpoint_last.h5" ] && [ -f "$tmp/w/checkpoints/mt/checkpoint_last.h5" ] ||
    bad "docs/tasks.md: the bert and translation runs did not keep their own checkpoints"
# docs/tasks.md's generate (on the test split its preprocess made) and
# interactive lines, after its training run
run tasks-generate "$S/docs/tasks.md" "hgtrain generate --data data-bin/mt --path checkpoints/mt"
[ "$(wc -l <"$tmp/w/mt-test.txt" 2>/dev/null)" = 50 ] ||
    bad "docs/tasks.md's generate: no hypothesis per test sentence"
grep -q 'Generate test with beam=5: BLEU' "$tmp/tasks-generate.log" || bad "docs/tasks.md's generate: no BLEU line"
run tasks-interactive "$S/docs/tasks.md" "hgtrain interactive --data data-bin/mt"
[ "$(grep -c "$(printf '\t')" "$tmp/tasks-interactive.log")" = 2 ] ||
    bad "docs/tasks.md's interactive: not 2 scored hypotheses: $(cat "$tmp/tasks-interactive.log")"

# README's first command ends in scripts/demo-translation: run from another
# folder it finds the programs itself (here on PATH, as after make
# install, unless the source tree holds a build); kept short with its
# options that shrink it (the tests/data corpus, transformer_tiny, 10
# updates)
mkdir "$tmp/elsewhere"
t0=$(date +%s)
(cd "$tmp/elsewhere" && "$S/scripts/demo-translation" --small --arch transformer_tiny \
    --minutes 5 -- --threads 1 --max-update 10) >"$tmp/demo.log" 2>&1 ||
    { cat "$tmp/demo.log"; bad "scripts/demo-translation from another folder failed"; }
echo "demo: $(($(date +%s) - t0)) s"
grep -q '^| Generate test with beam=5: BLEU = ' "$tmp/demo.log" ||
    { cat "$tmp/demo.log"; bad "demo-translation from another folder: no test BLEU line"; }
[ -f "$tmp/elsewhere/demo-translation/test.hyp" ] || bad "demo-translation: no test.hyp under the folder it ran in"

# the sbatch script (README: sbatch scripts/slurm/hgtrain.sbatch): its
# arguments reach hgtrain, last (so they win), through a stand-in srun
# that prints what it was asked to run; its comments say how to size it
mkdir "$tmp/fake"
printf '#!/bin/sh\nprintf "%%s\\n" "$@"\n' >"$tmp/fake/srun"
chmod +x "$tmp/fake/srun"
if command -v bash >/dev/null 2>&1; then
    (cd "$tmp/w" && PATH="$tmp/fake:$PATH" SLURM_JOB_ID=7 bash "$S/scripts/slurm/hgtrain.sbatch" \
        --max-epoch 2 --lr 0.02) >"$tmp/sbatch.out" 2>&1 || bad "hgtrain.sbatch failed: $(cat "$tmp/sbatch.out")"
    [ "$(tail -n 4 "$tmp/sbatch.out" | tr '\n' ' ')" = "--max-epoch 2 --lr 0.02 " ] ||
        bad "hgtrain.sbatch: its arguments are not hgtrain's last: $(tr '\n' ' ' <"$tmp/sbatch.out")"
fi
grep -q '^#   sbatch --nodes=1 --cpus-per-task=2 scripts/slurm/hgtrain.sbatch' \
    "$S/scripts/slurm/hgtrain.sbatch" || bad "hgtrain.sbatch: no word on sizing it for a small partition"

[ $fail = 0 ] && echo "ok  docs_commands: README's data/translation commands, docs/tasks.md's bert, translation, generate and interactive examples, the demo from another folder"
exit $fail
