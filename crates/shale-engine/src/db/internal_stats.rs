//! RocksDB's `InternalStats`: per-family compaction statistics by level and by thread
//! priority, flush ingest, write-stall counts by cause, and the texts of `rocksdb.cfstats`,
//! `rocksdb.dbstats` and `rocksdb.stats` in RocksDB 11.8.1's layout (db/internal_stats.cc:
//! `PrintLevelStatsHeader`, `PrintLevelStats`, `DumpCFStatsNoFileHistogram`, `DumpDBStats`),
//! so that tools parsing RocksDB's LOG and properties read Shale's.
//!
//! Flush and compaction jobs add to their family's `CfInternalStats` when they finish (a
//! leaf mutex, never held across I/O); the texts are built from those, the family's current
//! Version and the DB-wide counters in `Stats`. The "interval" figures are since the last
//! periodic dump (`stats_dump_period_sec`) for a family, and since the last `dbstats` text for
//! the DB, as in RocksDB.

// This thread's CPU time (RocksDB's `GetThreadCpuTimeNanos`, for `CompMergeCPU(sec)`).
pub use shale_base::sys::thread_cpu_micros;
use std::fmt::Write as _;

use parking_lot::Mutex;

const KB: f64 = 1024.0;
const MB: f64 = 1048576.0;
const GB: f64 = MB * 1024.0;
const MICROS_IN_SEC: f64 = 1_000_000.0;

/// One job's or one level's compaction figures (RocksDB's `InternalStats::CompactionStats`,
/// without blob bytes: Shale writes no blob files here).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactionStats {
    pub micros: u64,
    pub cpu_micros: u64,
    /// Rn: bytes read from the levels other than the output level (the start level).
    pub bytes_read_non_output_levels: u64,
    /// Rnp1: bytes read from the output level.
    pub bytes_read_output_level: u64,
    pub bytes_written: u64,
    pub bytes_moved: u64,
    pub num_input_files: u64,
    pub num_output_files: u64,
    pub num_input_records: u64,
    pub num_dropped_records: u64,
    pub count: u64,
}

impl CompactionStats {
    fn add(&mut self, o: &CompactionStats) {
        self.micros += o.micros;
        self.cpu_micros += o.cpu_micros;
        self.bytes_read_non_output_levels += o.bytes_read_non_output_levels;
        self.bytes_read_output_level += o.bytes_read_output_level;
        self.bytes_written += o.bytes_written;
        self.bytes_moved += o.bytes_moved;
        self.num_input_files += o.num_input_files;
        self.num_output_files += o.num_output_files;
        self.num_input_records += o.num_input_records;
        self.num_dropped_records += o.num_dropped_records;
        self.count += o.count;
    }

    fn subtract(&mut self, o: &CompactionStats) {
        self.micros = self.micros.wrapping_sub(o.micros);
        self.cpu_micros = self.cpu_micros.wrapping_sub(o.cpu_micros);
        self.bytes_read_non_output_levels =
            self.bytes_read_non_output_levels.wrapping_sub(o.bytes_read_non_output_levels);
        self.bytes_read_output_level = self.bytes_read_output_level.wrapping_sub(o.bytes_read_output_level);
        self.bytes_written = self.bytes_written.wrapping_sub(o.bytes_written);
        self.bytes_moved = self.bytes_moved.wrapping_sub(o.bytes_moved);
        self.num_input_files = self.num_input_files.wrapping_sub(o.num_input_files);
        self.num_output_files = self.num_output_files.wrapping_sub(o.num_output_files);
        self.num_input_records = self.num_input_records.wrapping_sub(o.num_input_records);
        self.num_dropped_records = self.num_dropped_records.wrapping_sub(o.num_dropped_records);
        self.count = self.count.wrapping_sub(o.count);
    }
}

/// RocksDB's `Env::Priority` order, as `comp_stats_by_pri_` prints it (Shale runs no bottom
/// or user pool, so only `Low` and `High` are ever recorded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(dead_code)]
pub enum Priority {
    Bottom = 0,
    Low = 1,
    High = 2,
    User = 3,
}

const PRIORITY_NAMES: [&str; 4] = ["Bottom", "Low", "High", "User"];

