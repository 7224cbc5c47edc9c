#!/bin/sh
# bench/policy.sh - the learned placement policy on held-out models
# (GDP's generalisation experiment with HeteroG's models and testbeds, in
# simulation).  Pretrains a policy (hgplan --train-policy) on HeteroG's
# models less the held-out ones (inception_v3, resnet200, transformer24,
# bert_large48) on heterog-8gpu and heterog-12gpu and PERTURB perturbed
# copies of each, for MINUTES; then per held-out model (its HeteroG batch)
# and testbed, the simulated per-iteration time of:
#   best baseline; MCMC with BUDGET s; gnn zero-shot (and the time it took
#   to place); gnn after FINETUNE s of finetuning; gnn+mcmc (FINETUNE s of
#   finetuning, then MCMC for BUDGET s) against MCMC with FINETUNE + BUDGET s.
# Usage, from a build directory (HGPLAN, HG_SRCDIR override):
#   MINUTES=60 FINETUNE=300 BUDGET=60 bench/policy.sh       (the experiment)
#   MINUTES=0.2 FINETUNE=2 BUDGET=2 bench/policy.sh         (a smoke run)
# CURVE=PREFIX keeps the pretraining's reward curve as PREFIX.json and,
# with gnuplot, PREFIX.png (scripts/plot-log).
# POLICY=FILE skips the pretraining and uses FILE; TESTBEDS (default
# "8 12") and HELDOUT (default the four above) narrow the table; a second
# table (TRAINED=0: none; TRAINED_MODELS narrows it) compares zero-shot
# with MCMC for BUDGET s on the models trained on.  "gnn greedy" is the network's argmax placement,
# "zero-shot" that after hgplan's --place-seconds of the policy's moves.
# Output: markdown tables.  Seeds are fixed (--seed 1); the budgets make it
# not reproducible.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-$(dirname "$0")/..}
HGPLAN=${HGPLAN:-$B/hgplan}
MINUTES=${MINUTES:-60}
FINETUNE=${FINETUNE:-300}
BUDGET=${BUDGET:-60}
PERTURB=${PERTURB:-4}
EX=$S/examples/clusters
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
policy=${POLICY:-$tmp/policy.h5}
if [ -z "${POLICY:-}" ]; then
    "$HGPLAN" --train-policy --models vgg19,resnet50,resnet101,mobilenet_v2,transformer,bert_large \
        --clusters "$EX/heterog-8gpu.cfg,$EX/heterog-12gpu.cfg" --perturb "$PERTURB" \
        --minutes "$MINUTES" --seed 1 --out "$policy" --log-json "$tmp/reward.json" \
        >"$tmp/train" 2>&1 ||
        { cat "$tmp/train"; echo "policy.sh: --train-policy failed" >&2; exit 1; }
    grep '^trained:' "$tmp/train"
    if [ -n "${CURVE:-}" ]; then
        cp "$tmp/reward.json" "$CURVE.json"
        "$S/scripts/plot-log" "$CURVE.json" "$CURVE.png" || echo "policy.sh: no PNG of the curve"
    fi
fi
both=$(awk -v a="$FINETUNE" -v b="$BUDGET" 'BEGIN { print a + b }')
echo
echo "| testbed | model | best baseline | mcmc ${BUDGET} s | gnn greedy | gnn zero-shot (place s) | gnn finetuned ${FINETUNE} s | gnn+mcmc ${FINETUNE}+${BUDGET} s | mcmc ${both} s |"
echo "|---|---|---|---|---|---|---|---|---|"
row() { # file name: the row's time (OOM marked)
    awk -v n="$2" '$1 == n { t = $2; if ($0 ~ /OOM/) t = t " OOM" } END { print t }' "$1"
}
best_base() { # file: the fastest baseline's time that fits
    awk '$1 ~ /^((EV|CP)-(PS|AR)|MP)$/ && $3 == "s" && !/OOM/ && (b == "" || $2 + 0 < b + 0) { b = $2 }
         END { print b }' "$1"
}
greedy() { # gnn output: the greedy placement's time (OOM marked)
    awk '/^greedy / { t = $2; if ($4 ~ /OOM/) t = t " OOM" } END { print t }' "$1"
}
placed() { # gnn output: seconds to place
    awk '/^policy .* placed in/ { print $(NF - 1) }' "$1"
}
zero_shot() { # model testbed: MCMC for BUDGET s and the zero-shot placement into $o.*
    c=$EX/heterog-${2}gpu.cfg
    o=$tmp/$1.$2
    "$HGPLAN" --model "$1" --cluster "$c" --search mcmc --budget "$BUDGET" --seed 1 \
        >"$o.mcmc" 2>&1 || { echo "| $2 GPUs | $1 | mcmc failed |"; return 1; }
    "$HGPLAN" --model "$1" --cluster "$c" --search gnn --policy "$policy" --seed 1 \
        >"$o.gnn" 2>&1 || { echo "| $2 GPUs | $1 | gnn failed |"; return 1; }
}
for m in ${HELDOUT:-inception_v3 resnet200 transformer24 bert_large48}; do
    for tb in ${TESTBEDS:-8 12}; do
        zero_shot "$m" "$tb" || continue
        "$HGPLAN" --model "$m" --cluster "$c" --search gnn --policy "$policy" \
            --finetune "$FINETUNE" --seed 1 >"$o.ft" 2>&1 ||
            { echo "| $tb GPUs | $m | finetune failed |"; continue; }
        "$HGPLAN" --model "$m" --cluster "$c" --search gnn+mcmc --policy "$policy" \
            --finetune "$FINETUNE" --budget "$BUDGET" --seed 1 >"$o.gm" 2>&1 ||
            { echo "| $tb GPUs | $m | gnn+mcmc failed |"; continue; }
        "$HGPLAN" --model "$m" --cluster "$c" --search mcmc --budget "$both" --seed 1 \
            >"$o.mcmc2" 2>&1 || { echo "| $tb GPUs | $m | mcmc failed |"; continue; }
        echo "| $tb GPUs | $m | $(best_base "$o.gnn") | $(row "$o.mcmc" mcmc) |" \
            "$(greedy "$o.gnn") | $(row "$o.gnn" gnn) ($(placed "$o.gnn")) |" \
            "$(row "$o.ft" gnn) | $(row "$o.gm" gnn+mcmc) | $(row "$o.mcmc2" mcmc) |"
    done
done
[ "${TRAINED:-1}" = 0 ] && exit 0
echo
echo "Models trained on (their HeteroG batch, the testbeds themselves):"
echo
echo "| testbed | model | best baseline | mcmc ${BUDGET} s | gnn greedy | gnn zero-shot (place s) |"
echo "|---|---|---|---|---|---|"
for m in ${TRAINED_MODELS:-vgg19 resnet50 resnet101 mobilenet_v2 transformer bert_large}; do
    for tb in ${TESTBEDS:-8 12}; do
        zero_shot "$m" "$tb" || continue
        echo "| $tb GPUs | $m | $(best_base "$o.gnn") | $(row "$o.mcmc" mcmc) |" \
            "$(greedy "$o.gnn") | $(row "$o.gnn" gnn) ($(placed "$o.gnn")) |"
    done
done
