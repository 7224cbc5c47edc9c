#!/bin/sh
# Fuzz targets, one per parser (tests/fuzz/*.c, tests/fuzz_idx.c,
# tests/fuzz_store.c), built with clang's libFuzzer, ASan and UBSan from
# the parser's own sources (instrumented) and the built libhgtrain for the
# rest, then each run for HG_FUZZ_SECONDS (default 3) from its committed
# corpus (tests/fuzz/corpus/NAME/). A crash, a sanitizer report or an
# abort() of a target's own check fails the test and leaves the input in
# the log. SKIP (77) without clang and libFuzzer, and in the ASan build
# (gcc's ASan runtime in libhgtrain and clang's cannot share a process).
#
#   HG_FUZZ_SECONDS=60 HG_FUZZ_ONLY="cluster strategy" make check TESTS=tests/fuzz.sh
#
# New inputs are not added to the committed corpus by themselves: run with
# HG_FUZZ_KEEP=DIR to keep them and copy the useful ones into
# tests/fuzz/corpus/NAME/.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
CC=${HG_FUZZ_CC:-clang}
T=${HG_FUZZ_SECONDS:-3}
if [ "${HG_ASAN:-0}" = 1 ]; then
    echo "SKIP: the ASan build (two sanitizer runtimes in one process)"
    exit 77
fi
if ! command -v "$CC" >/dev/null 2>&1; then
    echo "SKIP: no $CC (apt-get install clang libclang-rt-14-dev)"
    exit 77
fi
if [ ! -f "$B/config.h" ] || [ ! -f "$B/.libs/libhgtrain.so" ]; then
    echo "SKIP: no shared libhgtrain in $B"
    exit 77
fi
tmp=${HG_FUZZ_KEEP:-$(mktemp -d)} || exit 1
mkdir -p "$tmp"
[ -n "${HG_FUZZ_KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return (int)(d && n > 1 && 0); }\n' \
    >"$tmp/probe.c"
if ! "$CC" -fsanitize=fuzzer,address "$tmp/probe.c" -o "$tmp/probe" >"$tmp/probe.log" 2>&1; then
    echo "SKIP: $CC cannot build libFuzzer targets (libclang-rt-14-dev?)"
    sed -n 1,3p "$tmp/probe.log"
    exit 77
fi
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# name: entry point and the parser sources it instruments
targets="
idx:tests/fuzz_idx.c data/idx.c
store:tests/fuzz_store.c comm/store.c
text:tests/fuzz/fuzz_text.c data/text.c
bpe:tests/fuzz/fuzz_bpe.c data/bpe.c data/text.c
dict:tests/fuzz/fuzz_dict.c data/dict.c data/text.c
cluster:tests/fuzz/fuzz_cluster.c planner/cluster.c planner/cfg.c
profile:tests/fuzz/fuzz_profile.c planner/profile.c planner/cluster.c planner/cfg.c
strategy:tests/fuzz/fuzz_strategy.c planner/strategy.c planner/cluster.c planner/cfg.c planner/lower.c
shard:tests/fuzz/fuzz_shard.c data/dataset.c
"
mkdir -p "$B/fuzz"
echo "$targets" | while IFS=: read -r name srcs; do
    [ -n "$name" ] || continue
    case " ${HG_FUZZ_ONLY:-$name} " in *" $name "*) ;; *) continue ;; esac
    exe=$B/fuzz/fuzz_$name
    set --
    for f in $srcs; do set -- "$@" "$S/$f"; done
    # shellcheck disable=SC2086
    if ! "$CC" -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined \
        -fno-sanitize-recover=undefined -include "$B/config.h" -I"$S" \
        ${HG_HDF5_CPPFLAGS:-} "$@" -L"$B/.libs" -lhgtrain -Wl,-rpath,"$B/.libs" \
        ${HG_HDF5_LIBS:-} ${HG_LIBCONFIG_LIBS:--lconfig} -lz -lm -lpthread \
        -o "$exe" >"$tmp/$name.build" 2>&1; then
        cat "$tmp/$name.build"
        bad "$name: build"
        continue
    fi
    mkdir -p "$tmp/$name"
    # HDF5 leaks on the error paths of corrupt files: no leak check there
    leaks=1
    [ "$name" = shard ] && leaks=0
    LSAN_OPTIONS=suppressions=$S/tests/fuzz/lsan.supp:print_suppressions=0 \
        ASAN_OPTIONS=detect_leaks=$leaks${ASAN_OPTIONS:+:$ASAN_OPTIONS} TMPDIR=$tmp "$exe" -max_total_time="$T" -timeout=20 -rss_limit_mb=2048 -max_len=16384 \
        -detect_leaks=$leaks -artifact_prefix="$tmp/$name-" "$tmp/$name" \
        "$S/tests/fuzz/corpus/$name" >"$tmp/$name.log" 2>&1
    rc=$?
    runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$tmp/$name.log")
    if [ $rc -ne 0 ]; then
        tail -n 40 "$tmp/$name.log"
        bad "$name: exit $rc after ${runs:-?} runs"
    else
        echo "ok: fuzz_$name: ${runs:-?} runs in ${T}s"
    fi
done >"$tmp/summary" 2>&1
cat "$tmp/summary"
grep -q '^FAIL' "$tmp/summary" && fail=1
[ $fail -eq 0 ] && echo "PASS: fuzz"
exit $fail
