# mnist-common.sh - sourced by the integration tests that train the mnist
# task on forked CPU workers: the programs (each overridable from the
# environment), SKIP (77) without Fashion-MNIST, a temporary directory
# $tmp removed on exit, bad() to record a failure in $fail, fm_shards()
# (the shards in $tmp/fm), lm_data() (the small bert corpus in $tmp/lm),
# wait_update() (a json log's update N), and
# twice() and equiv(), which compare a run with a one-rank reference to a
# tolerance derived from the arithmetic (docs/reproducibility.md).
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
lm_data() { # [LINES DIR]: the small bert corpus (tests/data/corpus.en, its
    # first LINES lines; all: 1196 samples) in $tmp/DIR (lm)
    head -n "${1:-2000}" "${HG_SRCDIR:-.}/tests/data/corpus.en" |
        awk 'NR % 15 == 0 { print "" } { print }' >"$tmp/${2:-lm}.txt"
    "$HGPRE" lm --input "$tmp/${2:-lm}.txt" --destdir "$tmp/${2:-lm}" --bpe-merges 500 \
        --max-seq-len 64 --max-predictions 10 --seed 7 >"$tmp/prelm.log" 2>&1 ||
        { cat "$tmp/prelm.log"; bad "hgpreprocess lm"; }
}
wait_update() { # log [update]: until that update (3) is logged (at most 60 s)
    i=0
    while ! grep -q "\"update\": ${2:-3}," "$1" 2>/dev/null && [ $i -lt 600 ]; do
        sleep 0.1
        i=$((i + 1))
    done
}

# The rank-equivalence tests compare N ranks with one rank on the same
# global batches.  The two sum in different orders, so they differ by
# rounding, which training amplifies by an amount no fixed tolerance knows
# (Adam on a gradient that is rounding noise: docs/reproducibility.md).
# The reference is therefore run twice: as asked, and under another
# instruction-set level (alt_isa), whose BLAS core sums the same products
# in another order; the distance between the two is what reordering alone
# does to this run on this machine and build.
alt_isa() { # the level whose BLAS core differs from this run's
    if [ "${HG_ISA:-}" = baseline ]; then echo avx2; else echo baseline; fi
}
alt_on() { # the environment of the reference's second run (alt_off undoes it)
    isa_was=${HG_ISA-} core_was=${HG_BLAS_CORETYPE-}
    HG_ISA=$(alt_isa)
    export HG_ISA
    unset HG_BLAS_CORETYPE
}
alt_off() {
    HG_ISA=$isa_was
    [ -n "$core_was" ] && HG_BLAS_CORETYPE=$core_was && export HG_BLAS_CORETYPE
    :
}
# The sanitizer build runs each reference once (ONE_REF=1): it looks for
# memory and undefined-behaviour errors on code paths, and the second run
# is the first's path again on another BLAS core (tests/isa.sh and
# tests/planted_bug.sh run those paths there).  Its runs are compared on
# their losses (same_losses in the tests); equiv, which needs the second
# run, says it did not compare and passes: the parameters and optimizer
# state are compared in the normal build, to the tolerance derived there.
# tests/planted_bug.sh, which tests equiv itself, sets ONE_REF=0.
ONE_REF=0
[ "${HG_ASAN:-0}" = 1 ] && ONE_REF=1
twice() { # F DIR ARGS...: F DIR ARGS..., then F DIR.alt ARGS... under alt_on
    tf=$1 td=$2
    shift 2
    "$tf" "$td" "$@" || return 1
    [ "$ONE_REF" = 1 ] && return 0
    alt_on
    "$tf" "$td.alt" "$@" >"$tmp/$td.alt.log" 2>&1
    trc=$?
    alt_off
    [ $trc = 0 ] || { cat "$tmp/$td.alt.log"; echo "(the run above: $td under HG_ISA=$(alt_isa))"; }
    return $trc
}
# equiv GOT REF [GROUP...]: GOT's checkpoint within 8 times REF's distance
# to REF.alt (twice), plus 1e-6 relative, tensor by tensor and group by
# group (tests/ckpt_cmp --spread); its lines in $tmp/cmp, also appended to
# $tmp/equiv.all; status 1 if over (under ONE_REF=1: a line saying so, status 0)
equiv() {
    eg=$1 er=$2
    shift 2
    if [ "$ONE_REF" = 1 ]; then
        echo "parameters not compared: the sanitizer build runs the reference once" >"$tmp/cmp"
        return 0
    fi
    # shellcheck disable=SC2086
    "$CMP" --spread "$tmp/$er.alt/checkpoint_last.h5" ${EQUIV_ARGS:-} "$tmp/$eg/checkpoint_last.h5" \
        "$tmp/$er/checkpoint_last.h5" "$@" >"$tmp/cmp" 2>&1
    erc=$?
    sed "s|^|$eg vs $er: |" "$tmp/cmp" >>"$tmp/equiv.all"
    return $erc
}
# equiv_summary: the largest ratio of an error to its tolerance seen
equiv_summary() {
    [ -f "$tmp/equiv.all" ] || return 0
    sed -n 's/^\([^:]*\): \(\/[a-z]*\): .* at \([0-9.]*\) of its tolerance.*/\3 \1 \2/p' \
        "$tmp/equiv.all" | sort -g -r | head -n 1 |
        awk '{ printf "equivalence: %s comparisons, the largest error %s of its tolerance (%s %s %s %s)\n", n, $1, $2, $3, $4, $5 }' \
            n="$(grep -c 'of its tolerance' "$tmp/equiv.all")"
}
