#!/bin/sh
# The arrows between rooms go one way (docs/architecture.md): every
# #include "ROOM/..." in a room's sources must name the room itself or one
# the table below lets it use.
#
#   trainer -> controller -> {tasks, comm, data} -> graph -> kernels -> base
#   planner: beside the controller (tasks, comm, data, graph, kernels, base)
#
# Prints each include against the arrows with its file and line; exit 1 if
# there is one.
set -u
S=${srcdir:-${HG_SRCDIR:-.}}
allowed() { # room -> rooms it may include (besides itself)
    case $1 in
    base) echo "" ;;
    kernels) echo "base" ;;
    graph) echo "kernels base" ;;
    data) echo "kernels base" ;;
    comm) echo "kernels base" ;;
    tasks) echo "data graph kernels base" ;;
    controller) echo "tasks comm data graph kernels base" ;;
    planner) echo "tasks comm data graph kernels base" ;;
    trainer) echo "controller planner tasks comm data graph kernels base" ;;
    esac
}
fail=0
n=0
for room in base kernels graph data comm tasks controller planner trainer; do
    ok=" $room $(allowed $room) "
    files=$(find "$S/$room" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) 2>/dev/null)
    [ -n "$files" ] || { echo "FAIL: room $room has no sources under $S/$room"; fail=1; continue; }
    for f in $files; do
        n=$((n + 1))
        # shellcheck disable=SC2013
        grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]*/' "$f" |
            sed 's|^\([0-9]*\):[^"]*"\([a-z_]*\)/\([^"]*\)".*|\1 \2 \3|' >"${TMPDIR:-/tmp}/arrows.$$"
        while read -r line to hdr; do
            case "$ok" in
            *" $to "*) ;;
            *)
                echo "FAIL: ${f#"$S"/}:$line: $room includes $to/$hdr (allowed: $(allowed $room))"
                fail=1
                ;;
            esac
        done <"${TMPDIR:-/tmp}/arrows.$$"
    done
done
rm -f "${TMPDIR:-/tmp}/arrows.$$"
[ $n -gt 50 ] || { echo "FAIL: only $n source files seen under $S"; fail=1; }
[ $fail = 0 ] && echo "PASS: $n files, every include goes down the arrows"
exit $fail
