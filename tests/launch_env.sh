#!/bin/sh
# Launchers and the save dir:
#  1. torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
#     MASTER_PORT; HG_JOB_TOKEN for the store) runs 2 ranks on localhost
#     over tcp, with the losses of the same 2 ranks forked by --devices
#     cpu:2 (shm); --distributed-init-method env:// the same;
#  2. torchrun's variables incomplete or without a token: refused, naming
#     what is missing;
#  3. a second job on a --save-dir in use is refused naming the first
#     (pid, host); after the first ends, the save dir is free again.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPRE=${HGPREPROCESS:-$B/hgpreprocess}
tmp=$(mktemp -d) || exit 1
pids=""
trap 'for p in $pids; do kill $p 2>/dev/null; done; rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

head -n 30 "$S/tests/data/corpus.en" >"$tmp/v.en"
head -n 30 "$S/tests/data/corpus.es" >"$tmp/v.es"
"$HGPRE" translation --source-lang en --target-lang es --trainpref "$S/tests/data/corpus" \
    --validpref "$tmp/v" --destdir "$tmp/mt" --bpe-merges 100 >"$tmp/pre.log" 2>&1 ||
    { cat "$tmp/pre.log"; echo "FAIL: hgpreprocess"; exit 1; }
run() { # save-dir args...
    d=$1
    shift
    ${EXEC:-} "$HGTRAIN" --task translation --data "$tmp/mt" --source-lang en --target-lang es \
        --arch transformer_tiny --dropout 0 --optimizer adam --lr 0.002 --max-tokens 1024 \
        --seed 4 --threads 1 --log-format json --log-interval 1 --validate-interval 0 \
        --distributed-timeout 60 --save-dir "$tmp/$d" "$@"
}
losses() { sed -n 's/.*"update": \([0-9]*\),.*"loss": \([0-9.]*\),.*/\1 \2/p' "$1"; }
. "$S/tests/port-common.sh"
port=$(free_ports 7) || exit 1
tok=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')

# 1.
run shm --devices cpu:2 --max-update 8 >"$tmp/shm.log" 2>&1 || { cat "$tmp/shm.log"; bad "cpu:2"; }
torch() { # name rank extra-args...: one torchrun-style process
    n=$1 r=$2
    shift 2
    RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 \
        MASTER_PORT=$port HG_JOB_TOKEN=$tok run "$n" --max-update 8 "$@" >"$tmp/$n-$r.log" 2>&1
}
for mode in torchrun env; do
    extra=""
    [ $mode = env ] && extra="--distributed-init-method env://"
    torch $mode 0 $extra &
    p0=$!
    pids="$p0"
    torch $mode 1 $extra || { cat "$tmp/$mode-1.log"; bad "$mode: rank 1"; }
    wait $p0 || { cat "$tmp/$mode-0.log"; bad "$mode: rank 0"; }
    pids=""
    grep -q "rank 0 of 2 (torchrun), backend tcp" "$tmp/$mode-0.log" ||
        { cat "$tmp/$mode-0.log"; bad "$mode: no job line"; }
    losses "$tmp/shm.log" >"$tmp/la"
    losses "$tmp/$mode-0.log" >"$tmp/lb"
    [ "$(wc -l <"$tmp/la")" -eq 8 ] && cmp -s "$tmp/la" "$tmp/lb" ||
        { paste "$tmp/la" "$tmp/lb"; bad "$mode: losses differ from --devices cpu:2"; }
    port=$((port + 3))
done

# 2.
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 HG_JOB_TOKEN=$tok run e1 --max-update 1 >"$tmp/e" 2>&1
[ $? -ne 0 ] && grep -q "torchrun/env://: MASTER_PORT is not set" "$tmp/e" || { cat "$tmp/e"; bad "no MASTER_PORT"; }
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port run e2 --max-update 1 >"$tmp/e" 2>&1
[ $? -ne 0 ] && grep -q "torchrun/env://: .*export HG_JOB_TOKEN" "$tmp/e" || { cat "$tmp/e"; bad "no token"; }
RANK=2 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port HG_JOB_TOKEN=$tok run e3 --max-update 1 >"$tmp/e" 2>&1
[ $? -ne 0 ] && grep -q "want 0 <= RANK < WORLD_SIZE" "$tmp/e" || { cat "$tmp/e"; bad "RANK >= WORLD_SIZE"; }
run e4 --distributed-init-method env:// --max-update 1 >"$tmp/e" 2>&1
[ $? -ne 0 ] && grep -q "torchrun/env://: RANK is not set" "$tmp/e" || { cat "$tmp/e"; bad "env:// without RANK"; }

# 3. one job per save dir
(EXEC=exec run busy --max-update 100000 --log-interval 1000 >"$tmp/busy.log" 2>&1) &
p1=$!  # hgtrain itself
pids=$p1
i=0
while [ ! -s "$tmp/busy/hgtrain.lock" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
[ -s "$tmp/busy/hgtrain.lock" ] || { cat "$tmp/busy.log"; bad "no lock file"; }
run busy --max-update 2 >"$tmp/second.log" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "save-dir $tmp/busy is in use by another hgtrain job (pid $p1 on " "$tmp/second.log" ||
    { cat "$tmp/second.log"; bad "second job on the same save dir (exit $rc)"; }
kill -TERM $p1
wait $p1
pids=""
run busy --max-update 2 >"$tmp/third.log" 2>&1 || { cat "$tmp/third.log"; bad "save dir not free after the first job"; }

[ $fail = 0 ] && echo "ok  launch_env: torchrun/env:// 2 ranks == cpu:2, refusals, one job per save dir"
exit $fail
