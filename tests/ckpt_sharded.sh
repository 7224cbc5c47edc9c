#!/bin/sh
# Sharded checkpoints (--save-sharded, docs/distributed.md), with real
# hgtrain runs on Fashion-MNIST (mnist task, forked CPU workers) and on the
# translation corpus of tests/data:
#  a. 3 ranks write checkpoint_last.h5 (metadata and index, no tensors)
#     and one shard per rank; the shards' parameters and optimizer state
#     are disjoint and together the model's; the tensors are bitwise those
#     of the same run saving one file (ckpt_cmp reads the sharded form);
#     an older update checkpoint pruned by --keep-interval-updates takes
#     its shards with it; a stale shard .tmp and shards that no checkpoint
#     lists go at the next start, the listed ones stay;
#  b. resumed from it (3 ranks, sharded again) to 20 updates == straight
#     to 20, bitwise, and the previous save's shards are gone; resumed on
#     2 ranks (plain saving) and on 1 rank (sharded) == the same resumes
#     from the one-file checkpoint, bitwise;
#  c. hgtrain generate reads a sharded translation checkpoint: the same
#     translations as from the one-file checkpoint of the same run;
#  d. a shard deleted, truncated or corrupted: resume, generate and
#     ckpt_cmp fail naming the shard file, with an exit status (no
#     signal); a main file whose shards are all gone too;
#  e. without the option: one file, as before (no shards, /params and
#     /optimizer in it);
#  f. hgtrain merge-checkpoint: the sharded checkpoint as one ordinary
#     (version 2) file with the same tensors, which resumes like the
#     sharded one; a broken shard or an unsharded input is refused;
#  g. h5py (where a python3 has it): docs/distributed.md's snippet reads
#     the shards' parameters, equal to the one-file checkpoint's;
#  h. a full disk (a tmpfs, where mounting is allowed) during a sharded
#     save: every rank fails with an exit status naming the shard that
#     did not fit, no .tmp and no new shard left, the previous checkpoint
#     untouched and loadable.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPRE=${HGPREPROCESS:-$B/hgpreprocess}
CMP=${CKPT_CMP:-$B/tests/ckpt_cmp}
SRC=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$SRC/train-images-idx3-ubyte.gz" ]; then
    echo "SKIP: no Fashion-MNIST at $SRC (Debian package dataset-fashion-mnist)"
    exit 77
fi
if ! command -v h5ls >/dev/null 2>&1; then
    echo "SKIP: no h5ls (hdf5-tools)"
    exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'umount "$tmp/full" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

"$HGPRE" images --fashion-mnist "$SRC" --out "$tmp/fm" >"$tmp/pre.log" 2>&1 ||
    { cat "$tmp/pre.log"; echo "FAIL: hgpreprocess images"; exit 1; }
run() { # save-dir args...
    d=$1
    shift
    "$HGTRAIN" --task mnist --data "$tmp/fm" --valid-subset test --dropout 0 \
        --optimizer sgd --momentum 0.9 --lr 0.01 --seed 5 --log-format json \
        --log-interval 1 --validate-interval 0 --save-dir "$tmp/$d" "$@" \
        >"$tmp/$d.log" 2>&1 || { cat "$tmp/$d.log"; bad "$d: hgtrain exited non-zero"; }
}
W3="--devices cpu:3 --max-sentences-per-rank 48,40,8"
W2="--devices cpu:2 --max-sentences-per-rank 48,48"
W1="--batch-size 96"
if [ "${HG_ASAN:-0}" = 1 ]; then # half the rows: the same code paths, the same tensors
    W3="--devices cpu:3 --max-sentences-per-rank 24,16,8"
    W2="--devices cpu:2 --max-sentences-per-rank 24,24"
    W1="--batch-size 48"
fi
# the tensors of a file: "group/name" per line, sorted
tensors() { # the model's datasets (not the epoch's segment list, /iter_segs)
    h5ls -r "$1" | awk '$2 == "Dataset" && $1 != "/iter_segs" { print $1 }' | sort
}
same() { # a b what: bitwise equal tensors
    "$CMP" "$1" "$2" 0 >"$tmp/cmp" 2>&1 || { cat "$tmp/cmp"; bad "$3"; }
}
shards() { ls "$1" | grep "^$2\.[0-9a-f]*\.shard[0-9]*-of-[0-9]*\$"; }

