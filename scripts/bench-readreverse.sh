#!/bin/sh
# readreverse vs readseq, wall clock (issue 13): one `shale bench` process per run fills a
# database, then alternates readseq and readreverse PAIRS times over the same data, so the
# two are measured side by side; a run's figure is the median ops/sec of each, and the
# ratio readreverse/readseq. RUNS runs; the summary line gives the median of the runs'
# ratios (and their min and max).
#
#   scripts/bench-readreverse.sh SHALE NUM PAIRS RUNS [extra shale bench flags...]
#
# memtable: scripts/bench-readreverse.sh target/release/shale 50000 40 5
# SSTs:     scripts/bench-readreverse.sh target/release/shale 1000000 8 5 --flush_first=1
#
# --flush_first=1 (taken by this script, not by shale bench) puts a `flush` between the
# fill and the reads, so every key is read from SSTs. The database lives in a temporary
# directory under /tmp and is removed at the end.
set -eu
SHALE=$1 NUM=$2 PAIRS=$3 RUNS=$4
shift 4
FLUSH=""
EXTRA=""
for a in "$@"; do
  case "$a" in
    --flush_first=1) FLUSH="flush," ;;
    *) EXTRA="$EXTRA $a" ;;
  esac
done
LIST="fillrandom,$FLUSH"
i=0
while [ $i -lt "$PAIRS" ]; do LIST="${LIST}readseq,readreverse,"; i=$((i + 1)); done
DIR=$(mktemp -d /tmp/bench-readreverse.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
r=0
while [ $r -lt "$RUNS" ]; do
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  # shellcheck disable=SC2086
  "$SHALE" bench --db="$DIR/db" --num="$NUM" --seed=$((1000 + r)) --benchmarks="$LIST" $EXTRA 2>/dev/null \
    | awk -v run=$r '
      $1 == "readseq" { f[nf++] = $5 }
      $1 == "readreverse" { b[nb++] = $5 }
      function median(a, n,   i, j, t) {
        for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return n % 2 ? a[int(n / 2)] : (a[n / 2 - 1] + a[n / 2]) / 2
      }
      END {
        mf = median(f, nf); mb = median(b, nb)
        printf "run %d: readseq %d ops/sec, readreverse %d ops/sec (medians of %d), ratio %.3f\n", run, mf, mb, nf, mb / mf
      }'
  r=$((r + 1))
done | tee "$DIR/runs"
awk '/^run/ { r[n++] = $NF }
  END {
    for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
    m = n % 2 ? r[int(n / 2)] : (r[n / 2 - 1] + r[n / 2]) / 2
    printf "readreverse/readseq: median %.3f of %d runs (min %.3f, max %.3f)\n", m, n, r[0], r[n - 1]
  }' "$DIR/runs"
