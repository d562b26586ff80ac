#!/bin/sh
# Generates the seed corpora in fuzz/corpus/<target>/ (not committed): files written by
# Shale's own writers, plus, when /usr/bin/db_bench is there, files RocksDB 7.8.3 writes
# (WALs, MANIFEST records, SSTs with each compression and their data blocks).
set -eu
cd "$(dirname "$0")"
dbs=""
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if command -v db_bench >/dev/null 2>&1; then
  for c in none snappy lz4 zstd zlib; do
    # Small values and blocks: many blocks and a short WAL; flush once so there is an SST,
    # then write a few more keys so a WAL survives.
    db_bench --benchmarks=fillrandom --num=300 --value_size=24 --block_size=512 \
      --compression_type=$c --write_buffer_size=16384 --disable_auto_compactions=1 \
      --db="$tmp/$c" >/dev/null 2>&1 || true
    dbs="$dbs --from-db $tmp/$c"
  done
fi
cargo run --quiet --release --example gen_seeds -- corpus $dbs
du -sh corpus/* 2>/dev/null || true