# ------------------------------------------------ e. the default: one file
run u3 $W3 --max-update 10 --save-interval-updates 4
[ -z "$(ls "$tmp/u3" | grep shard)" ] || bad "no --save-sharded: shard files written"
tensors "$tmp/u3/checkpoint_last.h5" >"$tmp/all"
grep -q '^/params/conv1.weight$' "$tmp/all" && grep -q '^/optimizer/conv1.weight.momentum_buffer$' "$tmp/all" ||
    bad "no --save-sharded: checkpoint_last.h5 does not hold /params and /optimizer"

# --------------------------------------------------- a. 3 ranks, 3 shards
run sh3 $W3 --max-update 10 --save-sharded --save-interval-updates 4 --keep-interval-updates 1
main="$tmp/sh3/checkpoint_last.h5"
[ -z "$(tensors "$main")" ] || bad "sharded: the main file holds tensors"
[ "$(shards "$tmp/sh3" checkpoint_last.h5 | wc -l)" = 3 ] ||
    { ls -l "$tmp/sh3"; bad "sharded: want 3 shards of checkpoint_last.h5"; }
for k in 0 1 2; do
    f=$(ls "$tmp/sh3"/checkpoint_last.h5.*.shard$k-of-3 2>/dev/null)
    [ -n "$f" ] && tensors "$f" >"$tmp/t$k" && [ -s "$tmp/t$k" ] || bad "sharded: shard $k missing or empty"
done
# balanced by bytes, largest first onto the least-loaded rank: fc1.weight
# (1179648 floats) to rank 0, conv2.weight (18432) to rank 1, the rest to 2
params() { grep '^/params/' "$1" | sed 's|^/params/||' | tr '\n' ' '; }
[ "$(params "$tmp/t0")" = "fc1.weight " ] && [ "$(params "$tmp/t1")" = "conv2.weight " ] &&
    [ "$(params "$tmp/t2")" = "conv1.bias conv1.weight conv2.bias fc1.bias fc2.bias fc2.weight " ] ||
    bad "sharded: not the greedy split: $(params "$tmp/t0")| $(params "$tmp/t1")| $(params "$tmp/t2")"
sort "$tmp/t0" "$tmp/t1" "$tmp/t2" >"$tmp/union"
[ -z "$(uniq -d "$tmp/union")" ] || bad "sharded: a tensor in two shards: $(uniq -d "$tmp/union")"
cmp -s "$tmp/union" "$tmp/all" || { diff "$tmp/union" "$tmp/all"; bad "sharded: the shards' union is not the model"; }
# every parameter's optimizer state is in its parameter's shard
for k in 0 1 2; do
    sed -n 's|^/optimizer/\(.*\)\.momentum_buffer$|/params/\1|p' "$tmp/t$k" | while read -r p; do
        grep -qx "$p" "$tmp/t$k" || echo "$p"
    done >"$tmp/stray"
    [ ! -s "$tmp/stray" ] || bad "shard $k: state without its parameter: $(cat "$tmp/stray")"
done
same "$main" "$tmp/u3/checkpoint_last.h5" "sharded: tensors differ from the one-file save"
[ ! -e "$tmp/sh3/checkpoint_1_4.h5" ] && [ -z "$(shards "$tmp/sh3" checkpoint_1_4.h5)" ] ||
    bad "--keep-interval-updates 1: checkpoint_1_4.h5 or its shards left"
[ "$(shards "$tmp/sh3" checkpoint_1_8.h5 | wc -l)" = 3 ] || bad "checkpoint_1_8.h5: want 3 shards"
for d in sh3b sh2 sh1 bad1 bad2 bad3 bad4; do cp -r "$tmp/sh3" "$tmp/$d"; done
for d in u3b u2 u1; do cp -r "$tmp/u3" "$tmp/$d"; done

