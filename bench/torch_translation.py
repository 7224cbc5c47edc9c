#!/usr/bin/env python3
"""PyTorch baseline of bench/bench_translation.sh: fairseq's transformer
encoder-decoder as hgtrain's translation task builds it (post-norm, ReLU,
sinusoidal positions, embeddings scaled by sqrt(d), separate source/target
embeddings and output projection, dropout 0.1, label-smoothed cross
entropy 0.1 summed over target tokens, Adam (0.9, 0.98)), forward +
backward + update on fixed batches of B sentences x S source / T target
tokens (no padding). Prints: torch tokens_per_s X ms_per_step Y
Run with Debian's /usr/bin/python3 (python3-torch) on the CPU; with
--device cuda on a GPU (fp32 without TF32, as hgtrain's pedantic cuBLAS).
--layers/--dim/--heads/--ffn give transformer_base (6, 512, 8, 2048)."""
import argparse, math, time

import torch
import torch.nn as nn
import torch.nn.functional as F


def sinusoids(n, d):
    half = d // 2
    f = torch.exp(torch.arange(half, dtype=torch.float) * -(math.log(10000.0) / (half - 1)))
    a = torch.arange(2, n + 2, dtype=torch.float)[:, None] * f[None, :]
    return torch.cat([torch.sin(a), torch.cos(a)], dim=1)


class Model(nn.Module):
    def __init__(self, vs, vt, d, heads, ffn, layers, p):
        super().__init__()
        self.d = d
        self.es = nn.Embedding(vs, d)
        self.et = nn.Embedding(vt, d)
        self.out = nn.Linear(d, vt, bias=False)
        self.enc = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(d, heads, ffn, p, batch_first=True), layers)
        self.dec = nn.TransformerDecoder(
            nn.TransformerDecoderLayer(d, heads, ffn, p, batch_first=True), layers)
        self.drop = nn.Dropout(p)

    def forward(self, src, prev):
        S, T = src.shape[1], prev.shape[1]
        dev = src.device
        x = self.drop(self.es(src) * math.sqrt(self.d) + sinusoids(S, self.d).to(dev))
        y = self.drop(self.et(prev) * math.sqrt(self.d) + sinusoids(T, self.d).to(dev))
        mask = torch.triu(torch.full((T, T), float("-inf"), device=dev), 1)
        h = self.dec(y, self.enc(x), tgt_mask=mask)
        return F.log_softmax(self.out(h), dim=-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--src-len", type=int, required=True)
    ap.add_argument("--tgt-len", type=int, required=True)
    ap.add_argument("--vsrc", type=int, required=True)
    ap.add_argument("--vtgt", type=int, required=True)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--autocast", default="", help="bf16 or fp16: torch.autocast on the GPU")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    dev = torch.device(a.device)
    if dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    m = Model(a.vsrc, a.vtgt, a.dim, a.heads, a.ffn, a.layers, 0.1).to(dev)
    opt = torch.optim.Adam(m.parameters(), lr=5e-4, betas=(0.9, 0.98))
    src = torch.randint(4, a.vsrc, (a.batch, a.src_len), device=dev)
    tgt = torch.randint(4, a.vtgt, (a.batch, a.tgt_len), device=dev)
    prev = torch.cat([torch.full((a.batch, 1), 2, device=dev), tgt[:, :-1]], dim=1)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    eps = 0.1

    ac_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(a.autocast)
    scaler = torch.amp.GradScaler("cuda") if a.autocast == "fp16" else None

    def step():
        opt.zero_grad()
        if ac_dtype is not None:
            with torch.autocast("cuda", dtype=ac_dtype):
                lp = m(src, prev).float()
            nll = -lp.gather(-1, tgt[..., None]).squeeze(-1)
            smooth = -lp.sum(-1)
            ei = eps / (a.vtgt - 1)
            loss = ((1 - eps - ei) * nll + ei * smooth).sum()
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            return
        lp = m(src, prev)
        nll = -lp.gather(-1, tgt[..., None]).squeeze(-1)
        smooth = -lp.sum(-1)
        ei = eps / (a.vtgt - 1)
        loss = ((1 - eps - ei) * nll + ei * smooth).sum()
        loss.backward()
        opt.step()

    for _ in range(3):
        step()
    sync()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        step()
    sync()
    dt = (time.perf_counter() - t0) / a.steps
    nparam = sum(p.numel() for p in m.parameters())
    print(f"torch tokens_per_s {a.batch * a.tgt_len / dt:.0f} ms_per_step {1000 * dt:.1f} "
          f"params {nparam}")


if __name__ == "__main__":
    main()
