#!/bin/sh
# valgrind.sh [PROGRAM [ARGS...]] - runs an end-to-end test under memcheck.
# Fails on any memory error or definite leak.  Default: tests/test_graph.
# SKIP (77) when valgrind is missing or in sanitizer builds (HG_ASAN=1).
if [ "${HG_ASAN:-0}" = 1 ]; then
    echo "SKIP: sanitizer build (valgrind and ASan do not mix)"
    exit 77
fi
if ! command -v valgrind >/dev/null 2>&1; then
    echo "SKIP: valgrind not installed"
    exit 77
fi
if [ $# -gt 0 ]; then
    prog=$1
    shift
else
    prog=tests/test_graph
fi
if [ ! -x "$prog" ]; then
    echo "ERROR: $prog not built" >&2
    exit 99
fi

# A libtool wrapper script must be run through libtool.
run=
if head -c 2 "$prog" | grep -q '#!'; then
    run="${LIBTOOL:-libtool} --mode=execute"
fi
# valgrind emulates no AVX-512: do not force OpenBLAS onto SkylakeX kernels.
unset OPENBLAS_CORETYPE
: "${OMP_NUM_THREADS:=2}"
export OMP_NUM_THREADS

supp="${HG_SRCDIR:-$(dirname "$0")/..}/tests/valgrind.supp"
exec $run valgrind -q --error-exitcode=1 --leak-check=full \
    --suppressions="$supp" \
    --errors-for-leak-kinds=definite --show-leak-kinds=definite \
    "$prog" "$@"