# ------------------------------------------------------------- b. resume
old=$(shards "$tmp/sh3b" checkpoint_last.h5)
stale="$tmp/sh3b/checkpoint_last.h5.0badf00d.shard1-of-3.tmp"
: >"$stale"
# shards no checkpoint lists: of a name that is not there, or not in its index
orphans="$tmp/sh3b/checkpoint_last.h5.0badf00d.shard0-of-3 $tmp/sh3b/checkpoint7.h5.12345678.shard0-of-1"
for f in $orphans; do cp "$tmp/sh3b/$(cd "$tmp/sh3b" && ls checkpoint_last.h5.*.shard2-of-3)" "$f"; done
kept=$(shards "$tmp/sh3b" checkpoint_1_8.h5)
run sh3b $W3 --max-update 20 --save-sharded
grep -q 'loaded .*checkpoint_last.h5: epoch 1, step 10, 10 updates' "$tmp/sh3b.log" ||
    bad "sharded resume did not load the 10-update checkpoint"
[ ! -e "$stale" ] && grep -q "removed $stale" "$tmp/sh3b.log" || bad "stale shard .tmp not removed"
for f in $orphans; do
    [ ! -e "$f" ] && grep -q "removed $f (a shard of no checkpoint)" "$tmp/sh3b.log" ||
        bad "orphan shard $f not removed and reported"
done
for f in $kept; do [ -e "$tmp/sh3b/$f" ] || bad "checkpoint_1_8.h5's shard $f removed"; done
[ -n "$kept" ] || bad "no shards of checkpoint_1_8.h5 to keep"
for f in $old; do [ ! -e "$tmp/sh3b/$f" ] || bad "the previous save's shard $f is left"; done
[ "$(shards "$tmp/sh3b" checkpoint_last.h5 | wc -l)" = 3 ] || bad "resumed: want 3 new shards"
run s3 $W3 --max-update 20
same "$tmp/sh3b/checkpoint_last.h5" "$tmp/s3/checkpoint_last.h5" \
    "3 ranks: resumed from shards differs from the straight run"
# other world sizes, plain and sharded saving, against the one-file resume
run sh2 $W2 --max-update 20
run u2 $W2 --max-update 20
grep -q 'loaded .*10 updates' "$tmp/sh2.log" || bad "2 ranks: no resume from the shards"
[ -z "$(shards "$tmp/sh2" checkpoint_last.h5)" ] || bad "2 ranks, plain save: the old shards are left"
same "$tmp/sh2/checkpoint_last.h5" "$tmp/u2/checkpoint_last.h5" \
    "2 ranks: resumed from shards differs from resumed from one file"
run sh1 $W1 --max-update 20 --save-sharded
run u1 $W1 --max-update 20
grep -q 'loaded .*10 updates' "$tmp/sh1.log" || bad "1 rank: no resume from the shards"
[ "$(shards "$tmp/sh1" checkpoint_last.h5 | wc -l)" = 1 ] || bad "1 rank sharded: want 1 shard"
same "$tmp/sh1/checkpoint_last.h5" "$tmp/u1/checkpoint_last.h5" \
    "1 rank: resumed from shards differs from resumed from one file"

# ------------------------------------------------------- f. merge-checkpoint
"$HGTRAIN" merge-checkpoint "$main" "$tmp/merged.h5" >"$tmp/merge.log" 2>&1 ||
    { cat "$tmp/merge.log"; bad "merge-checkpoint failed"; }
tensors "$tmp/merged.h5" | cmp -s - "$tmp/all" || bad "merge-checkpoint: not the model's tensors"
h5dump -a /version "$tmp/merged.h5" 2>/dev/null | grep -q '(0): 2$' || bad "merge-checkpoint: not version 2"
same "$tmp/merged.h5" "$tmp/u3/checkpoint_last.h5" "merge-checkpoint: tensors differ"
cp -r "$tmp/u3" "$tmp/m3"
run m3 $W3 --max-update 20 --restore-file "$tmp/merged.h5"
same "$tmp/m3/checkpoint_last.h5" "$tmp/s3/checkpoint_last.h5" \
    "3 ranks: resumed from the merged file differs from the straight run"
"$HGTRAIN" merge-checkpoint "$tmp/u3/checkpoint_last.h5" "$tmp/m2.h5" >"$tmp/e" 2>&1 &&
    bad "merge-checkpoint of an unsharded checkpoint succeeded"
grep -q 'not a sharded checkpoint' "$tmp/e" || { cat "$tmp/e"; bad "merge-checkpoint: no 'not a sharded checkpoint'"; }

