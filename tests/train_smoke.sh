#!/bin/sh
# Integration test: the real hgtrain program on real Fashion-MNIST data.
# Asserts that training lowers the loss, that the test accuracy is well above
# chance, and that bad input gives a clear error and a non-zero exit.
set -u
HGTRAIN=${HGTRAIN:-${HG_BUILDDIR:-.}/hgtrain}
DATA=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$DATA/train-images-idx3-ubyte.gz" ]; then
    echo "SKIP: no Fashion-MNIST at $DATA (Debian package dataset-fashion-mnist)"
    exit 77
fi
out=$(mktemp) || exit 1
trap 'rm -f "$out" "$out.bad"' EXIT
fail=0

# 1. 3200 images, 50 steps of 64: the loss falls and accuracy is far above 10%.
if ! "$HGTRAIN" --data "$DATA" --max-train 3200 --max-valid 2000 --log-interval 10 --seed 3 >"$out" 2>&1; then
    echo "FAIL: hgtrain exited non-zero"; cat "$out"; exit 1
fi
cat "$out"
first=$(grep '| step' "$out" | head -n 1 | sed 's/.*| loss \([0-9.]*\).*/\1/')
last=$(grep '| step' "$out" | tail -n 1 | sed 's/.*| loss \([0-9.]*\).*/\1/')
acc=$(grep 'accuracy' "$out" | tail -n 1 | sed 's/.*accuracy \([0-9.]*\)%.*/\1/')
awk -v f="$first" -v l="$last" 'BEGIN { exit !(l < 0.7 * f) }' ||
    { echo "FAIL: loss did not fall enough: $first -> $last"; fail=1; }
awk -v a="$acc" 'BEGIN { exit !(a > 55) }' ||
    { echo "FAIL: accuracy $acc% <= 55%"; fail=1; }

# 2. A missing data directory: non-zero exit and the file named.
if "$HGTRAIN" --data /nonexistent/dir >"$out.bad" 2>&1; then
    echo "FAIL: missing data accepted"; fail=1
fi
grep -q '/nonexistent/dir/train-images-idx3-ubyte.gz' "$out.bad" ||
    { echo "FAIL: error does not name the file:"; cat "$out.bad"; fail=1; }

# 3. A truncated file: non-zero exit, message says truncated.
tmpd=$(mktemp -d) || exit 1
head -c 5000 "$DATA/train-images-idx3-ubyte.gz" >"$tmpd/train-images-idx3-ubyte.gz"
cp "$DATA/train-labels-idx1-ubyte.gz" "$DATA"/t10k-* "$tmpd/"
if "$HGTRAIN" --data "$tmpd" >"$out.bad" 2>&1; then
    echo "FAIL: truncated file accepted"; fail=1
fi
grep -q 'truncated' "$out.bad" ||
    { echo "FAIL: no 'truncated' in:"; cat "$out.bad"; fail=1; }
rm -rf "$tmpd"

# 4. An unknown option and a bad number: usage error (exit 2).
"$HGTRAIN" --no-such-option >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: unknown option not rejected with 2"; fail=1; }
"$HGTRAIN" --lr abc >"$out.bad" 2>&1
[ $? -eq 2 ] && grep -q -- '--lr' "$out.bad" ||
    { echo "FAIL: bad --lr not reported"; fail=1; }

[ $fail -eq 0 ] && echo "PASS: train_smoke"
exit $fail
