#!/bin/sh
# Integration test: hgtrain and hgplan build the same training graph, node
# for node (tasks/recipe.c, the one recipe a strategy file's op ids
# index).  For mnist, bert and translation under several option sets
# (optimizers, the default one included, dropout on and off, label
# smoothing, model shapes), the
# graph hgtrain's controller runs on one rank (--export-graph, after
# everything the trainer and the controller do to it) and the graph
# hgplan --task plans for the same batch and length must list the same
# tensors and ops, ids, kinds, names, phases, inputs and outputs.  With a
# recomputing strategy on one device the controller's graph is hgplan's
# ops, in order, then the recomputing copies (which the backward reads).
set -u
. "${HG_SRCDIR:-.}/tests/strategy-common.sh"
lm_data 400 lm400
mt_data
n=0
# the tensors and ops of a graph's JSON, without the header (its model
# name) and the costs (the symbol values are the ops' shapes)
body() { sed -n '/^"tensors"/,$p' "$1" | sed 's/, "flops": [^}]*}/}/'; }
same() { # name task data batch hgtrain-and-hgplan-args...
    nm=$1 t=$2 d=$3 b=$4
    shift 4
    "$HGTRAIN" --task "$t" --data "$d" --max-sentences "$b" --save-dir "$tmp/s-$nm" \
        --threads 1 --validate-interval 0 --export-graph "$tmp/t-$nm.json" "$@" >"$tmp/t-$nm.log" 2>&1 ||
        { cat "$tmp/t-$nm.log"; bad "$nm: hgtrain --export-graph"; return; }
    len=$(sed -n 's/.*the train graph, [0-9]* ops (batch [0-9]*, length \([0-9]*\)).*/\1/p' \
        "$tmp/t-$nm.log")
    [ -n "$len" ] || { cat "$tmp/t-$nm.log"; bad "$nm: no length logged"; return; }
    "$HGPLAN" --task "$t" --data "$d" --batch "$b" --seq-len "$len" \
        --export-graph "$tmp/p-$nm.json" "$@" >"$tmp/p-$nm.log" 2>&1 ||
        { cat "$tmp/p-$nm.log"; bad "$nm: hgplan --export-graph"; return; }
    body "$tmp/t-$nm.json" >"$tmp/tb"
    body "$tmp/p-$nm.json" >"$tmp/pb"
    ops=$(grep -c '"kind": "' "$tmp/pb")
    if cmp -s "$tmp/tb" "$tmp/pb" && [ "$ops" -gt 10 ]; then
        echo "ok: $nm: the same $ops lines of tensors and ops (batch $b, length $len)"
        n=$((n + 1))
    else
        diff "$tmp/tb" "$tmp/pb" | head -n 6
        bad "$nm: hgtrain's and hgplan's graphs differ"
    fi
}
same mnist-sgd mnist "$tmp/fm" 32 --optimizer sgd --dropout 0
same mnist-adam-drop mnist "$tmp/fm" 24 --optimizer adam --dropout 0.2
same mnist-adadelta mnist "$tmp/fm" 16 --optimizer adadelta
# no --optimizer: hgtrain's and hgplan --task's default is one (sgd)
same mnist-defaults mnist "$tmp/fm" 16
same bert-adam bert "$tmp/lm400" 8 --optimizer adam --dropout 0 --bert-layers 1
same bert-adamw-drop bert "$tmp/lm400" 8 --optimizer adamw --dropout 0.1 --bert-layers 2
# shellcheck disable=SC2086 # $TA is a list of options
same mt-adam translation "$tmp/mt" 8 --optimizer adam $TA
# shellcheck disable=SC2086
same mt-drop-ls translation "$tmp/mt" 8 --optimizer adamw $TA --dropout 0.1 --label-smoothing 0.2
[ "$n" = 8 ] || bad "$n of 8 option sets compared"

# recomputation: a one-device strategy whose group recomputes
cat >"$tmp/c1.cfg" <<'CFG'
name = "one";
nodes = ( { name = "localhost";
    devices = ( { kind = "cpu"; model = "fast"; count = 1; memory = "4GiB";
                  peak_flops = "200GFLOP/s"; memory_bandwidth = "20GB/s"; speed = 2.0; } );
    intra = { kind = "shm"; bandwidth = "12GB/s"; latency = "1us"; }; } );
CFG
"$HGPLAN" --task mnist --data "$tmp/fm" --batch 32 --optimizer sgd --dropout 0 \
    --cluster "$tmp/c1.cfg" --search baselines --groups 4 --baseline EV-AR \
    --out "$tmp/s1.cfg" --export-graph "$tmp/p-rc.json" >"$tmp/p-rc.log" 2>&1 ||
    { cat "$tmp/p-rc.log"; bad "hgplan one device"; }
sed 's/mode = "\([dm]p\)";/mode = "\1"; recompute = true;/' "$tmp/s1.cfg" >"$tmp/s1r.cfg"
grep -q 'recompute = true' "$tmp/s1r.cfg" || bad "s1r.cfg: the edit did not apply"
"$HGTRAIN" --task mnist --data "$tmp/fm" --max-sentences 32 --optimizer sgd --dropout 0 \
    --save-dir "$tmp/s-rc" --threads 1 --validate-interval 0 --cluster-file "$tmp/c1.cfg" --strategy "$tmp/s1r.cfg" \
    --export-graph "$tmp/t-rc.json" >"$tmp/t-rc.log" 2>&1 ||
    { cat "$tmp/t-rc.log"; bad "hgtrain --strategy with recomputation --export-graph"; }
ops() { sed -n '/^"ops"/,$p' "$1" | grep '"kind": "' | sed 's/"inputs": \[[^]]*\], //; s/, "flops": .*//'; }
ops "$tmp/p-rc.json" >"$tmp/po"
ops "$tmp/t-rc.json" >"$tmp/to"
np=$(wc -l <"$tmp/po") nt=$(wc -l <"$tmp/to")
if [ "$np" -gt 10 ] && [ "$nt" -gt "$np" ] && head -n "$np" "$tmp/to" | cmp -s - "$tmp/po"; then
    echo "ok: recomputation: hgplan's $np ops, then $((nt - np)) recomputing copies"
else
    diff "$tmp/to" "$tmp/po" | head -n 6
    bad "recomputation: hgtrain's graph is not hgplan's ops then the copies ($nt vs $np)"
fi
[ $fail = 0 ] && echo "PASS: graph_recipe"
exit $fail
