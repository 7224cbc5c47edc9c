#!/bin/sh
# Logs: a short translation run with --log-format json and --log-file;
#  1. every line of the log file and of stdout parses as JSON (headers are
#     {"message": ...} records);
#  2. training records carry num_updates; validation records too;
#  3. the validation at the last update (--validate-interval-updates 10,
#     --max-update 20) runs once;
#  4. --log-format simple still writes JSON Lines to --log-file.
# SKIP (77) without python3 (the JSON parser).
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPRE=${HGPREPROCESS:-$B/hgpreprocess}
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

head -n 30 "$S/tests/data/corpus.en" >"$tmp/v.en"
head -n 30 "$S/tests/data/corpus.es" >"$tmp/v.es"
"$HGPRE" translation --source-lang en --target-lang es --trainpref "$S/tests/data/corpus" \
    --validpref "$tmp/v" --destdir "$tmp/mt" --bpe-merges 200 >"$tmp/pre.log" 2>&1 ||
    { cat "$tmp/pre.log"; echo "FAIL: hgpreprocess"; exit 1; }
run() { # format log-file
    "$HGTRAIN" --task translation --data "$tmp/mt" --source-lang en --target-lang es \
        --arch transformer_tiny --optimizer adam --lr 0.002 --max-tokens 2048 --threads 1 \
        --log-interval 5 --validate-interval-updates 10 --max-update 20 --no-save \
        --save-dir "$tmp/ck" --log-format "$1" --log-file "$2" >"$tmp/out.$1" 2>"$tmp/err.$1" ||
        { cat "$tmp/err.$1"; bad "training ($1)"; }
}
run json "$tmp/json.log"
run simple "$tmp/simple.log"
check() { # file what
    python3 - "$1" <<'PY' || bad "$2 is not JSON Lines"
import json, sys
n = 0
for i, line in enumerate(open(sys.argv[1]), 1):
    try:
        json.loads(line)
    except ValueError as e:
        sys.exit("%s:%d: %s: %r" % (sys.argv[1], i, e, line))
    n += 1
if n < 5:
    sys.exit("%s: only %d lines" % (sys.argv[1], n))
PY
}
check "$tmp/json.log" "--log-file (json)"
check "$tmp/out.json" "stdout of --log-format json"
check "$tmp/simple.log" "--log-file (simple)"
cmp -s "$tmp/json.log" "$tmp/out.json" || bad "--log-file and json stdout differ"
grep -q '^| epoch 001 | update 5 ' "$tmp/out.simple" || bad "simple format lost its text lines"
python3 - "$tmp/json.log" <<'PY' || bad "records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
train = [r for r in recs if "loss" in r and "valid_loss" not in r]
valid = [r for r in recs if "valid_loss" in r]
msgs = [r for r in recs if "message" in r]
assert train and all("num_updates" in r for r in train), train
assert [r["num_updates"] for r in train] == [5, 10, 15, 20], train
assert [r["num_updates"] for r in valid] == [10, 20], valid   # once at update 20
assert any(m["message"].startswith("task translation") for m in msgs), msgs
PY

[ $fail = 0 ] && echo "ok  log_json: --log-file and json stdout are JSON Lines, num_updates, one validation at the last update"
exit $fail
