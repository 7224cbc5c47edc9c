#!/bin/sh
# Integration test: the rank-equivalence comparison (equiv in
# tests/mnist-common.sh, tests/ckpt_cmp --spread) catches a real bug on
# every CPU path this machine has (HG_ISA avx512, avx2, baseline).  On
# each: the small Transformer (bert, Adam, whose key-projection biases
# turn rounding noise into full steps: docs/reproducibility.md) on 1 rank,
# twice (the reference and the same run summed in another order), then on
# 2 ranks (10 + 6 sequences):
#  - as it is: within its tolerance;
#  - with rank 1's gradient counted twice, and 1.01 times
#    (HG_TEST_GRAD_WEIGHT, a planted bug): over it, exit 1, naming the
#    tensors.
set -u
. "${HG_SRCDIR:-.}/tests/mnist-common.sh"
ONE_REF=0 # equiv itself is what this test checks, in every build
K=${HG_PLANTED_UPDATES:-8}
lm_data
runb() { # save-dir args...
    d=$1
    shift
    "$HGTRAIN" --task bert --data "$tmp/lm" --dropout 0 --activation-fn gelu --optimizer adam \
        --lr 0.0005 --seed 3 --log-format json --log-interval 1 --validate-interval 0 --threads 1 \
        --required-batch-size-multiple 1 --max-update "$K" --save-dir "$tmp/$d" "$@"
}
paths=baseline
grep -qw avx2 /proc/cpuinfo && paths="avx2 $paths"
grep -qw avx512f /proc/cpuinfo && paths="avx512 $paths"
for isa in $paths; do
    HG_ISA=$isa
    export HG_ISA
    twice runb ref-$isa --max-sentences 16 >"$tmp/ref-$isa.log" 2>&1 ||
        { cat "$tmp/ref-$isa.log"; bad "$isa: 1 rank"; continue; }
    runb w2-$isa --devices cpu:2 --max-sentences-per-rank 10,6 >"$tmp/w2-$isa.log" 2>&1 ||
        { cat "$tmp/w2-$isa.log"; bad "$isa: 2 ranks"; continue; }
    grep -q "ISA $isa" "$tmp/w2-$isa.log" || { head -n 3 "$tmp/w2-$isa.log"; bad "$isa: not on that path"; }
    equiv w2-$isa ref-$isa || { cat "$tmp/cmp"; bad "$isa: 2 ranks differ from 1 rank"; }
    echo "ok: $isa: 2 ranks == 1 rank ($(tr '\n' ' ' <"$tmp/cmp"))"
    for w in 2 1.01; do
        name=bug$w-$isa
        (HG_TEST_GRAD_WEIGHT=1:$w && export HG_TEST_GRAD_WEIGHT &&
            runb $name --devices cpu:2 --max-sentences-per-rank 10,6) >"$tmp/$name.log" 2>&1 ||
            { cat "$tmp/$name.log"; bad "$name exited non-zero"; continue; }
        grep -q "rank 1's gradient counted $w times" "$tmp/$name.log" ||
            { head -n 5 "$tmp/$name.log"; bad "$name: no planted-bug warning"; }
        equiv $name ref-$isa
        rc=$?
        if [ $rc = 1 ] && grep -q "over its tolerance" "$tmp/cmp"; then
            echo "ok: $isa: rank 1's gradient x$w caught: $(tr '\n' ' ' <"$tmp/cmp")"
        else
            cat "$tmp/cmp"
            bad "$isa: rank 1's gradient x$w not caught (ckpt_cmp exit $rc)"
        fi
    done
done
[ $fail = 0 ] && echo PASS
exit $fail
