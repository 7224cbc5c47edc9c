#!/bin/sh
# tests/file_arrows.sh - arrows between the files of one room go one way: from
# the built objects (nm: the global symbols each .o defines and the ones it
# leaves undefined), file a uses file b when a leaves undefined a symbol
# that b defines.  Two files that use each other, or a longer circle, fail
# the test in the rooms of HG_FILE_ARROWS_STRICT (default: every room); in the
# other rooms they are printed as notes.  Run from a build directory
# (HG_BUILDDIR); SKIP (77) without nm or objects.
#
#   HG_FILE_ARROWS_STRICT="planner graph" make check TESTS=tests/file_arrows.sh
set -u
B=${HG_BUILDDIR:-.}
STRICT=${HG_FILE_ARROWS_STRICT:-base kernels graph data comm tasks controller planner trainer}
if ! command -v nm >/dev/null 2>&1; then
    echo "SKIP: no nm"
    exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
nrooms=0
for dir in "$B"/*/; do
    room=$(basename "$dir")
    case $room in tests | bench | fuzz | examples | scripts | docs | m4 | build-aux) continue ;; esac
    # one object per source: libtool's PIC copy (.libs/) when there is one
    find "$dir" -name '*.o' | sort | awk '
        { key = $0; sub(/\.libs\//, "", key)
          if (!(key in seen) || $0 ~ /\/\.libs\//) seen[key] = $0 }
        END { for (k in seen) print seen[k] }' | sort >"$tmp/objs"
    [ -s "$tmp/objs" ] || continue
    nrooms=$((nrooms + 1))
    : >"$tmp/syms"
    while read -r o; do
        name=${o#"$dir"}
        name=$(echo "$name" | sed 's|\.libs/||; s|\.o$|.c|')
        nm -g "$o" 2>/dev/null | awk -v f="$name" '
            $1 == "U" { print f, "U", $2; next }
            NF == 3 && $2 ~ /^[TDBRC]$/ { print f, "D", $3 }' >>"$tmp/syms"
    done <"$tmp/objs"
    # edges "a b symbol": a uses b's symbol
    awk '$2 == "D" { def[$3] = def[$3] " " $1; next }
         $2 == "U" { use[$1 SUBSEP $3] = 1 }
         END { for (k in use) { split(k, p, SUBSEP); n = split(def[p[2]], d, " ")
                   for (i = 1; i <= n; i++) if (d[i] != p[1]) print p[1], d[i], p[2] } }' \
        "$tmp/syms" | sort -u >"$tmp/edges"
    # pairs that use each other, then circles: files left after removing,
    # again and again, the files that use no file left or that no file
    # left uses
    awk -v room="$room" '
        { e[$1 SUBSEP $2] = e[$1 SUBSEP $2] (e[$1 SUBSEP $2] == "" ? "" : ",") $3
          f[$1] = 1; f[$2] = 1 }
        END {
            for (k in e) { split(k, p, SUBSEP)
                if (p[1] < p[2] && ((p[2] SUBSEP p[1]) in e))
                    printf "%s: %s <-> %s: %s uses %s; %s uses %s\n", room, p[1], p[2],
                        p[1], e[k], p[2], e[p[2] SUBSEP p[1]] }
            for (changed = 1; changed;) {
                changed = 0
                for (a in f) { out = 0; in_ = 0
                    for (k in e) { split(k, p, SUBSEP)
                        if (p[1] == a && p[2] != a && (p[2] in f)) out = 1
                        if (p[2] == a && p[1] != a && (p[1] in f)) in_ = 1 }
                    if (!out || !in_) { delete f[a]; changed = 1 } }
            }
            left = ""
            for (a in f) left = left " " a
            if (left != "") printf "%s: files in or between circles:%s\n", room, left
        }' "$tmp/edges" | sort >"$tmp/found"
    if [ -s "$tmp/found" ]; then
        case " $STRICT " in
        *" $room "*)
            sed 's/^/FAIL: /' "$tmp/found"
            fail=1
            ;;
        *) sed 's/^/note: /' "$tmp/found" ;;
        esac
    else
        echo "ok: $room: $(wc -l <"$tmp/objs") files, $(wc -l <"$tmp/edges") uses, one way"
    fi
done
if [ $nrooms -eq 0 ]; then
    echo "SKIP: no objects under $B (run from a build directory)"
    exit 77
fi
[ $fail -eq 0 ] && echo "PASS: file arrows (strict: $STRICT)"
exit $fail