# ------------------------------------------------------------------ g. h5py
py=""
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import h5py, numpy' >/dev/null 2>&1; then
        py=$p
        break
    fi
done
if [ -n "$py" ]; then
    # the snippet as docs/distributed.md has it, run in the save dir
    sed -n '/^```python$/,/^```$/p' "$S/docs/distributed.md" | sed '1d;$d' >"$tmp/snippet.py"
    grep -q 'main\["shards"\]' "$tmp/snippet.py" || bad "h5py: no snippet in docs/distributed.md"
    (cd "$tmp/sh3" && "$py" - "$tmp/u3/checkpoint_last.h5" "$tmp/snippet.py") >"$tmp/py.log" 2>&1 <<'PY' ||
import sys, h5py, numpy
ref, snippet = sys.argv[1:]
g = {}
exec(open(snippet).read(), g)
params = g["params"]
with h5py.File(ref, "r") as f:
    want = f["params"]
    assert sorted(params) == sorted(want), (sorted(params)[:4], sorted(want)[:4])
    for n in want:
        assert numpy.array_equal(params[n], want[n][()]), n
print("h5py: %d parameters" % len(params))
PY
        { cat "$tmp/py.log"; bad "h5py: the documented snippet does not read the shards"; }
else
    echo "note: no python3 with h5py; the h5py snippet is not run"
fi

# ------------------------------------------------- h. a full disk mid-save
mkdir "$tmp/full"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=14m tmpfs "$tmp/full" 2>/dev/null; then
    run full $W3 --max-update 4 --save-sharded
    cp -r "$tmp/full" "$tmp/full.orig"
    "$HGTRAIN" --task mnist --data "$tmp/fm" --valid-subset test --dropout 0 \
        --optimizer sgd --momentum 0.9 --lr 0.01 --seed 5 --validate-interval 0 \
        --save-dir "$tmp/full" $W3 --max-update 8 --save-sharded >"$tmp/ob" 2>&1
    st=$?
    echo "  full disk, 3 ranks sharded: exit $st: $(grep -i 'no space' "$tmp/ob" | head -n 1)"
    [ $st -ne 0 ] && [ $st -lt 128 ] && grep -q 'shard0-of-3\.tmp: .*No space left' "$tmp/ob" ||
        { cat "$tmp/ob"; bad "sharded full disk: exit $st, shard not named"; }
    grep -q 'rank 0 could not write its shard' "$tmp/ob" || bad "sharded full disk: the other ranks do not say why"
    grep -qi 'signal' "$tmp/ob" && bad "sharded full disk: a signal reported"
    ls "$tmp/full" | grep -q '\.tmp$' && bad "sharded full disk: .tmp left"
    [ "$(ls "$tmp/full" | sort)" = "$(ls "$tmp/full.orig" | sort)" ] ||
        { ls "$tmp/full"; bad "sharded full disk: files other than the previous checkpoint's"; }
    for f in $(ls "$tmp/full.orig" | grep -v '^hgtrain.lock$'); do
        cmp -s "$tmp/full/$f" "$tmp/full.orig/$f" || bad "sharded full disk: $f changed"
    done
    "$CMP" "$tmp/full/checkpoint_last.h5" "$tmp/full.orig/checkpoint_last.h5" 0 >"$tmp/cmp" 2>&1 ||
        { cat "$tmp/cmp"; bad "sharded full disk: the previous checkpoint does not load"; }
    umount "$tmp/full"
else
    echo "note: cannot mount a tmpfs here; no sharded full-disk case"
fi