/// RocksDB's column-family write-stall causes (`WriteStallCause`, CF scope) and the names
/// `WriteStallStatsMapKeys::CauseConditionCount` gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StallCause {
    MemtableLimit = 0,
    L0FileCountLimit = 1,
    PendingCompactionBytes = 2,
}

const CAUSE_NAMES: [&str; 3] = ["memtable-limit", "l0-file-count-limit", "pending-compaction-bytes"];

/// What the last periodic dump saw of a family (RocksDB's `CFStatsSnapshot`).
#[derive(Default, Clone, Copy)]
struct CfSnapshot {
    seconds_up: f64,
    ingest_bytes_flush: u64,
    comp_stats: CompactionStats,
    compact_bytes_write: u64,
    compact_bytes_read: u64,
    compact_micros: u64,
    stall_count: u64,
}

#[derive(Default)]
struct CfStatsInner {
    levels: Vec<CompactionStats>,
    by_priority: [CompactionStats; 4],
    bytes_flushed: u64,
    /// [cause][0 delayed, 1 stopped].
    stalls: [[u64; 2]; 3],
    l0_delays_with_ongoing_compaction: u64,
    l0_stops_with_ongoing_compaction: u64,
    snapshot: CfSnapshot,
}

/// A family's statistics (RocksDB's per-`ColumnFamilyData` `InternalStats`). Its mutex is a
/// leaf: taken for a few additions or to copy the figures out.
#[derive(Default)]
pub struct CfInternalStats {
    inner: Mutex<CfStatsInner>,
}

/// What a family's text needs of its current Version, read under the DB mutex.
pub struct LevelShape {
    pub files: Vec<usize>,
    pub being_compacted: Vec<usize>,
    pub bytes: Vec<u64>,
    pub scores: Vec<f64>,
    pub estimated_pending_compaction_bytes: u64,
    /// The Version's blob files: count, total size (headers and footers included, as
    /// RocksDB's `GetBlobFileSize`) and garbage bytes.
    pub blob_files: usize,
    pub blob_bytes: u64,
    pub blob_garbage_bytes: u64,
}

impl CfInternalStats {
    /// A flush wrote `bytes` to a level-0 table in `micros` from `records` memtable entries
    /// (RocksDB's `FlushJob::WriteLevel0Table` adds to level 0 and the HIGH priority).
    pub fn add_flush(&self, bytes: u64, micros: u64, cpu_micros: u64, records: u64) {
        let s = CompactionStats {
            micros,
            cpu_micros,
            bytes_written: bytes,
            num_output_files: 1,
            num_input_records: records,
            count: 1,
            ..Default::default()
        };
        let mut g = self.inner.lock();
        g.bytes_flushed += bytes;
        add_level(&mut g, 0, &s);
        g.by_priority[Priority::High as usize].add(&s);
    }

    /// A compaction into `output_level` finished (RocksDB's `CompactionJob::UpdateStats`,
    /// recorded at the output level and at the priority of the thread that ran it).
    pub fn add_compaction(&self, output_level: usize, priority: Priority, s: &CompactionStats) {
        let mut g = self.inner.lock();
        add_level(&mut g, output_level, s);
        g.by_priority[priority as usize].add(s);
    }

    /// A family's stall condition was recomputed as delayed (or stopped) by `cause`
    /// (RocksDB counts at every `RecalculateWriteStallConditions` that finds one).
    pub fn add_stall(&self, cause: StallCause, stopped: bool, compaction_running: bool) {
        let mut g = self.inner.lock();
        g.stalls[cause as usize][usize::from(stopped)] += 1;
        if cause == StallCause::L0FileCountLimit && compaction_running {
            if stopped {
                g.l0_stops_with_ongoing_compaction += 1;
            } else {
                g.l0_delays_with_ongoing_compaction += 1;
            }
        }
    }

    /// Bytes flushed so far (RocksDB's `BYTES_FLUSHED`).
    #[cfg(test)]
    pub fn bytes_flushed(&self) -> u64 {
        self.inner.lock().bytes_flushed
    }

