#!/usr/bin/env bash
# parity's kvdb-rocksdb 0.21.0, its own unit tests (`cargo test --lib`), against Shale.
#
# What it does:
#   1. downloads the `kvdb-rocksdb` 0.21.0 package from crates.io with cargo (a scratch crate that
#      depends on it, then `cargo fetch`; nothing is built, and nothing of it enters the repository);
#   2. makes a scratch crate of the package's src/, unchanged, with the package's Cargo.toml but for
#      two lines: its `rocksdb` dependency becomes
#        rocksdb = { package = "shale", path = "<repo>/crates/shale" }
#      and its `kvdb-shared-tests` dev-dependency (a workspace path in parity-common, dropped from
#      the published manifest) is put back as the crates.io package of the same release line;
#   3. runs `cargo test --lib` and prints `P of N pass`.
#
# Exit status: non-zero unless every test passes.
#
# Environment: SUITE_DIR (scratch directory; default <target>/kvdb-rocksdb-suite), SUITE_JOBS
# (test threads; default 2).
set -uo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
TARGET_BASE="${CARGO_TARGET_DIR:-$REPO/target}"
WORK="${SUITE_DIR:-$TARGET_BASE/kvdb-rocksdb-suite}"
JOBS="${SUITE_JOBS:-2}"
VERSION="0.21.0"
# kvdb-rocksdb 0.21 is built on kvdb 0.13; kvdb-shared-tests 0.11 is the release for kvdb 0.13.
SHARED_TESTS_VERSION="0.11.0"

unset CARGO_TARGET_DIR
mkdir -p "$WORK"
exec > >(tee "$WORK/summary.txt") 2>&1
FETCH="$WORK/fetch"
CRATE="$WORK/crate"
mkdir -p "$FETCH/src"

# 1. The published package, downloaded by cargo (no build).
cat >"$FETCH/Cargo.toml" <<EOF
[package]
name = "shale-kvdb-suite-fetch"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
kvdb-rocksdb = { version = "=$VERSION", default-features = false }

[workspace]
EOF
echo 'fn main() {}' >"$FETCH/src/main.rs"
(cd "$FETCH" && cargo fetch -q) || { echo "cargo fetch of kvdb-rocksdb $VERSION failed"; exit 2; }
PKG="$(cd "$FETCH" && cargo metadata -q --format-version 1 |
  grep -o "\"manifest_path\":\"[^\"]*/kvdb-rocksdb-$VERSION/Cargo.toml\"" | head -n1 |
  sed -e 's/^"manifest_path":"//' -e 's#/Cargo.toml"$##')"
if [ -z "$PKG" ] || [ ! -f "$PKG/src/lib.rs" ]; then
  echo "kvdb-rocksdb $VERSION package not found after cargo fetch"
  exit 2
fi

# 2. The scratch crate: the package's sources and manifest, two dependencies changed.
rm -rf "$CRATE/src"
mkdir -p "$CRATE"
cp -r "$PKG/src" "$CRATE/src"
# The published manifest, with the version line of its [dependencies.rocksdb] table (its
# features, snappy only and no defaults, stay) replaced by Shale's path, and
# [dev-dependencies.kvdb-shared-tests] added; benches and examples are not built by --lib.
awk -v repo="$REPO" -v st="$SHARED_TESTS_VERSION" '
  /^\[dependencies\.rocksdb\]$/ { print; inrocks = 1; next }
  /^\[/ { inrocks = 0 }
  inrocks && /^version = / {
    print "package = \"shale\""
    print "path = \"" repo "/crates/shale\""
    next
  }
  /^\[\[example\]\]$/ || /^\[\[bench\]\]$/ { drop = 1; next }
  drop && /^\[/ { drop = 0 }
  drop { next }
  { print }
  END {
    print ""
    print "[dev-dependencies.kvdb-shared-tests]"
    print "version = \"=" st "\""
    print ""
    print "[workspace]"
  }
' "$PKG/Cargo.toml" >"$CRATE/Cargo.toml"
# The package's own lock file, so its dependencies resolve as published (cargo adds Shale's).
[ -f "$CRATE/Cargo.lock" ] || { [ -f "$PKG/Cargo.lock" ] && cp "$PKG/Cargo.lock" "$CRATE/Cargo.lock"; }

# 3. Its own unit tests.
OUT="$WORK/test.out"
echo "building and running kvdb-rocksdb $VERSION's unit tests against Shale ($CRATE)..."
(cd "$CRATE" && cargo test --lib --target-dir "$WORK/target" -- --test-threads="$JOBS" >"$OUT" 2>&1)
n="$(grep -Eo '^running [0-9]+ tests?' "$OUT" | head -n1 | grep -Eo '[0-9]+')"
p="$(grep -c '^test .* \.\.\. ok$' "$OUT")"
if [ -z "$n" ]; then
  echo "kvdb-rocksdb $VERSION: did not build against Shale"
  tail -n 40 "$OUT"
  echo "0 of ? pass"
  exit 1
fi
echo "kvdb-rocksdb $VERSION: $p of $n pass"
if [ "$p" -ne "$n" ]; then
  echo "tests that do not pass:"
  grep -E '^test .* \.\.\. ' "$OUT" | grep -v '\.\.\. ok$' | sed 's/^/  /'
  sed -n '/^failures:$/,/^test result/p' "$OUT" | grep -E 'panicked|Error|error' | head -n 30 | sed 's/^/  /'
  exit 1
fi
exit 0
