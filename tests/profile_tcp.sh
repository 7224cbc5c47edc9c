#!/bin/sh
# tests/profile_tcp.sh - hgplan --profile-links tcp (docs/planner.md,
# "Profiler"), without root: two hgplan processes on 127.0.0.1, joined as
# hgtrain's ranks join (the store on rank 0, the job token, the tcp backend):
#  1. rank 0 writes a profile with (tcp, allreduce, 2), (tcp, sendrecv, 2)
#     and (tcp, ps, 2) entries whose fits are sane (latency below 50 ms,
#     above 0 for the ping-pong; 0 allowed for the others: the fit's
#     intercept, clamped, came out negative once under ASan when one small
#     AllReduce size was timed slow; bandwidth above 1 MB/s), merged into
#     --profile's entries; rank 1 writes nothing;
#  2. hgplan --profile FILE --cluster C prices a 2-node cluster with them:
#     the cluster summary shows the measured network; --dp's step (its
#     AllReduce) changes when the tcp allreduce entry changes and EV-PS's
#     when the tcp ps entry changes, while the other stays; without the
#     tcp entries the roofline's network prices it again;
#  3. refusals: no token, a rank outside the world, --task beside tcp,
#     --distributed-* without --profile-links tcp, a bad init method (exit
#     2); a rank whose peers never come gives up within the timeout with a
#     message (exit 1); a rank killed while measuring is named by the other
#     at once, which writes no profile (exit 1).
set -u
B=${HG_BUILDDIR:-.}
HGPLAN=${HGPLAN:-$B/hgplan}
tmp=$(mktemp -d) || exit 1
pids=
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
export HG_JOB_TOKEN=0123456789abcdef0123456789abcdef
. "${HG_SRCDIR:-.}/tests/port-common.sh"
port=$(free_ports 3) || exit 1
sizes="--profile-sizes 4096,65536,1048576 --profile-repeats 9 --profile-warmup 1"

# a profile with a device, so that merging is seen
cat >"$tmp/base.cfg" <<'EOF'
version = 1;
devices = ({ name = "cpu-t1"; kind = "cpu"; });
EOF

# 1. two ranks on 127.0.0.1
for r in 0 1; do
    # shellcheck disable=SC2086
    "$HGPLAN" --profile-links tcp --distributed-world-size 2 --distributed-rank $r \
        --distributed-init-method "tcp://127.0.0.1:$port" --distributed-timeout 60 $sizes \
        --profile "$tmp/base.cfg" --profile-out "$tmp/tcp$r.cfg" >"$tmp/r$r.log" 2>&1 &
    eval "p$r=\$!"
    pids="$pids $!"
done
# shellcheck disable=SC2154
wait "$p0"
rc0=$?
# shellcheck disable=SC2154
wait "$p1"
rc1=$?
pids=
if [ $rc0 -ne 0 ] || [ $rc1 -ne 0 ]; then
    cat "$tmp/r0.log" "$tmp/r1.log"
    echo "FAIL: two ranks on 127.0.0.1: exit $rc0 $rc1"
    exit 1
fi
cat "$tmp/r0.log"
[ -e "$tmp/tcp1.cfg" ] && bad "rank 1 wrote a profile"
grep -q 'name = "cpu-t1"' "$tmp/tcp0.cfg" || bad "--profile's device not merged"
for op in allreduce sendrecv ps; do
    # the entry: "{ kind = "tcp"; op = ...; world = 2;" then "latency = L; bandwidth = W;"
    line=$(awk -v op="$op" 'f { print; exit } index($0, "kind = \"tcp\"; op = \"" op "\"; world = 2;") { f = 1 }' \
        "$tmp/tcp0.cfg")
    lat=$(echo "$line" | sed -n 's/.*latency = \([^;]*\);.*/\1/p')
    bw=$(echo "$line" | sed -n 's/.*bandwidth = \([^;]*\);.*/\1/p')
    [ -n "$lat" ] && [ -n "$bw" ] || { cat "$tmp/tcp0.cfg"; bad "no (tcp, $op, 2) entry"; continue; }
    min=0
    [ "$op" = sendrecv ] && min=1e-9
    awk -v l="$lat" -v b="$bw" -v m="$min" 'BEGIN { exit !(l >= m && l < 0.05 && b > 1e6) }' ||
        bad "(tcp, $op, 2): latency $lat s, bandwidth $bw B/s (want $min <= latency < 50 ms, > 1 MB/s)"
    echo "ok: (tcp, $op, 2): latency $lat s, bandwidth $bw B/s"
