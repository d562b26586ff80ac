#!/usr/bin/env bash
# Time and bytes copied for a checkpoint, a full backup and an incremental backup of the same
# database, RocksDB 11.8.1's `ldb` side by side with `shale ldb` (not run by CI).
#
#   scripts/bench-checkpoint-backup.sh [NUM_KEYS] [WORK_DIR] [ROUNDS]
#
# NUM_KEYS (default 1000000) 1000-byte values, uncompressed (~1 GiB), written by RocksDB
# 11.8.1's db_bench fillseq; the database is copied twice, one copy per tool. Then ROUNDS
# (default 5) rounds, the two tools taking turns within each round (RocksDB first in odd
# rounds, Shale first in even ones): a checkpoint into a new directory (removed after), and
# an incremental backup following 1000 new keys written by the tool's `batchput` into its
# copy. The full backup is taken once. Times are wall-clock seconds of the whole `ldb`
# process (open, work, close); the median of the rounds is printed with the minimum and
# maximum. "copied" counts bytes of files the step created that are not hard links to the
# database's files (for a backup: bytes the backup directory grew by). Needs RocksDB 11.8.1's
# tools (ROCKSDB_BIN, default <checkout>/../shared/tools/rocksdb-11.8.1/bin) and a built
# `shale` (SHALE=path, default target/release/shale).
set -euo pipefail
NUM="${1:-1000000}"
WORK="${2:-/tmp/shale-bench-backup}"
ROUNDS="${3:-5}"
REPO="$(cd "$(dirname "$0")/.." && pwd)"
SHALE="${SHALE:-$REPO/target/release/shale}"
ROCKSDB_BIN="${ROCKSDB_BIN:-$REPO/../shared/tools/rocksdb-11.8.1/bin}"
rm -rf "$WORK" && mkdir -p "$WORK"
# Bytes in files under $1 with a single link (copies, not links to the database's files).
copied() { find "$1" -type f -links 1 -printf '%s\n' | awk '{s+=$1} END {print s+0}'; }
bytes() { find "$1" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}'; }
"$ROCKSDB_BIN/db_bench" --benchmarks=fillseq --num="$NUM" --value_size=1000 --compression_type=none \
  --disable_wal=1 --db="$WORK/src" >/dev/null 2>&1
cp -a "$WORK/src" "$WORK/rocks" && cp -a "$WORK/src" "$WORK/shale"
echo "database: $(bytes "$WORK/src") bytes, $(find "$WORK/src" -name '*.sst' | wc -l) tables"

secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
run() { if [ "$1" = rocks ]; then echo "$ROCKSDB_BIN/ldb"; else echo "$SHALE ldb"; fi; }
# median min max of the numbers on stdin
stats() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "median %.3f s (min %.3f, max %.3f)", m, a[1], a[NR]}'; }

for tool in rocks shale; do
  db="$WORK/$tool"
  # shellcheck disable=SC2046
  t=$(secs $(run $tool) --db="$db" backup --backup_dir="$WORK/$tool-bk")
  echo "$tool full backup: ${t}s, copied $(bytes "$WORK/$tool-bk") bytes"
done

args=$(for i in $(seq 1 1000); do printf 'newkey%s %s ' "$i" "$(printf 'v%.0s' $(seq 1 100))"; done)
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then order="rocks shale"; else order="shale rocks"; fi
  for tool in $order; do
    db="$WORK/$tool"
    cp_dir="$WORK/$tool-cp"
    rm -rf "$cp_dir"
    # shellcheck disable=SC2046
    t=$(secs $(run $tool) --db="$db" checkpoint --checkpoint_dir="$cp_dir")
    echo "$t $(copied "$cp_dir")" >>"$WORK/$tool-checkpoint.txt"
    rm -rf "$cp_dir"
    # shellcheck disable=SC2046,SC2086
    $(run $tool) --db="$db" batchput $args >/dev/null
    before=$(bytes "$WORK/$tool-bk")
    # shellcheck disable=SC2046
    t=$(secs $(run $tool) --db="$db" backup --backup_dir="$WORK/$tool-bk")
    echo "$t $(( $(bytes "$WORK/$tool-bk") - before ))" >>"$WORK/$tool-incremental.txt"
  done
done
for tool in rocks shale; do
  echo "$tool checkpoint: $(cut -d' ' -f1 "$WORK/$tool-checkpoint.txt" | stats), copied $(cut -d' ' -f2 "$WORK/$tool-checkpoint.txt" | sort -g | uniq | tr '\n' ' ')bytes"
  echo "$tool incremental backup: $(cut -d' ' -f1 "$WORK/$tool-incremental.txt" | stats), copied $(cut -d' ' -f2 "$WORK/$tool-incremental.txt" | sort -g | uniq | tr '\n' ' ')bytes"
done
