#!/bin/sh
# Integration test: hgtrain --plan plans at start-up (docs/planner.md,
# "Planning at start-up") and trains with what it planned, on 2 forked CPU
# workers (mnist without dropout, SGD with momentum, a global batch of 96,
# the two-device cluster of tests/strategy.sh: speeds 2 and 1):
#  1. --plan baselines: the plan table in the log (JSON records under
#     --log-format json, its own lines under simple), the fastest
#     data-parallel baseline written to SAVE_DIR/strategy.cfg (the file
#     hgplan --search baselines --out writes for the same graph) and kept
#     in the checkpoint (attribute "strategy", the file's bytes); the same
#     losses and, after K updates, the same parameters and optimizer
#     state as 1 rank on the same global batches (within the reordering's
#     spread: equiv in tests/mnist-common.sh); and
#     bitwise the run of --strategy SAVE_DIR/strategy.cfg;
#     At a global batch of 4 a tensor-parallel row (TP-S) is chosen and
#     trains as 1 rank; with dropout it is not (the executor does not split
#     dropout masks yet);
#  2. --plan mcmc --plan-budget 2: the same checks (also with dropout 0.3
#     against 1 rank with dropout); with --plan-iters the
#     strategy is the same file twice; --plan-profile prices as hgplan
#     --profile does (hgplan's file and table for the same profile); a
#     resumed run trains with its checkpoint's strategy, --replan plans
#     again (tests/plan_table.sh: the table's text against a golden file);
#  3. refused, naming why: --plan with --strategy, without --cluster-file,
#     with per-rank budgets, in a launch that does not fork every rank;
#     --plan-profile and --replan without --plan.
set -u
. "${HG_SRCDIR:-.}/tests/strategy-common.sh"


twice run ref --batch-size 96 --max-update "$K" >"$tmp/ref.log" 2>&1 ||
    { cat "$tmp/ref.log"; bad "1 rank"; }
# msgs LOG: a json log's messages as text (the table's lines hold no quote
# or backslash)
msgs() { sed -n 's/^{"message": "\(.*\)"}$/\1/p' "$1"; }
table() { # LOG: the plan table (hgplan's), MP's "only with --plan-split" dropped
    sed -n '/^plan: [0-9]* devices/,/^chosen: /p' "$1" | sed 's/yes, chosen only with --plan-split$/yes/'
}
planned() { # name args...: a 2-rank run with --plan; its strategy file and table
    name=$1
    shift
    run "$name" --devices cpu:2 --batch-size 96 --max-update "$K" \
        --cluster-file "$tmp/c2.cfg" "$@" >"$tmp/$name.log" 2>&1 ||
        { cat "$tmp/$name.log"; bad "$name exited non-zero"; return 1; }
    [ -s "$tmp/$name/strategy.cfg" ] || { ls "$tmp/$name"; bad "$name: no strategy.cfg"; }
    [ -z "$(ls "$tmp/$name" | grep '\.tmp$')" ] || bad "$name: a .tmp file left"
    grep -q '^version = 1;' "$tmp/$name/strategy.cfg" || bad "$name: strategy.cfg is no strategy file"
    # --log-format json: the table as JSON records, nothing else on stdout
    grep -v '^{' "$tmp/$name.log" >"$tmp/nonjson" && { head "$tmp/nonjson"; bad "$name: not JSON Lines"; }
    msgs "$tmp/$name.log" >"$tmp/$name.msgs"
    for row in EV-PS EV-AR CP-PS CP-AR MP; do
        grep -q "^  $row  *[0-9.]* s" "$tmp/$name.msgs" || bad "$name: no $row row in the table"
    done
    grep -q '^plan: 2 devices, 64 op groups, simulated per iteration:$' "$tmp/$name.msgs" ||
        bad "$name: no table"
    grep -q '^chosen: [A-Za-z-]*, because ' "$tmp/$name.msgs" || bad "$name: no 'chosen:' line"
    grep -q "strategy $tmp/$name/strategy.cfg: \(data parallel, rows [0-9]*,[0-9]* of 96\|the batch of 96 split into [0-9]* pieces\|model parallel\)" \
        "$tmp/$name.msgs" || { head -n 30 "$tmp/$name.log"; bad "$name: not run as planned"; }
    # the checkpoint keeps the strategy file's bytes
    if command -v h5dump >/dev/null 2>&1; then
        rm -f "$tmp/attr.bin"
        h5dump -a strategy -b -o "$tmp/attr.bin" "$tmp/$name/checkpoint_last.h5" \
            >/dev/null 2>&1 && cmp -s "$tmp/attr.bin" "$tmp/$name/strategy.cfg" ||
            bad "$name: the checkpoint's strategy attribute is not strategy.cfg"
    else
        echo "note: no h5dump: the checkpoint's strategy attribute is not compared"
    fi
    return 0
}

