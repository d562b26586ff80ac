#!/usr/bin/env python3
"""What one fdatasync costs on this disk after a 10 KiB write, three ways, rounds interleaved:
append (the write grows the file), zero (overwrite of blocks written with zeros and synced
beforehand), falloc (write into a posix_fallocate'd, still unwritten range).
Usage: fsync_probe.py [writes per round, 300] [rounds, 3]   (files in $BENCH_DIR or /tmp)"""
import os, statistics, sys, time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 300
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
BS = 10 * 1024 + 100
DIR = os.environ.get("BENCH_DIR", "/tmp")
buf = os.urandom(BS)


def run(mode):
    p = os.path.join(DIR, "fsync_probe." + mode)
    fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    size = N * BS + 4096
    if mode == "zero":
        z = b"\0" * (1 << 20)
        for off in range(0, size, len(z)):
            os.pwrite(fd, z, off)
        os.fsync(fd)
    elif mode == "falloc":
        os.posix_fallocate(fd, 0, size)
        os.fsync(fd)
    ts = []
    for i in range(N):
        os.pwrite(fd, buf, i * BS)
        t = time.perf_counter()
        os.fdatasync(fd)
        ts.append(time.perf_counter() - t)
    os.close(fd)
    os.remove(p)
    ts.sort()
    return statistics.median(ts) * 1e3, ts[int(len(ts) * 0.99)] * 1e3, sum(ts) * 1e3


modes = ["append", "zero", "falloc"]
res = {m: [] for m in modes}
for _ in range(ROUNDS):
    for m in modes:
        res[m].append(run(m))
for m in modes:
    print(f"{m:7} per round: median ms", ["%.3f" % x[0] for x in res[m]],
          "p99 ms", ["%.2f" % x[1] for x in res[m]], "sum ms", ["%.0f" % x[2] for x in res[m]])
