#!/bin/sh
# Integration test: what is bitwise reproducible on one machine
# (docs/reproducibility.md).
#  1. the thread count changes nothing: the mnist task (conv, pooling,
#     dropout, SGD) and the bert task (Adam, --update-freq 2: the case that
#     differed by 1.6e-4 on AVX2 CPUs) with 1, 2 and 3 threads give
#     bitwise the same parameters and optimizer state, on the CPU's own
#     instruction set and, where the CPU has more, on the AVX2 path
#     (HG_ISA=avx2: our SIMD variants and OpenBLAS's Zen/Haswell core);
#  2. our SIMD variants agree: with OpenBLAS's core pinned (Prescott, which
#     every x86-64 CPU runs), HG_ISA=avx512, avx2 and baseline (those the
#     CPU has) train mnist and bert to bitwise the same checkpoint;
#  3. HG_ISA is reported and checked: the header line names it, a level
#     the CPU lacks or a misspelt one is refused.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPRE=${HGPREPROCESS:-$B/hgpreprocess}
CMP=${CKPT_CMP:-$B/tests/ckpt_cmp}
FM=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
case $(uname -m) in
x86_64) ;;
*) echo "SKIP: HG_ISA is for x86-64 (this is $(uname -m))"; exit 77 ;;
esac
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# the levels this CPU runs, widest first
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { for f in "$@"; do case " $flags " in *" $f "*) ;; *) return 1 ;; esac; done; }
levels=
has avx512f avx512bw avx512vl avx512dq avx512cd avx2 fma bmi2 && levels=avx512
has avx2 fma bmi2 && levels="$levels avx2"
levels="$levels baseline"
echo "levels: $levels"

models=
if [ -f "$FM/train-images-idx3-ubyte.gz" ]; then
    "$HGPRE" images --fashion-mnist "$FM" --out "$tmp/fm" >"$tmp/pre.log" 2>&1 ||
        { cat "$tmp/pre.log"; bad "hgpreprocess images"; }
    models=mnist
else
    echo "note: no Fashion-MNIST at $FM; bert only"
fi
awk 'NR % 15 == 0 { print "" } { print }' "$S/tests/data/corpus.en" >"$tmp/lm.txt"
"$HGPRE" lm --input "$tmp/lm.txt" --destdir "$tmp/lm" --bpe-merges 500 --max-seq-len 64 \
    --max-predictions 10 --seed 7 >"$tmp/prelm.log" 2>&1 ||
    { cat "$tmp/prelm.log"; bad "hgpreprocess lm"; }
models="$models bert"

train() { # model save-dir args...
    m=$1
    d=$2
    shift 2
    case $m in
    mnist) set -- --task mnist --data "$tmp/fm" --valid-subset test --batch-size 64 \
        --optimizer sgd --momentum 0.9 --lr 0.01 --max-update 6 "$@" ;;
    bert) set -- --task bert --data "$tmp/lm" --dropout 0 --optimizer adam --lr 0.0005 \
        --required-batch-size-multiple 1 --max-sentences 16 --update-freq 2 \
        --max-update 6 "$@" ;;
    esac
    "$HGTRAIN" "$@" --seed 3 --validate-interval 0 --log-format simple \
        --save-dir "$tmp/$d" >"$tmp/$d.log" 2>&1 ||
        { cat "$tmp/$d.log"; bad "$m $d: hgtrain failed"; return 1; }
}
same() { # what a b
    "$CMP" "$tmp/$2/checkpoint_last.h5" "$tmp/$3/checkpoint_last.h5" 0 >"$tmp/cmp" 2>&1 ||
        { cat "$tmp/cmp"; bad "$1"; return 1; }
}

# 1. threads, on the CPU's widest level and on avx2 below it
top=${levels%% *}
paths=$top
[ "$top" = avx512 ] && paths="avx512 avx2"
for isa in $paths; do
    for m in $models; do
        ok=1
        for t in 1 2 3; do
            HG_ISA=$isa train $m "$m-$isa-t$t" --threads $t || ok=0
        done
        [ $ok = 1 ] || continue
        grep -q "ISA $isa, 1 thread\$" "$tmp/$m-$isa-t1.log" ||
            bad "$m: no 'ISA $isa' in the header line: $(grep BLAS "$tmp/$m-$isa-t1.log")"
        same "$m, ISA $isa: 2 threads differ from 1" "$m-$isa-t1" "$m-$isa-t2" &&
            same "$m, ISA $isa: 3 threads differ from 1" "$m-$isa-t1" "$m-$isa-t3" &&
            echo "ok: $m, ISA $isa ($(sed -n 's/.*BLAS .*(core \([A-Za-z0-9]*\).*/\1/p' \
                "$tmp/$m-$isa-t1.log")): 1, 2, 3 threads bitwise equal"
    done
done

# 2. our SIMD variants, with OpenBLAS's core pinned
for m in $models; do
    first=
    for isa in $levels; do
        HG_ISA=$isa HG_BLAS_CORETYPE=Prescott train $m "$m-v-$isa" --threads 2 || continue
        if [ -z "$first" ]; then
            first=$isa
        else
            same "$m: ISA $isa differs from $first (same BLAS core)" "$m-v-$first" "$m-v-$isa" &&
                echo "ok: $m: ISA $isa == $first, bitwise"
        fi
    done
done

# 3. errors
HG_ISA=avx1024 "$HGTRAIN" --task bert --data "$tmp/lm" --max-update 1 --max-sentences 4 \
    --save-dir "$tmp/e1" >"$tmp/e" 2>&1 && bad "HG_ISA=avx1024 accepted"
grep -q 'HG_ISA=avx1024: expected avx512, avx2 or baseline' "$tmp/e" ||
    { cat "$tmp/e"; bad "HG_ISA=avx1024: no message"; }
if [ "$top" != avx512 ]; then
    HG_ISA=avx512 "$HGTRAIN" --task bert --data "$tmp/lm" --max-update 1 --max-sentences 4 \
        --save-dir "$tmp/e2" >"$tmp/e" 2>&1 && bad "HG_ISA=avx512 accepted on a CPU without it"
    grep -q 'HG_ISA=avx512: this CPU has only' "$tmp/e" ||
        { cat "$tmp/e"; bad "HG_ISA=avx512 without AVX-512: no message"; }
fi
exit $fail
