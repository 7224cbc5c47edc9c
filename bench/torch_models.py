#!/usr/bin/env python3
"""torch_models.py - the two models of bench_models.c in PyTorch, timed the
same way: forward + backward + optimizer step (+ zero_grad) per step.

  mnist:       the PyTorch MNIST example net (conv 1->32->64, max_pool 2,
               dropout 0.25, fc 9216->128, dropout 0.5, fc 128->10,
               log_softmax, nll_loss(reduction='sum')), batch 64,
               SGD(lr 0.01, momentum 0.9)
  transformer: nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.1,
               batch_first=True) (post-norm, ReLU), 64 x 32 tokens,
               src_key_padding_mask all False (every token valid: the same
               masking work as ours), loss = (y * r).sum(),
               AdamW(lr 1e-4, betas (0.9, 0.98), eps 1e-8, weight_decay 0.01)

Prints, like bench_models:
  model <name> ms_per_step <t> config <cfg>
ms_per_step is the median over --reps repetitions of --iters steps each,
after warm-up.

Configurations: OpenBLAS's core type must be chosen before libopenblas is
loaded, so each core type is a separate process (--coretype); inside one,
--config picks mkldnn on/off and, for AdamW, foreach on/off.  With --best
(the default when neither --coretype nor --config is given) the script runs
every combination in subprocesses, prints each, and prints the best last as
  model <name> ms_per_step <t> config <cfg> best

Run it with Debian's python (/usr/bin/python3), which has PyTorch 1.13.
"""
import argparse
import os
import subprocess
import sys



def coretypes():
    """OPENBLAS_CORETYPEs to try: the environment's ("env"), and the core
    hgtrain runs here (bench/torch-env) where that differs; SkylakeX only
    on a CPU with AVX-512 (elsewhere OpenBLAS dies with SIGILL)."""
    here = os.path.dirname(os.path.abspath(__file__))
    core = subprocess.run([os.path.join(here, "torch-env"), "--print"],
                          stdout=subprocess.PIPE, universal_newlines=True,
                          check=True).stdout.strip()
    return ["env"] + ([core] if core != "auto" else [])


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--model", default="all",
                   choices=["all", "mnist", "transformer"])
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--coretype", default=None,
                   help="OPENBLAS_CORETYPE for this process ('env': keep)")
    p.add_argument("--config", default="all",
                   help="all, or mkldnn=0|1[,foreach=0|1]")
    p.add_argument("--best", action="store_true",
                   help="try every configuration in subprocesses")
    p.add_argument("--profile", action="store_true",
                   help="print torch.autograd.profiler's top ops")
    return p.parse_args()


def run_best(args):
    best = {}
    for core in coretypes():
        cmd = [sys.executable, os.path.abspath(__file__),
               "--threads", str(args.threads), "--model", args.model,
               "--iters", str(args.iters), "--reps", str(args.reps),
               "--warmup", str(args.warmup), "--coretype", core]
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
        out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                             universal_newlines=True, check=True).stdout
        for line in out.splitlines():
            print(line, flush=True)
            f = line.split()
            if len(f) >= 6 and f[0] == "model":
                t = float(f[3])
                if f[1] not in best or t < best[f[1]][0]:
                    best[f[1]] = (t, f[5])
    for m in ["mnist_cnn", "transformer_layer"]:
        if m in best:
            print("model %s ms_per_step %.3f config %s best"
                  % (m, best[m][0], best[m][1]), flush=True)


def main():
    args = parse()
    if args.best or (args.coretype is None and args.config == "all"):
        run_best(args)
        return
    core = args.coretype or "env"
    if core != "env":
        os.environ["OPENBLAS_CORETYPE"] = core  # before libopenblas loads
    os.environ["OMP_NUM_THREADS"] = str(args.threads)

    import ctypes
    import statistics
    import time

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.set_num_threads(args.threads)
    corename = "?"
    try:  # the libblas.so.3 torch linked: the same instance
        lib = ctypes.CDLL("libblas.so.3")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        corename = lib.openblas_get_corename().decode()
    except (OSError, AttributeError):
        pass
    print("torch %s threads %d blas_core %s OPENBLAS_CORETYPE=%s"
          % (torch.__version__, torch.get_num_threads(), corename,
             os.environ.get("OPENBLAS_CORETYPE", "")), flush=True)

    class Net(nn.Module):  # pytorch/examples mnist/main.py
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = self.dropout2(x)
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)

    def mnist_step_fn(foreach):
        torch.manual_seed(1)
        net = Net().train()
        opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9,
                              foreach=foreach)
        x = torch.rand(64, 1, 28, 28) * 2 - 1
        y = torch.arange(64) % 10

        def step():
            opt.zero_grad()
            loss = F.nll_loss(net(x), y, reduction="sum")
            loss.backward()
            opt.step()
        return step

    def transformer_step_fn(foreach):
        torch.manual_seed(1)
        layer = nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.1,
                                           batch_first=True).train()
        opt = torch.optim.AdamW(layer.parameters(), lr=1e-4,
                                betas=(0.9, 0.98), eps=1e-8,
                                weight_decay=0.01, foreach=foreach)
        x = torch.rand(64, 32, 512) * 2 - 1
        r = torch.rand(64, 32, 512) * 2 - 1
        pad = torch.zeros(64, 32, dtype=torch.bool)  # all tokens valid

        def step():
            opt.zero_grad()
            loss = (layer(x, src_key_padding_mask=pad) * r).sum()
            loss.backward()
            opt.step()
        return step

    def bench(step):
        for _ in range(args.warmup):
            step()
        times = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            for _ in range(args.iters):
                step()
            times.append((time.perf_counter() - t0) * 1e3 / args.iters)
        return statistics.median(times)

    def profile(step, name):
        for _ in range(args.warmup):
            step()
        with torch.autograd.profiler.profile() as prof:
            for _ in range(args.iters):
                step()
        print("profile %s (self CPU time, %d steps)" % (name, args.iters))
        print(prof.key_averages().table(sort_by="self_cpu_time_total",
                                        row_limit=15))

    if args.config == "all":
        configs = [{"mkldnn": m, "foreach": f} for m in (1, 0) for f in (0, 1)]
    else:
        c = dict(kv.split("=") for kv in args.config.split(","))
        configs = [{"mkldnn": int(c.get("mkldnn", 1)),
                    "foreach": int(c.get("foreach", 0))}]

    models = []
    if args.model in ("all", "mnist"):
        models.append(("mnist_cnn", mnist_step_fn))
    if args.model in ("all", "transformer"):
        models.append(("transformer_layer", transformer_step_fn))
    for name, make in models:
        for c in configs:
            torch.backends.mkldnn.enabled = bool(c["mkldnn"])
            step = make(bool(c["foreach"]))
            cfg = "core=%s,mkldnn=%d,foreach=%d" % (
                core if core != "env" else
                "env:" + os.environ.get("OPENBLAS_CORETYPE", "auto"),
                c["mkldnn"], c["foreach"])
            if args.profile:
                profile(step, name + " " + cfg)
            else:
                print("model %s ms_per_step %.3f config %s"
                      % (name, bench(step), cfg), flush=True)


if __name__ == "__main__":
    main()
