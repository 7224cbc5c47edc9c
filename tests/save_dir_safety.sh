#!/bin/sh
# Integration test: a --save-dir another user can write loses nothing
# (docs/data.md, "The save dir").  As root, with a second user (nobody):
#  1. a planted SAVE/hgtrain.lock -> victim: the run refuses (the 0777 dir;
#     with --allow-shared-save-dir, the symlink), victim unchanged;
#  2. checkpoint_*.h5.tmp -> victim2 planted over and over while training
#     saves every 10 updates to 25 (--allow-shared-save-dir): victim2 unchanged,
#     every checkpoint a regular file, none lost;
#  3. a checkpoint_last.h5 owned by nobody, mode 0666: refused, naming it;
#  4. a 0777 save dir: refused, naming it; used with --allow-shared-save-dir;
#     a 1777 one (sticky) used;
#  5. the lock, checkpoints, strategy.cfg (--plan) and --log-file are 0600,
#     0640 with --group-readable (umask 022);
#  6. a --log-file planted as a symlink: refused, never followed;
#  7. a sharded checkpoint's shard others can write, or another user's:
#     the resume refused naming it (accepted with --allow-shared-save-dir).
# SKIP (77) when not root, without setpriv or su, or without user nobody.
set -u
if [ "$(id -u)" != 0 ]; then
    echo "SKIP: not root (the attacks need a second user)"
    exit 77
fi
if ! id nobody >/dev/null 2>&1; then
    echo "SKIP: no user nobody"
    exit 77
fi
if command -v setpriv >/dev/null 2>&1; then
    as_nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }
elif command -v su >/dev/null 2>&1; then
    as_nobody() { su -s /bin/sh nobody -c "$(printf '%s ' "$@")"; }
else
    echo "SKIP: neither setpriv nor su"
    exit 77
fi
. "${HG_SRCDIR:-.}/tests/mnist-common.sh"
chmod 755 "$tmp"
if ! as_nobody test -x "$tmp"; then
    echo "SKIP: nobody cannot reach $tmp"
    exit 77
fi
fm_shards
umask 022
run() { # save-dir args...
    d=$1
    shift
    "$HGTRAIN" --task mnist --data "$tmp/fm" --valid-subset test --batch-size 64 \
        --optimizer sgd --lr 0.01 --seed 3 --threads 1 --log-format simple \
        --validate-interval 0 --save-dir "$d" "$@"
}
mode() { stat -c %a "$1"; }
regular() { [ -f "$1" ] && [ ! -L "$1" ]; }
printf 'secret 1\n' >"$tmp/victim"
printf 'secret 2\n' >"$tmp/victim2"
chmod 600 "$tmp/victim" "$tmp/victim2"

# 1. the lock planted as a symlink
d=$tmp/s1
mkdir "$d" && chmod 777 "$d"
as_nobody ln -s "$tmp/victim" "$d/hgtrain.lock"
if run "$d" --max-update 2 >"$tmp/1a.log" 2>&1; then
    bad "1: a 0777 save dir with a planted lock was used"
else
    grep -q -- "--save-dir $d: .*0777" "$tmp/1a.log" || { cat "$tmp/1a.log"; bad "1: no message naming the save dir"; }
fi
if run "$d" --max-update 2 --allow-shared-save-dir >"$tmp/1b.log" 2>&1; then
    bad "1: a planted hgtrain.lock symlink was accepted"
else
    grep -q "hgtrain.lock: a symbolic link" "$tmp/1b.log" || { cat "$tmp/1b.log"; bad "1: no message naming hgtrain.lock"; }
fi
[ "$(cat "$tmp/victim")" = "secret 1" ] || bad "1: victim overwritten through hgtrain.lock"
[ -L "$d/hgtrain.lock" ] || bad "1: the planted symlink is gone"

# 2. .tmp symlinks planted over and over during training
d=$tmp/s2
mkdir "$d" && chmod 777 "$d"
as_nobody sh -c "while [ ! -e '$tmp/stop' ]; do
    for n in 1_10 1_20 1_30 last; do ln -s '$tmp/victim2' '$d/checkpoint_'\$n'.h5.tmp' 2>/dev/null; done
    sleep 0.05; done" &
attacker=$!
sleep 0.3
run "$d" --max-update 25 --save-interval-updates 10 --allow-shared-save-dir >"$tmp/2.log" 2>&1 ||
    { cat "$tmp/2.log"; bad "2: the run failed"; }
touch "$tmp/stop"
wait "$attacker"
[ "$(cat "$tmp/victim2")" = "secret 2" ] || bad "2: victim2 overwritten through a planted .tmp"
for c in checkpoint_1_10.h5 checkpoint_1_20.h5 checkpoint_last.h5; do
    regular "$d/$c" || { ls -l "$d"; bad "2: $c is not a regular file (or lost)"; }
done
cmp -s "$d/checkpoint_1_10.h5" "$d/checkpoint_1_20.h5" && bad "2: the update-10 checkpoint is the update-20 one"

# 3. checkpoint_last.h5 of another user, mode 0666
d=$tmp/s3
mkdir "$d"
cp "$tmp/s2/checkpoint_1_10.h5" "$d/checkpoint_last.h5"
chown nobody "$d/checkpoint_last.h5" && chmod 666 "$d/checkpoint_last.h5"
if run "$d" --max-update 12 >"$tmp/3.log" 2>&1; then
    bad "3: another user's 0666 checkpoint_last.h5 was loaded"
