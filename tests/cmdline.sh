#!/bin/sh
# The command line of every program: a mistyped option, config key or
# command gets a did-you-mean suggestion; fairseq options that do not
# apply are refused by name; --version; --arch is checked against the
# task's choices (listed in --help); --patience stops a run whose
# validation metric stopped improving.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPRE=${HGPREPROCESS:-$B/hgpreprocess}
HGSCORE=${HGSCORE:-$B/hgscore}
HGPLAN=${HGPLAN:-$B/hgplan}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# expect STATUS PATTERN command...: exit status and a line of its output
expect() {
    want=$1 pat=$2
    shift 2
    "$@" >"$tmp/o" 2>&1
    got=$?
    [ $got -eq "$want" ] && grep -q -e "$pat" "$tmp/o" ||
        { cat "$tmp/o"; bad "$* (exit $got, want $want and '$pat')"; }
}

expect 2 "unknown option '--max-epochs' (did you mean --max-epoch?)" "$HGTRAIN" --max-epochs 3
expect 2 "(did you mean --encoder-layers?)" "$HGTRAIN" --task translation --encoder-layer 3
printf 'max_epochs = 3;\n' >"$tmp/c.cfg"
expect 2 "c.cfg:1: unknown key 'max_epochs' (did you mean max-epoch?)" "$HGTRAIN" -c "$tmp/c.cfg"
expect 2 "unknown command 'generte' (did you mean generate?)" "$HGTRAIN" generte
expect 2 "generate: unknown option '--beem' (did you mean --beam?)" "$HGTRAIN" generate --beem 3
expect 2 "unknown command 'translaton' (did you mean translation?)" "$HGPRE" translaton
expect 2 "unknown option '--destdri' (did you mean --destdir?)" "$HGPRE" translation --destdri x
expect 2 "unknown option '--chfr' (did you mean --chrf?)" "$HGSCORE" --chfr
expect 2 "unknown option '--clustr' (did you mean --cluster?)" "$HGPLAN" --clustr x
# far from every name: no suggestion
expect 2 "unknown option '--zzzzzzzz' (see --help)" "$HGTRAIN" --zzzzzzzz 1
# fairseq's options that do not apply
expect 2 "--num-workers: a fairseq option that does not apply to hgtrain" "$HGTRAIN" --num-workers 2
expect 2 "--ddp-backend: a fairseq option that does not apply to hgtrain: .*--distributed-backend" \
    "$HGTRAIN" --ddp-backend c10d
printf 'ddp_backend = "c10d";\n' >"$tmp/d.cfg"
expect 2 "d.cfg:1: key ddp-backend: a fairseq option" "$HGTRAIN" -c "$tmp/d.cfg"
# --version
for p in "$HGTRAIN" "$HGPRE" "$HGSCORE" "$HGPLAN"; do
    expect 0 "^[a-z]* .*[0-9]" "$p" --version
done
expect 0 "^hgtrain [0-9]" "$HGTRAIN" generate --version
# --help: wrapped to 80 columns when stdout is not a terminal
for p in "$HGTRAIN" "$HGTRAIN generate" "$HGTRAIN --task translation" "$HGPRE" \
    "$HGPRE translation" "$HGSCORE"; do
    # shellcheck disable=SC2086
    $p --help >"$tmp/h" 2>&1 || bad "$p --help failed"
    w=$(awk 'length > m { m = length } END { print m + 0 }' "$tmp/h")
    [ "$w" -le 80 ] || bad "$p --help: a line of $w columns: $(awk 'length > 80' "$tmp/h" | head -1)"
done
"$HGTRAIN" --help >"$tmp/h"
for g in general dataset optimization checkpoint distributed; do
    grep -q "^$g options:\$" "$tmp/h" || bad "hgtrain --help: no section '$g options'"
done
# --arch
expect 0 "^--arch of task translation: transformer_tiny|transformer_small" "$HGTRAIN" --task translation --help
expect 2 "--arch transformer_smal: not an architecture of task translation (did you mean transformer_small?)" \
    "$HGTRAIN" --task translation --arch transformer_smal --max-tokens 100
expect 2 "--arch foo: task mnist has no --arch" "$HGTRAIN" --task mnist --arch foo --batch-size 8
# --devices: a mix of kinds (a GPU worker and CPU workers) parses; bad
# items and NCCL for CPU workers are refused naming them
expect 2 "--devices cuda:0,cpu:0: bad device 'cpu:0'" "$HGTRAIN" --task mnist --batch-size 8 \
    --devices cuda:0,cpu:0
expect 2 "--devices cuda:0,cpux: bad device 'cpux'" "$HGTRAIN" --task mnist --batch-size 8 \
    --devices cuda:0,cpux
expect 2 "nccl: some are CPU workers (--devices cuda:0,cpu:1): use shm, tcp or mpi\|built without CUDA" \
    "$HGTRAIN" --task mnist --batch-size 8 --devices cuda:0,cpu:1 --distributed-backend nccl
