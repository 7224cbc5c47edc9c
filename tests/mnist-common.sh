# mnist-common.sh - sourced by the integration tests that train the mnist
# task on forked CPU workers: the programs (each overridable from the
# environment), SKIP (77) without Fashion-MNIST, a temporary directory
# $tmp removed on exit, bad() to record a failure in $fail.
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