else
    grep -q "checkpoint $d/checkpoint_last.h5: owned by uid" "$tmp/3.log" ||
        { cat "$tmp/3.log"; bad "3: no message naming checkpoint_last.h5"; }
fi
chown root "$d/checkpoint_last.h5"
if run "$d" --max-update 12 >"$tmp/3b.log" 2>&1; then
    bad "3: a 0666 checkpoint_last.h5 was loaded"
else
    grep -q "checkpoint_last.h5: mode 0666 lets others write it" "$tmp/3b.log" ||
        { cat "$tmp/3b.log"; bad "3: no message naming the mode"; }
fi
chmod 600 "$d/checkpoint_last.h5"
run "$d" --max-update 12 >"$tmp/3c.log" 2>&1 || { cat "$tmp/3c.log"; bad "3: our own checkpoint was refused"; }

# 4. a 0777 save dir refused; accepted when asked; a sticky one accepted
d=$tmp/s4
mkdir "$d" && chmod 777 "$d"
if run "$d" --max-update 2 >"$tmp/4.log" 2>&1; then
    bad "4: a 0777 save dir was used"
else
    grep -q -- "--save-dir $d: mode 0777 lets everyone write it.*--allow-shared-save-dir" "$tmp/4.log" ||
        { cat "$tmp/4.log"; bad "4: no message naming the save dir"; }
fi
[ -e "$d/checkpoint_last.h5" ] && bad "4: a checkpoint written in the refused dir"
run "$d" --max-update 2 --allow-shared-save-dir >"$tmp/4b.log" 2>&1 ||
    { cat "$tmp/4b.log"; bad "4: --allow-shared-save-dir refused"; }
grep -q "warning: --save-dir $d: mode 0777" "$tmp/4b.log" || bad "4: no warning"
regular "$d/checkpoint_last.h5" || bad "4: no checkpoint_last.h5 with --allow-shared-save-dir"
d=$tmp/s4s
mkdir "$d" && chmod 1777 "$d"
run "$d" --max-update 2 >"$tmp/4c.log" 2>&1 || { cat "$tmp/4c.log"; bad "4: a sticky 1777 save dir refused"; }

# 5. modes
# two CPU ranks (the repo's example cluster; --plan prices it by the roofline)
c2=${HG_SRCDIR:-.}/examples/clusters/shm-2cpu-slow3.cfg
for g in 0 1; do
    d=$tmp/s5$g
    if [ $g = 1 ]; then want=640 extra=--group-readable; else want=600 extra=; fi
    run "$d" --max-update 2 --devices cpu:2 --cluster-file "$c2" --max-sentences 64 \
        --plan baselines --log-file "$d.log" $extra >"$tmp/5$g.log" 2>&1 ||
        { cat "$tmp/5$g.log"; bad "5: run $g failed"; continue; }
    for f in "$d/strategy.cfg" "$d.log" "$d/checkpoint_last.h5" "$d/hgtrain.lock"; do
        [ "$(mode "$f" 2>/dev/null)" = "$want" ] || bad "5: $f is mode $(mode "$f" 2>/dev/null), not $want"
    done
done
# a --log-file planted as a symlink is refused, never followed
d=$tmp/s6
mkdir "$d"
ln -s "$tmp/victim" "$d/train.log"
run "$d" --max-update 2 --log-file "$d/train.log" >"$tmp/6.log" 2>&1 && bad "6: a symlinked --log-file was used"
grep -q -- "--log-file $d/train.log: a symbolic link" "$tmp/6.log" || { cat "$tmp/6.log"; bad "6: no message naming the log file"; }
[ "$(cat "$tmp/victim")" = "secret 1" ] || bad "6: victim written through --log-file"
# 7. a sharded checkpoint's shard that others can write, or another
#    user's: refused on resume, naming the shard; accepted when asked
d=$tmp/s7
mkdir "$d"
run "$d" --max-update 4 --devices cpu:2 --save-sharded >"$tmp/7.log" 2>&1 ||
    { cat "$tmp/7.log"; bad "7: the sharded run failed"; }
sh=$(ls "$d"/checkpoint_last.h5.*shard* 2>/dev/null | head -n 1)
if [ -z "$sh" ]; then
    bad "7: no shard written"
else
    chmod 666 "$sh"
    run "$d" --max-update 6 --devices cpu:2 --save-sharded >"$tmp/7b.log" 2>&1 &&
        bad "7: a shard others can write was loaded"
    grep -q "shard $sh: others can write it: refused" "$tmp/7b.log" ||
        { cat "$tmp/7b.log"; bad "7: no message naming the writable shard"; }
    chmod 600 "$sh" && chown nobody "$sh"
    run "$d" --max-update 6 --devices cpu:2 --save-sharded >"$tmp/7c.log" 2>&1 &&
        bad "7: another user's shard was loaded"
    grep -q "shard $sh: owned by another user: refused" "$tmp/7c.log" ||
        { cat "$tmp/7c.log"; bad "7: no message naming the other user's shard"; }
    run "$d" --max-update 6 --devices cpu:2 --save-sharded --allow-shared-save-dir \
        >"$tmp/7d.log" 2>&1 || { cat "$tmp/7d.log"; bad "7: refused with --allow-shared-save-dir"; }
fi
[ $fail = 0 ] && echo "PASS: save_dir_safety"
exit $fail