# ------------------------------------------------------------ 1. baselines
if planned pb --plan baselines; then
    check pb ref
    # the fastest data-parallel baseline on this cluster is capacity-proportional
    grep -q '^chosen: CP-[AP][RS], because it is the fastest feasible baseline$' "$tmp/pb.msgs" ||
        bad "pb: the best baseline is not CP-AR or CP-PS"
    grep -q '^  CP-[AP][RS]  *[0-9.]* s  .*  <- chosen$' "$tmp/pb.msgs" || bad "pb: the row not marked"
    grep -q '^  MP  *[0-9.]* s  .* yes, chosen only with --plan-split$' "$tmp/pb.msgs" ||
        bad "pb: MP's row does not say why it is not chosen"
    grep -q 'rows 64,32 of 96' "$tmp/pb.msgs" || bad "pb: not the 2:1 rows"
    # the file hgplan writes for the same graph, and the same table
    "$HGPLAN" --task mnist --data "$tmp/fm" --dropout 0 --batch 96 --optimizer sgd \
        --cluster "$tmp/c2.cfg" --search baselines --out "$tmp/hgplan.cfg" \
        >"$tmp/hgplan.log" 2>&1 || { cat "$tmp/hgplan.log"; bad "hgplan --search baselines"; }
    cmp -s "$tmp/hgplan.cfg" "$tmp/pb/strategy.cfg" ||
        { diff "$tmp/hgplan.cfg" "$tmp/pb/strategy.cfg" | head; bad "pb: not hgplan's file"; }
    table "$tmp/hgplan.log" >"$tmp/t1"
    table "$tmp/pb.msgs" >"$tmp/t2"
    [ -s "$tmp/t1" ] && cmp -s "$tmp/t1" "$tmp/t2" ||
        { diff "$tmp/t1" "$tmp/t2"; bad "pb: the table differs from hgplan's"; }
    # and the run is the run of --strategy SAVE_DIR/strategy.cfg, bitwise
    cp "$tmp/pb/strategy.cfg" "$tmp/pb.cfg"
    run ps --devices cpu:2 --batch-size 96 --max-update "$K" --cluster-file "$tmp/c2.cfg" \
        --strategy "$tmp/pb.cfg" >"$tmp/ps.log" 2>&1 || { cat "$tmp/ps.log"; bad "--strategy"; }
    "$CMP" "$tmp/ps/checkpoint_last.h5" "$tmp/pb/checkpoint_last.h5" 0 params >"$tmp/cmp" 2>&1 ||
        { cat "$tmp/cmp"; bad "pb: differs from --strategy SAVE_DIR/strategy.cfg"; }
    echo "ok: --plan baselines: hgplan's file and table, bitwise --strategy"
fi

# a tensor-parallel row chosen: at a global batch of 4 the data-parallel
# baselines' AllReduce of every gradient costs more than TP-S's (8:4
# shards) collectives, simulated over 10% (the margin) faster; it trains
# as hgtrain --strategy runs it, with 1 rank's losses, parameters and
# optimizer state (the tolerances of tests/strategy_tp.sh: its split
# reductions reorder each dot product's sums)
twice run ref4 --batch-size 4 --max-update "$K" >"$tmp/ref4.log" 2>&1 ||
    { cat "$tmp/ref4.log"; bad "1 rank, batch 4"; }