    /// RocksDB's `DumpCFStatsNoFileHistogram` then `DumpCFFileHistogram`: the compaction
    /// table by level (with `Sum` and `Int`), the table by priority, the blob line, uptime,
    /// flush and ingest totals, compaction totals, pending bytes and the write-stall counts.
    /// `periodic`: the stats dump's call, which moves the interval start.
    pub fn cf_text(&self, name: &str, shape: &LevelShape, seconds_up: f64, periodic: bool) -> String {
        let mut g = self.inner.lock();
        let mut out = String::new();
        out.push_str(&header(name, "Level"));
        let n = shape.files.len();
        let mut sum = CompactionStats::default();
        let (mut total_files, mut total_busy, mut total_size) = (0usize, 0usize, 0u64);
        let flush_ingest = g.bytes_flushed;
        let empty = CompactionStats::default();
        for l in 0..n {
            let st = g.levels.get(l).unwrap_or(&empty);
            let files = shape.files[l];
            total_files += files;
            total_busy += shape.being_compacted[l];
            if st.micros > 0 || st.cpu_micros > 0 || files > 0 {
                sum.add(st);
                total_size += shape.bytes[l];
                let input = if l == 0 { flush_ingest } else { st.bytes_read_non_output_levels };
                let w_amp = if input == 0 { 0.0 } else { st.bytes_written as f64 / input as f64 };
                out.push_str(&level_line(
                    &format!("L{l}"),
                    files,
                    shape.being_compacted[l],
                    shape.bytes[l],
                    shape.scores.get(l).copied().unwrap_or(0.0),
                    w_amp,
                    st,
                ));
            }
        }
        let w_amp = if flush_ingest == 0 { 0.0 } else { sum.bytes_written as f64 / flush_ingest as f64 };
        out.push_str(&level_line("Sum", total_files, total_busy, total_size, 0.0, w_amp, &sum));
        let interval_flush = flush_ingest - g.snapshot.ingest_bytes_flush;
        let mut interval = sum;
        interval.subtract(&g.snapshot.comp_stats);
        let w_amp = interval.bytes_written as f64 / (interval_flush + 1) as f64;
        out.push_str(&level_line("Int", 0, 0, 0, 0.0, w_amp, &interval));

        out.push_str(&header(name, "Priority"));
        for (p, st) in g.by_priority.iter().enumerate() {
            if st.micros > 0 {
                out.push_str(&level_line(PRIORITY_NAMES[p], 0, 0, 0, 0.0, 0.0, st));
            }
        }
        // RocksDB's `VersionStorageInfo::GetBlobStats`: space amp is total / live, 0 when
        // nothing is live.
        let (total, garbage) = (shape.blob_bytes, shape.blob_garbage_bytes);
        let space_amp = if total > garbage { total as f64 / (total - garbage) as f64 } else { 0.0 };
        let _ = write!(
            out,
            "\nBlob file count: {}, total size: {:.1} GB, garbage size: {:.1} GB, space amp: {space_amp:.1}\n\n",
            shape.blob_files,
            total as f64 / GB,
            garbage as f64 / GB
        );
        let interval_up = seconds_up - g.snapshot.seconds_up;
        let _ = writeln!(out, "Uptime(secs): {seconds_up:.1} total, {interval_up:.1} interval");
        let _ = writeln!(
            out,
            "Flush(GB): cumulative {:.3}, interval {:.3}",
            flush_ingest as f64 / GB,
            interval_flush as f64 / GB
        );
        // External file ingestion is not counted by family yet: RocksDB's zeros without it.
        out.push_str("AddFile(GB): cumulative 0.000, interval 0.000\n");
        out.push_str("AddFile(Total Files): cumulative 0, interval 0\n");
        out.push_str("AddFile(L0 Files): cumulative 0, interval 0\n");
        out.push_str("AddFile(Keys): cumulative 0, interval 0\n");
        let (mut read, mut write, mut micros) = (0u64, 0u64, 0u64);
        for st in &g.levels {
            read += st.bytes_read_output_level + st.bytes_read_non_output_levels;
            write += st.bytes_written;
            micros += st.micros;
        }
        compaction_line(&mut out, "Cumulative", write, read, micros, seconds_up);
        let (iw, ir, im) = (
            write - g.snapshot.compact_bytes_write,
            read - g.snapshot.compact_bytes_read,
            micros - g.snapshot.compact_micros,
        );
        compaction_line(&mut out, "Interval", iw, ir, im, interval_up);
        let _ =
            writeln!(out, "Estimated pending compaction bytes: {}", shape.estimated_pending_compaction_bytes);
        if periodic {
            g.snapshot.compact_bytes_write = write;
            g.snapshot.compact_bytes_read = read;
            g.snapshot.compact_micros = micros;
        }
        // RocksDB's map, printed in its (sorted) key order.
        let mut stalls: Vec<(String, u64)> = Vec::new();
        let (mut delays, mut stops) = (0u64, 0u64);
        for (c, name) in CAUSE_NAMES.iter().enumerate() {
            stalls.push((format!("{name}-delays"), g.stalls[c][0]));
            stalls.push((format!("{name}-stops"), g.stalls[c][1]));
            delays += g.stalls[c][0];
            stops += g.stalls[c][1];
        }
        stalls.push((
            "cf-l0-file-count-limit-delays-with-ongoing-compaction".into(),
            g.l0_delays_with_ongoing_compaction,
        ));
        stalls.push((
            "cf-l0-file-count-limit-stops-with-ongoing-compaction".into(),
            g.l0_stops_with_ongoing_compaction,
        ));
        stalls.push(("total-delays".into(), delays));
        stalls.push(("total-stops".into(), stops));
        stalls.sort();
        let list: Vec<String> = stalls.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        let _ = writeln!(out, "Write Stall (count): {}", list.join(", "));
        let total = delays + stops;
        if total > 0 {
            let _ = writeln!(out, "interval: {} total count", total - g.snapshot.stall_count);
        }
        if periodic {
            g.snapshot.seconds_up = seconds_up;
            g.snapshot.ingest_bytes_flush = flush_ingest;
            g.snapshot.comp_stats = sum;
            g.snapshot.stall_count = total;
        }
        out
    }
}