done

# 2. pricing a 2-node cluster with it
cat >"$tmp/two.cfg" <<'EOF'
network = { switch_bandwidth = "1Gbps"; latency = "50us"; };
nodes = (
    { name = "n0"; nic_bandwidth = "1Gbps";
      devices = ( { kind = "cpu"; count = 1; memory = "8GiB"; peak_flops = "100GFLOP/s";
                    memory_bandwidth = "20GB/s"; } ); },
    { name = "n1"; nic_bandwidth = "1Gbps";
      devices = ( { kind = "cpu"; count = 1; memory = "8GiB"; peak_flops = "100GFLOP/s";
                    memory_bandwidth = "20GB/s"; } ); }
);
EOF
# scale: the profile with the bandwidth of the tcp entry of op $2 set to $3
scale() {
    awk -v op="$2" -v bw="$3" '
        f { sub(/bandwidth = [^;]*/, "bandwidth = " bw); f = 0 }
        index($0, "kind = \"tcp\"; op = \"" op "\";") { f = 1 }
        { print }' "$1"
}
scale "$tmp/tcp0.cfg" allreduce 1.0e+05 >"$tmp/slow_ar.cfg"
scale "$tmp/tcp0.cfg" ps 1.0e+05 >"$tmp/slow_ps.cfg"
price() { # profile-or-none what -> the step in seconds of row $2
    if [ "$1" = none ]; then
        "$HGPLAN" --task mnist --optimizer sgd --batch 16 --cluster "$tmp/two.cfg" \
            --search baselines >"$tmp/price.out" 2>&1
    else
        "$HGPLAN" --task mnist --optimizer sgd --batch 16 --cluster "$tmp/two.cfg" \
            --profile "$1" --search baselines >"$tmp/price.out" 2>&1
    fi || { cat "$tmp/price.out"; bad "hgplan --search baselines with $1"; }
    awk -v s="$2" '$1 == s && $3 == "s" { print $2; exit }' "$tmp/price.out"
}
"$HGPLAN" --task mnist --optimizer sgd --batch 16 --cluster "$tmp/two.cfg" \
    --profile "$tmp/tcp0.cfg" --dp >"$tmp/dp.out" 2>&1 || { cat "$tmp/dp.out"; bad "--dp"; }
grep -q 'profiled, tcp' "$tmp/dp.out" || { cat "$tmp/dp.out"; bad "cluster summary lacks the measured network"; }
dp() { # profile -> dp step, s
    "$HGPLAN" --task mnist --optimizer sgd --batch 16 --cluster "$tmp/two.cfg" \
        --profile "$1" --dp 2>&1 | awk '$1 == "dp" && $3 == "s" { print $2; exit }'
}
dp0=$(dp "$tmp/tcp0.cfg")
dp_ar=$(dp "$tmp/slow_ar.cfg")
dp_ps=$(dp "$tmp/slow_ps.cfg")
ar0=$(price "$tmp/tcp0.cfg" EV-AR)
ps0=$(price "$tmp/tcp0.cfg" EV-PS)
ar_ps=$(price "$tmp/slow_ps.cfg" EV-AR)
ps_ps=$(price "$tmp/slow_ps.cfg" EV-PS)
ps_none=$(price none EV-PS)
echo "dp step: measured links $dp0 s; tcp allreduce at 100 kB/s $dp_ar s; tcp ps at 100 kB/s $dp_ps s"
echo "EV-AR / EV-PS: measured $ar0 / $ps0 s; tcp ps at 100 kB/s $ar_ps / $ps_ps s; roofline network EV-PS $ps_none s"
num() { awk -v x="$1" 'BEGIN { exit !(x + 0 > 0) }'; }
for v in "$dp0" "$dp_ar" "$dp_ps" "$ar0" "$ps0" "$ar_ps" "$ps_ps" "$ps_none"; do
    num "$v" || bad "a price is not a positive number: '$v'"
