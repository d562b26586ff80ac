"""Reads from 1 and from 4 Python threads on one database: the GIL is released while the
engine works, so 4 threads finish the same reads sooner on a multi-core machine.

    python bench/threads.py [--keys N] [--path DIR]

Runs with whichever `rocksdict` is installed (Shale's wheel or PyPI's), so the two can be
compared. Prints, for point gets (`db[k]`, one call per key) and for batch gets (`db.get(list)`,
one call per 1000 keys), the time of 1 thread reading all keys and of 4 threads reading a
quarter each, and the speed-up. Timings on a shared machine are directions only.
"""

import argparse
import os
import shutil
import tempfile
import threading
import time

from rocksdict import Options, Rdict


def run_threads(n, work, keys):
    parts = [keys[i::n] for i in range(n)]
    threads = [threading.Thread(target=work, args=(p,)) for p in parts]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=200_000)
    ap.add_argument("--path", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    tmp = args.path or tempfile.mkdtemp(prefix="rdict-threads-")
    path = os.path.join(tmp, "db")
    keys = [os.urandom(16) for _ in range(args.keys)]
    db = Rdict(path, Options(raw_mode=True))
    for k in keys:
        db[k] = k * 8
    db.flush()
    db.compact_range(None, None)

    def point(part):
        for k in part:
            if len(db[k]) != 128:
                raise AssertionError("bad value")

    def batch(part):
        for i in range(0, len(part), 1000):
            chunk = part[i : i + 1000]
            for k, v in zip(chunk, db.get(chunk)):
                if v != k * 8:
                    raise AssertionError("bad value")

    import rocksdict

    print(f"rocksdict from {os.path.dirname(rocksdict.__file__)}; {args.keys} keys, {os.cpu_count()} cpus")
    for name, work in (("point get", point), ("batch get", batch)):
        one = min(run_threads(1, work, keys) for _ in range(args.rounds))
        four = min(run_threads(4, work, keys) for _ in range(args.rounds))
        print(f"{name}: 1 thread {one:.3f}s, 4 threads {four:.3f}s, speed-up {one / four:.2f}x")
    db.close()
    Rdict.destroy(path)
    if args.path is None:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
