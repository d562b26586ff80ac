#!/bin/sh
# auto_refresh_iterator_with_snapshot on vs off under a background writer (issue 13):
# seekrandomwhilewriting with --seek_nexts=100 and 1000, PAIRS interleaved on/off pairs.
#
#   scripts/bench-autorefresh.sh SHALE PAIRS [extra shale bench flags...]
#   e.g. scripts/bench-autorefresh.sh target/release/shale 7
#
# What makes two runs of one setting do the same work (the session-8 runs moved up to 1.9x
# because each run reopened the database the previous run had written to, and its writer
# ran flat out):
# - one seed database, built once (NUM fillrandom, flushed, compacted to one level), and
#   every run on a fresh copy of it (tables hard-linked, the rest copied), so each run
#   starts from the same files, with empty memtables and no table left by a previous run;
# - the background writer at a fixed rate (--benchmark_write_rate_limit=RATE bytes/s,
#   db_bench's flag), not flat out, so it takes the same CPU share and writes the same
#   amount per second in every run;
# - a fixed number of seeks (--reads, --duration=0), the same --seed within a pair, so
#   both settings seek the same keys;
# - the pair's order alternates (on first, then off first) and one pair per seek_nexts
#   is run first as a warm-up and not counted (the tables then sit in the page cache).
# Each run prints the reader's ops/sec (wall clock) and its CPU microseconds per seek
# (--report_cpu_time: the reader thread's CPU time, which leaves out the time it waited
# for a CPU, so it still compares runs on a loaded machine). A pair's ratios are on/off
# of ops/sec and off/on of CPU time per seek: above 1, auto-refresh is faster.
#
# Environment: NUM (1000000), RATE (writer bytes/s, 1048576), READS100 (100000),
# READS1000 (10000) (about 5 s a run on a quiet machine), WBS (--write_buffer_size,
# 2097152: the writer fills a memtable about every 2 seconds, so every run meets flushes
# and auto-refresh has SuperVersion changes to follow), L0TRIGGER
# (--level0_file_num_compaction_trigger, 8: no compaction starts within a run of up to
# about 15 s, so no run meets one), OFFSET (--writer_key_offset, NUM: the writer's keys
# sort after every key a seek looks for, so the entries a reader meets do not depend on how
# far the writer got; 0: db_bench's overwrites within the read range), TMPDIR for the
# databases (removed at the end).
#
# Session 10: with the writer's keys inside the read range, a reader under an explicit
# snapshot steps over every entry the writer added after its snapshot, so a run that falls
# behind meets more entries and falls further behind (one setting's runs moved by 15-46% on a
# quiet machine). With OFFSET=NUM the writer still flushes (each flush replaces the
# SuperVersion twice: memtable switch, flush install) and the "on" runs print how many times
# their iterators moved onto a newer one (rocksdb.shale.iterator-auto-refreshes).
set -eu
SHALE=$1 PAIRS=$2
shift 2
NUM=${NUM:-1000000} RATE=${RATE:-1048576} READS100=${READS100:-100000} READS1000=${READS1000:-10000}
WBS=${WBS:-2097152} L0TRIGGER=${L0TRIGGER:-8} OFFSET=${OFFSET:-$NUM}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/bench-autorefresh.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
echo "seed: $SHALE bench --db=SEED --num=$NUM --seed=1 --benchmarks=fillrandom,flush,compact"
"$SHALE" bench --db="$DIR/seed" --num="$NUM" --seed=1 --benchmarks=fillrandom,flush,compact >/dev/null 2>&1
rm -f "$DIR/seed/LOCK"