if run ptp --devices cpu:2 --batch-size 4 --max-update "$K" --cluster-file "$tmp/c2.cfg" \
    --plan baselines >"$tmp/ptp.log" 2>&1; then
    f0=$fail
    fail=0
    msgs "$tmp/ptp.log" >"$tmp/ptp.msgs"
    grep -q '^  TP-S  *[0-9.]* s  .* yes  <- chosen$' "$tmp/ptp.msgs" &&
        grep -q '^chosen: TP-S, because it is [0-9.]*% faster than [EC][VP]-AR, above the margin$' \
            "$tmp/ptp.msgs" && grep -q 'mode = "tp"; shards = ' "$tmp/ptp/strategy.cfg" &&
        grep -q "strategy $tmp/ptp/strategy.cfg: tensor parallel over 2 ranks, shard weights 8,4" \
            "$tmp/ptp.msgs" || { head -n 20 "$tmp/ptp.msgs"; bad "ptp: TP-S not chosen and run"; }
    same_losses "$tmp/ref4.log" "$tmp/ptp.log" || bad "ptp: losses differ from 1 rank"
    EQUIV_ARGS="--factor 32 --floor 1e-5" equiv ptp ref4 params ||
        { cat "$tmp/cmp"; bad "ptp: parameters differ from 1 rank"; }
    EQUIV_ARGS="--factor 32 --floor 1e-4" equiv ptp ref4 optimizer ||
        { cat "$tmp/cmp"; bad "ptp: optimizer state differs from 1 rank"; }
    [ $fail = 0 ] && echo "ok: --plan baselines chose TP-S at batch 4 and trained it as 1 rank"
    [ $fail = 0 ] && fail=$f0
else
    cat "$tmp/ptp.log"
    bad "ptp exited non-zero"
fi
# with dropout on, the executor does not split its masks yet: the TP rows
# say so and are not chosen
run ptpd --devices cpu:2 --batch-size 4 --max-update 1 --cluster-file "$tmp/c2.cfg" \
    --plan baselines --dropout 0.3 --no-save >"$tmp/ptpd.log" 2>&1 || { cat "$tmp/ptpd.log"; bad "ptpd"; }
msgs "$tmp/ptpd.log" | grep -q '^  TP-S  *[0-9.]* s  .* no: hgtrain: op [0-9]* (dropout) splits its dropout masks' &&
    msgs "$tmp/ptpd.log" | grep -q '^chosen: [EC][VP]-AR, because it is the fastest feasible baseline$' ||
    { msgs "$tmp/ptpd.log" | head -n 16; bad "ptpd: a TP row under dropout not refused"; }

# ------------------------------------------------------------ 2. mcmc
if planned pm --plan mcmc --plan-budget 2; then
    check pm ref
    grep -q '^search: mcmc from CP-.*, data-parallel-shaped or model-parallel strategies$' \
        "$tmp/pm.msgs" || bad "pm: no 'search: mcmc from' line, or the search was not restricted"
    grep -q '^  stopped after [0-9]* proposals in [0-9.]* s: ' "$tmp/pm.msgs" ||
        bad "pm: no 'stopped after' line"
    grep -q '^  mcmc  *[0-9.]* s' "$tmp/pm.msgs" || bad "pm: no mcmc row"
fi
# dropout on (0.3): --plan mcmc plans for the graph with its DROPOUT nodes,
# whose masks are keyed by sample (docs/reproducibility.md, "Dropout"), so
# its strategy still equals 1 rank
twice run refd --batch-size 96 --max-update "$K" --dropout 0.3 >"$tmp/refd.log" 2>&1 ||
    { cat "$tmp/refd.log"; bad "1 rank, dropout"; }
planned pmd --plan mcmc --plan-iters 300 --dropout 0.3 && check pmd refd