fn add_level(g: &mut CfStatsInner, level: usize, s: &CompactionStats) {
    if g.levels.len() <= level {
        g.levels.resize(level + 1, CompactionStats::default());
    }
    g.levels[level].add(s);
}

/// RocksDB's `PrintLevelStatsHeader`: the title, the column names, a rule as long as them.
fn header(cf: &str, group_by: &str) -> String {
    let line = format!(
        "{group_by}    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) WPreComp(GB) Wnew(GB) \
         Moved(GB) W-Amp Rd(MB/s) Wr(MB/s) Comp(sec) CompMergeCPU(sec) Comp(cnt) Avg(sec) KeyIn KeyDrop \
         Rblob(GB) Wblob(GB)\n"
    );
    format!("\n** Compaction Stats [{cf}] **\n{line}{}\n", "-".repeat(line.len()))
}

/// RocksDB's `PrepareLevelStats` + `PrintLevelStats`: one row of the compaction table.
fn level_line(
    name: &str,
    files: usize,
    being_compacted: usize,
    size: u64,
    score: f64,
    w_amp: f64,
    st: &CompactionStats,
) -> String {
    let read = st.bytes_read_non_output_levels + st.bytes_read_output_level;
    let new = st.bytes_written as i64 - st.bytes_read_output_level as i64;
    let elapsed = (st.micros + 1) as f64 / MICROS_IN_SEC;
    let avg = if st.count == 0 { 0.0 } else { st.micros as f64 / MICROS_IN_SEC / st.count as f64 };
    let files_col = format!("{being_compacted:<3}");
    format!(
        "{name:>4} {files:>6}/{files_col} {:>10} {score:>5.1} {:>8.1} {:>7.1} {:>8.1} {:>9.1} {:>9.1} {:>8.1} \
         {:>9.1} {w_amp:>5.1} {:>8.1} {:>8.1} {:>9.2} {:>17.2} {:>9} {avg:>8.3} {:>7} {:>6} {:>9.1} {:>9.1}\n",
        bytes_to_human(size),
        read as f64 / GB,
        st.bytes_read_non_output_levels as f64 / GB,
        st.bytes_read_output_level as f64 / GB,
        st.bytes_written as f64 / GB,
        // WPreComp: bytes before compression are not kept apart from bytes written.
        0.0,
        new as f64 / GB,
        st.bytes_moved as f64 / GB,
        read as f64 / MB / elapsed,
        st.bytes_written as f64 / MB / elapsed,
        st.micros as f64 / MICROS_IN_SEC,
        st.cpu_micros as f64 / MICROS_IN_SEC,
        st.count,
        number_to_human(st.num_input_records as i64),
        number_to_human(st.num_dropped_records as i64),
        0.0,
        0.0,
    )
}

