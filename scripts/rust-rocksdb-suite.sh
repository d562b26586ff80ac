#!/usr/bin/env bash
# rust-rocksdb 0.25.0's own test suite, unchanged, against Shale.
#
# What it does:
#   1. downloads the `rocksdb` 0.25.0 package from crates.io with cargo (a scratch crate that
#      depends on it, then `cargo fetch`; nothing is built, and nothing of it enters the repository);
#   2. makes a scratch test crate whose Cargo.toml says
#        rocksdb = { package = "shale", path = "<repo>/crates/shale" }
#      and copies the package's tests/*.rs, tests/util/ and tests/fail/*.rs into it, unchanged;
#   3. builds every test file with one `cargo test --no-run` (a file that does not compile counts
#      as 0 of N), runs each file, and prints `test_db: P of N pass` per file and the totals;
#   4. runs the tests/fail/ compile-fail cases with trybuild: each must fail to compile, with the
#      same error codes as rust-rocksdb's expected output.
#
# Exit status: non-zero if a file listed in MUST_COMPILE does not compile, if a test of a
# MUST_PASS file fails (other than the ones listed in KNOWN_FAILURES with the issue that will
# turn them), or if a compile-fail case compiles. Other failures are reported, not fatal.
#
# Environment: SUITE_DIR (scratch directory; default <target>/rust-rocksdb-suite), SUITE_JOBS
# (test threads per file; default 2), SUITE_FILES (space-separated file names to run; default all).
set -uo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
TARGET_BASE="${CARGO_TARGET_DIR:-$REPO/target}"
WORK="${SUITE_DIR:-$TARGET_BASE/rust-rocksdb-suite}"
JOBS="${SUITE_JOBS:-2}"
VERSION="0.25.0"

# Files that compile today: one that stops compiling fails the run.
MUST_COMPILE="test_backup test_checkpoint test_column_family test_compactionfilter test_comparator
test_db test_iterator test_merge_operator test_multithreaded test_optimistic_transaction_db
test_optimistic_transaction_db_memory_usage test_perf test_pinnable_slice test_property
test_raw_iterator test_rocksdb_options test_slice_transform test_sst_file_writer
test_transaction_db test_transaction_db_memory_usage test_transaction_db_property test_write_batch"

# Files whose every test must pass, except the KNOWN_FAILURES below.
MUST_PASS="test_raw_iterator test_write_batch test_property test_pinnable_slice test_comparator
test_multithreaded test_rocksdb_options test_db test_backup test_checkpoint test_sst_file_writer test_perf
test_slice_transform test_iterator
test_transaction_db test_optimistic_transaction_db test_transaction_db_property
test_merge_operator test_compactionfilter test_column_family"

# file::test  issue-that-turns-it  (what it needs)
KNOWN_FAILURES="$(cat <<'EOF'
test_db::set_column_family_metadata_test  host name (asserts a one-key SST is over 1300 bytes. Shale's tables carry RocksDB 11.8.1's property set (tests/interop/interop_table_properties_11.rs); this one is 1295 bytes on a host named 'vm', and RocksDB 11.8.1 writes about 1290 for it there (1304 with ldb's StringAppendOperator name): the size grows with the host name in rocksdb.creating.host.identity, so the bound holds on hosts with names of 8+ characters, for both)
test_db::test_open_with_multiple_refs_as_single_threaded  rustc (the expected .stderr has an older rustc's wording of E0596; fails the same with rust-rocksdb)
test_checkpoint::test_checkpoint_wal_over_threshold_is_flushed  upstream (#[ignore] in rust-rocksdb 0.25: RocksDB's log_size_for_flush bug)
test_column_family::test_merge_operator  upstream (#[ignore] in rust-rocksdb 0.25)
test_rocksdb_options::test_crc32_build  not Shale's (on x86-64 it expects the LOG line 'Fast CRC32 supported: Not supported on x86', RocksDB's report of being compiled without SSE4.2 as rust-rocksdb builds it for x86-64-v1; Shale's crc32c uses SSE4.2 when the CPU has it, found at run time, and its LOG says so: 'Supported on x86'. It passes on a CPU without SSE4.2)
EOF
)"

# file::test  (why its outcome depends on timing, in RocksDB as in Shale). A failure of one of
# these is run again alone, up to twice: it counts as a pass (reported as such) if a rerun passes.
RACY_UPSTREAM="$(cat <<'EOF'
test_db::get_with_cache_and_bulkload_test  (as the next)
test_db::get_with_cache_and_bulkload_and_blobs_test  (expects the table on level 2 after a reopen: it relies on the automatic L1->L2 trivial move that follows its CompactRange (L0->L1, static level sizes; the flushed table, about 70 KB in both engines, is over the 64 KB level-1 target) finishing before the close; RocksDB's close aborts a running or queued compaction as Shale's does, so on a loaded machine either may leave it on level 1)
EOF
)"

# The issue that turns the failures of files outside MUST_PASS (tests not listed above).
default_issue() {
  case "$1" in
    test_merge_operator | test_compactionfilter | test_slice_transform) echo "issue 15 (merge, compaction filters, prefix extractors)" ;;
    test_transaction_db* | test_optimistic_transaction_db*) echo "issue 16 (transactions)" ;;
    *) echo "" ;;
  esac
}

