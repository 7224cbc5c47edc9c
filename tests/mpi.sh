#!/bin/sh
# mpi.sh - tests/test_mpi under mpirun with 1, 2, 3 and 4 ranks (more ranks
# than cores: --oversubscribe).  SKIP (77) when built without MPI or when
# mpirun is missing.  Open MPI refuses root unless told: as root we say so
# (OMPI_ALLOW_RUN_AS_ROOT*; MPICH does not care).
set -u
B=${HG_BUILDDIR:-.}
T=$B/tests/test_mpi
if ! grep -q '^#define HG_HAVE_MPI 1' "$B/config.h" 2>/dev/null; then
    echo "SKIP: built without MPI (configure found no mpicc)"
    exit 77
fi
MPIRUN=${MPIRUN:-mpirun}
if ! command -v "$MPIRUN" >/dev/null 2>&1; then
    echo "SKIP: $MPIRUN not found"
    exit 77
fi
if [ "$(id -u)" = 0 ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
# Open MPI's components (dlopened, unloaded at exit) leak by design; the
# sanitizer build keeps its other checks under mpirun
if [ "${HG_ASAN:-0}" = 1 ]; then
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    export ASAN_OPTIONS
fi
over=
# Open MPI counts slots (cores); MPICH does not know the option
if "$MPIRUN" --version 2>&1 | grep -q "Open MPI"; then
    over=--oversubscribe
fi
fail=0
for np in 1 2 3 4; do
    echo "== mpirun -np $np"
    # shellcheck disable=SC2086
    if command -v timeout >/dev/null 2>&1; then
        timeout 300 "$MPIRUN" $over -np $np "$T"
    else
        "$MPIRUN" $over -np $np "$T"
    fi
    rc=$?
    if [ $rc != 0 ]; then
        echo "FAIL: $np ranks: exit $rc"
        fail=1
    fi
done
exit $fail