# with a proposal cap the search is reproducible: the same file twice
for d in pi1 pi2; do
    run "$d" --devices cpu:2 --batch-size 96 --max-update 1 --cluster-file "$tmp/c2.cfg" \
        --plan mcmc --plan-iters 500 --plan-budget 60 >"$tmp/$d.log" 2>&1 ||
        { cat "$tmp/$d.log"; bad "$d exited non-zero"; }
done
msgs "$tmp/pi1.log" >"$tmp/pi1.msgs"
grep -q '^  stopped after 500 proposals in [0-9.]* s: the cap of 500 proposals; reproducible$' \
    "$tmp/pi1.msgs" || { grep mcmc -A2 "$tmp/pi1.msgs"; bad "pi1: did not stop at the proposal cap"; }
[ -s "$tmp/pi1/strategy.cfg" ] && cmp -s "$tmp/pi1/strategy.cfg" "$tmp/pi2/strategy.cfg" ||
    bad "--plan mcmc --plan-iters 500 twice: different strategies"
# resumed: the checkpoint's strategy, not planned again (no table), unless
# --replan
cp "$tmp/pi1/strategy.cfg" "$tmp/pi1.cfg"
run pi1 --devices cpu:2 --batch-size 96 --max-update 2 --cluster-file "$tmp/c2.cfg" \
    --plan mcmc --plan-iters 1 >"$tmp/pr.log" 2>&1 || { cat "$tmp/pr.log"; bad "pi1 resumed"; }
msgs "$tmp/pr.log" >"$tmp/pr.msgs"
grep -q "^--plan mcmc: resumed from $tmp/pi1/checkpoint_last.h5: trained with the strategy it keeps, not planned again (--replan plans again)$" \
    "$tmp/pr.msgs" && ! grep -q '^plan: ' "$tmp/pr.msgs" && grep -q '"update": 2,' "$tmp/pr.log" ||
    { head -n 5 "$tmp/pr.msgs"; bad "resumed --plan: planned again"; }
cmp -s "$tmp/pi1.cfg" "$tmp/pi1/strategy.cfg" || bad "resumed --plan: strategy.cfg changed"
run pi1 --devices cpu:2 --batch-size 96 --max-update 3 --cluster-file "$tmp/c2.cfg" \
    --plan baselines --replan >"$tmp/pr2.log" 2>&1 || { cat "$tmp/pr2.log"; bad "--replan"; }
msgs "$tmp/pr2.log" >"$tmp/pr2.msgs"
grep -q '^chosen: CP-' "$tmp/pr2.msgs" && ! grep -q 'resumed from' "$tmp/pr2.msgs" ||
    { head -n 5 "$tmp/pr2.msgs"; bad "--replan: not planned again"; }
echo "ok: a resumed --plan trains with its checkpoint's strategy; --replan plans again"

# --plan-profile: hgplan --profile's prices (a quick profile of this graph
# on one thread; local.cfg's devices name cpu-t1): hgplan's file again, and
# not the roofline's table
EX=${HG_SRCDIR:-.}/examples/clusters
"$HGPLAN" --task mnist --data "$tmp/fm" --dropout 0 --optimizer sgd --batch 96 \
    --profile-out "$tmp/prof.cfg" --profile-batches 48,96 --profile-threads 1 \
    --profile-repeats 1 --profile-warmup 0 --profile-worlds none >"$tmp/prof.log" 2>&1 ||
    { cat "$tmp/prof.log"; bad "hgplan --profile-out"; }
for p in prof rl; do  # measured prices, the roofline
    [ $p = prof ] && pp="--plan-profile $tmp/prof.cfg" || pp=""
    # shellcheck disable=SC2086
    run "p$p" --devices cpu:2 --batch-size 96 --max-update 1 --cluster-file "$EX/local.cfg" \
        --plan baselines $pp --log-format simple >"$tmp/p$p.log" 2>&1 ||
        { cat "$tmp/p$p.log"; bad "p$p exited non-zero"; }
    table "$tmp/p$p.log" >"$tmp/p$p.table"
done
grep -q "^| --plan baselines on --cluster-file .*measured prices from --plan-profile $tmp/prof.cfg" \
    "$tmp/pprof.log" ||
    bad "pprof: does not say it uses the profile"
