#!/bin/sh
# bench/planner.sh - HeteroG's Tables 1 and 4 in simulation: for each model
# at HeteroG's batch sizes on the 8- and 12-GPU testbeds, the simulated
# per-iteration time of EV-PS, EV-AR, CP-PS, CP-AR, MP and hgplan's MCMC
# strategy, the speedups (HeteroG's definition: (baseline - ours) / ours),
# the search time, the delta vs full simulation speedup and the simulator's
# throughput.  Usage: bench/planner.sh [BUDGET_SECONDS] (default 8) from a
# build directory (HGPLAN, HG_SRCDIR override).  Output: a markdown table;
# then the same search on a synthetic 1024-GPU cluster (BIG_BUDGET).
# ITERS=N stops every search after N proposals (hgplan --iters): with a
# budget it cannot reach (ITERS=2000 bench/planner.sh 100000) the hgplan
# column is deterministic, to compare two builds; the timing columns are not.
# The hgplan column is the search's row (mcmc), whatever the margin chooses.
# A second table gives the pipeline rows of the same runs and the widened
# space's gain over the previous one (hgplan --no-pipelines).
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-$(dirname "$0")/..}
HGPLAN=${HGPLAN:-$B/hgplan}
BUDGET=${1:-8}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "| testbed | model (batch) | EV-PS | EV-AR | CP-PS | CP-AR | MP | hgplan | speedup vs EV-PS / EV-AR / CP-PS / CP-AR | search s | tasks | full ms | delta ms | delta speedup | tasks/s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
run() { # cluster model batch8 batch12
    for tb in 8 12; do
        b=$3
        [ "$tb" = 12 ] && b=$4
        out=$tmp/$2.$tb.$b
        t0=$(date +%s.%N)
        "$HGPLAN" --model "$2" --batch "$b" --cluster "$S/examples/clusters/heterog-${tb}gpu.cfg" \
            --search mcmc --budget "$BUDGET" ${ITERS:+--iters "$ITERS"} --seed 1 --verbose >"$out" 2>&1 ||
            { echo "| ${tb} GPUs | $2 ($b) | failed |"; continue; }
        t1=$(date +%s.%N)
        echo "$tb $2 $b $(awk -v a="$t0" -v c="$t1" 'BEGIN { printf "%.1f", c - a }')" >>"$tmp/runs"
        awk -v tb="$tb" -v m="$2" -v b="$b" '
            /^  (EV-PS|EV-AR|CP-PS|CP-AR|MP) / { t[$1] = $2; if ($0 ~ /OOM/) t[$1] = "OOM" }
            /^  mcmc / { t["hgplan"] = $2; if ($0 ~ /OOM/) t["hgplan"] = "OOM" }
            /^  stopped after / { s = $6 }
            /^simulator:/ { n = $2; f = $5; tp = $7; sub(/\(/, "", tp); d = $10; x = $14 }
            END {
                sp = ""
                split("EV-PS EV-AR CP-PS CP-AR", k, " ")
                for (i = 1; i <= 4; i++) {
                    v = (t[k[i]] == "OOM" || t["hgplan"] == "OOM") ? "-" : sprintf("%.0f%%", (t[k[i]] - t["hgplan"]) / t["hgplan"] * 100)
                    sp = sp (i > 1 ? " / " : "") v
                }
                printf "| %s GPUs | %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                    tb, m, b, t["EV-PS"], t["EV-AR"], t["CP-PS"], t["CP-AR"], t["MP"], t["hgplan"], sp, s, n, f, d, x, tp
            }' "$out"
    done
}
run c vgg19 192 288
run c resnet200 192 288
run c inception_v3 192 288
run c mobilenet_v2 192 288
run c transformer 720 1080
run c bert_large 48 72
run c resnet200 384 576
run c transformer24 120 180
run c bert_large 96 144
run c bert_large48 24 36

# The widened space: the same runs' pipeline rows (PIPE-U, PIPE-S and the
# searched pipeline, which has what MCMC leaves of the budget: a quarter at
# least) and their best feasible row, against the previous space: the same
# hgplan with --no-pipelines (MCMC has the whole budget), its best feasible
# row; the simulated gain ((old - new) / new) and both whole runs' wall
# times at the same budget.
echo
echo "| testbed | model (batch) | previous space | PIPE-U | PIPE-S | pipeline | widened | gain | run s (previous / widened) |"
echo "|---|---|---|---|---|---|---|---|---|"
best_row() { # the best feasible time in a plan table
    awk '/^  (EV-PS|EV-AR|CP-PS|CP-AR|MP|alone|recompute|mcmc|PIPE-U|PIPE-S|pipeline) / &&
         $3 == "s" && $0 !~ /OOM/ { if (b == "" || $2 < b) b = $2 }
         END { print b == "" ? "OOM" : b }' "$1"
}
while read -r tb m b w; do
    t0=$(date +%s.%N)
    "$HGPLAN" --model "$m" --batch "$b" --cluster "$S/examples/clusters/heterog-${tb}gpu.cfg" \
        --search mcmc --budget "$BUDGET" ${ITERS:+--iters "$ITERS"} --seed 1 --no-pipelines \
        >"$tmp/$m.$tb.$b.old" 2>&1 || { echo "| ${tb} GPUs | $m ($b) | failed |"; continue; }
    t1=$(date +%s.%N)
    old=$(best_row "$tmp/$m.$tb.$b.old")
    new=$(best_row "$tmp/$m.$tb.$b")
    awk -v tb="$tb" -v m="$m" -v b="$b" -v w="$w" -v old="$old" -v n="$new" \
        -v wo="$(awk -v a="$t0" -v c="$t1" 'BEGIN { printf "%.1f", c - a }')" '
        /^  (PIPE-U|PIPE-S|pipeline) / { r[$1] = $0 ~ /OOM/ ? "OOM" : $2 }
        END {
            g = (old != "OOM" && n != "OOM") ? sprintf("%.0f%%", (old - n) / n * 100) : "-"
            printf "| %s GPUs | %s (%s) | %s | %s | %s | %s | %s | %s | %s / %s |\n", tb, m, b,
                old, r["PIPE-U"], r["PIPE-S"], r["pipeline"], n, g, wo, w
        }' "$tmp/$m.$tb.$b"
done <"$tmp/runs"

# A university's whole shared cluster: 1024 GPUs of four generations on 128
# nodes (scripts/make-cluster), HeteroG's models at 16x the 8-GPU batch;
# the search's time (hgplan's "in N s") against the budget, and the whole
# run's (the five baselines are list-scheduled before the search and are
# not in the budget). BIG_BUDGET (default 30) is the budget for this part;
# BIG_MODELS overrides the list.
BIG_BUDGET=${BIG_BUDGET:-30}
"$S/scripts/make-cluster" -n 1024 -o "$tmp/synthetic-1024.cfg"
echo
echo "| 1024 GPUs | model (batch) | best baseline | hgplan | proposals | search s (budget $BIG_BUDGET) | whole run s | full sim ms | tasks |"
echo "|---|---|---|---|---|---|---|---|---|"
for mb in ${BIG_MODELS:-vgg19:3072 resnet50:3072 inception_v3:3072 transformer:11520 bert_large:768}; do
    m=${mb%%:*}
    b=${mb#*:}
    out=$tmp/$m.1024
    t0=$(date +%s.%N)
    "$HGPLAN" --model "$m" --batch "$b" --cluster "$tmp/synthetic-1024.cfg" --search mcmc \
        --budget "$BIG_BUDGET" ${ITERS:+--iters "$ITERS"} --seed 1 --verbose >"$out" 2>&1 ||
        { echo "| 1024 | $m ($b) | failed |"; continue; }
    t1=$(date +%s.%N)
    awk -v m="$m" -v b="$b" -v w="$(awk -v a="$t0" -v c="$t1" 'BEGIN { printf "%.1f", c - a }')" '
        /^  (EV-PS|EV-AR|CP-PS|CP-AR|MP) / { if ($0 !~ /OOM/ && (best == "" || $2 < best)) best = $2 }
        /^  mcmc / { h = $2; if ($0 ~ /OOM/) h = h " OOM" }
        /^  stopped after / { p = $3; s = $6 }
        /^simulator:/ { n = $2; f = $5 }
        END { printf "| 1024 | %s (%s) | %s | %s | %s | %s | %s | %s | %s |\n", m, b, best, h, p, s, w, f, n }' "$out"
done
