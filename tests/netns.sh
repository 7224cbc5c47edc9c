#!/bin/sh
# Integration test of scripts/netns-cluster (a cluster of network
# namespaces joined by shaped links):
#  1. without root it refuses with a clear message and makes nothing;
#  2. `up` makes two nodes, node 0's link shaped to 100 Mbit/s: a stream
#     between them runs at 70-105 Mbit/s, the unshaped loopback far faster;
#     hgplan --profile-links tcp, one process in each node, measures the
#     link: its tcp sendrecv bandwidth fit is 60-110 Mbit/s;
#  3. training across the two nodes (one launcher and rank in each, the tcp
#     backend over the shaped link) gives the parameters of the same two
#     ranks on shm (ckpt_cmp);
#  4. `down` removes exactly what `up` made: a namespace of the same prefix
#     made by someone else survives, and `down` of a name it never made is
#     refused;
#  5. `run` removes its nodes when its command fails and when the script is
#     stopped by SIGTERM mid-command or while it builds them (no namespace,
#     no process left).
# SKIP (77) when not root, or namespaces, bridges or tbf are not available.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPRE=${HGPREPROCESS:-$B/hgpreprocess}
HGPLAN=${HGPLAN:-$B/hgplan}
CMP=${CKPT_CMP:-$B/tests/ckpt_cmp}
NC=$S/scripts/netns-cluster
SRC=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
[ "$(id -u)" = 0 ] || { echo "SKIP: not root (network namespaces)"; exit 77; }
command -v ip >/dev/null 2>&1 || { echo "SKIP: no iproute2"; exit 77; }
[ -f "$SRC/train-images-idx3-ubyte.gz" ] ||
    { echo "SKIP: no Fashion-MNIST at $SRC (Debian package dataset-fashion-mnist)"; exit 77; }
tmp=$(mktemp -d) || exit 1
name=hgt$$
export HG_NETNS_STATE=$tmp/state HG_NETNS_SUBNET=10.$((100 + $$ % 100)).$(($$ % 200))
trap '"$NC" down $name >/dev/null 2>&1; "$NC" down ${name}r >/dev/null 2>&1;
      ip netns del ${name}x-n0 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
ours() { ip netns list | awk '{print $1}' | grep -c "^$1-" ; }

# 0. can this machine do it at all?
if ! ip netns add "${name}probe" 2>/dev/null; then
    echo "SKIP: cannot create network namespaces here"
    exit 77
fi
ok=1
ip -n "${name}probe" link add br0 type bridge 2>/dev/null || ok=0
ip -n "${name}probe" link add v0 type veth peer name v1 2>/dev/null || ok=0
ip netns exec "${name}probe" tc qdisc add dev v0 root tbf rate 1mbit burst 64kb \
    latency 100ms 2>/dev/null || ok=0
ip netns del "${name}probe"
[ $ok = 1 ] || { echo "SKIP: no bridge, veth or tbf qdisc in this kernel"; exit 77; }

# 1. not root
if command -v setpriv >/dev/null 2>&1; then
    out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$NC" up ${name} 1mbit 2>&1)
    rc=$?
    [ $rc -ne 0 ] || bad "not root: exit 0"
    echo "$out" | grep -q "needs root" || bad "not root: message '$out'"
    [ "$(ours $name)" = 0 ] || bad "not root: namespaces made"
    echo "ok: without root: $out"
fi

# 2. up, and the shaped link's bandwidth
"$NC" up $name 100mbit,0 || { echo "FAIL: up"; exit 1; }
[ "$(ours $name)" = 3 ] || bad "up: $(ours $name) namespaces, expected 3"
cat >"$tmp/tp.py" <<'EOF'
import socket, sys, time
ip, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if mode == 's':
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((ip, port)); s.listen(1); c, _ = s.accept()
    while c.recv(1 << 20): pass
    c.sendall(b'k')
