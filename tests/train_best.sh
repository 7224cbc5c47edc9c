#!/bin/sh
# Integration test: validation and checkpoint_best at every stop, the disk
# full, stale .tmp files. On a small Fashion-MNIST (640 train, 300 valid):
#  1. --max-update 12 --validate-interval-updates 4: one validation per
#     update (12 once, though the interval and the stop both ask),
#     checkpoint_last's best_metric is the best printed;
#  2. every stop reason (--max-update, --max-epoch, --stop-time-hours)
#     validates before its save, SIGTERM does not (it says so): best_metric set, the last update
#     validated;
#  3. resuming with other options (--lr 2, --reset-meters) never replaces
#     checkpoint_best.h5 by a worse model, nor by another metric's;
#  4. a stale checkpoint_last.h5.tmp is removed at start; a missing
#     --restore-file is an error;
#  5. a full disk (a tmpfs where mounting is allowed) during a save: exit 1
#     naming the file, no signal, no .tmp, the previous checkpoint readable;
#  6. a partial shard set (hgpreprocess killed after 1 of 4 shards) is
#     refused naming the missing files.
set -u
B=${HG_BUILDDIR:-.}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPRE=${HGPREPROCESS:-$B/hgpreprocess}
SRC=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$SRC/train-images-idx3-ubyte.gz" ] || ! command -v python3 >/dev/null ||
    ! command -v h5dump >/dev/null; then
    echo "SKIP: needs Fashion-MNIST at $SRC, python3 and h5dump"
    exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'umount "$tmp/full" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# the first N samples of an IDX pair, uncompressed
python3 - "$SRC" "$tmp" <<'EOF' || { echo "FAIL: cutting IDX files"; exit 1; }
import gzip, struct, sys
src, out = sys.argv[1], sys.argv[2]
for name, pre, n in (("train", "train", 640), ("t10k", "valid", 300)):
    for kind, item in (("images-idx3", 784), ("labels-idx1", 1)):
        b = gzip.open("%s/%s-%s-ubyte.gz" % (src, name, kind)).read()
        head = 16 if item > 1 else 8
        b = b[:4] + struct.pack(">I", n) + b[8:head] + b[head:head + n * item]
        open("%s/%s-%s" % (out, pre, kind), "wb").write(b)
EOF
for s in train valid; do
    "$HGPRE" images --images "$tmp/$s-images-idx3" --labels "$tmp/$s-labels-idx1" \
        --out "$tmp/fm" --prefix $s >"$tmp/pre.log" 2>&1 ||
        { cat "$tmp/pre.log"; echo "FAIL: hgpreprocess $s"; exit 1; }
done
run() { # save-dir args...
    d=$1
    shift
    "$HGTRAIN" --task mnist --data "$tmp/fm" --batch-size 64 --optimizer sgd \
        --momentum 0.9 --lr 0.01 --seed 3 --log-format simple --save-dir "$tmp/$d" "$@"
}
# best_metric of a checkpoint, %.9g
best_of() { h5dump -m '%.9g' -a best_metric "$1" 2>/dev/null | sed -n 's/.*(0): *//p'; }
metric_of() { h5dump -a metric_name "$1" 2>/dev/null | sed -n 's/.*(0): *"\(.*\)"/\1/p'; }
# the smallest "valid ... loss X" of a log
min_loss() { sed -n 's/.*valid on .* | loss \([0-9.]*\) .*/\1/p' "$1" | sort -g | head -n 1; }
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(a != "" && b != "" && d < 6e-5 && d > -6e-5) }'; }

