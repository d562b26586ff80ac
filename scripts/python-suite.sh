#!/usr/bin/env bash
# The Python suite of crates/shale-py (the `rocksdict` module over Shale):
#  1. builds the wheel with maturin (from PyPI) into a fresh virtual environment;
#  2. runs rocksdict 0.3.27's own test suite, unchanged, from a scratch copy of
#     ../shared/oracles/rocksdict-0.3.27 (`python -m unittest discover test`, as rocksdict's CI);
#  3. runs crates/shale-py/tests/test_batch_get.py (batch gets larger than one engine run);
#  4. runs the interop test against PyPI's rocksdict 0.3.29 in a second environment.
# Exits non-zero on any failure. A dev build (Shale optimised, see crates/shale-py/Cargo.toml)
# unless SHALE_PY_RELEASE=1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
ORACLE=${ROCKSDICT_ORACLE:-$ROOT/../shared/oracles/rocksdict-0.3.27}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target/shale-py}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

if [ ! -f "$ORACLE/test/test_rdict.py" ]; then
  echo "python-suite: rocksdict's test suite not found at $ORACLE" >&2
  exit 1
fi

echo "== python-suite: building the wheel"
"$PY" -m venv "$WORK/shale"
"$WORK/shale/bin/pip" install -q "maturin>=1.5,<2.0"
build_flags=()
if [ "${SHALE_PY_RELEASE:-0}" = 1 ]; then build_flags+=(--release); fi
(cd crates/shale-py && "$WORK/shale/bin/maturin" build -q "${build_flags[@]}" -i "$WORK/shale/bin/python" --out "$WORK/wheels")
"$WORK/shale/bin/pip" install -q "$WORK"/wheels/rocksdict-*.whl

echo "== python-suite: rocksdict 0.3.27's test_rdict.py against Shale's wheel"
cp -r "$ORACLE" "$WORK/oracle"
(cd "$WORK/oracle" && "$WORK/shale/bin/python" -W ignore::RuntimeWarning -m unittest discover test)

echo "== python-suite: batch gets of several engine runs (crates/shale-py/tests/test_batch_get.py)"
(cd "$WORK" && "$WORK/shale/bin/python" "$ROOT/crates/shale-py/tests/test_batch_get.py" -v)

echo "== python-suite: interop with rocksdict 0.3.29"
"$PY" -m venv "$WORK/rocksdict"
"$WORK/rocksdict/bin/pip" install -q rocksdict==0.3.29
(cd "$WORK" && ROCKSDICT_REAL_PYTHON="$WORK/rocksdict/bin/python" SHALE_PYTHON="$WORK/shale/bin/python" \
  "$WORK/shale/bin/python" "$ROOT/crates/shale-py/tests/test_interop.py" -v)
echo "== python-suite: all passed"