unset CARGO_TARGET_DIR
mkdir -p "$WORK"
# Everything printed also goes to $WORK/summary.txt.
exec > >(tee "$WORK/summary.txt") 2>&1
FETCH="$WORK/fetch"
CRATE="$WORK/crate"
mkdir -p "$FETCH/src" "$CRATE/tests"

# 1. The published package, downloaded by cargo (no build).
cat >"$FETCH/Cargo.toml" <<EOF
[package]
name = "shale-suite-fetch"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
rocksdb = { version = "=$VERSION", default-features = false }

[workspace]
EOF
echo 'fn main() {}' >"$FETCH/src/main.rs"
(cd "$FETCH" && cargo fetch -q) || { echo "cargo fetch of rocksdb $VERSION failed"; exit 2; }
PKG="$(cd "$FETCH" && cargo metadata -q --format-version 1 |
  grep -o "\"manifest_path\":\"[^\"]*/rocksdb-$VERSION/Cargo.toml\"" | head -n1 |
  sed -e 's/^"manifest_path":"//' -e 's#/Cargo.toml"$##')"
if [ -z "$PKG" ] || [ ! -d "$PKG/tests" ]; then
  echo "rocksdb $VERSION package not found after cargo fetch"
  exit 2
fi

# 2. The scratch test crate.
cat >"$CRATE/Cargo.toml" <<EOF
[package]
name = "shale-rust-rocksdb-suite"
version = "0.0.0"
edition = "2021"
publish = false
autobenches = false

[lib]
path = "lib.rs"

# rust-rocksdb's own features, so the tests' #[cfg(feature = ...)] read as in its package
# (defaults as rust-rocksdb's).
[features]
default = ["snappy", "lz4", "zstd", "zlib", "bzip2"]
snappy = ["rocksdb/snappy"]
lz4 = ["rocksdb/lz4"]
zstd = ["rocksdb/zstd"]
zlib = ["rocksdb/zlib"]
bzip2 = ["rocksdb/bzip2"]
jemalloc = ["rocksdb/jemalloc"]
multi-threaded-cf = ["rocksdb/multi-threaded-cf"]

[dev-dependencies]
rocksdb = { package = "shale", path = "$REPO/crates/shale", default-features = false }
tempfile = "3"
pretty_assertions = "1"
bincode = "2"
trybuild = "1"

# Fast to build: CI has 2 cores and a budget. Shale and the other dependencies at opt-level 1
# (the tests run in seconds), the 22 test files themselves unoptimized, no debug info, no LTO.
[profile.dev]
opt-level = 0
debug = false
incremental = false

[profile.dev.package."*"]
opt-level = 1