# 1. one validation per update; checkpoint_last holds the best
run c1 --max-update 12 --validate-interval-updates 4 >"$tmp/o1" 2>&1 || { cat "$tmp/o1"; bad "run 1"; }
# (4, 8, the end of epoch 1 at 10, 12), each once
ups=$(sed -n 's/.*valid on .*num_updates \([0-9]*\)$/\1/p' "$tmp/o1" | tr '\n' ' ')
[ "$ups" = "4 8 10 12 " ] || bad "validations at updates '$ups', want '4 8 10 12 '"
b=$(best_of "$tmp/c1/checkpoint_last.h5")
close "$b" "$(min_loss "$tmp/o1")" || bad "checkpoint_last best_metric '$b', best printed $(min_loss "$tmp/o1")"
[ "$(best_of "$tmp/c1/checkpoint_best.h5")" = "$b" ] || bad "checkpoint_best holds another metric"
[ "$(metric_of "$tmp/c1/checkpoint_last.h5")" = loss ] || bad "metric_name not saved"

# 2. every stop validates its last update before the save, but a signal's,
#    which asks to stop now (tests/interrupt.sh)
check_stop() { # name log dir
    last=$(sed -n 's/.*| update \([0-9]*\) .*/\1/p; s/.*stopped by signal .* after update \([0-9]*\).*/\1/p' "$2" | tail -n 1)
    grep -q "valid on .*num_updates $last\$" "$2" || { tail -n 4 "$2"; bad "$1: update $last not validated"; }
    b=$(best_of "$tmp/$3/checkpoint_last.h5")
    close "$b" "$(min_loss "$2")" || bad "$1: best_metric '$b', best printed $(min_loss "$2")"
}
run c2 --max-update 7 --validate-interval 100 --log-interval 1 >"$tmp/o2" 2>&1 || bad "max-update run"
check_stop max-update "$tmp/o2" c2
run c3 --max-epoch 2 --validate-interval 100 --log-interval 1 >"$tmp/o3" 2>&1 || bad "max-epoch run"
check_stop max-epoch "$tmp/o3" c3
[ "$(grep -c 'valid on' "$tmp/o3")" = 1 ] || bad "max-epoch: not exactly one validation"
run c4 --max-epoch 1000 --stop-time-hours 0.0004 --log-interval 1 >"$tmp/o4" 2>&1 || bad "stop-time run"
grep -q 'stop-time-hours' "$tmp/o4" && check_stop stop-time "$tmp/o4" c4
( exec "$HGTRAIN" --task mnist --data "$tmp/fm" --batch-size 64 --lr 0.01 --max-epoch 1000 \
    --log-interval 1 --log-format simple --save-dir "$tmp/c5" ) >"$tmp/o5" 2>&1 &
pid=$!
i=0
while [ $i -lt 100 ] && ! grep -q 'update 3 ' "$tmp/o5"; do sleep 0.2; i=$((i + 1)); done
kill -TERM $pid
wait $pid
st=$?
[ $st -eq 1 ] && grep -q 'stopped by signal 15 .*; the final validation skipped' "$tmp/o5" ||
    { tail -n 3 "$tmp/o5"; bad "SIGTERM: exit $st, or no line saying the validation was skipped"; }
grep -q 'valid on' "$tmp/o5" && bad "SIGTERM: validated before stopping"

# 3. resumes with other options never replace checkpoint_best by a worse one
cp "$tmp/c1/checkpoint_best.h5" "$tmp/best.orig"
old=$(best_of "$tmp/c1/checkpoint_best.h5")
for opts in "--lr 2" "--lr 2 --reset-meters" "--lr 1e-12"; do
    # shellcheck disable=SC2086
    run c1 --max-update 16 --validate-interval-updates 2 $opts >"$tmp/o6" 2>&1
    grep -q 'loaded' "$tmp/o6" || { tail -n 3 "$tmp/o6"; bad "$opts: did not resume"; }
    new=$(best_of "$tmp/c1/checkpoint_best.h5")
    if cmp -s "$tmp/c1/checkpoint_best.h5" "$tmp/best.orig"; then
        awk -v m="$(min_loss "$tmp/o6")" -v o="$old" 'BEGIN { exit !(m + 6e-5 >= o) }' ||
            bad "$opts: a better validation ($(min_loss "$tmp/o6") < $old) was not kept"
    else
        awk -v n="$new" -v o="$old" 'BEGIN { exit !(n < o) }' ||
            bad "$opts: checkpoint_best replaced by $new (was $old)"
        cp "$tmp/c1/checkpoint_best.h5" "$tmp/best.orig"
        old=$new
    fi
    rm -f "$tmp/c1/checkpoint_last.h5"
    cp "$tmp/c1/checkpoint_best.h5" "$tmp/c1/checkpoint_last.h5"