done
# the gradients of mnist (about 1.3 MB) at 100 kB/s: seconds, not milliseconds
awk -v a="$dp_ar" -v b="$dp0" 'BEGIN { exit !(a > b + 1) }' ||
    bad "dp step does not follow the tcp allreduce fit ($dp0 -> $dp_ar s)"
[ "$dp_ps" = "$dp0" ] || bad "dp step moved with the tcp ps entry ($dp0 -> $dp_ps s)"
awk -v a="$ps_ps" -v b="$ps0" 'BEGIN { exit !(a > b + 1) }' ||
    bad "EV-PS does not follow the tcp ps fit ($ps0 -> $ps_ps s)"
[ "$ar_ps" = "$ar0" ] || bad "EV-AR moved with the tcp ps entry ($ar0 -> $ar_ps s)"
[ "$ps_none" != "$ps0" ] || bad "EV-PS is the roofline's with the tcp entries ($ps0 s)"

# 3. refusals
expect() { # status what args...
    want=$1
    shift
    what=$1
    shift
    "$HGPLAN" "$@" >"$tmp/x.out" 2>&1
    got=$?
    [ $got = "$want" ] || { cat "$tmp/x.out"; bad "$what: exit $got, expected $want"; }
    grep -q . "$tmp/x.out" || bad "$what: no message"
}
lk="--profile-links tcp --distributed-world-size 2 --profile-out $tmp/x.cfg"
# shellcheck disable=SC2086
HG_JOB_TOKEN= expect 2 "no token" $lk --distributed-init-method tcp://127.0.0.1:1
grep -q 'HG_JOB_TOKEN' "$tmp/x.out" || bad "no token: $(cat "$tmp/x.out")"
# shellcheck disable=SC2086
expect 2 "rank outside" $lk --distributed-rank 2 --distributed-init-method tcp://127.0.0.1:1
# shellcheck disable=SC2086
expect 2 "--task with tcp" $lk --task mnist --distributed-init-method tcp://127.0.0.1:1
grep -q -- '--task' "$tmp/x.out" || bad "--task with tcp: $(cat "$tmp/x.out")"
# shellcheck disable=SC2086
expect 2 "bad init method" $lk --distributed-init-method 127.0.0.1:1
expect 2 "--distributed-* without tcp" --task mnist --distributed-world-size 2
expect 2 "--profile-links without --profile-out" --task mnist --profile-links tcp
t0=$(date +%s)
# shellcheck disable=SC2086
expect 1 "a peer that never comes" $lk --distributed-rank 1 --distributed-timeout 2 \
    --distributed-init-method "tcp://127.0.0.1:$((port + 1))"
t1=$(date +%s)
[ $((t1 - t0)) -le 30 ] || bad "a peer that never comes: gave up after $((t1 - t0)) s"
echo "ok: a peer that never comes: gave up after $((t1 - t0)) s: $(cat "$tmp/x.out")"

# a rank killed while measuring: the other names it at once, well within the
# timeout
k="--profile-links tcp --distributed-world-size 2 --profile-sizes 16777216 --profile-repeats 500
   --distributed-timeout 20 --distributed-init-method tcp://127.0.0.1:$((port + 2))"
# shellcheck disable=SC2086
"$HGPLAN" $k --distributed-rank 0 --profile-out "$tmp/k.cfg" >"$tmp/k0.out" 2>&1 &
k0=$!
# shellcheck disable=SC2086
"$HGPLAN" $k --distributed-rank 1 --profile-out "$tmp/k.cfg" >"$tmp/k1.out" 2>&1 &
k1=$!
pids="$k0 $k1"
i=0
while ! grep -qs 'waiting for' "$tmp/k0.out" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
kill -9 $k1
t0=$(date +%s)
wait $k0
rc=$?
t1=$(date +%s)
pids=
[ $rc = 1 ] || bad "a killed rank: the other exited $rc, expected 1"
grep -q 'rank 1' "$tmp/k0.out" || bad "a killed rank is not named: $(cat "$tmp/k0.out")"
[ $((t1 - t0)) -le 10 ] || bad "a killed rank: noticed after $((t1 - t0)) s"
[ -e "$tmp/k.cfg" ] && bad "a failed measurement wrote a profile"
echo "ok: a killed rank: noticed after $((t1 - t0)) s: $(grep hgplan: "$tmp/k0.out")"

[ $fail = 0 ] && echo PASS
exit $fail