[ -s "$tmp/pprof.table" ] && ! cmp -s "$tmp/pprof.table" "$tmp/prl.table" ||
    bad "--plan-profile: the table is the roofline's"
# the row hgtrain chose (data or tensor parallel: it executes no MP
# here) as hgplan's kept one (--baseline): a one-run profile may price MP
# under every DP baseline, and hgplan alone would then pick MP (a CI run
# did); under another machine's load it may price TP-E 10% ahead
choice=$(sed -n 's/^chosen: \([A-Z-]*\), because .*/\1/p' "$tmp/pprof.log" | head -n 1)
"$HGPLAN" --task mnist --data "$tmp/fm" --dropout 0 --batch 96 --optimizer sgd \
    --cluster "$EX/local.cfg" --profile "$tmp/prof.cfg" --search baselines \
    --baseline "${choice:-none}" --out "$tmp/hgplan-prof.cfg" >"$tmp/hgplan-prof.log" 2>&1 ||
    { cat "$tmp/hgplan-prof.log"; bad "hgplan --profile --search baselines --baseline $choice"; }
cmp -s "$tmp/hgplan-prof.cfg" "$tmp/pprof/strategy.cfg" ||
    { diff "$tmp/hgplan-prof.cfg" "$tmp/pprof/strategy.cfg" | head; bad "pprof: not hgplan's file"; }
# every baseline's simulated time (the speedups are against each one's pick)
rows() { table "$1" | awk '$3 == "s" { print $1, $2 }'; }
rows "$tmp/hgplan-prof.log" >"$tmp/hp.table"
rows "$tmp/pprof.log" >"$tmp/pp.rows"
[ -s "$tmp/hp.table" ] && cmp -s "$tmp/hp.table" "$tmp/pp.rows" ||
    { diff "$tmp/hp.table" "$tmp/pp.rows"; bad "pprof: not hgplan's table"; }
echo "ok: --plan-profile: hgplan --profile's file and table"

# ------------------------------------------------------------ 3. refused
refused() { # name message args...
    name=$1 msg=$2
    shift 2
    run "$name" --batch-size 96 --max-update 1 "$@" >"$tmp/$name.log" 2>&1 &&
        bad "$name: accepted"
    grep -q -- "$msg" "$tmp/$name.log" || { cat "$tmp/$name.log"; bad "$name: no '$msg'"; }
    [ ! -e "$tmp/$name/strategy.cfg" ] || bad "$name: wrote a strategy"
}
refused r-strategy "--plan baselines plans the strategy that --strategy" --devices cpu:2 \
    --cluster-file "$tmp/c2.cfg" --plan baselines --strategy "$tmp/c2.cfg"
refused r-cluster "--plan mcmc needs the --cluster-file" --devices cpu:2 --plan mcmc
refused r-lists "--plan baselines gives the per-rank batch shares" --devices cpu:2 \
    --cluster-file "$tmp/c2.cfg" --plan baselines --max-sentences-per-rank 64,32
refused r-kind "--plan: expected baselines or mcmc" --devices cpu:2 \
    --cluster-file "$tmp/c2.cfg" --plan random
refused r-replan "--replan plans a resumed run again; give --plan" --devices cpu:2 \
    --cluster-file "$tmp/c2.cfg" --replan
refused r-profile "--plan-profile $tmp/prof.cfg prices the planning of --plan" --devices cpu:2 \
    --cluster-file "$tmp/c2.cfg" --plan-profile "$tmp/prof.cfg"
# torchrun's variables: one rank of two in this process
(
    export HG_JOB_TOKEN=0123456789abcdef0123456789abcdef WORLD_SIZE=2 RANK=0 LOCAL_RANK=0 \
        LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=1
    refused r-launch "starts 1 of the 2 ranks here" --cluster-file "$tmp/c2.cfg" \
        --plan baselines
    exit $fail
) || fail=1
echo "ok: refusals"
equiv_summary
exit $fail
