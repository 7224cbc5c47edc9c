# mnist-common.sh - sourced by the integration tests that train the mnist
# task on forked CPU workers: the programs (each overridable from the
# environment), SKIP (77) without Fashion-MNIST, a temporary directory
# $tmp removed on exit, bad() to record a failure in $fail, fm_shards()
# (the shards in $tmp/fm) and wait_update() (a json log's update N).
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPLAN=${HGPLAN:-$B/hgplan}
HGPRE=${HGPREPROCESS:-$B/hgpreprocess}
CMP=${CKPT_CMP:-$B/tests/ckpt_cmp}
SRC=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$SRC/train-images-idx3-ubyte.gz" ]; then
    echo "SKIP: no Fashion-MNIST at $SRC (Debian package dataset-fashion-mnist)"
    exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
fm_shards() {
    "$HGPRE" images --fashion-mnist "$SRC" --out "$tmp/fm" >"$tmp/pre.log" 2>&1 ||
        { cat "$tmp/pre.log"; echo "FAIL: hgpreprocess images"; exit 1; }
}
wait_update() { # log [update]: until that update (3) is logged (at most 60 s)
    i=0
    while ! grep -q "\"update\": ${2:-3}," "$1" 2>/dev/null && [ $i -lt 600 ]; do
        sleep 0.1
        i=$((i + 1))
    done
}