# run SETTING NEXTS READS SEED: one run on a fresh copy; prints "ops/sec CPU-micros/op refreshes".
run() {
  rm -rf "$DIR/run"
  mkdir "$DIR/run"
  for f in "$DIR"/seed/*; do
    case "$f" in
      *.sst) ln "$f" "$DIR/run/" ;;
      *) cp "$f" "$DIR/run/" ;;
    esac
  done
  # shellcheck disable=SC2086,SC2048
  "$SHALE" bench --use_existing_db=1 --db="$DIR/run" --num="$NUM" --benchmarks=seekrandomwhilewriting \
    --seek_nexts="$2" --reads="$3" --duration=0 --threads=1 --seed="$4" --explicit_snapshot=1 \
    --auto_refresh_iterator_with_snapshot="$1" --benchmark_write_rate_limit="$RATE" \
    --write_buffer_size="$WBS" --level0_file_num_compaction_trigger="$L0TRIGGER" --writer_key_offset="$OFFSET" \
    --report_cpu_time=1 $EXTRA 2>/dev/null |
    awk '$1 == "seekrandomwhilewriting" && $4 == "CPU-micros/op" { c = $3 }
         $1 == "seekrandomwhilewriting" && $4 == "micros/op" { w = $5 }
         { for (i = 2; i <= NF; i++) if ($i == "auto-refreshes)") { r = substr($(i - 1), 2) } }
         END { print w, c, r + 0 }'
}
EXTRA="$*"
echo "runs: $SHALE bench --use_existing_db=1 --db=COPY --num=$NUM --benchmarks=seekrandomwhilewriting" \
  "--seek_nexts=N --reads=R --duration=0 --threads=1 --seed=S --explicit_snapshot=1" \
  "--auto_refresh_iterator_with_snapshot=1|0 --benchmark_write_rate_limit=$RATE --write_buffer_size=$WBS" \
  "--level0_file_num_compaction_trigger=$L0TRIGGER --writer_key_offset=$OFFSET --report_cpu_time=1 $EXTRA"
for N in 100 1000; do
  if [ "$N" = 100 ]; then R=$READS100; else R=$READS1000; fi
  run 1 "$N" "$R" 99 >/dev/null # warm-up
  run 0 "$N" "$R" 99 >/dev/null
  p=0
  while [ $p -lt "$PAIRS" ]; do
    S=$((100 + p))
    load=$(cut -d' ' -f1 /proc/loadavg)
    if [ $((p % 2)) -eq 0 ]; then
      on=$(run 1 "$N" "$R" "$S"); off=$(run 0 "$N" "$R" "$S")
    else
      off=$(run 0 "$N" "$R" "$S"); on=$(run 1 "$N" "$R" "$S")
    fi
    echo "$N $p $load $on $off"
    p=$((p + 1))
  done
done | awk '
  function median(a, n,   i, j, t) {
    for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[int(n / 2)] : (a[n / 2 - 1] + a[n / 2]) / 2
  }
  function minmax(a, n,   i, lo, hi) {
    lo = a[0]; hi = a[0]
    for (i = 1; i < n; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
    return sprintf("%.3f-%.3f", lo, hi)
  }
  function spread(a, n,   i, lo, hi) {   # (max - min) / median of one setting
    lo = a[0]; hi = a[0]
    for (i = 1; i < n; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
    return sprintf("%.1f%%", 100 * (hi - lo) / median(a, n))
  }
  {
    N = $1; k = n[N]++
    won[N, k] = $4; con[N, k] = $5; woff[N, k] = $7; coff[N, k] = $8
    printf "seek_nexts=%d pair %d (load %s): on %d ops/sec %.2f CPU us/op (%d auto-refreshes), off %d ops/sec %.2f CPU us/op; on/off wall %.3f, CPU %.3f\n",
      N, $2, $3, $4, $5, $6, $7, $8, $4 / $7, $8 / $5
    fflush()
  }
  END {
    for (N in n) {
      m = n[N]
      for (i = 0; i < m; i++) {
        rw[i] = won[N, i] / woff[N, i]; rc[i] = coff[N, i] / con[N, i]
        a1[i] = won[N, i]; a2[i] = woff[N, i]; a3[i] = con[N, i]; a4[i] = coff[N, i]
      }
      printf "seek_nexts=%d: on/off median of %d pairs: wall %.3f (%s), CPU %.3f (%s)\n",
        N, m, median(rw, m), minmax(rw, m), median(rc, m), minmax(rc, m)
      printf "seek_nexts=%d: spread (max-min)/median of one setting: wall on %s, off %s; CPU on %s, off %s\n",
        N, spread(a1, m), spread(a2, m), spread(a3, m), spread(a4, m)
    }
  }'
