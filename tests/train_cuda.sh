#!/bin/sh
# Integration test of the CUDA executor: the same training on cuda:0 and on
# the CPU, compared through their checkpoints (tests/ckpt_cmp):
#  1. MNIST CNN (conv, pool, linear, dropout 0.2, cross entropy, SGD with
#     momentum) on real Fashion-MNIST: 3 updates;
#  2. Transformer (translation, transformer_tiny: embeddings, attention,
#     layer norm, dropout 0.1, label smoothing, Adam) on tests/data: 3 updates;
#  3. resume on the GPU from a checkpoint == straight run (bitwise);
#  4. a GPU that does not exist is named;
#  6. --bf16: 3 updates close to fp32 (GEMM operands rounded to bf16);
#     --fp16 from a loss scale of 1e9: the overflows are skipped and halve
#     the scale (NOTE lines), then training goes on with finite losses;
#  7. one GPU with --distributed-backend nccl (world 1) and small gradient
#     buckets == the plain GPU run (bitwise): the overlapped bucket path;
#  5. with two GPUs or more: MNIST on cuda:0,cuda:1 over NCCL with uneven
#     per-rank batches (64,32) == one GPU with the union (96);
#  8. hgtrain --strategy on GPU workers: MNIST's MP baseline, a split
#     strategy (recomputation in its model-parallel group), a 2-stage
#     pipeline (4 micro-batches, 1f1b) and EV-PS on
#     two ranks of cuda:0 over shm == one GPU (1e-5); MP over NCCL refused
#     naming it;
#  9. --devices cuda:0,cpu:1 (a GPU and a CPU worker over shm, 64 + 32
#     rows) == one GPU with 96 (1e-4);
# 10. hgplan --profile-gpus 0: a gpu device cuda-0 with its ops measured.
# Dropout masks come from the same counter-based RNG on both devices.
# SKIP (77) when hgtrain has no CUDA backend or no GPU is usable.
set -u
B=${HG_BUILDDIR:-.}
S=${HG_SRCDIR:-.}
HGTRAIN=${HGTRAIN:-$B/hgtrain}
HGPRE=${HGPREPROCESS:-$B/hgpreprocess}
CMP=${CKPT_CMP:-$B/tests/ckpt_cmp}
TESTCUDA=${TEST_CUDA:-$B/tests/test_cuda}
ngpu=$("$TESTCUDA" 2>/dev/null | sed -n 's/^\([0-9]*\) CUDA device.*/\1/p')
"$TESTCUDA" >/dev/null 2>&1
rc=$?
[ $rc -eq 77 ] && { echo "SKIP: no CUDA backend or no GPU (tests/test_cuda)"; exit 77; }
[ $rc -ne 0 ] && { "$TESTCUDA"; echo "FAIL: tests/test_cuda"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
loss_of() { sed -n 's/.*"update": 3,.*"loss": \([0-9.]*\),.*/\1/p' "$1"; }

# 1. MNIST
SRC=${HG_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
if [ -f "$SRC/t10k-images-idx3-ubyte.gz" ]; then
    "$HGPRE" images --fashion-mnist "$SRC" --out "$tmp/fm" >"$tmp/pre.log" 2>&1 ||
        { cat "$tmp/pre.log"; echo "FAIL: hgpreprocess images"; exit 1; }
    for dev in cpu cuda:0; do
        "$HGTRAIN" --task mnist --data "$tmp/fm" --valid-subset test --dropout 0.2 \
            --optimizer sgd --momentum 0.9 --lr 0.01 --seed 5 --max-sentences 64 \
            --log-format json --log-interval 1 --validate-interval 0 --max-update 3 \
            --devices $dev --save-dir "$tmp/mn-$dev" >"$tmp/mn-$dev.log" 2>&1 ||
            { cat "$tmp/mn-$dev.log"; bad "mnist on $dev"; }
    done
    l1=$(loss_of "$tmp/mn-cpu.log") l2=$(loss_of "$tmp/mn-cuda:0.log")
    echo "mnist update 3 loss: cpu $l1, cuda $l2"
    "$CMP" "$tmp/mn-cuda:0/checkpoint_last.h5" "$tmp/mn-cpu/checkpoint_last.h5" 1e-4 ||
        bad "mnist: cuda and cpu parameters differ"
    # 5. two GPUs over NCCL, uneven batches, == one GPU with the union
    if [ "${ngpu:-1}" -ge 2 ]; then
        mn2() { # save-dir args...
            d=$1
            shift
            "$HGTRAIN" --task mnist --data "$tmp/fm" --valid-subset test --dropout 0 \
                --optimizer sgd --momentum 0.9 --lr 0.01 --seed 5 --log-format json \
                --log-interval 1 --validate-interval 0 --max-update 4 --save-dir "$tmp/$d" \
                "$@" >"$tmp/$d.log" 2>&1 || { cat "$tmp/$d.log"; bad "mnist $d"; }
        }
        mn2 g1 --devices cuda:0 --max-sentences 96
        mn2 g2 --devices cuda:0,cuda:1 --max-sentences-per-rank 64,32
        grep -q "backend nccl" "$tmp/g2.log" || bad "two GPUs did not use nccl"
        "$CMP" "$tmp/g2/checkpoint_last.h5" "$tmp/g1/checkpoint_last.h5" 1e-5 ||
            bad "two GPUs over NCCL differ from one GPU"
    else
        echo "note: one GPU: the two-GPU NCCL part is skipped"
    fi
    # 8. planned strategies on GPU workers: model parallel and split (a
    # group model parallel beside data-parallel ones, recomputation) on two
    # ranks of cuda:0 over shm, through the host mirror, == one GPU; over
    # NCCL refused naming the backend
    HGPLAN=${HGPLAN:-$B/hgplan}
    cat >"$tmp/g2.cfg" <<'EOF'
name = "two";
nodes = ( { name = "localhost";
    devices = ( { kind = "cpu"; model = "fast"; count = 2; memory = "4GiB";
                  peak_flops = "200GFLOP/s"; memory_bandwidth = "20GB/s"; speed = 1.0; } );
    intra = { kind = "shm"; bandwidth = "12GB/s"; latency = "1us"; }; } );
EOF
    PM="--task mnist --data $tmp/fm --dropout 0 --batch 96 --optimizer sgd --cluster $tmp/g2.cfg"
    "$HGPLAN" $PM --search baselines --groups 4 --baseline MP --out "$tmp/mp.cfg" \
        >"$tmp/plan.log" 2>&1 || { cat "$tmp/plan.log"; bad "hgplan MP"; }
    "$HGPLAN" $PM --search baselines --groups 3 --baseline EV-AR --out "$tmp/ev.cfg" \
        >"$tmp/plan.log" 2>&1 || { cat "$tmp/plan.log"; bad "hgplan EV-AR"; }
    "$HGPLAN" $PM --search baselines --groups 3 --baseline EV-PS --out "$tmp/ps.cfg" \
        >"$tmp/plan.log" 2>&1 || { cat "$tmp/plan.log"; bad "hgplan EV-PS"; }
    # a pipeline: 2 stages, 4 micro-batches, 1f1b (the split path)
    "$HGPLAN" $PM --pipeline uniform --micro-batches 4 --schedule 1f1b --out "$tmp/pipe.cfg" \
        >"$tmp/plan.log" 2>&1 || { cat "$tmp/plan.log"; bad "hgplan --pipeline"; }
    awk '/id = 1;/ { f = 1 } f && /mode = "dp"/ {
            print "      mode = \"mp\"; recompute = true; device = \"localhost:1\"; },"
            getline; f = 0; next } { print }' "$tmp/ev.cfg" >"$tmp/split.cfg"
    sm() { # save-dir args...
        d=$1
        shift
        "$HGTRAIN" --task mnist --data "$tmp/fm" --valid-subset test --dropout 0 \
            --optimizer sgd --momentum 0.9 --lr 0.01 --seed 5 --log-format json \
            --log-interval 1 --validate-interval 0 --max-update 4 --max-sentences 96 \
            --required-batch-size-multiple 1 --save-dir "$tmp/$d" "$@" >"$tmp/$d.log" 2>&1
    }
    sm s1 --devices cuda:0 || { cat "$tmp/s1.log"; bad "mnist on one GPU"; }
    for st in mp split ps pipe; do
        sm s$st --devices cuda:0,cuda:0 --distributed-backend shm --cluster-file "$tmp/g2.cfg" \
            --strategy "$tmp/$st.cfg" || { cat "$tmp/s$st.log"; bad "$st strategy on GPUs"; continue; }
        "$CMP" "$tmp/s$st/checkpoint_last.h5" "$tmp/s1/checkpoint_last.h5" 1e-5 ||
            bad "$st strategy on two GPU ranks differs from one GPU"
    done
    grep -q "split into [0-9]* pieces" "$tmp/ssplit.log" || bad "split.cfg: not a split strategy"
    grep -q "a pipeline of 2 stages, the batch of 96 in 4 micro-batches, 1f1b" "$tmp/spipe.log" ||
        bad "pipe.cfg: not a pipeline"
    if [ "${ngpu:-1}" -ge 2 ]; then
        sm snccl --devices cuda:0,cuda:1 --distributed-backend nccl --cluster-file "$tmp/g2.cfg" \
            --strategy "$tmp/mp.cfg" && bad "a model-parallel strategy over nccl ran"
        grep -q "through host memory: use --distributed-backend shm or tcp" "$tmp/snccl.log" ||
            { cat "$tmp/snccl.log"; bad "nccl: not refused naming the backend"; }
    fi
    echo "ok: model-parallel, split, parameter-server and pipeline strategies on two ranks of cuda:0 == one GPU"
    # 9. a job of both kinds: one GPU worker and one CPU worker over shm
    # (the GPU's gradients through its host mirror), uneven batches ==
    # one GPU with the union (CPU and GPU arithmetic: 1e-4)
    sm smix --devices cuda:0,cpu:1 --distributed-backend shm --max-sentences-per-rank 64,32 ||
        { cat "$tmp/smix.log"; bad "mnist on cuda:0,cpu:1"; }
    "$CMP" "$tmp/smix/checkpoint_last.h5" "$tmp/s1/checkpoint_last.h5" 1e-4 ||
        bad "cuda:0,cpu:1 differs from one GPU"
    echo "ok: cuda:0,cpu:1 (64 + 32 rows) == one GPU (96)"
    # 10. the profiler on the GPU: hgplan --profile-gpus 0 writes a gpu
    # device cuda-0 with its ops measured there (a mixed cluster's GPU)
    "$HGPLAN" --task mnist --data "$tmp/fm" --batch 64 --optimizer sgd --profile-out "$tmp/gp.cfg" \
        --profile-gpus 0 --profile-threads 1 --profile-worlds none --profile-repeats 3 \
        >"$tmp/gp.log" 2>&1 || { cat "$tmp/gp.log"; bad "hgplan --profile-gpus 0"; }
    grep -q 'name = "cuda-0"; kind = "gpu"' "$tmp/gp.cfg" ||
        { head -n 20 "$tmp/gp.cfg"; bad "--profile-gpus: no gpu device cuda-0 in the profile"; }
    [ "$(grep -c 'device = "cuda-0"' "$tmp/gp.cfg")" -gt 10 ] ||
        bad "--profile-gpus: fewer than 10 ops measured on cuda-0"
else
    echo "note: no Fashion-MNIST at $SRC: MNIST part skipped"
fi

# 2. Transformer
head -n 200 "$S/tests/data/corpus.en" >"$tmp/valid.en"
head -n 200 "$S/tests/data/corpus.es" >"$tmp/valid.es"
"$HGPRE" translation --source-lang en --target-lang es --trainpref "$S/tests/data/corpus" \
    --validpref "$tmp/valid" --destdir "$tmp/mt" --bpe-merges 500 >"$tmp/pre.log" 2>&1 ||
    { cat "$tmp/pre.log"; echo "FAIL: hgpreprocess translation"; exit 1; }
mt() { # dev save-dir args...
    dev=$1 d=$2
    shift 2
    "$HGTRAIN" --task translation --data "$tmp/mt" --source-lang en --target-lang es \
        --arch transformer_tiny --optimizer adam --adam-betas '(0.9, 0.98)' --lr 0.001 \
        --lr-scheduler inverse_sqrt --warmup-updates 50 --max-tokens 1024 --seed 3 \
        --log-format json --log-interval 1 --validate-interval 0 --devices "$dev" \
        --save-dir "$tmp/$d" "$@" >"$tmp/$d.log" 2>&1 || { cat "$tmp/$d.log"; bad "translation on $dev ($d)"; }
}
# --attention pinned: the default is fused on the CPU and unfused on a GPU,
# and the two graphs' residual dropouts draw other masks (dropout seeds mix
# in node ids), so a CPU-GPU comparison must build the same graph
mt cpu mt-cpu --max-update 3 --attention unfused
mt cuda:0 mt-cuda --max-update 3
echo "transformer update 3 loss: cpu $(loss_of "$tmp/mt-cpu.log"), cuda $(loss_of "$tmp/mt-cuda.log")"
"$CMP" "$tmp/mt-cuda/checkpoint_last.h5" "$tmp/mt-cpu/checkpoint_last.h5" 1e-4 ||
    bad "transformer: cuda and cpu parameters differ"
# the fused attention op's CUDA kernel (not the GPU default yet) against
# the CPU's fused op, attention dropout on
mt cpu mt-cpu-fused --max-update 3 --attention fused --attention-dropout 0.1
mt cuda:0 mt-cuda-fused --max-update 3 --attention fused --attention-dropout 0.1 --profile-ops
"$CMP" "$tmp/mt-cuda-fused/checkpoint_last.h5" "$tmp/mt-cpu-fused/checkpoint_last.h5" 1e-4 ||
    bad "transformer, fused attention: cuda and cpu parameters differ"
# --profile-ops on the GPU counts launches: about one or more per kernel
# call (an empty or in-place op launches nothing)
calls=$(sed -n 's/.* \([0-9]*\) kernel calls per pass.*/\1/p' "$tmp/mt-cuda-fused.log")
lpu=$(sed -n 's/.*op profile: \([0-9.]*\) launches per update on the GPU.*/\1/p' \
    "$tmp/mt-cuda-fused.log")
awk -v c="${calls:-0}" -v l="${lpu:-0}" 'BEGIN { exit !(c > 0 && l >= 0.5 * c) }' ||
    { cat "$tmp/mt-cuda-fused.log"; bad "--profile-ops on cuda: ${lpu:-no} launches per update, ${calls:-no} calls"; }

# 3. resume on the GPU: 2 updates, then 1 more == 3 straight (bitwise)
mt cuda:0 mt-res --max-update 2
mt cuda:0 mt-res --max-update 3
"$CMP" "$tmp/mt-res/checkpoint_last.h5" "$tmp/mt-cuda/checkpoint_last.h5" 0 ||
    bad "resumed GPU run differs from the straight one"

# 7. one GPU with a named nccl backend (a world of 1): the gradients go in
# 0.05 MiB buckets, each all-reduced on NCCL's stream behind an event of the
# compute stream while the backward goes on == the plain GPU run (bitwise)
mt cuda:0 mt-nccl1 --max-update 3 --distributed-backend nccl --bucket-cap-mb 0.05
grep -q 'backend nccl' "$tmp/mt-nccl1.log" || { cat "$tmp/mt-nccl1.log"; bad "world 1: no nccl"; }
nb=$(sed -n 's/.*gradients in \([0-9]*\) buckets.*/\1/p' "$tmp/mt-nccl1.log")
[ "${nb:-0}" -ge 3 ] || { cat "$tmp/mt-nccl1.log"; bad "world 1 nccl: ${nb:-no} buckets"; }
"$CMP" "$tmp/mt-nccl1/checkpoint_last.h5" "$tmp/mt-cuda/checkpoint_last.h5" 0 ||
    bad "one GPU with nccl buckets differs from the plain GPU run"
echo "ok: world-1 nccl with $nb buckets == plain GPU run"

# 4. a missing GPU is named
"$HGTRAIN" --task translation --data "$tmp/mt" --devices cuda:99 --max-update 1 --max-tokens 1024 \
    >"$tmp/bad.log" 2>&1 && bad "cuda:99 accepted"
grep -q "cuda:99" "$tmp/bad.log" || { cat "$tmp/bad.log"; bad "cuda:99 not named"; }

# 6. mixed precision
mt cuda:0 mt-bf16 --max-update 3 --bf16
"$CMP" "$tmp/mt-bf16/checkpoint_last.h5" "$tmp/mt-cuda/checkpoint_last.h5" 1e-2 params ||
    bad "--bf16 far from fp32"
grep -q "bf16 GEMMs" "$tmp/mt-bf16.log" || bad "--bf16 not in the plan line"
mt cuda:0 mt-fp16 --max-update 3 --fp16 --fp16-init-scale 1e9
n=$(grep -c "fp16 gradient overflow" "$tmp/mt-fp16.log")
echo "fp16 from scale 1e9: $n overflows skipped; update 3 loss $(loss_of "$tmp/mt-fp16.log")"
[ "$n" -ge 5 ] || bad "--fp16 at scale 1e9 did not overflow and back off"
s=$(sed -n 's/.*"update": 3,.*"loss_scale": \([0-9.e+-]*\)[,}].*/\1/p' "$tmp/mt-fp16.log")
awk -v s="$s" 'BEGIN { exit !(s > 0 && s < 65536) }' || bad "fp16 loss scale '$s' not backed off"
"$CMP" "$tmp/mt-fp16/checkpoint_last.h5" "$tmp/mt-cuda/checkpoint_last.h5" 1e-2 params ||
    bad "--fp16 far from fp32 once the scale fits"

[ $fail -eq 0 ] && echo PASS
exit $fail