else:
    for _ in range(100):
        try: s = socket.create_connection((ip, port)); break
        except OSError: time.sleep(0.05)
    buf = b'x' * (1 << 20); t = time.time()
    for _ in range(16): s.sendall(buf)
    s.shutdown(socket.SHUT_WR); s.recv(1)
    print('%.1f' % (16 * 8 * 1.048576 / (time.time() - t)))
EOF
ip0=$HG_NETNS_SUBNET.1 ip1=$HG_NETNS_SUBNET.2
if command -v python3 >/dev/null 2>&1; then
    "$NC" exec $name 1 python3 "$tmp/tp.py" "$ip1" 5601 s &
    mbit=$("$NC" exec $name 0 python3 "$tmp/tp.py" "$ip1" 5601 c)
    wait
    echo "ok: node 0 -> node 1 over the 100 Mbit/s link: $mbit Mbit/s"
    awk -v m="$mbit" 'BEGIN { exit !(m >= 70 && m <= 105) }' ||
        bad "shaped link: $mbit Mbit/s, expected 70-105"
fi

# the profiler across the nodes: rank 0 in node 0 (the shaped link), rank 1
# in node 1; messages of 1 and 4 MiB (tbf lets a burst of 64 KB through at
# once, so a message of a few times that looks faster than the rate)
# on_both TAG FN: FN R (rank R's command, run in node R) for R = 0 and 1
# at once, output in $tmp/TAG0.log and TAG1.log; rc0, rc1: their statuses
token=0123456789abcdef0123456789abcdef
on_both() {
    for r in 0 1; do
        "$2" $r >"$tmp/$1$r.log" 2>&1 &
        eval "q$r=\$!"
    done
    # shellcheck disable=SC2154
    wait "$q0"
    rc0=$?
    # shellcheck disable=SC2154
    wait "$q1"
    rc1=$?
}
lport=$((24000 + $$ % 20000))
links_rank() { # r
    HG_JOB_TOKEN=$token "$NC" exec $name "$1" "$HGPLAN" --profile-links tcp --distributed-world-size 2 --distributed-rank "$1" \
        --distributed-init-method "tcp://$ip0:$lport" --distributed-timeout 60 \
        --profile-sizes 1048576,4194304 --profile-repeats 3 --profile-warmup 1 \
        --profile-out "$tmp/links.cfg"
}
on_both links links_rank
if [ $rc0 -ne 0 ] || [ $rc1 -ne 0 ]; then
    cat "$tmp/links0.log" "$tmp/links1.log"
    bad "hgplan --profile-links tcp across the nodes: exit $rc0 $rc1"
