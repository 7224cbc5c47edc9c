# port-common.sh - sourced by the scripts whose ranks meet at a fixed
# tcp://127.0.0.1:PORT: free_ports N prints a port P such that P..P+N-1 are
# bound by no socket now (/proc/net/tcp, tcp6) and lie below the kernel's
# ephemeral range, where no connect() of another test can take one between
# this check and the store's listen (a port in that range once came out
# "Address already in use" in CI).  Scripts running at the same time start
# from different places (their pid), and each skips the others' ports.
free_ports() { # n
    lo=$(awk '{ print $1; exit }' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
    [ -n "$lo" ] || lo=32768
    # from 20000: Slurm's port is 20000 + SLURM_JOB_ID % 20000 (train_dist.sh)
    base=20000
    top=$lo
    # an ephemeral range that starts low leaves nothing below it: then the
    # check of /proc alone keeps a port free
    [ "$top" -ge $((base + 2000)) ] || top=65000
    span=$((top - base - $1))
    p=$((base + ($$ * 7919) % span))
    tries=0
    while [ $tries -lt 500 ]; do
        i=0
        while [ $i -lt "$1" ]; do
            hex=$(printf '%04X' $((p + i)))
            cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -q ":$hex " && break
            i=$((i + 1))
        done
        if [ $i -eq "$1" ]; then
            echo $p
            return 0
        fi
        p=$((base + (p - base + $1 + 97) % span))
        tries=$((tries + 1))
    done
    echo "free_ports: no $1 free ports found in $base..$top" >&2
    return 1
}