# -------------------------------------------------- d. a shard gone wrong
refused() { # name file what: the resume fails naming file
    n=$1
    "$HGTRAIN" --task mnist --data "$tmp/fm" --valid-subset test --dropout 0 \
        --optimizer sgd --momentum 0.9 --lr 0.01 --seed 5 --validate-interval 0 \
        --save-dir "$tmp/$n" $W3 --max-update 20 >"$tmp/$n.log" 2>&1
    rc=$?
    [ $rc -ne 0 ] && [ $rc -lt 128 ] || { cat "$tmp/$n.log"; bad "$n: exit status $rc, want an error"; }
    grep -q "$2.*$3" "$tmp/$n.log" || { cat "$tmp/$n.log"; bad "$n: no '$3' naming $2"; }
    "$CMP" "$tmp/$n/checkpoint_last.h5" "$tmp/u3/checkpoint_last.h5" 0 >"$tmp/cmp" 2>&1
    [ $? = 2 ] && grep -q "$2" "$tmp/cmp" || { cat "$tmp/cmp"; bad "$n: ckpt_cmp did not name $2"; }
    "$HGTRAIN" merge-checkpoint "$tmp/$n/checkpoint_last.h5" "$tmp/$n.h5" >"$tmp/e" 2>&1
    [ $? = 1 ] && grep -q "$2.*$3" "$tmp/e" && [ ! -e "$tmp/$n.h5" ] ||
        { cat "$tmp/e"; bad "$n: merge-checkpoint did not refuse naming $2"; }
}
f1=$(cd "$tmp/bad1" && ls checkpoint_last.h5.*.shard1-of-3)
rm "$tmp/bad1/$f1"
refused bad1 "$f1" "No such file"
f2=$(cd "$tmp/bad2" && ls checkpoint_last.h5.*.shard2-of-3)
head -c 1000 "$tmp/sh3/$f2" >"$tmp/bad2/$f2"
refused bad2 "$f2" "truncated"
f0=$(cd "$tmp/bad3" && ls checkpoint_last.h5.*.shard0-of-3)
printf '\377\377\377\377' | dd of="$tmp/bad3/$f0" bs=1 seek=600000 conv=notrunc 2>/dev/null
refused bad3 "$f0" "checksum mismatch"
rm "$tmp/bad4"/checkpoint_last.h5.*.shard*
refused bad4 "shard0-of-3" "No such file"

# ------------------------------------------- c. generate, sharded or not
head -n 40 "$S/tests/data/corpus.en" >"$tmp/test.en"
head -n 40 "$S/tests/data/corpus.es" >"$tmp/test.es"
"$HGPRE" translation --source-lang en --target-lang es --trainpref "$S/tests/data/corpus" \
    --validpref "$tmp/test" --testpref "$tmp/test" --destdir "$tmp/mt" --bpe-merges 500 \
    >"$tmp/mtpre.log" 2>&1 || { cat "$tmp/mtpre.log"; echo "FAIL: hgpreprocess translation"; exit 1; }
mt() { # save-dir args...
    d=$1
    shift
    "$HGTRAIN" --task translation --data "$tmp/mt" --source-lang en --target-lang es \
        --arch transformer_tiny --optimizer adam --lr 0.002 --max-tokens 1024 --seed 3 \
        --threads 1 --devices cpu:2 --log-format simple --save-dir "$tmp/$d" --max-update 6 \
        --validate-interval 0 "$@" >"$tmp/$d.log" 2>&1 ||
        { cat "$tmp/$d.log"; bad "$d: translation training"; }
}
gen() { # name checkpoint
    "$HGTRAIN" generate --data "$tmp/mt" --path "$2" --gen-subset test --threads 1 \
        --beam 2 --max-len-b 10 --results-path "$tmp/$1.txt" >"$tmp/$1.log" 2>&1
}
mt mtu
mt mts --save-sharded
[ "$(shards "$tmp/mts" checkpoint_last.h5 | wc -l)" = 2 ] || bad "translation: want 2 shards"
gen gu "$tmp/mtu/checkpoint_last.h5" || { cat "$tmp/gu.log"; bad "generate from one file"; }
gen gs "$tmp/mts/checkpoint_last.h5" || { cat "$tmp/gs.log"; bad "generate from shards"; }
[ "$(wc -l <"$tmp/gs.txt")" = 40 ] && cmp -s "$tmp/gu.txt" "$tmp/gs.txt" ||
    bad "generate: the sharded checkpoint translates differently"
fs=$(cd "$tmp/mts" && ls checkpoint_last.h5.*.shard1-of-2)
rm "$tmp/mts/$fs"
gen gbad "$tmp/mts/checkpoint_last.h5"
rc=$?
[ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q "$fs" "$tmp/gbad.log" ||
    { cat "$tmp/gbad.log"; bad "generate with a shard missing: status $rc, shard not named"; }

[ $fail = 0 ] && echo "ok  sharded checkpoints: layout, resume on 3/2/1 ranks, generate, merge, h5py, broken shards, full disk"
exit $fail