done
run c1 --max-update 20 --validate-interval-updates 2 --best-checkpoint-metric accuracy \
    --maximize-best-checkpoint-metric >"$tmp/o7" 2>&1 || bad "accuracy run"
grep -q "chosen by 'loss'" "$tmp/o7" && cmp -s "$tmp/c1/checkpoint_best.h5" "$tmp/best.orig" ||
    bad "checkpoint_best of another metric replaced or not reported"

# 4. stale .tmp; a missing --restore-file
echo junk >"$tmp/c2/checkpoint_last.h5.tmp"
run c2 --max-update 8 --validate-interval 0 >"$tmp/o8" 2>&1 || bad "run after a stale .tmp"
[ ! -e "$tmp/c2/checkpoint_last.h5.tmp" ] && grep -q 'removed .*checkpoint_last.h5.tmp' "$tmp/o8" ||
    bad "stale .tmp not removed and reported"
run c2 --max-update 9 --restore-file "$tmp/nope.h5" >"$tmp/o9" 2>&1
[ $? -eq 1 ] && grep -q 'nope.h5' "$tmp/o9" || bad "missing --restore-file not an error"

# 5. a full disk: 24 MiB holds two checkpoints (9.6 MB each), not three
mkdir "$tmp/full"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=24m tmpfs "$tmp/full" 2>/dev/null; then
    for dev in cpu:1 cpu:2; do
        rm -f "$tmp/full"/*
        run full --max-update 4 --validate-interval 0 --devices $dev >"$tmp/oa" 2>&1 || bad "$dev: first save"
        cp "$tmp/full/checkpoint_last.h5" "$tmp/last.orig"
        run full --max-update 8 --devices $dev >"$tmp/ob" 2>&1
        st=$?
        echo "  full disk, $dev: exit $st: $(grep -i 'no space' "$tmp/ob" | head -n 1)"
        [ $st -eq 1 ] && grep -q 'full/checkpoint.*\.h5\.tmp: .*No space left' "$tmp/ob" ||
            { tail -n 3 "$tmp/ob"; bad "$dev: full disk: exit $st, file not named"; }
        grep -qi 'signal' "$tmp/ob" && bad "$dev: a signal reported on a full disk"
        ls "$tmp/full" | grep -q '\.tmp$' && bad "$dev: .tmp left on the full disk"
        cmp -s "$tmp/full/checkpoint_last.h5" "$tmp/last.orig" || bad "$dev: previous checkpoint changed"
    done
    umount "$tmp/full"
else
    echo "note: cannot mount a tmpfs here; the full disk is tested by test_controller (RLIMIT_FSIZE)"
fi

# 6. one shard of four
"$HGPRE" images --images "$tmp/train-images-idx3" --labels "$tmp/train-labels-idx1" \
    --out "$tmp/fm4" --prefix train --num-shards 4 >"$tmp/pre.log" 2>&1 || bad "4 shards"
cp "$tmp/fm/valid-00000-of-00001.h5" "$tmp/fm4/"
rm -f "$tmp"/fm4/train-0000[123]-of-00004.h5
"$HGTRAIN" --task mnist --data "$tmp/fm4" --batch-size 64 --max-update 2 --no-save >"$tmp/oc" 2>&1
st=$?
[ $st -eq 1 ] && grep -q 'incomplete shard set.*train-00001-of-00004.h5, train-00002-of-00004.h5, train-00003-of-00004.h5' "$tmp/oc" ||
    { cat "$tmp/oc"; bad "partial shard set: exit $st"; }

[ $fail -eq 0 ] && echo "PASS: train_best"
exit $fail