else
    grep '  tcp ' "$tmp/links0.log"
    bw=$(awk 'f { if (match($0, /bandwidth = [^;]*/)) print substr($0, RSTART + 12, RLENGTH - 12); exit }
              index($0, "kind = \"tcp\"; op = \"sendrecv\"") { f = 1 }' "$tmp/links.cfg")
    mbit=$(awk -v b="$bw" 'BEGIN { printf "%.1f", b * 8 / 1e6 }')
    echo "ok: the profiler's tcp sendrecv fit over the 100 Mbit/s link: $mbit Mbit/s"
    awk -v m="$mbit" 'BEGIN { exit !(m >= 60 && m <= 110) }' ||
        bad "measured tcp bandwidth $mbit Mbit/s (bandwidth = '$bw'), expected 60-110"
fi

# 3. training across the nodes == the same ranks on shm
"$HGPRE" images --fashion-mnist "$SRC" --out "$tmp/fm" >"$tmp/pre.log" 2>&1 ||
    { cat "$tmp/pre.log"; echo "FAIL: hgpreprocess images"; exit 1; }
args="--task mnist --data $tmp/fm --valid-subset test --optimizer sgd --lr 0.01
      --momentum 0.9 --log-format json --validate-interval 0 --max-update 4
      --max-sentences-per-rank 64,32 --threads 1 --distributed-timeout 60 --seed 3"
# shellcheck disable=SC2086
"$HGTRAIN" $args --devices cpu:2 --save-dir "$tmp/shm" >"$tmp/shm.log" 2>&1 ||
    { cat "$tmp/shm.log"; bad "2 ranks on shm"; }
port=$((21000 + $$ % 20000))
net_rank() { # r
    # shellcheck disable=SC2086
    HG_JOB_TOKEN=$token "$NC" exec $name "$1" "$HGTRAIN" $args --distributed-world-size 2 --distributed-rank "$1" \
        --distributed-init-method "tcp://$ip0:$port" --save-dir "$tmp/net$1"
}
on_both net net_rank
if [ $rc0 -ne 0 ] || [ $rc1 -ne 0 ]; then
    cat "$tmp/net0.log" "$tmp/net1.log"
    bad "two nodes over the shaped link: exit $rc0 $rc1"
else
    "$CMP" "$tmp/shm/checkpoint_last.h5" "$tmp/net0/checkpoint_last.h5" 1e-6 \
        >"$tmp/cmp.log" 2>&1 || { cat "$tmp/cmp.log"; bad "nodes over tcp != shm"; }
    echo "ok: two nodes over the 100 Mbit/s link == two ranks on shm ($(head -n 1 "$tmp/cmp.log"))"
fi

# 4. down removes what up made, nothing else
ip netns add ${name}x-n0
"$NC" down ${name}x >"$tmp/down.log" 2>&1 && bad "down of a cluster never made: exit 0"
grep -q "nothing removed" "$tmp/down.log" || bad "down of a foreign name: $(cat "$tmp/down.log")"
ip netns list | awk '{print $1}' | grep -qx ${name}x-n0 || bad "a foreign namespace was removed"
"$NC" down $name || bad "down"
[ "$(ours $name)" = 0 ] || bad "down left $(ours $name) namespaces"
[ -e "$HG_NETNS_STATE/$name" ] && bad "down left its state file"
echo "ok: down removed its 3 namespaces; a foreign one survived"

# 5. run cleans up after a failing command and after SIGTERM
"$NC" run ${name}r 1mbit,1mbit sh -c 'exit 3'
rc=$?
[ $rc = 3 ] || bad "run: exit $rc, expected the command's 3"
[ "$(ours ${name}r)" = 0 ] || bad "run left namespaces after a failing command"
"$NC" run ${name}r 1mbit,1mbit sh -c '"$0" exec "$HG_NETNS_NAME" 1 sleep 300' "$NC" &
rp=$!
i=0
# until the command's sleep runs in node 1 (up's own commands run there too)
while ! ip netns pids ${name}r-n1 2>/dev/null | xargs -r ps -o comm= -p | grep -qx sleep &&
    [ $i -lt 100 ]; do
    sleep 0.1
    i=$((i + 1))
done
kill -TERM $rp
wait $rp
rc=$?
[ $rc = 143 ] || bad "run stopped by SIGTERM: exit $rc, expected 143"
[ "$(ours ${name}r)" = 0 ] || bad "run left namespaces after SIGTERM"
pgrep -f "sleep 300" >/dev/null && { pkill -f "sleep 300"; bad "a process in a node outlived run"; }
echo "ok: run removed its nodes after exit 3 and after SIGTERM ($rc)"
# SIGTERM while `up` still builds the nodes
"$NC" run ${name}u 1mbit,1mbit sleep 300 >/dev/null 2>&1 &
rp=$!
sleep 0.2
kill -TERM $rp
wait $rp
[ "$(ours ${name}u)" = 0 ] && [ ! -e "$HG_NETNS_STATE/${name}u" ] ||
    bad "run left namespaces or its state file after SIGTERM early on"
pkill -f "sleep 300" && bad "a process in a node outlived run (SIGTERM early on)"

[ $fail = 0 ] && echo PASS
exit $fail