/// RocksDB's `BytesToHumanString`: KB at least, two decimals.
pub fn bytes_to_human(bytes: u64) -> String {
    let names = ["KB", "MB", "GB", "TB"];
    let mut v = bytes as f64 / KB;
    let mut i = 0;
    while i < 3 && v >= 1024.0 {
        v /= 1024.0;
        i += 1;
    }
    format!("{v:.2} {}", names[i])
}

/// RocksDB's `NumberToHumanString`: K, M, G above 10^4, 10^7, 10^10.
pub fn number_to_human(n: i64) -> String {
    let a = n.unsigned_abs();
    if a < 10_000 {
        n.to_string()
    } else if a < 10_000_000 {
        format!("{}K", n / 1000)
    } else if a < 10_000_000_000 {
        format!("{}M", n / 1_000_000)
    } else {
        format!("{}G", n / 1_000_000_000)
    }
}

/// RocksDB's `AppendHumanMicros` in its fixed format (`HH:MM:SS.sss H:M:S`).
pub fn human_micros_fixed(micros: u64) -> String {
    format!(
        "{:02}:{:02}:{:05.3} H:M:S",
        micros / 1_000_000 / 3600,
        (micros / 1_000_000 / 60) % 60,
        (micros % 60_000_000) as f64 / 1_000_000.0
    )
}

/// The DB-wide figures of `rocksdb.dbstats` (RocksDB's `db_stats_`).
#[derive(Debug, Clone, Copy, Default)]
pub struct DbCounts {
    pub write_self: u64,
    pub write_other: u64,
    pub keys: u64,
    pub bytes: u64,
    pub wal_bytes: u64,
    pub wal_synced: u64,
    pub write_with_wal: u64,
    pub stall_micros: u64,
    pub wbm_stops: u64,
}

/// The last `dbstats` text's figures (RocksDB's `DBStatsSnapshot`).
#[derive(Default)]
pub struct DbSnapshot {
    seconds_up: f64,
    c: DbCounts,
}

/// RocksDB's `DumpDBStats`; moves the interval start to now, as RocksDB's does.
pub fn db_text(c: DbCounts, seconds_up: f64, snap: &Mutex<DbSnapshot>) -> String {
    let mut s = snap.lock();
    let mut out = String::new();
    let interval_up = seconds_up - s.seconds_up;
    let _ = write!(out, "\n** DB Stats **\nUptime(secs): {seconds_up:.1} total, {interval_up:.1} interval\n");
    let up = seconds_up.max(0.001);
    let writes = c.write_other + c.write_self;
    let _ = writeln!(
        out,
        "Cumulative writes: {} writes, {} keys, {} commit groups, {:.1} writes per commit group, ingest: {:.2} GB, {:.2} MB/s",
        number_to_human(writes as i64),
        number_to_human(c.keys as i64),
        number_to_human(c.write_self as i64),
        writes as f64 / (c.write_self as f64).max(1.0),
        c.bytes as f64 / GB,
        c.bytes as f64 / MB / up
    );
    let _ = writeln!(
        out,
        "Cumulative WAL: {} writes, {} syncs, {:.2} writes per sync, written: {:.2} GB, {:.2} MB/s",
        number_to_human(c.write_with_wal as i64),
        number_to_human(c.wal_synced as i64),
        c.write_with_wal as f64 / (c.wal_synced as f64).max(1.0),
        c.wal_bytes as f64 / GB,
        c.wal_bytes as f64 / MB / up
    );
    let _ = writeln!(
        out,
        "Cumulative stall: {}, {:.1} percent",
        human_micros_fixed(c.stall_micros),
        c.stall_micros as f64 / 10000.0 / up
    );
    let p = s.c;
    let iup = interval_up.max(0.001);
    let (io, is, ik) = (c.write_other - p.write_other, c.write_self - p.write_self, c.keys - p.keys);
    let ib = c.bytes - p.bytes;
    let _ = writeln!(
        out,
        "Interval writes: {} writes, {} keys, {} commit groups, {:.1} writes per commit group, ingest: {:.2} MB, {:.2} MB/s",
        number_to_human((io + is) as i64),
        number_to_human(ik as i64),
        number_to_human(is as i64),
        (io + is) as f64 / (is as f64).max(1.0),
        ib as f64 / MB,
        ib as f64 / MB / iup
    );
    let (iw, isy, iwb) =
        (c.write_with_wal - p.write_with_wal, c.wal_synced - p.wal_synced, c.wal_bytes - p.wal_bytes);
    let _ = writeln!(
        out,
        "Interval WAL: {} writes, {} syncs, {:.2} writes per sync, written: {:.2} GB, {:.2} MB/s",
        number_to_human(iw as i64),
        number_to_human(isy as i64),
        iw as f64 / (isy as f64).max(1.0),
        iwb as f64 / GB,
        iwb as f64 / MB / iup
    );
    let ist = c.stall_micros - p.stall_micros;
    let _ = writeln!(
        out,
        "Interval stall: {}, {:.1} percent",
        human_micros_fixed(ist),
        ist as f64 / 10000.0 / iup
    );
    let _ = writeln!(out, "Write Stall (count): write-buffer-manager-limit-stops: {}", c.wbm_stops);
    s.seconds_up = seconds_up;
    s.c = c;
    out
}