[workspace]
EOF
echo '// The suite lives in tests/.' >"$CRATE/lib.rs"
[ -f "$CRATE/Cargo.lock" ] || cp "$REPO/Cargo.lock" "$CRATE/Cargo.lock"
rm -rf "$CRATE/tests"
mkdir -p "$CRATE/tests/fail"
cp "$PKG"/tests/*.rs "$CRATE/tests/"
cp -r "$PKG/tests/util" "$CRATE/tests/util"
# tests/fail/ with its .stderr files: several tests of the suite run trybuild on them.
cp "$PKG"/tests/fail/*.rs "$PKG"/tests/fail/*.stderr "$CRATE/tests/fail/"
# A copy without the expected output, for step 4 (which compares error codes only).
mkdir -p "$CRATE/tests/fail-check"
cp "$PKG"/tests/fail/*.rs "$CRATE/tests/fail-check/"
cat >"$CRATE/tests/shale_compile_fail.rs" <<'EOF'
// Runs rust-rocksdb's tests/fail/ cases: each must fail to compile against Shale.
#[test]
fn compile_fail() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/fail-check/*.rs");
}
EOF

FILES="${SUITE_FILES:-$(cd "$PKG/tests" && ls *.rs | sed 's/\.rs$//')}"

# 3. One build of every file.
BUILD_LOG="$WORK/build.json"
echo "building the suite against Shale ($CRATE)..."
(cd "$CRATE" && cargo test --no-run --no-fail-fast --message-format=json --target-dir "$WORK/target" \
  $(for f in $FILES; do printf -- '--test %s ' "$f"; done) >"$BUILD_LOG" 2>"$WORK/build.stderr")
grep '"reason":"compiler-message"' "$BUILD_LOG" | grep -o '"rendered":"[^"]*' |
  sed 's/^"rendered":"//; s/\\n/\n/g' >"$WORK/build-errors.txt" || true

status=0
total_pass=0
total_n=0
files_ok=0
files_n=0
failed_list=""
for f in $FILES; do
  files_n=$((files_n + 1))
  exe="$(grep '"reason":"compiler-artifact"' "$BUILD_LOG" | grep "\"name\":\"$f\"" |
    grep -o '"executable":"[^"]*"' | head -n1 | sed 's/^"executable":"//; s/"$//')"
  if [ -z "$exe" ] || [ ! -x "$exe" ]; then
    n="$(grep -c '#\[test\]' "$CRATE/tests/$f.rs")"
    echo "$f: 0 of $n pass (does not compile)"
    total_n=$((total_n + n))
    if echo " $MUST_COMPILE " | tr '\n' ' ' | grep -q " $f "; then
      echo "  FATAL: $f compiled before and does not compile now"
      status=1
    fi
    continue
  fi
  out="$WORK/$f.out"
  n="$("$exe" --list 2>/dev/null | grep -c ': test$')"
  # From the crate's directory, as `cargo test` runs them (the suite's trybuild tests read
  # tests/fail/ relative to it).
  (cd "$CRATE" && CARGO_MANIFEST_DIR="$CRATE" timeout 600 "$exe" --test-threads="$JOBS" >"$out" 2>&1)
  p="$(grep -c '^test .* \.\.\. ok$' "$out")"
  echo "$f: $p of $n pass"
  total_pass=$((total_pass + p))
  total_n=$((total_n + n))
  [ "$p" -eq "$n" ] && files_ok=$((files_ok + 1))
  # Tests that did not report ok (failed, ignored, or never ran because the binary crashed).
  for t in $("$exe" --list 2>/dev/null | grep ': test$' | sed 's/: test$//'); do
    # (a #[should_panic] test prints "test NAME - should panic ... ok")
    if ! grep -Eq "^test $t( - should panic)? \.\.\. ok$" "$out"; then
      why="$(grep -E "^test $t( - should panic)? \.\.\. " "$out" | sed 's/.* \.\.\. //')"
      [ -z "$why" ] && why="did not finish"
      known="$(echo "$KNOWN_FAILURES" | grep "^$f::$t " | sed "s/^$f::$t *//")"
      [ -z "$known" ] && known="$(default_issue "$f")"
      listed="$(echo "$KNOWN_FAILURES" | grep -c "^$f::$t ")"
      if [ "$listed" = 0 ] && echo "$RACY_UPSTREAM" | grep -q "^$f::$t "; then
        for attempt in 1 2; do
          if (cd "$CRATE" && CARGO_MANIFEST_DIR="$CRATE" timeout 600 "$exe" --exact "$t" >"$out.rerun$attempt" 2>&1) &&
            grep -Eq "^test $t \.\.\. ok$" "$out.rerun$attempt"; then
            echo "  $f::$t failed ($why), passed when run again alone (attempt $attempt): timing-dependent, see RACY_UPSTREAM"
            total_pass=$((total_pass + 1))
            listed=racy
            break
          fi
        done
        [ "$listed" = racy ] && continue
      fi
      failed_list="$failed_list$f::$t ($why)${known:+ -> $known}"$'\n'
      if [ "$listed" = 0 ] && echo " $MUST_PASS " | tr '\n' ' ' | grep -q " $f "; then
        echo "  FATAL: $f::$t must pass ($why)"
        status=1
      fi
    fi
  done
done
echo "total: $total_pass of $total_n tests pass; $files_ok of $files_n files pass entirely"
echo "$total_pass passed, $((total_n - total_pass)) failed"
if [ -n "$failed_list" ]; then
  echo "tests that do not pass (-> the issue that turns them):"
  printf '%s' "$failed_list" | sed 's/^/  /'
fi

# 4. Compile-fail cases: each must fail to compile, with rust-rocksdb's error codes.
if [ -z "${SUITE_FILES:-}" ]; then
  echo "compile-fail cases (tests/fail/, trybuild):"
  rm -rf "$CRATE/tests/fail-check/"*.stderr "$CRATE/wip"
  (cd "$CRATE" && TRYBUILD=overwrite cargo test --target-dir "$WORK/target" --test shale_compile_fail \
    >"$WORK/compile-fail.out" 2>&1)
  for rs in "$CRATE"/tests/fail-check/*.rs; do
    name="$(basename "$rs" .rs)"
    got="$CRATE/tests/fail-check/$name.stderr"
    want="$CRATE/tests/fail/$name.stderr"
    if [ ! -f "$got" ]; then
      echo "  $name: COMPILES (must not)"
      status=1
      continue
    fi
    gc="$(grep -o '^error\[E[0-9]*\]' "$got" | sort -u | tr '\n' ' ')"
    wc="$(grep -o '^error\[E[0-9]*\]' "$want" | sort -u | tr '\n' ' ')"
    if [ "$gc" = "$wc" ]; then
      echo "  $name: fails to compile as with rust-rocksdb ($gc)"
    else
      echo "  $name: fails to compile, but with ${gc:-other errors} instead of $wc"
      status=1
    fi
  done
fi
exit $status
