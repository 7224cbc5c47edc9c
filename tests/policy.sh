#!/bin/sh
# The learned placement policy through hgplan (planner/policy_*.c): a short
# --train-policy (a fixed number of updates) twice with one seed gives the
# same file byte for byte (with or without --log-json, whose reward line
# scripts/plot-log draws), another seed another; --search gnn places at
# once (the greedy placement, then the policy's moves: never slower than
# the greedy one alone, --place-seconds 0) and writes a strategy that
# --strategy reads back; gnn+mcmc is never
# slower than gnn or the best baseline; --finetune places zero-shot, trains on the graph,
# places again and keeps the faster, and --policy-out
# writes what it trained (the kept policy's updates + 20; --eval-every
# keeps the best evaluated, 0 the last), while an update that leaves a
# weight NaN stops it naming the tensor and writes nothing (nor does
# --train-policy); scripts/pretrain-policy's file
# and the committed examples/policy/heterog.h5 place; a policy file that
# is not one, truncated, or missing is refused with exit 1 naming it (no
# signal); usage errors exit 2.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
HGPLAN=${HGPLAN:-$B/hgplan}
EX=$S/examples/clusters
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# the fastest baseline's row that fits (awk: in b)
BEST='$1 ~ /^((EV|CP)-(PS|AR)|MP)$/ && $3 == "s" && !/OOM/ && (b == "" || $2 + 0 < b + 0) { b = $2 }'
not_above_best() { # gnn output: its gnn row no slower than its best baseline
    awk '$1 == "gnn" { g = $2 } '"$BEST"'
         END { exit !(g != "" && b != "" && g + 0 <= b + 0) }' "$1"
}
train() { # seed out [options]
    sd=$1
    out=$2
    shift 2
    "$HGPLAN" --train-policy --models mobilenet_v2,transformer --clusters "$EX/heterog-8gpu.cfg" \
        --perturb 1 --batch 8 --seq-len 32 --groups 16 --policy-steps 30 --samples 4 \
        --eval-every 10 --seed "$sd" --out "$out" "$@" >"$tmp/train.out" 2>&1
}
train 3 "$tmp/a.h5" --log-json "$tmp/r.json" || { cat "$tmp/train.out"; bad "--train-policy"; }
grep -q 'trained: 30 updates' "$tmp/train.out" || { cat "$tmp/train.out"; bad "30 updates"; }
# the policy kept: the best of the evaluations at updates 0, 10, 20, 30
kept=$(sed -n 's/^kept: the policy of update \([0-9]*\), .*faster on [0-9]* of 4 tasks.*/\1/p' "$tmp/train.out")
case "$kept" in 0|10|20|30) ;; *) cat "$tmp/train.out"; bad "no 'kept:' line (update 0, 10, 20 or 30)"; kept=0 ;; esac
[ "$(grep -c '^{"policy_eval": [0-9]*, "score": [0-9.]*, "greedy": [0-9.]*, "faster": [0-9]*, "wall": [0-9.]*}$' "$tmp/r.json")" = 4 ] ||
    { cat "$tmp/r.json"; bad "--log-json: not 4 eval lines"; }
"$HGPLAN" --train-policy --models mobilenet_v2 --clusters "$EX/heterog-8gpu.cfg" --perturb 0 \
    --batch 8 --groups 16 --policy-steps 5 --samples 2 --eval-every 0 --out "$tmp/e0.h5" \
    >"$tmp/e0.out" 2>&1 || { cat "$tmp/e0.out"; bad "--eval-every 0"; }
grep -q '^kept:' "$tmp/e0.out" && bad "--eval-every 0 evaluated"
# the reward curve: the last (only) window's json line, drawn by plot-log
grep -q '^{"policy_update": 30, "reward": -[0-9.]*, "wall": [0-9.]*}$' "$tmp/r.json" ||
    { cat "$tmp/r.json"; bad "--log-json: no line for update 30"; }
if command -v gnuplot >/dev/null 2>&1; then
    "$S/scripts/plot-log" "$tmp/r.json" "$tmp/r.png" >"$tmp/plot.out" 2>&1 &&
        [ "$(head -c 4 "$tmp/r.png" | od -An -c | tr -d ' ')" = "211PNG" ] ||
        { cat "$tmp/plot.out"; bad "plot-log of the reward curve"; }
fi
grep -q 'heterog-8gpu~' "$tmp/train.out" || bad "no perturbed cluster trained on"
train 3 "$tmp/b.h5" || bad "--train-policy again"
cmp -s "$tmp/a.h5" "$tmp/b.h5" || bad "the same seed gave different policy files"
train 4 "$tmp/c.h5" || bad "--train-policy --seed 4"
cmp -s "$tmp/a.h5" "$tmp/c.h5" && bad "another seed gave the same policy file"

