#!/usr/bin/env bash
# Time and bytes copied for a checkpoint, a full backup and an incremental backup of the same
# database, RocksDB 7.8.3's `ldb` side by side with `shale ldb` (not run by CI).
#
#   scripts/bench-checkpoint-backup.sh [NUM_KEYS] [WORK_DIR]
#
# NUM_KEYS (default 1000000) 1000-byte values, uncompressed (~1 GiB), written by RocksDB's
# db_bench fillseq; the database is copied twice, one copy per tool. The incremental backup
# follows 1000 new keys written by each tool's `put` into its copy. "copied" counts bytes of
# files the step created that are not hard links to the database's files. Needs db_bench and
# ldb (apt-get install rocksdb-tools) and a built `shale` (SHALE=path, default
# target/release/shale).
set -euo pipefail
NUM="${1:-1000000}"
WORK="${2:-/tmp/shale-bench-backup}"
REPO="$(cd "$(dirname "$0")/.." && pwd)"
SHALE="${SHALE:-$REPO/target/release/shale}"
rm -rf "$WORK" && mkdir -p "$WORK"
# Bytes in files under $1 with a single link (copies, not links to the database's files).
copied() { find "$1" -type f -links 1 -printf '%s\n' | awk '{s+=$1} END {print s+0}'; }
bytes() { find "$1" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}'; }
db_bench --benchmarks=fillseq --num="$NUM" --value_size=1000 --compression_type=none \
  --disable_wal=1 --db="$WORK/src" >/dev/null 2>&1
cp -a "$WORK/src" "$WORK/rocks" && cp -a "$WORK/src" "$WORK/shale"
echo "database: $(bytes "$WORK/src") bytes"

secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }

for tool in rocks shale; do
  if [ "$tool" = rocks ]; then run=(ldb); else run=("$SHALE" ldb); fi
  db="$WORK/$tool"
  t=$(secs "${run[@]}" --db="$db" checkpoint --checkpoint_dir="$WORK/$tool-cp")
  echo "$tool checkpoint: ${t}s, copied $(copied "$WORK/$tool-cp") bytes"
  t=$(secs "${run[@]}" --db="$db" backup --backup_dir="$WORK/$tool-bk")
  full=$(bytes "$WORK/$tool-bk")
  echo "$tool full backup: ${t}s, copied $full bytes"
  for i in $(seq 1 1000); do echo "newkey$i ==> $(printf 'v%.0s' $(seq 1 100))"; done >"$WORK/$tool-new.txt"
  "${run[@]}" --db="$db" batchput $(awk -F' ==> ' '{printf "%s %s ", $1, $2}' "$WORK/$tool-new.txt") >/dev/null
  t=$(secs "${run[@]}" --db="$db" backup --backup_dir="$WORK/$tool-bk")
  echo "$tool incremental backup: ${t}s, copied $(( $(bytes "$WORK/$tool-bk") - full )) bytes"
done
