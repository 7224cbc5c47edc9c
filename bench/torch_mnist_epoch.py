#!/usr/bin/env python3
"""One epoch of HetSeq's MNIST CNN on Fashion-MNIST in PyTorch: the baseline
of bench/bench_epoch.sh. Same model, batch 64, SGD momentum 0.9 lr 0.01,
dropout, NLL sum / batch, data in memory (decoded from Debian's IDX files).
Prints: epoch torch seconds S updates N accuracy A
Run with Debian's /usr/bin/python3 (python3-torch)."""
import argparse, gzip, time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    nd = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(nd)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * nd).reshape(dims)


class Net(nn.Module):
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
        x = torch.flatten(self.dropout1(x), 1)
        x = self.dropout2(F.relu(self.fc1(x)))
        return F.log_softmax(self.fc2(x), dim=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    norm = lambda x: (torch.from_numpy(x.astype(np.float32)) / 255.0 - 0.1307) / 0.3081
    xtr = norm(idx(f"{a.data}/train-images-idx3-ubyte.gz")).unsqueeze(1)
    ytr = torch.from_numpy(idx(f"{a.data}/train-labels-idx1-ubyte.gz").astype(np.int64))
    xte = norm(idx(f"{a.data}/t10k-images-idx3-ubyte.gz")).unsqueeze(1)
    yte = torch.from_numpy(idx(f"{a.data}/t10k-labels-idx1-ubyte.gz").astype(np.int64))
    m = Net()
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    m.train()
    t0 = time.time()
    perm = torch.randperm(len(xtr))
    n = 0
    for i in range(0, len(xtr), a.batch_size):
        idxs = perm[i:i + a.batch_size]
        opt.zero_grad()
        loss = F.nll_loss(m(xtr[idxs]), ytr[idxs], reduction="sum") / len(idxs)
        loss.backward()
        opt.step()
        n += 1
    dt = time.time() - t0
    m.eval()
    with torch.no_grad():
        acc = sum((m(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum().item()
                  for i in range(0, len(xte), 1000)) / len(xte)
    print(f"epoch torch seconds {dt:.2f} updates {n} accuracy {acc:.4f}")


if __name__ == "__main__":
    main()