plan() { # search extra...
    s=$1
    shift
    "$HGPLAN" --model resnet50 --batch 16 --cluster "$EX/heterog-12gpu.cfg" --groups 16 \
        --search "$s" "$@"
}
plan gnn --policy "$tmp/a.h5" --out "$tmp/s.txt" >"$tmp/gnn.out" 2>&1 ||
    { cat "$tmp/gnn.out"; bad "--search gnn"; }
grep -q '^  gnn ' "$tmp/gnn.out" || { cat "$tmp/gnn.out"; bad "no gnn row"; }
not_above_best "$tmp/gnn.out" ||
    { cat "$tmp/gnn.out"; bad "gnn slower than the best baseline"; }
"$HGPLAN" --model resnet50 --batch 16 --cluster "$EX/heterog-12gpu.cfg" --strategy "$tmp/s.txt" \
    >"$tmp/st.out" 2>&1 || { cat "$tmp/st.out"; bad "--strategy of gnn's --out"; }
# the placement: the greedy one against the policy's moves, the faster kept
grep -q '^greedy [0-9.]* s.*; the policy.s moves from the .*: [0-9]* tried, [0-9]* kept .*: kept the \(greedy\|moves\)$' \
    "$tmp/gnn.out" || { cat "$tmp/gnn.out"; bad "gnn: no line on the policy's moves"; }
plan gnn --policy "$tmp/a.h5" --place-seconds 0 >"$tmp/g0.out" 2>&1 ||
    { cat "$tmp/g0.out"; bad "--place-seconds 0"; }
grep -q 'policy.s moves' "$tmp/g0.out" && bad "--place-seconds 0 made moves"
awk 'FNR == 1 { f++ } $1 == "gnn" { t[f] = $2 } END { exit !(t[1] != "" && t[1] + 0 <= t[2] + 0) }' \
    "$tmp/gnn.out" "$tmp/g0.out" || bad "gnn with moves slower than the greedy placement"
t_gnn=$(awk '$1 == "gnn" { print $2 }' "$tmp/gnn.out")
t_file=$(awk '$1 == "file" { print $2 }' "$tmp/st.out")
[ -n "$t_gnn" ] && [ "$t_gnn" = "$t_file" ] || bad "gnn $t_gnn s, its file $t_file s"
plan gnn+mcmc --policy "$tmp/a.h5" --iters 300 >"$tmp/gm.out" 2>&1 ||
    { cat "$tmp/gm.out"; bad "--search gnn+mcmc"; }
awk '$1 == "gnn" { g = $2 } $1 == "gnn+mcmc" { m = $2 } '"$BEST"'
     END { exit !(g != "" && m != "" && b != "" && m + 0 <= g + 0 && m + 0 <= b + 0) }' \
    "$tmp/gm.out" || { cat "$tmp/gm.out"; bad "gnn+mcmc slower than gnn or the best baseline"; }
grep -q '^mcmc from \(gnn\|the best baseline\): ' "$tmp/gm.out" ||
    { cat "$tmp/gm.out"; bad "gnn+mcmc: no 'mcmc from' line"; }
plan gnn --policy "$tmp/a.h5" --finetune 30 --policy-steps 20 --policy-out "$tmp/ft.h5" \
    >"$tmp/ft.out" 2>&1 || { cat "$tmp/ft.out"; bad "--finetune"; }
grep -q 'finetune: 20 updates' "$tmp/ft.out" || { cat "$tmp/ft.out"; bad "finetune updates"; }
# a finetune never ends slower than the zero-shot placement it started from
awk '/^zero-shot: greedy / { match($0, /[0-9.]+ s( OOM)?: kept the/); z = substr($0, RSTART) + 0 } /zero-shot before the finetune/ { l = 1 }
     $1 == "gnn" { g = $2 } END { exit !(l && z != "" && g != "" && g + 0 <= z + 0) }' \
    "$tmp/ft.out" || { cat "$tmp/ft.out"; bad "finetuned gnn slower than its zero-shot placement"; }
plan gnn --policy "$tmp/ft.h5" >"$tmp/ft2.out" 2>&1 || { cat "$tmp/ft2.out"; bad "--policy-out's file"; }
grep -q "policy $tmp/ft.h5 ($((kept + 20)) updates)" "$tmp/ft2.out" ||
    { cat "$tmp/ft2.out"; bad "--policy-out: not $kept + 20 updates"; }

# an update that leaves a weight NaN (planted: HG_TEST_POLICY_POISON=N,
# the Nth update of the training) stops --finetune and --train-policy with
# exit 1 naming the tensor and the policy's update; nothing is written: an
# existing --policy-out stays as it was, no --out, no .tmp
echo "keep me" >"$tmp/keep.h5"
HG_TEST_POLICY_POISON=2 plan gnn --policy "$tmp/a.h5" --finetune 30 --policy-steps 5 \
    --policy-out "$tmp/keep.h5" --out "$tmp/pois.txt" >"$tmp/pois.out" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/pois.out"; bad "--finetune with a NaN update: exit $rc, want 1"; }
