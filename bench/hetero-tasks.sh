# hetero-tasks.sh - what bench/hetero.sh, hetero_shm.sh and pipeline.sh share
# (sourced): the tasks of the planned-strategy benchmarks, the step time
# of a json log and the two-worker runs (train, measure).  Needs $src,
# $work, $HGPRE and $fm set by the caller.
#   mnist: global batch 128, SGD, dropout 0; bert: the small Transformer
#   of tests/strategy_mp.sh, global batch 32, Adam, dropout 0; translation:
#   2+2 layers, d 64, FFN 128, 4 heads, global batch 32, Adam, dropout 0.
#   HG_BENCH_BATCH: another global batch for every task.

# the median step time (s) of a json log's intervals after the first
step_time() {
    sed -n 's/.*"ups": \([0-9.]*\).*/\1/p' "$1" | tail -n +2 | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
             m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
             printf "%.4f", (m > 0 ? 1 / m : 0) }'
}
# median: of the numbers on stdin, one per line
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
        printf "%.4f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ms() { awk -v s="$1" 'BEGIN { if (s + 0 > 0) printf "%.1f", s * 1000; else print "-" }'; }

# set_task TASK: the task's arguments for hgplan (pargs) and hgtrain
# (targs), its global batch; makes its data once
set_task() {
    case $1 in
    mnist)
        [ -d "$work/fm" ] || "$HGPRE" images --fashion-mnist "$fm" --out "$work/fm" \
            >"$work/pre-fm.log" 2>&1 || { cat "$work/pre-fm.log"; return 1; }
        batch=${HG_BENCH_BATCH:-128}
        pargs=(--task mnist --data "$work/fm" --dropout 0 --batch "$batch" --optimizer sgd)
        targs=(--task mnist --data "$work/fm" --valid-subset test --dropout 0
               --optimizer sgd --momentum 0.9 --lr 0.01 --required-batch-size-multiple 1)
        ;;
    bert)
        if [ ! -d "$work/lm" ]; then
            awk 'NR % 15 == 0 { print "" } { print }' "$src/tests/data/corpus.en" >"$work/lm.txt"
            "$HGPRE" lm --input "$work/lm.txt" --destdir "$work/lm" --bpe-merges 500 \
                --max-seq-len 64 --max-predictions 10 --seed 7 >"$work/pre-lm.log" 2>&1 ||
                { cat "$work/pre-lm.log"; return 1; }
        fi
        batch=${HG_BENCH_BATCH:-32}
        pargs=(--task bert --data "$work/lm" --dropout 0 --batch "$batch" --optimizer adam)
        targs=(--task bert --data "$work/lm" --dropout 0 --optimizer adam --lr 0.0005
               --required-batch-size-multiple 1)
        ;;
    translation)
        if [ ! -d "$work/mt" ]; then
            head -n 200 "$src/tests/data/corpus.en" >"$work/valid.en"
            head -n 200 "$src/tests/data/corpus.es" >"$work/valid.es"
            "$HGPRE" translation --source-lang en --target-lang es \
                --trainpref "$src/tests/data/corpus" --validpref "$work/valid" \
                --destdir "$work/mt" --bpe-merges 500 >"$work/pre-mt.log" 2>&1 ||
                { cat "$work/pre-mt.log"; return 1; }
        fi
        batch=${HG_BENCH_BATCH:-32}
        local ta=(--source-lang en --target-lang es --dropout 0 --encoder-layers 2
                  --decoder-layers 2 --encoder-embed-dim 64 --decoder-embed-dim 64
                  --encoder-ffn-embed-dim 128 --decoder-ffn-embed-dim 128
                  --encoder-attention-heads 4 --decoder-attention-heads 4)
        pargs=(--task translation --data "$work/mt" "${ta[@]}" --batch "$batch" --optimizer adam)
        targs=(--task translation --data "$work/mt" "${ta[@]}" --optimizer adam --lr 0.0005
               --required-batch-size-multiple 1)
        ;;
    *) echo "hetero_shm.sh: no task $1 (mnist, bert, translation)" >&2; return 1 ;;
    esac
}


# priced_len TASK: the length hgtrain --plan prices (the batches' padded
# lengths' root mean square, hgtrain's plan_len; 1 for mnist) into len, from
# a one-update --plan baselines run of two local workers; the sequence
# tasks' pargs get --seq-len.  Needs $HGTRAIN.
priced_len() {
    "$HGTRAIN" "${targs[@]}" --devices cpu:2 --threads 1 --max-sentences "$batch" \
        --cluster-file "$src/examples/clusters/local.cfg" --plan baselines --max-update 1 \
        --no-save --validate-interval 0 --log-format json >"$work/$1-len.log" 2>&1 ||
        { tail -n 3 "$work/$1-len.log" >&2; return 1; }
    len=$(sed -n 's/.*global batch [0-9]*, length \([0-9]*\) .*/\1/p' "$work/$1-len.log" |
        head -n 1)
    [ "$1" = mnist ] && len=1 # no length: the log names none
    [ -n "$len" ] || return 1
    [ "$1" = mnist ] || pargs+=(--seq-len "$len")
}

# train TAG ARGS...: two workers of one thread on this machine, the second
# slowed (--rank-slowdown $slowdown); the log in $work/TAG.log, status.
# Needs $HGTRAIN, targs, $slowdown, $interval and $updates.
train() {
    local tag=$1
    shift
    "$HGTRAIN" "${targs[@]}" --devices cpu:2 --threads 1 --rank-slowdown "$slowdown" \
        --log-format json --log-interval "$interval" --validate-interval 0 --no-save \
        --max-update "$updates" --rebalance-interval 0 --seed 1 "$@" \
        >"$work/$tag.log" 2>&1 || { tail -n 3 "$work/$tag.log" >&2; return 1; }
}

# measure TAG ARGS...: train HG_BENCH_REPEAT times, the median step time or
# "failed" (the mcmc rows plan anew each time: what hgtrain --plan gives)
measure() {
    local i t=() tag=$1
    shift
    for ((i = 0; i < ${HG_BENCH_REPEAT:-1}; i++)); do
        train "$tag" "$@" || { echo failed; return 1; }
        t+=("$(step_time "$work/$tag.log")")
    done
    printf '%s\n' "${t[@]}" | median
}