# --patience: an lr too small to move the weights, so the metric never improves
head -n 30 "$S/tests/data/corpus.en" >"$tmp/v.en"
head -n 30 "$S/tests/data/corpus.es" >"$tmp/v.es"
"$HGPRE" translation --source-lang en --target-lang es --trainpref "$S/tests/data/corpus" \
    --validpref "$tmp/v" --destdir "$tmp/mt" --bpe-merges 100 >"$tmp/pre.log" 2>&1 ||
    { cat "$tmp/pre.log"; bad "hgpreprocess"; }
"$HGTRAIN" --task translation --data "$tmp/mt" --source-lang en --target-lang es \
    --arch transformer_tiny --optimizer sgd --lr 1e-30 --max-tokens 1024 --threads 1 \
    --validate-interval-updates 2 --patience 2 --max-update 40 --log-format simple \
    --save-dir "$tmp/ck" >"$tmp/p.log" 2>&1 || { cat "$tmp/p.log"; bad "--patience run"; }
grep -q "early stop: loss has not improved for 2 validations (--patience)" "$tmp/p.log" ||
    { cat "$tmp/p.log"; bad "--patience did not stop the run"; }
[ "$(grep -c 'valid on' "$tmp/p.log")" -eq 3 ] || bad "--patience 2: $(grep -c 'valid on' "$tmp/p.log") validations, want 3"
grep -q "done: 6 updates" "$tmp/p.log" || bad "--patience: not stopped at update 6"
[ -f "$tmp/ck/checkpoint_last.h5" ] || bad "--patience: no checkpoint_last.h5"

# fairseq's names: -s/-t, --train-subset (the 30-sentence split: epochs of
# one or two updates), --disable-validation, --lr as a per-epoch list
# (epoch 1 at 0.5, then 0.1), --stop-min-lr (stops once the next epoch's
# lr would be at or below it)
fs() { # log args...: a short run on the valid split
    l=$1
    shift
    "$HGTRAIN" --task translation --data "$tmp/mt" -s en -t es --train-subset valid \
        --arch transformer_tiny --optimizer sgd --lr-scheduler fixed --max-tokens 1024 \
        --threads 1 --log-interval 1 --log-format simple --no-save --save-dir "$tmp/fs" \
        "$@" >"$tmp/$l" 2>&1 || { cat "$tmp/$l"; bad "fairseq names: $*"; }
}
fs fs1.log --lr 0.5,0.1 --max-epoch 3 --disable-validation
grep -q "data $tmp/mt: 30 valid samples, no validation (--disable-validation)" "$tmp/fs1.log" ||
    bad "--train-subset/--disable-validation: $(grep 'task translation' "$tmp/fs1.log")"
grep -q "valid on" "$tmp/fs1.log" && bad "--disable-validation validated"
for e in 1 2 3; do
    want=0.1
    [ $e = 1 ] && want=0.5
    lrs=$(grep "^| epoch 00$e | update" "$tmp/fs1.log" | sed 's/.*| lr \([0-9.e-]*\) .*/\1/' | sort -u)
    [ "$lrs" = $want ] || bad "--lr 0.5,0.1: epoch $e trained at lr '$lrs', want $want"
done
# the header's BLAS line: library, core and threads; the rest under --verbose
h=$(grep '^| .* parameters, .* BLAS ' "$tmp/fs1.log")
[ ${#h} -le 120 ] && echo "$h" | grep -q ", BLAS [^,]*, ISA [a-z0-9]*, 1 thread\$" &&
    ! echo "$h" | grep -q "activations\|dlopen\|MAX_THREADS" ||
    bad "the header's BLAS line (${#h} characters): $h"
fs fs2.log --lr 0.5,0.1 --max-epoch 3 --stop-min-lr 0.2 --validate-interval 0 --verbose
grep -q '^| .* parameters, .*(activations .* without reuse), BLAS ' "$tmp/fs2.log" ||
    bad "--verbose: $(grep ' parameters, ' "$tmp/fs2.log")"
grep -q "lr 0.1 at or below --stop-min-lr 0.2: done" "$tmp/fs2.log" ||
    { cat "$tmp/fs2.log"; bad "--stop-min-lr did not stop after epoch 1"; }
grep -q "^| epoch 002" "$tmp/fs2.log" && bad "--stop-min-lr: trained on in epoch 2"
grep -q "data $tmp/mt: 30 valid samples, no validation (--validate-interval 0)\$" "$tmp/fs2.log" ||
    bad "validation off: $(grep 'task translation' "$tmp/fs2.log")"
expect 2 "--lr: a list of 2 rates is one per epoch" "$HGTRAIN" --task mnist --batch-size 8 \
    --lr 0.1,0.2 --lr-scheduler inverse_sqrt
expect 2 "--skip-invalid-size-inputs-valid-test: a fairseq option that does not apply" \
    "$HGTRAIN" --task mnist --batch-size 8 --skip-invalid-size-inputs-valid-test
expect 2 "unknown option '--train-subsets' (did you mean --train-subset?)" "$HGTRAIN" \
    --task mnist --batch-size 8 --train-subsets x
expect 1 "has 3 entries for a world of 1 rank\$" "$HGTRAIN" --task translation \
    --data "$tmp/mt" -s en -t es --max-tokens 500 --rank-capacity 1,2,3 --save-dir "$tmp/rc"

[ $fail = 0 ] && echo "ok  cmdline: did-you-mean in every program, fairseq refusals, --version, --arch, --patience"
exit $fail