nan_named="params/head.dp.weight\[0\] = nan: not finite"
grep -q "policy update $((kept + 2)): $nan_named" "$tmp/pois.out" ||
    { cat "$tmp/pois.out"; bad "--finetune with a NaN update: tensor, update $((kept + 2)) not named"; }
[ "$(cat "$tmp/keep.h5")" = "keep me" ] ||
    bad "--finetune with a NaN update: --policy-out overwritten"
[ -e "$tmp/keep.h5.tmp" ] && bad "--finetune with a NaN update: --policy-out's .tmp left"
[ -e "$tmp/pois.txt" ] && bad "--finetune with a NaN update: --out written"
HG_TEST_POLICY_POISON=3 "$HGPLAN" --train-policy --models mobilenet_v2 \
    --clusters "$EX/heterog-8gpu.cfg" --perturb 0 --batch 8 --groups 16 --policy-steps 5 \
    --samples 2 --eval-every 2 --out "$tmp/keep.h5" >"$tmp/pois.out" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/pois.out"; bad "--train-policy with a NaN update: exit $rc, want 1"; }
grep -q "policy update 3: $nan_named" "$tmp/pois.out" ||
    { cat "$tmp/pois.out"; bad "--train-policy with a NaN update: tensor and update 3 not named"; }
[ "$(cat "$tmp/keep.h5")" = "keep me" ] ||
    bad "--train-policy with a NaN update: --out overwritten"
[ -e "$tmp/keep.h5.tmp" ] && bad "--train-policy with a NaN update: --out's .tmp left"

# scripts/pretrain-policy (what wrote examples/policy/heterog.h5), 20
# updates: its file places; the committed file loads with this hgplan (its
# feature layout) and places a held-out model no slower than the best baseline
HGPLAN="$HGPLAN" "$S/scripts/pretrain-policy" "$tmp/pre.h5" 20 >"$tmp/pre.out" 2>&1 &&
    grep -q '^trained: 20 updates' "$tmp/pre.out" && grep -q '^kept: the policy of update' "$tmp/pre.out" ||
    { cat "$tmp/pre.out" "$tmp/pre.h5.txt"; bad "scripts/pretrain-policy"; }
plan gnn --policy "$tmp/pre.h5" >"$tmp/pre.gnn" 2>&1 || { cat "$tmp/pre.gnn"; bad "gnn with pretrain-policy's file"; }
"$HGPLAN" --model transformer24 --batch 16 --cluster "$EX/heterog-8gpu.cfg" --search gnn \
    --policy "$S/examples/policy/heterog.h5" >"$tmp/ex.out" 2>&1 ||
    { cat "$tmp/ex.out"; bad "examples/policy/heterog.h5 does not place (train it again: scripts/pretrain-policy)"; }
not_above_best "$tmp/ex.out" ||
    { cat "$tmp/ex.out"; bad "examples/policy/heterog.h5: transformer24 slower than the best baseline"; }

# bad files: exit 1, the file named, no signal
refused() { # file what
    plan gnn --policy "$1" >"$tmp/bad.out" 2>&1
    rc=$?
    [ $rc -eq 1 ] || bad "$2: exit $rc, want 1"
    grep -q "$1" "$tmp/bad.out" || { cat "$tmp/bad.out"; bad "$2: message does not name $1"; }
}
head -c 3000 "$tmp/a.h5" >"$tmp/trunc.h5"
refused "$tmp/trunc.h5" "a truncated policy"
echo "not a policy" >"$tmp/text.h5"
refused "$tmp/text.h5" "a text file"
refused "$tmp/missing.h5" "a missing file"

# usage errors
plan gnn >/dev/null 2>&1
[ $? -eq 2 ] || bad "--search gnn without --policy: not exit 2"
"$HGPLAN" --model resnet50 --cluster "$EX/heterog-8gpu.cfg" --search mcmc --policy "$tmp/a.h5" \
    >/dev/null 2>&1
[ $? -eq 2 ] || bad "--policy with --search mcmc: not exit 2"
"$HGPLAN" --train-policy --models resnet50 --out "$tmp/x.h5" >/dev/null 2>&1
[ $? -eq 2 ] || bad "--train-policy without --clusters: not exit 2"
"$HGPLAN" --train-policy --models nosuch --clusters "$EX/heterog-8gpu.cfg" --out "$tmp/x.h5" \
    >/dev/null 2>&1
[ $? -eq 2 ] || bad "--train-policy --models nosuch: not exit 2"
plan mcmc --log-json "$tmp/x.json" >/dev/null 2>&1
[ $? -eq 2 ] || bad "--log-json without --train-policy: not exit 2"

[ $fail -eq 0 ] && echo "PASS: policy"
exit $fail
