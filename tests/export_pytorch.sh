#!/bin/sh
# scripts/export-pytorch: a translation checkpoint (transformer_tiny, a
# few updates) as a PyTorch state_dict: the same names, shapes and values
# as the checkpoint's /params, no optimizer state; --fairseq wraps it with
# the training options. SKIP (77) without a python3 that has torch and
# h5py (Debian: python3-torch, python3-h5py).
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPRE=${HGPREPROCESS:-$B/hgpreprocess}
# without h5py (an h5py that fails to import, first on the path) the hint
# names pip, not only Debian's packages
if command -v python3 >/dev/null 2>&1; then
    nt=$(mktemp -d) || exit 1
    echo 'raise ImportError("No module named h5py")' >"$nt/h5py.py"
    PYTHONPATH=$nt python3 "$S/scripts/export-pytorch" "$nt/x.h5" "$nt/x.pt" >"$nt/o" 2>&1
    rc=$?
    [ $rc = 1 ] && grep -q "pip install h5py torch" "$nt/o" ||
        { cat "$nt/o"; echo "FAIL: export-pytorch without h5py: exit $rc, no pip hint"; rm -rf "$nt"; exit 1; }
    rm -rf "$nt"
fi
py=""
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch, h5py' >/dev/null 2>&1; then
        py=$p
        break
    fi
done
[ -n "$py" ] || { echo "SKIP: no python3 with torch and h5py"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

head -n 30 "$S/tests/data/corpus.en" >"$tmp/v.en"
head -n 30 "$S/tests/data/corpus.es" >"$tmp/v.es"
"$HGPRE" translation --source-lang en --target-lang es --trainpref "$S/tests/data/corpus" \
    --validpref "$tmp/v" --destdir "$tmp/mt" --bpe-merges 100 >"$tmp/pre.log" 2>&1 ||
    { cat "$tmp/pre.log"; echo "FAIL: hgpreprocess"; exit 1; }
"$HGTRAIN" --task translation --data "$tmp/mt" --source-lang en --target-lang es \
    --arch transformer_tiny --optimizer adam --lr 0.002 --max-tokens 1024 --threads 1 \
    --max-update 3 --validate-interval 0 --save-dir "$tmp/ck" >"$tmp/train.log" 2>&1 ||
    { cat "$tmp/train.log"; echo "FAIL: training"; exit 1; }
ck="$tmp/ck/checkpoint_last.h5"
"$py" "$S/scripts/export-pytorch" "$ck" "$tmp/sd.pt" >"$tmp/ex.log" 2>&1 ||
    { cat "$tmp/ex.log"; bad "export-pytorch"; }
"$py" "$S/scripts/export-pytorch" "$ck" "$tmp/fs.pt" --fairseq >"$tmp/ex2.log" 2>&1 ||
    { cat "$tmp/ex2.log"; bad "export-pytorch --fairseq"; }
"$py" - "$ck" "$tmp/sd.pt" "$tmp/fs.pt" <<'PY' || bad "the state_dict differs from the checkpoint"
import sys, h5py, torch
ck, sd, fs = sys.argv[1:]
sd, fs = torch.load(sd), torch.load(fs)
with h5py.File(ck, "r") as f:
    p = f["params"]
    assert list(sd.keys()) == list(p.keys()), (list(sd)[:5], list(p)[:5])
    for k, t in sd.items():
        assert t.dtype == torch.float32 and tuple(t.shape) == p[k].shape, k
        assert torch.equal(t, torch.from_numpy(p[k][()])), k
assert "encoder.embed_tokens.weight" in sd and "decoder.layers.0.encoder_attn.k_proj.weight" in sd
assert not any("exp_avg" in k for k in sd)
assert set(fs) == {"model", "args"} and "--task translation" in fs["args"]
assert all(torch.equal(fs["model"][k], sd[k]) for k in sd)
print("state_dict: %d tensors" % len(sd))
PY
"$py" "$S/scripts/export-pytorch" "$tmp/nope.h5" "$tmp/x.pt" >"$tmp/e" 2>&1
[ $? -eq 1 ] && grep -q "nope.h5" "$tmp/e" || { cat "$tmp/e"; bad "a missing checkpoint"; }

[ $fail = 0 ] && echo "ok  export_pytorch: state_dict == checkpoint params"
exit $fail
