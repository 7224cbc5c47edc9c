#!/bin/sh
# make install (into a DESTDIR) puts beside the programs, under
# PREFIX/share/hgtrain, what users run and read: plot-log, export-pytorch,
# pretrain-policy and the pretrained policy, the Slurm script, the example
# cluster files, the example plug-in source and the docs; the installed
# plug-in source builds against the installed headers; the installed
# programs answer --version; the installed hgplan places with the installed
# policy.
set -u
B=${HG_BUILDDIR:-.}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

prefix=$(sed -n 's/^prefix = //p' "$B/Makefile")
${MAKE:-make} -C "$B" install DESTDIR="$tmp/inst" >"$tmp/install.log" 2>&1 ||
    { tail -n 30 "$tmp/install.log"; echo "FAIL: make install"; exit 1; }
root="$tmp/inst$prefix"
share="$root/share/hgtrain"
for f in plot-log export-pytorch pretrain-policy slurm/hgtrain.sbatch; do
    [ -x "$share/$f" ] || bad "$f not installed (executable) in $share"
done
for f in clusters/local.cfg clusters/heterog-8gpu.cfg clusters/hetseq-4node.cfg policy/heterog.h5 \
    examples/xor_task.c doc/README.md doc/tasks.md doc/distributed.md doc/preprocess.md; do
    [ -s "$share/$f" ] || bad "$f not installed in $share"
done
for p in hgtrain hgpreprocess hgscore hgplan; do
    LD_LIBRARY_PATH="$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$root/bin/$p" --version >"$tmp/v" 2>&1 && grep -q '[0-9]' "$tmp/v" ||
        { cat "$tmp/v"; bad "installed $p --version"; }
done
LD_LIBRARY_PATH="$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$root/bin/hgplan" \
    --model transformer --batch 8 --seq-len 32 --groups 8 --cluster "$share/clusters/heterog-8gpu.cfg" \
    --search gnn --policy "$share/policy/heterog.h5" --place-seconds 0 >"$tmp/gnn" 2>&1 &&
    grep -q '^  gnn ' "$tmp/gnn" || { cat "$tmp/gnn"; bad "installed hgplan with the installed policy"; }
if command -v "${CC:-cc}" >/dev/null 2>&1; then
    ${CC:-cc} -std=c11 -O0 -shared -fPIC -I"$root/include/hgtrain" \
        "$share/examples/xor_task.c" -o "$tmp/xor.so" >"$tmp/cc.log" 2>&1 ||
        { cat "$tmp/cc.log"; bad "the installed plug-in source does not build"; }
fi

[ $fail = 0 ] && echo "ok  install: share/hgtrain holds plot-log, export-pytorch, pretrain-policy, the policy, Slurm, clusters, plug-in, docs"
exit $fail
