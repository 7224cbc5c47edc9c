#!/usr/bin/env python3
"""PyTorch DistributedDataParallel (gloo, forked processes on this machine)
training HetSeq's MNIST CNN without dropout: the reference of
bench/bench_dist.sh. Each rank holds its share of a fixed global batch in
memory (random images and labels: no loader), SGD momentum 0.9, NLL sum /
global batch. Prints: torch_ddp world W threads T updates_per_s U
Run with Debian's /usr/bin/python3 (python3-torch)."""
import argparse, os, socket, time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return F.log_softmax(self.fc2(x), dim=1)


def worker(rank, a, port, out):
    torch.set_num_threads(a.threads)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=a.world)
    torch.manual_seed(1)
    model = Net()
    ddp = nn.parallel.DistributedDataParallel(model) if a.world > 1 else model
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    b = a.batch // a.world
    x = torch.rand(b, 1, 28, 28)
    y = torch.randint(0, 10, (b,))
    def step():
        opt.zero_grad()
        # sum over the local batch / global batch: the global mean after
        # DDP's averaging is multiplied back by world
        loss = F.nll_loss(ddp(x), y, reduction="sum") * a.world / a.batch
        loss.backward()
        opt.step()
    for _ in range(a.updates // 2):  # warm-up half
        step()
    if a.world > 1:
        dist.barrier()
    t0 = time.perf_counter()
    n = a.updates - a.updates // 2
    for _ in range(n):
        step()
    if a.world > 1:
        dist.barrier()
    dt = time.perf_counter() - t0
    if rank == 0:
        out.put(n / dt)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--updates", type=int, default=200)
    a = p.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    ps = [ctx.Process(target=worker, args=(r, a, port, q)) for r in range(a.world)]
    for pr in ps:
        pr.start()
    ups = q.get(timeout=600)
    for pr in ps:
        pr.join()
    print(f"torch_ddp world {a.world} threads {a.threads} updates_per_s {ups:.2f}")


if __name__ == "__main__":
    main()
