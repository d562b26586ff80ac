#!/usr/bin/env bash
# Integrated BlobDB with 4 KiB values: fillrandom, overwrite (with blob GC) and readrandom,
# one engine per call, each benchmark its own process on the same database (not run by CI).
#
#   scripts/bench-blob.sh shale|rocksdb [NUM_KEYS] [DB_DIR]
#
# Both engines get the same db_bench flags (below). For each benchmark it prints db_bench's
# result line, then the bytes the process wrote: `write_bytes` of Linux's per-process I/O
# accounting (bytes it dirtied in files: what goes to the disk, WAL, tables, blob files,
# MANIFEST and all), `cancelled_write_bytes` (dirty bytes of files deleted before they
# reached the disk) and `wchar` (bytes passed to write calls), read from /proc/<pid>/io of
# a shell that waited for the benchmark (Linux adds a reaped child's counters to its
# parent's). "amp" is write_bytes over the user bytes the benchmark wrote, NUM x (16 + 4096).
# The database is removed at the end. Needs RocksDB 11.8.1's db_bench (ROCKSDB_BIN, default
# <checkout>/../shared/tools/rocksdb-11.8.1/bin) and a release `shale` (SHALE=path, default
# $CARGO_TARGET_DIR or target, /release/shale).
set -euo pipefail
ENGINE="${1:?shale or rocksdb}"
NUM="${2:-200000}"
DB="${3:-/tmp/shale-bench-blob-$ENGINE}"
REPO="$(cd "$(dirname "$0")/.." && pwd)"
SHALE="${SHALE:-${CARGO_TARGET_DIR:-$REPO/target}/release/shale}"
ROCKSDB_BIN="${ROCKSDB_BIN:-$REPO/../shared/tools/rocksdb-11.8.1/bin}"
case "$ENGINE" in
  shale) BIN=("$SHALE" bench) ;;
  rocksdb) BIN=("$ROCKSDB_BIN/db_bench") ;;
  *) echo "engine: shale or rocksdb" >&2; exit 2 ;;
esac
F=(--num="$NUM" --value_size=4096 --enable_blob_files=1 --min_blob_size=256 --seed=1 --threads=1
   --db="$DB")
USER_BYTES=$((NUM * (16 + 4096)))

phase() {
  local name="$1"; shift
  local out
  # The shell runs the benchmark as a child (not exec: a command follows), then prints its
  # own I/O counters, which now include the child's.
  out=$(sh -c '"$@" 2>&1; echo "@io"; cat /proc/$$/io' sh "${BIN[@]}" "${F[@]}" --benchmarks="$name" "$@")
  local line wb cw wc
  # (progress lines on stderr end in carriage returns, not newlines)
  line=$(printf '%s\n' "$out" | tr '\r' '\n' | grep -oE "$name +: .*" || echo "$name : no result line")
  wb=$(printf '%s\n' "$out" | awk '/^write_bytes:/ {print $2}')
  cw=$(printf '%s\n' "$out" | awk '/^cancelled_write_bytes:/ {print $2}')
  wc=$(printf '%s\n' "$out" | awk '/^wchar:/ {print $2}')
  echo "$ENGINE $line"
  awk -v e="$ENGINE" -v n="$name" -v wb="$wb" -v cw="$cw" -v wc="$wc" -v u="$USER_BYTES" \
    'BEGIN {printf "%s %s io: write_bytes %d cancelled %d wchar %d user %d amp %.3f\n", e, n, wb, cw, wc, u, wb / u}'
}

rm -rf "$DB"
phase fillrandom
phase overwrite --use_existing_db=1 --enable_blob_garbage_collection=1
phase readrandom --use_existing_db=1 --enable_blob_garbage_collection=1
echo "$ENGINE db: $(du -sb "$DB" | cut -f1) bytes, $(find "$DB" -name '*.blob' | wc -l) blob files, $(find "$DB" -name '*.sst' | wc -l) tables"
rm -rf "$DB"
