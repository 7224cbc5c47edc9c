#!/usr/bin/env bash
# run.sh - our GEMM and model benchmarks against PyTorch, one table.
#
# usage: bench/run.sh [BUILD_DIR]        (default: .)
#
# Expects BUILD_DIR/bench/bench_models and BUILD_DIR/bench/bench_gemm (built
# by `make bench`); BENCH_MODELS=/path and BENCH_GEMM=/path override them.
# Environment:
#   HG_BENCH_THREADS  thread counts to run (default "1 2")
#   HG_BENCH_ITERS    steps per repetition for the models (default 10)
#   HG_BENCH_REPS     repetitions; medians are reported (default 5)
#   TORCH_PYTHON      python with PyTorch (default /usr/bin/python3)
#   HG_TORCH_ARGS     extra arguments for torch_models.py, e.g.
#                     "--coretype SkylakeX --config mkldnn=1,foreach=1" to
#                     time one configuration instead of trying them all
# For each thread count: bench_gemm; then per model a short search for
# PyTorch's best configuration (torch_models.py tries OpenBLAS core type
# from the environment vs the one hgtrain runs (bench/torch-env: SkylakeX on
# AVX-512, HG_ISA's level where set), mkldnn on/off, optimizer foreach on/off),
# then ours and PyTorch's best alternately, HG_BENCH_REPS times, medians.
# Benchmarks are reports, not tests: exits 0 whatever the ratios.
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-.}
models=${BENCH_MODELS:-$build/bench/bench_models}
gemm=${BENCH_GEMM:-$build/bench/bench_gemm}
py=${TORCH_PYTHON:-/usr/bin/python3}
threads=${HG_BENCH_THREADS:-1 2}
iters=${HG_BENCH_ITERS:-10}
reps=${HG_BENCH_REPS:-5}

for b in "$models" "$gemm"; do
    if [ ! -x "$b" ]; then
        cat >&2 <<EOF
run.sh: $b not found.  Build the benchmarks first:
  ./configure && make bench          (then: bench/run.sh BUILD_DIR)
or by hand, from the repository root:
  F="-std=c11 -O3 -fopenmp -I. -I/usr/include/x86_64-linux-gnu/openblas-openmp \\
     -DHG_BLAS_DLOPEN=1 -DHG_BLAS_LIB_PATH=\\"/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0\\""
  gcc \$F bench/bench_models.c tasks/models.c kernels/*.c kernels/cpu/*.c graph/*.c \\
      -o /tmp/bench_models -ldl -lm -lpthread
  gcc \$F bench/bench_gemm.c kernels/*.c kernels/cpu/*.c -o /tmp/bench_gemm -ldl -lm -lpthread
  BENCH_MODELS=/tmp/bench_models BENCH_GEMM=/tmp/bench_gemm bench/run.sh
EOF
        exit 2
    fi
done

echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "host: $(uname -srm), $(nproc) CPUs"
lscpu | grep -E '^(Model name|Thread\(s\) per core|Core\(s\) per socket|L2 cache|L3 cache)' | sed 's/  */ /'
echo "OPENBLAS_CORETYPE in environment: ${OPENBLAS_CORETYPE:-unset}"
echo "load before: $(uptime)"
echo

median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "nan"; else print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

declare -A ours torch cfg
for t in $threads; do
    echo "== threads $t =="
    echo "-- bench_gemm --threads $t"
    "$gemm" --threads "$t" --reps "$reps" || echo "bench_gemm failed ($?)"
    for m in mnist transformer; do
        # 1. PyTorch's best configuration (core type x mkldnn x foreach),
        #    unless HG_TORCH_ARGS names one
        if [ -n "${HG_TORCH_ARGS:-}" ]; then
            # shellcheck disable=SC2206
            targs=($HG_TORCH_ARGS)
        else
            echo "-- torch_models.py --threads $t --model $m: configuration search"
            sout=$("$py" "$here/torch_models.py" --threads "$t" --model "$m" \
                      --iters "$iters" --reps 3 --warmup 2 2>&1) ||
                echo "torch_models.py failed"
            # shellcheck disable=SC2001
            echo "$sout" | sed 's/^/  /'
            best=$(echo "$sout" | awk '$1 == "model" && $7 == "best" {print $6}')
            core=$(echo "$best" | sed -n 's/.*core=\([^,]*\).*/\1/p')
            case $core in env:*|"") core="env" ;; esac
            conf=${best#core=*,}
            targs=(--coretype "$core" --config "${conf:-mkldnn=1,foreach=0}")
        fi
        # 2. ours and PyTorch alternately, so that load from other
        #    processes falls on both alike; medians of the repetitions
        echo "-- $m: bench_models and torch_models.py ${targs[*]}, alternating, $reps x $iters steps"
        ov=(); tv=()
        for r in $(seq "$reps"); do
            out=$("$models" --threads "$t" --iters "$iters" --model "$m") ||
                echo "bench_models failed ($?)"
            [ "$r" = 1 ] && echo "$out" | grep '^blas'
            line=$(echo "$out" | grep '^model')
            echo "  ours  $line"
            name=$(echo "$line" | awk '{print $2}')
            ov+=("$(echo "$line" | awk '{print $4}')")
            tl=$("$py" "$here/torch_models.py" --threads "$t" --model "$m" \
                    --iters "$iters" --reps 1 "${targs[@]}" 2>&1 | grep '^model') ||
                echo "torch_models.py failed"
            echo "  torch $tl"
            tv+=("$(echo "$tl" | awk '{print $4}')")
            cfg[$name,$t]=$(echo "$tl" | awk '{print $6}')
        done
        ours[$name,$t]=$(printf '%s\n' "${ov[@]}" | median)
        torch[$name,$t]=$(printf '%s\n' "${tv[@]}" | median)
    done
    echo "load: $(uptime)"
    echo
done

echo "== summary (ms per step, median; ratio = ours / torch, target <= 1.0) =="
printf '%-18s %7s %10s %10s %7s  %s\n' model threads ours_ms torch_ms ratio torch_config
for name in mnist_cnn transformer_layer; do
    for t in $threads; do
        o=${ours[$name,$t]:-nan}; p=${torch[$name,$t]:-nan}
        ratio=$(awk -v o="$o" -v p="$p" 'BEGIN {if (p+0 > 0 && o+0 > 0) printf "%.2f", o/p; else print "nan"}')
        printf '%-18s %7s %10s %10s %7s  %s\n' "$name" "$t" "$o" "$p" "$ratio" "${cfg[$name,$t]:-}"
    done
done
echo "load after: $(uptime)"
exit 0
