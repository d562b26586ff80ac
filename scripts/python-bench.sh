#!/usr/bin/env bash
# Speed of crates/shale-py (the `rocksdict` module over Shale) against PyPI's rocksdict 0.3.29,
# side by side:
#  1. builds Shale's wheel with maturin in release mode into one virtual environment and
#     installs rocksdict==0.3.29 into another;
#  2. runs rocksdict's own test/bench_rdict.py (from ../shared/oracles/rocksdict-0.3.27) with
#     each, the two sides interleaved, ROUNDS times (the best time of each figure is kept);
#  3. runs crates/shale-py/bench/threads.py (point and batch gets from 1 and from 4 Python
#     threads: the GIL released shows as a 4-thread speed-up) with each;
#  4. prints a table: each figure's seconds for both and the ratio rocksdict / Shale
#     (above 1: Shale faster; the goal is 1.25 or more).
#
# Environment: BENCH_N (items of bench_rdict.py, default its own 4 Mi; a smaller figure is
# substituted into a copy of the script, the same for both sides), ROUNDS (default 1),
# THREAD_KEYS (keys of threads.py, default 200000), PYTHON (default python3),
# BENCH_DIR (where the venvs and databases go; default a temporary directory, removed after),
# CARGO_TARGET_DIR. Figures on a busy machine are directions only: run it on a quiet one.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
ORACLE=${ROCKSDICT_ORACLE:-$ROOT/../shared/oracles/rocksdict-0.3.27}
ROUNDS=${ROUNDS:-1}
BENCH_N=${BENCH_N:-}
THREAD_KEYS=${THREAD_KEYS:-200000}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target/shale-py}
if [ -n "${BENCH_DIR:-}" ]; then
  WORK=$BENCH_DIR
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
fi

if [ ! -f "$ORACLE/test/bench_rdict.py" ]; then
  echo "python-bench: rocksdict's bench_rdict.py not found at $ORACLE" >&2
  exit 1
fi

echo "== python-bench: Shale's wheel (release) and rocksdict 0.3.29 in $WORK"
[ -x "$WORK/shale/bin/python" ] || "$PY" -m venv "$WORK/shale"
[ -x "$WORK/rocksdict/bin/python" ] || "$PY" -m venv "$WORK/rocksdict"
"$WORK/shale/bin/pip" install -q "maturin>=1.5,<2.0"
rm -rf "$WORK/wheels"
(cd crates/shale-py && "$WORK/shale/bin/maturin" build -q --release -i "$WORK/shale/bin/python" --out "$WORK/wheels")
"$WORK/shale/bin/pip" install -q --force-reinstall "$WORK"/wheels/rocksdict-*.whl
"$WORK/rocksdict/bin/pip" install -q rocksdict==0.3.29

# bench_rdict.py as rocksdict ships it, or with BENCH_N items instead of 4 Mi.
BENCH="$WORK/bench_rdict.py"
if [ -n "$BENCH_N" ]; then
  sed "s/range(4 \* 1024 \* 1024)/range($BENCH_N)/" "$ORACLE/test/bench_rdict.py" >"$BENCH"
  grep -q "range($BENCH_N)" "$BENCH" || { echo "python-bench: could not set BENCH_N in bench_rdict.py" >&2; exit 1; }
else
  cp "$ORACLE/test/bench_rdict.py" "$BENCH"
fi

for side in shale rocksdict; do : >"$WORK/$side.out"; done
for round in $(seq "$ROUNDS"); do
  for side in shale rocksdict; do
    echo "== python-bench: round $round, bench_rdict.py with $side"
    rm -rf "$WORK/run-$side" && mkdir -p "$WORK/run-$side"
    (cd "$WORK/run-$side" && "$WORK/$side/bin/python" "$BENCH") | tee -a "$WORK/$side.out"
  done
done
for side in shale rocksdict; do
  echo "== python-bench: threads.py with $side"
  (cd "$WORK" && "$WORK/$side/bin/python" "$ROOT/crates/shale-py/bench/threads.py" --keys "$THREAD_KEYS" --path "$WORK/run-$side") \
    | tee -a "$WORK/$side.out"
done

"$PY" - "$WORK/shale.out" "$WORK/rocksdict.out" <<'EOF'
import re, sys

def figures(path):
    best = {}
    for line in open(path):
        m = re.match(r"(.+?): (\d+) items in ([0-9.e-]+) seconds", line)
        if m:
            name = f"{m.group(1)} ({m.group(2)} items)"
            best[name] = min(best.get(name, float("inf")), float(m.group(3)))
        m = re.match(r"(point get|batch get): 1 thread ([0-9.]+)s, 4 threads ([0-9.]+)s", line)
        if m:
            best[f"{m.group(1)}, 1 thread"] = float(m.group(2))
            best[f"{m.group(1)}, 4 threads"] = float(m.group(3))
    return best

shale, real = figures(sys.argv[1]), figures(sys.argv[2])
print()
print(f"{'figure':<48} {'Shale s':>10} {'rocksdict s':>12} {'ratio':>7}")
worst = None
for name in shale:
    if name not in real:
        continue
    ratio = real[name] / shale[name] if shale[name] > 0 else float("inf")
    worst = ratio if worst is None else min(worst, ratio)
    print(f"{name:<48} {shale[name]:>10.3f} {real[name]:>12.3f} {ratio:>6.2f}x")
for label, d in (("Shale", shale), ("rocksdict", real)):
    for kind in ("point get", "batch get"):
        one, four = d.get(f"{kind}, 1 thread"), d.get(f"{kind}, 4 threads")
        if one and four:
            print(f"{label}: {kind} 4-thread speed-up {one / four:.2f}x")
print(f"\nratio = rocksdict's seconds / Shale's (above 1: Shale faster); lowest {worst:.2f}x")
EOF
