# strategy-common.sh - sourced by tests/strategy.sh, tests/strategy_mp.sh
# and tests/plan.sh: mnist-common.sh, the shards in $tmp/fm, run() (the
# mnist job they compare: no dropout, SGD with momentum, one thread per
# rank), same_losses() (every update's loss within 1e-5 of the other
# log's, at least $K updates), check() (a run against the 1-rank run, made
# by twice: its losses, its parameters and optimizer state by equiv) and
# the cluster files $tmp/c2.cfg (two ranks, the first twice as fast),
# $tmp/c3.cfg (three, 2:1:1) and $tmp/c4.cfg (four, 2:1:1:1); mt_data
# (the translation corpus in $tmp/mt, the small Transformer's options in
# $TA); runb and runt SAVE-DIR ARGS... (the bert and translation jobs the
# tests compare: Adam, 16 sentences, K updates, one thread); resume_tcp
# NAME ARGS... (the run of $tmp/NAME resumed half-way and over tcp:
# bitwise the straight shm run; the checkpoint half-way kept in
# $tmp/half).
. "${HG_SRCDIR:-.}/tests/mnist-common.sh"
K=${HG_STRATEGY_UPDATES:-6}

fm_shards
run() { # save-dir args...
    d=$1
    shift
    "$HGTRAIN" --task mnist --data "$tmp/fm" --valid-subset test --dropout 0 \
        --optimizer sgd --momentum 0.9 --lr 0.01 --seed 5 --log-format json \
        --log-interval 1 --validate-interval 0 --threads 1 --save-dir "$tmp/$d" "$@"
}
losses() { sed -n 's/.*"update": \([0-9]*\),.*"loss": \([0-9.]*\),.*/\1 \2/p' "$1"; }
same_losses() { # a b: every update's loss within 1e-5 (relative)
    losses "$1" >"$tmp/la"
    losses "$2" >"$tmp/lb"
    [ "$(wc -l <"$tmp/la")" -ge "$K" ] && [ "$(wc -l <"$tmp/lb")" = "$(wc -l <"$tmp/la")" ] &&
        paste "$tmp/la" "$tmp/lb" | awk '{ if ($1 != $3) exit 1; d = $2 - $4; if (d < 0) d = -d;
            if (d > 1e-5 * $2 + 1e-4) exit 1 }'
}
check() { # name ref: ok (status 0) or bad (status 1); ref run by twice
    f0=$fail
    fail=0
    same_losses "$tmp/$2.log" "$tmp/$1.log" ||
        { paste "$tmp/la" "$tmp/lb" | head -n 5; bad "$1: losses differ from 1 rank"; }
    equiv "$1" "$2" || { cat "$tmp/cmp"; bad "$1: differs from 1 rank"; }
    [ $fail = 0 ] && echo "ok: $1 == 1 rank ($(tr '\n' ' ' <"$tmp/cmp"))"
    [ $fail = 0 ] && fail=$f0
    [ $fail = 0 ]
}

cat >"$tmp/c2.cfg" <<'EOF'
name = "two";
nodes = ( { name = "localhost";
    devices = ( { kind = "cpu"; model = "fast"; count = 1; memory = "4GiB";
                  peak_flops = "200GFLOP/s"; memory_bandwidth = "20GB/s"; speed = 2.0; },
                { kind = "cpu"; model = "slow"; count = 1; memory = "4GiB";
                  peak_flops = "100GFLOP/s"; memory_bandwidth = "20GB/s"; speed = 1.0; } );
    intra = { kind = "shm"; bandwidth = "12GB/s"; latency = "1us"; }; } );
EOF
sed 's/"two"/"three"/; /model = "slow"/ s/count = 1/count = 2/' "$tmp/c2.cfg" >"$tmp/c3.cfg"
grep -q 'model = "slow"; count = 2' "$tmp/c3.cfg" || bad "c3.cfg: the edit did not apply"
sed 's/"two"/"four"/; /model = "slow"/ s/count = 1/count = 3/' "$tmp/c2.cfg" >"$tmp/c4.cfg"
grep -q 'model = "slow"; count = 3' "$tmp/c4.cfg" || bad "c4.cfg: the edit did not apply"

mt_data() {
    c=${HG_SRCDIR:-.}/tests/data/corpus
    head -n 200 "$c.en" >"$tmp/valid.en"
    head -n 200 "$c.es" >"$tmp/valid.es"
    "$HGPRE" translation --source-lang en --target-lang es --trainpref "$c" \
        --validpref "$tmp/valid" --destdir "$tmp/mt" --bpe-merges 500 >"$tmp/premt.log" 2>&1 ||
        { cat "$tmp/premt.log"; bad "hgpreprocess translation"; }
    TA="--source-lang en --target-lang es --dropout 0 --activation-fn gelu --encoder-layers 1
        --decoder-layers 1 --encoder-embed-dim 32 --decoder-embed-dim 32 --encoder-ffn-embed-dim 64
        --decoder-ffn-embed-dim 64 --encoder-attention-heads 2 --decoder-attention-heads 2"
}
runb() { # save-dir args...
    d=$1
    shift
    "$HGTRAIN" --task bert --data "$tmp/lm" --dropout 0 --activation-fn gelu --optimizer adam \
        --lr 0.0005 --seed 3 --log-format json --log-interval 1 --validate-interval 0 --threads 1 \
        --required-batch-size-multiple 1 --max-sentences 16 --max-update "$K" \
        --save-dir "$tmp/$d" "$@"
}
runt() { # save-dir args...
    d=$1
    shift
    "$HGTRAIN" --task translation --data "$tmp/mt" $TA --optimizer adam --lr 0.001 \
        --seed 3 --log-format json --log-interval 1 --validate-interval 0 --threads 1 \
        --required-batch-size-multiple 1 --max-sentences 16 --max-update "$K" \
        --save-dir "$tmp/$d" "$@"
}
resume_tcp() { # name args...
    rn=$1
    shift
    run resume "$@" --max-update $((K / 2)) >"$tmp/resume1.log" 2>&1 || bad "$rn to update $((K / 2))"
    mkdir -p "$tmp/half" && cp "$tmp/resume/checkpoint_last.h5" "$tmp/half/" ||
        bad "$rn: no checkpoint at update $((K / 2))"
    run resume "$@" --max-update "$K" >"$tmp/resume2.log" 2>&1 || bad "$rn resumed"
    grep -q "loaded .* $((K / 2)) updates" "$tmp/resume2.log" ||
        { head -n 5 "$tmp/resume2.log"; bad "$rn: the resume did not load update $((K / 2))"; }
    run tcp "$@" --max-update "$K" --distributed-backend tcp >"$tmp/tcp.log" 2>&1 ||
        { cat "$tmp/tcp.log"; bad "$rn over tcp"; }
    for d in resume tcp; do
        "$CMP" "$tmp/$rn/checkpoint_last.h5" "$tmp/$d/checkpoint_last.h5" 0 >"$tmp/cmp" 2>&1 ||
            { cat "$tmp/cmp"; bad "$rn: $d differs from the straight shm run"; }
    done
    echo "ok: $rn resumed and over tcp: bitwise"
}
