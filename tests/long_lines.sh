#!/bin/sh
# Integration test: reading a libconfig file is linear in its size
# (hg_config_read_file, base/hg_base.h).  libconfig's own file reader took
# time quadratic in a line's length (a 4 MiB comment line: 10-25 s).  A
# 4 MiB comment line before an error in a cluster file (hgplan --cluster),
# a profile (hgplan --profile), an hgtrain -c config file and a strategy
# file (hgplan --strategy) must reach that error, named with its line, in
# under LIMIT s; a NUL byte is an error at its line, not the end of the
# file.  The times go to this test's log.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPLAN=${HGPLAN:-$B/hgplan}
EX=$S/examples/clusters
LIMIT=2 # seconds
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
now() { date +%s.%N; }

long() { # FILE: a 4 MiB comment line
    { printf '# '; head -c 4194304 /dev/zero | tr '\0' x; echo; } >"$1"
}
# timed WHAT PATTERN CMD...: CMD fails with PATTERN in its output within LIMIT s
timed() {
    what=$1 pat=$2
    shift 2
    t0=$(now)
    timeout 60 "$@" >"$tmp/out" 2>&1
    rc=$?
    dt=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
    echo "time: $what: ${dt}s (exit $rc; limit ${LIMIT}s)"
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "$pat" "$tmp/out" ||
        { head -c 600 "$tmp/out"; echo; bad "$what: exit $rc, not the expected error"; }
    awk -v t="$dt" -v l="$LIMIT" 'BEGIN { exit !(t <= l) }' || bad "$what: ${dt}s"
}

long "$tmp/c.cfg"
cat "$EX/local.cfg" >>"$tmp/c.cfg"
echo 'bogus_key = 1;' >>"$tmp/c.cfg"
n=$(wc -l <"$tmp/c.cfg")
timed "cluster file, a 4 MiB line" "c.cfg:$n: cluster: unknown key 'bogus_key'" \
    "$HGPLAN" --cluster "$tmp/c.cfg"

long "$tmp/p.cfg"
printf 'version = 1;\nbogus = 1;\n' >>"$tmp/p.cfg"
timed "profile, a 4 MiB line" "p.cfg:3: profile: unknown key 'bogus'" \
    "$HGPLAN" --cluster "$EX/local.cfg" --profile "$tmp/p.cfg"

long "$tmp/t.cfg"
echo 'bogus-option = 1;' >>"$tmp/t.cfg"
timed "hgtrain -c, a 4 MiB line" "t.cfg:2: unknown key 'bogus-option'" "$HGTRAIN" -c "$tmp/t.cfg"

if grep -q 'hg_config_read_file' "$S/planner/strategy.c"; then
    long "$tmp/s.cfg"
    printf 'version = 1;\nbogus = 1;\n' >>"$tmp/s.cfg"
    timed "strategy file, a 4 MiB line" "s.cfg:[0-9]*:" \
        "$HGPLAN" --model vgg19 --batch 64 --cluster "$EX/heterog-8gpu.cfg" --strategy "$tmp/s.cfg"
else
    echo "note: planner/strategy.c reads with libconfig's own reader: strategy files not timed"
fi

# a NUL byte: an error at its line (config_read_string would stop there)
printf '# a comment\nname = "x";\n\001\000 junk\n' >"$tmp/nul.cfg"
cat "$EX/local.cfg" >>"$tmp/nul.cfg"
"$HGPLAN" --cluster "$tmp/nul.cfg" >"$tmp/out" 2>&1 && bad "a NUL byte accepted"
grep -q "nul.cfg:3: a NUL byte" "$tmp/out" || { cat "$tmp/out"; bad "a NUL byte not named at line 3"; }
# unreadable: as before
"$HGPLAN" --cluster "$tmp/none.cfg" >"$tmp/out" 2>&1
grep -q "none.cfg: cannot read the cluster file" "$tmp/out" || { cat "$tmp/out"; bad "a missing file"; }

[ $fail = 0 ] && echo PASS
exit $fail
