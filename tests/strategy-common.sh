# strategy-common.sh - sourced by tests/strategy.sh and
# tests/strategy_mp.sh: mnist-common.sh, the shards in $tmp/fm, run() (the
# mnist job both compare: no dropout, SGD with momentum, one thread per
# rank) and same_losses() (every update's loss within 1e-5 of the other
# log's, at least $K updates).
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