/// RocksDB's `<Cumulative|Interval> compaction: ... GB write, ... MB/s write, ...` line.
fn compaction_line(out: &mut String, label: &str, write: u64, read: u64, micros: u64, seconds: f64) {
    let up = seconds.max(0.001);
    let _ = writeln!(
        out,
        "{label} compaction: {:.2} GB write, {:.2} MB/s write, {:.2} GB read, {:.2} MB/s read, {:.1} seconds",
        write as f64 / GB,
        write as f64 / MB / up,
        read as f64 / GB,
        read as f64 / MB / up,
        micros as f64 / MICROS_IN_SEC
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_strings_are_rocksdb_s() {
        assert_eq!(bytes_to_human(0), "0.00 KB");
        assert_eq!(bytes_to_human(2_055_208), "1.96 MB");
        assert_eq!(number_to_human(9999), "9999");
        assert_eq!(number_to_human(50_000), "50K");
        assert_eq!(number_to_human(156_123), "156K");
        assert_eq!(number_to_human(12_000_000), "12M");
        assert_eq!(human_micros_fixed(557_000), "00:00:0.557 H:M:S");
        assert_eq!(human_micros_fixed(3_723_500_000), "01:02:3.500 H:M:S");
    }

    /// The header and a row laid out as RocksDB 11.8.1's db_bench printed them (copied
    /// from its `stats` output: same column starts).
    #[test]
    fn table_lines_match_rocksdb_layout() {
        let h = header("default", "Level");
        let rocks_header =
            "Level    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) WPreComp(GB) \
            Wnew(GB) Moved(GB) W-Amp Rd(MB/s) Wr(MB/s) Comp(sec) CompMergeCPU(sec) Comp(cnt) Avg(sec) KeyIn \
            KeyDrop Rblob(GB) Wblob(GB)";
        let lines: Vec<&str> = h.lines().collect();
        assert_eq!(lines[1], "** Compaction Stats [default] **");
        assert_eq!(lines[2], rocks_header);
        assert_eq!(lines[3], "-".repeat(rocks_header.len() + 1));
        let st = CompactionStats {
            micros: 660_000,
            cpu_micros: 40_000,
            bytes_written: 3_400_000,
            num_input_records: 50_000,
            count: 29,
            ..Default::default()
        };
        let row = level_line("L0", 0, 0, 0, 0.0, 1.0, &st);
        let rocks_row = "  L0      0/0      0.00 KB   0.0      0.0     0.0      0.0       0.0       0.0      0.0       \
            0.0   1.0      0.0      4.9      0.66              0.04        29    0.023     50K      0       0.0       0.0\n";
        assert_eq!(row, rocks_row);
        let sum = level_line("Sum", 8, 0, 2_055_208, 0.0, 2.7, &CompactionStats::default());
        assert!(sum.starts_with(" Sum      8/0      1.96 MB   0.0 "), "{sum}");
    }

    #[test]
    fn cf_text_sums_levels_and_moves_the_interval_when_periodic() {
        let s = CfInternalStats::default();
        s.add_flush(1 << 20, 1000, 900, 100);
        s.add_compaction(
            1,
            Priority::Low,
            &CompactionStats {
                micros: 2000,
                bytes_read_non_output_levels: 1 << 20,
                bytes_written: 1 << 20,
                num_input_records: 100,
                num_dropped_records: 7,
                count: 1,
                ..Default::default()
            },
        );
        s.add_stall(StallCause::L0FileCountLimit, false, true);
        let shape = LevelShape {
            files: vec![0, 1, 0],
            being_compacted: vec![0, 0, 0],
            bytes: vec![0, 1 << 20, 0],
            scores: vec![0.0, 0.1, 0.0],
            estimated_pending_compaction_bytes: 0,
            blob_files: 3,
            blob_bytes: 3 << 30,
            blob_garbage_bytes: 1 << 30,
        };
        let t = s.cf_text("default", &shape, 10.0, true);
        // RocksDB's blob line: 3 GiB in files, 1 GiB of it garbage, space amp 3 / 2.
        assert!(
            t.contains("\nBlob file count: 3, total size: 3.0 GB, garbage size: 1.0 GB, space amp: 1.5\n\n"),
            "{t}"
        );
        assert!(t.contains("\n  L0      0/0 "), "{t}");
        assert!(t.contains("\n  L1      1/0      1.00 MB   0.1 "), "{t}");
        assert!(t.contains("\n Sum      1/0      1.00 MB "), "{t}");
        assert!(t.contains("\n Low      0/0 "), "{t}");
        assert!(t.contains("\nHigh      0/0 "), "{t}");
        assert!(t.contains("Flush(GB): cumulative 0.001, interval 0.001\n"), "{t}");
        assert!(t.contains("cf-l0-file-count-limit-delays-with-ongoing-compaction: 1, "), "{t}");
        assert!(t.contains("l0-file-count-limit-delays: 1, "), "{t}");
        assert!(t.contains("total-delays: 1, total-stops: 0\ninterval: 1 total count\n"), "{t}");
        // After a periodic dump the interval row is empty.
        let t2 = s.cf_text("default", &shape, 20.0, false);
        let int = t2.lines().find(|l| l.starts_with(" Int")).unwrap();
        assert!(int.contains("         0 "), "{int}");
        assert!(t2.contains("Uptime(secs): 20.0 total, 10.0 interval\n"), "{t2}");
        assert_eq!(s.bytes_flushed(), 1 << 20);
    }

    #[test]
    fn db_text_moves_its_interval_every_time() {
        let snap = Mutex::new(DbSnapshot::default());
        let c = DbCounts {
            write_self: 10,
            write_other: 5,
            keys: 15,
            bytes: 1500,
            write_with_wal: 15,
            ..Default::default()
        };
        let t = db_text(c, 2.0, &snap);
        assert!(t.starts_with("\n** DB Stats **\nUptime(secs): 2.0 total, 2.0 interval\n"), "{t}");
        assert!(
            t.contains(
                "Cumulative writes: 15 writes, 15 keys, 10 commit groups, 1.5 writes per commit group"
            ),
            "{t}"
        );
        assert!(t.contains("Cumulative WAL: 15 writes, 0 syncs, 15.00 writes per sync"), "{t}");
        assert!(t.contains("Cumulative stall: 00:00:0.000 H:M:S, 0.0 percent\n"), "{t}");
        assert!(t.ends_with("Write Stall (count): write-buffer-manager-limit-stops: 0\n"), "{t}");
        let t = db_text(c, 3.0, &snap);
        assert!(t.contains("Interval writes: 0 writes, 0 keys, 0 commit groups"), "{t}");
    }
}
