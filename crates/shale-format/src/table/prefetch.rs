//! Readahead of a table iterator: RocksDB's `BlockPrefetcher` (whether to read ahead) and
//! its `FilePrefetchBuffer` (the bytes read ahead), one of each per table iterator.
//!
//! ```text
//! file:    | blk 0 | blk 1 | blk 2 | blk 3 | blk 4 | blk 5 | ... | index | footer |
//! reads:    pread   pread   pread(blk 2 + 8 KiB)------>  pread(+16 KiB) ...  (auto)
//! buffer:                  [offset ............ offset + filled)
//!                           a block wholly inside is served from here, no pread
//! ```
//!
//! **When** (RocksDB 11.8.1's `BlockPrefetcher::PrefetchIfNeeded`, called for each data
//! block an iterator moves to, found in the block cache or not):
//! - `ReadOptions::readahead_size > 0`: a buffer of that fixed size from the first read;
//! - otherwise implicit auto readahead: after `NUM_FILE_READS_FOR_AUTO_READAHEAD` (2)
//!   sequential block reads (each block starting where the one before ended), the buffer
//!   reads `INITIAL_AUTO_READAHEAD_SIZE` (8 KiB) beyond the block, doubling at each
//!   further read up to `MAX_AUTO_READAHEAD_SIZE` (256 KiB); a non-sequential block starts
//!   the count again (the buffer, once made, stays and keeps its own count, as RocksDB's);
//! - no readahead with `ReadTier::kBlockCacheTier` (no I/O) and for point lookups.
//!
//! The three auto sizes are the family's block-based table options of those names
//! ([`AutoReadahead`]: `initial_auto_readahead_size`, `max_auto_readahead_size`,
//! `num_file_reads_for_auto_readahead`; either size 0 turns implicit readahead off, an
//! initial size above the max is the max), as RocksDB's `BlockPrefetcher` reads them.
//!
//! **Where it stops** (RocksDB's `ReadOptions::auto_readahead_size`, on by default, for an
//! iterator with `iterate_upper_bound` over a table with a block cache): a read ahead, fixed
//! or implicit, ends with the data block whose index key reaches the upper bound (every
//! later block holds only keys past it), as RocksDB's `BlockCacheLookupForReadAheadSize`
//! trims it; the block itself is always read. That end is found once per table iterator, by
//! an index seek to the bound, when the first read ahead is about to happen. RocksDB's same
//! function also moves the start and end of a read ahead off blocks already in the block
//! cache; Shale reads those bytes again (the blocks already cached are served from the cache
//! all the same), and it does not trim at a `prefix_same_as_start` prefix.
//!
//! **How**: RocksDB asks the file system first (`FSRandomAccessFile::Prefetch`, the kernel's
//! `readahead` on POSIX) and still reads each block with its own `pread`; only where the file
//! system cannot prefetch, or with direct I/O, does it read into the `FilePrefetchBuffer`.
//! Shale always reads into the buffer (the documented fallback), because one `pread` of up to
//! 256 KiB in place of 64 reads of 4 KiB is what a sequential scan costs: a profile of
//! readseq put one `pread` per data block among its largest costs, and the blocks then come
//! from memory (uncompressed straight out of the buffer). With direct I/O the file rounds each
//! read to its alignment, as RocksDB's aligned buffer does.
//!
//! **A compaction's input** through the page cache (a file that [supports
//! prefetch](crate::fs::RandomAccessFile::supports_prefetch), not direct, not mmap): RocksDB
//! 11.8.1's `BlockPrefetcher` asks the file system to read `compaction_readahead_size` (2 MiB)
//! past the block (`readahead` on Linux; here `posix_fadvise(WILLNEED)`), again whenever a
//! block passes the end of the last hint, and holds no buffer of its own. Shale hints the same
//! ranges and reads the blocks in pieces of at most [`COMPACTION_READ_CHUNK`] (64 KiB) into
//! its buffer (one `pread` per piece rather than per block), so a compaction holds 64 KiB per
//! input file instead of 2 MiB: a level 0 compaction of eight files held 16 MiB of buffers,
//! at the peak of a `fillrandom` of ten million keys. Elsewhere (direct I/O, mmap, a file
//! system that cannot prefetch) the buffer holds `compaction_readahead_size`, as RocksDB's
//! `FilePrefetchBuffer` does there.
//!
//! **Asynchronously** (RocksDB's `ReadOptions::async_io`: a `FilePrefetchBuffer` of two
//! buffers, `PrefetchAsync`): the readahead is split in halves. A read ahead reads the block
//! and the first half into the buffer, then starts a background read of the second half
//! (the bytes right after the buffer, no further than the upper bound's block) on a thread
//! of the database's small read pool (`read_pool.rs`; on the iterator's thread for a table
//! opened without a pool), through the same `RandomAccessFile`. When the scan reaches bytes past the
//! buffer it waits for that read (`rocksdb.poll.wait.micros`), the read's bytes join the
//! buffer's unconsumed tail, and the next background read starts; a read that the scan no
//! longer needs (it moved elsewhere, or the iterator is dropped) is waited for and thrown
//! away (`rocksdb.async.prefetch.abort.micros`). Each background read's bytes go to
//! `rocksdb.async.read.bytes` (and `rocksdb.prefetch.bytes` when started), as RocksDB's
//! `ReadAsync` callback counts them on a file system without io_uring. Direct I/O and
//! deadlines apply to the background read as to any other read of the file.
//!
//! ```text
//!   buffer:  [ block | first half ............ )[ second half (background) ...... )
//!             offset                     offset+filled               +readahead/2
//! ```
//!
//! A buffer counts, when it goes, the bytes it read ahead that no block read used
//! (`rocksdb.prefetched.bytes.discarded`, RocksDB's `~FilePrefetchBuffer`), synchronous or
//! not.
//!
//! **Counts**, as RocksDB's: `rocksdb.prefetch.bytes` for each read into the buffer,
//! `rocksdb.prefetch.hits` and `rocksdb.prefetch.bytes.useful` for each block served from it;
//! a block served from the buffer is no block read (`block_read_count`, `block_read_byte` and
//! `data_block_read_byte` of the perf context count reads from the file only), but a block
//! cache miss all the same.

use std::sync::Arc;

use super::read_pool::{ReadPool, ReadResult};

use crate::error::Result;
use crate::fs::RandomAccessFile;
use crate::statistics::{Histogram, Statistics, StopWatch, Ticker};

use super::reader::BlockReads;

/// RocksDB's `BlockBasedTableOptions::initial_auto_readahead_size` default (8 KiB).
pub const INITIAL_AUTO_READAHEAD_SIZE: usize = 8 << 10;
/// RocksDB's `BlockBasedTableOptions::max_auto_readahead_size` default (256 KiB).
pub const MAX_AUTO_READAHEAD_SIZE: usize = 256 << 10;
/// RocksDB's `BlockBasedTableOptions::num_file_reads_for_auto_readahead` default.
pub const NUM_FILE_READS_FOR_AUTO_READAHEAD: u64 = 2;

/// The most a compaction's input reads into its buffer at once when the file system reads
/// `compaction_readahead_size` ahead itself (see the module doc).
pub const COMPACTION_READ_CHUNK: usize = 64 << 10;

/// The implicit auto readahead's settings, RocksDB's block-based table options of those
/// names: `initial` and `max` bytes (either 0: no implicit readahead; `initial` above `max`
/// is taken as `max`, as RocksDB's `BlockPrefetcher`), after `num_file_reads` sequential
/// block reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutoReadahead {
    pub initial: usize,
    pub max: usize,
    pub num_file_reads: u64,
}

impl Default for AutoReadahead {
    fn default() -> Self {
        AutoReadahead {
            initial: INITIAL_AUTO_READAHEAD_SIZE,
            max: MAX_AUTO_READAHEAD_SIZE,
            num_file_reads: NUM_FILE_READS_FOR_AUTO_READAHEAD,
        }
    }
}

impl AutoReadahead {
    fn enabled(&self) -> bool {
        self.initial > 0 && self.max > 0
    }
    fn initial(&self) -> usize {
        self.initial.min(self.max)
    }
}

/// A block's place in the file (offset, size with trailer), the read pattern's unit.
#[derive(Default, Clone, Copy)]
struct Pattern {
    prev_offset: u64,
    prev_len: u64,
}

impl Pattern {
    fn is_sequential(&self, offset: u64) -> bool {
        self.prev_len == 0 || self.prev_offset + self.prev_len == offset
    }
    fn update(&mut self, offset: u64, len: u64) {
        self.prev_offset = offset;
        self.prev_len = len;
    }
}

/// RocksDB's `BlockPrefetcher` of one table iterator, with its buffer once made.
pub(super) struct Readahead {
    /// `ReadOptions::readahead_size` (0: implicit auto readahead).
    fixed: usize,
    auto: AutoReadahead,
    /// RocksDB's `auto_readahead_size` with an upper bound: where a read ahead must end
    /// (the end of the first data block whose index key reaches the bound); None: not yet
    /// known, Some(None): no limit. Made known by the table (`needs_bound`, `set_bound`).
    bound: Option<Option<u64>>,
    /// The iterator's upper bound (user key), when a bound applies (`auto_readahead_size`,
    /// `iterate_upper_bound`, a table with a block cache; not for compactions).
    upper: Option<Arc<Vec<u8>>>,
    /// A compaction's reads: `fixed` ahead (0: none), no auto readahead, no user-scan
    /// tickers (RocksDB's `FilePrefetchBufferUsage::kCompactionPrefetch`).
    for_compaction: bool,
    num_file_reads: u64,
    pattern: Pattern,
    buffer: Option<Box<PrefetchBuffer>>,
    /// `ReadOptions::async_io`: the buffer reads its second half in the background.
    async_io: bool,
    /// The statistics the buffer counts into when it goes (discarded bytes, aborts).
    stats: Option<Arc<Statistics>>,
    /// Where `async_io`'s background reads run (the database's pool; None: on the
    /// iterator's thread).
    pool: Option<Arc<ReadPool>>,
    /// The file reads ahead itself when asked ([`RandomAccessFile::supports_prefetch`]): a
    /// compaction's readahead is hinted to it, the buffer reads small pieces.
    fs_prefetch: bool,
}

/// Adds a sample to `h` when there are statistics.
fn hist(stats: Option<&Statistics>, h: Histogram, value: u64) {
    if let Some(s) = stats {
        s.record_in_histogram(h, value);
    }
}

/// A background read of the bytes after the buffer (RocksDB's second buffer, in flight).
struct Pending {
    offset: u64,
    len: usize,
    read: ReadResult<Result<Vec<u8>>>,
}

impl Pending {
    /// Starts reading `len` bytes at `offset` of `file` on a thread of the database's read
    /// pool (`read_pool.rs`; on this thread without one).
    fn start(
        pool: Option<&Arc<ReadPool>>,
        file: &Arc<dyn RandomAccessFile>,
        offset: u64,
        len: usize,
        reads: &BlockReads,
        name: &str,
    ) -> Pending {
        let file = file.clone();
        let reads = *reads;
        let what = name.to_string();
        let read = ReadResult::start(pool, move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut data = vec![0u8; len];
                // `read_at` returns fewer bytes only at the end of the file.
                let got = reads.io(&what, || file.read_at(offset, &mut data))?;
                data.truncate(got);
                Ok(data)
            }))
            .unwrap_or_else(|_| {
                Err(crate::error::Error::new(crate::error::ErrorKind::IOError, "a prefetch read panicked"))
            })
        });
        Pending { offset, len, read }
    }

    /// Waits for the read: its bytes, or its error (a panic of the read is an error too).
    fn wait(self) -> Result<Vec<u8>> {
        self.read.wait()
    }
}

/// RocksDB's `FilePrefetchBuffer`: one buffer read synchronously, and with `async_io` the
/// bytes after it read in the background ([`Pending`]).
struct PrefetchBuffer {
    /// RocksDB's `kUserScanPrefetch` (not a compaction's): counts the prefetch tickers.
    user_scan: bool,
    /// Bytes `[offset, offset + filled)` of the file are `data[..filled]`; `data` keeps its
    /// length (what was ever needed) so that refills do not zero it again.
    data: Vec<u8>,
    offset: u64,
    filled: usize,
    readahead_size: usize,
    max_readahead_size: usize,
    /// Implicit auto readahead: reads ahead only while reads stay sequential.
    implicit: bool,
    auto: AutoReadahead,
    num_file_reads: u64,
    pattern: Pattern,
    /// With `async_io`: the background read of the bytes right after the buffer.
    pending: Option<Pending>,
    /// The file's size, asked once, so that no background read starts past its end.
    file_size: Option<u64>,
    /// A compaction's readahead left to the file system (0: none): each hint asks for this
    /// many bytes past the block, RocksDB's `compaction_readahead_size_` on that path.
    fs_ahead: usize,
    /// Where the last hint to the file system ended (RocksDB's `readahead_limit_`).
    fs_limit: u64,
    /// Where the last block served from the file or the buffer ended (discarded bytes are
    /// the bytes read ahead past it, RocksDB's `prev_offset_ + prev_len_`).
    consumed_to: u64,
    stats: Option<Arc<Statistics>>,
}

impl Drop for PrefetchBuffer {
    fn drop(&mut self) {
        let stats = self.stats.as_deref();
        let held_end = self.offset + self.filled as u64;
        let mut discarded = held_end.saturating_sub(self.consumed_to.max(self.offset));
        if let Some(p) = self.pending.take() {
            let _t = StopWatch::new(stats, Histogram::AsyncPrefetchAbortMicros);
            if let Ok(data) = p.wait() {
                hist(stats, Histogram::AsyncReadBytes, data.len() as u64);
                discarded += data.len() as u64;
            }
        }
        // RocksDB's `~FilePrefetchBuffer` records it for every buffer, 0 included.
        hist(stats, Histogram::PrefetchedBytesDiscarded, discarded);
    }
}

impl Readahead {
    #[cfg(test)]
    pub(super) fn new(fixed: usize, for_compaction: bool) -> Readahead {
        Self::with_auto(fixed, for_compaction, AutoReadahead::default(), None)
    }

    /// `upper`: reads ahead stop at the data block holding this upper bound (RocksDB's
    /// `ReadOptions::auto_readahead_size`, with `iterate_upper_bound` and a block cache).
    pub(super) fn with_auto(
        fixed: usize,
        for_compaction: bool,
        auto: AutoReadahead,
        upper: Option<Arc<Vec<u8>>>,
    ) -> Readahead {
        Readahead {
            fixed,
            auto,
            bound: None,
            upper: upper.filter(|_| !for_compaction),
            for_compaction,
            num_file_reads: 0,
            pattern: Pattern::default(),
            buffer: None,
            async_io: false,
            stats: None,
            pool: None,
            fs_prefetch: false,
        }
    }

    /// The file reads ahead itself when asked (its
    /// [`RandomAccessFile::supports_prefetch`]); only a compaction's readahead uses it.
    pub(super) fn with_fs_prefetch(mut self, fs_prefetch: bool) -> Readahead {
        self.fs_prefetch = fs_prefetch;
        self
    }

    /// RocksDB's `ReadOptions::async_io`: reads ahead in two halves, the second in the
    /// background on `pool`; `stats` gets the buffer's counts when it goes.
    pub(super) fn with_async_io(
        mut self,
        async_io: bool,
        stats: Option<Arc<Statistics>>,
        pool: Option<Arc<ReadPool>>,
    ) -> Readahead {
        self.async_io = async_io;
        self.stats = stats;
        self.pool = pool.filter(|_| async_io);
        self
    }

    /// The upper bound whose end offset the next `try_read` needs first (`set_bound`).
    pub(super) fn needs_bound(&self) -> Option<Arc<Vec<u8>>> {
        if self.bound.is_none() && self.buffer.is_some() {
            self.upper.clone()
        } else {
            None
        }
    }

    /// The end offset (with trailer) of the first data block whose index key is at or past
    /// the upper bound; None: no such block, reads ahead go on to the end of the data.
    pub(super) fn set_bound(&mut self, end: Option<u64>) {
        self.bound = Some(end);
    }

    fn create(&mut self, initial: usize, max: usize, implicit: bool, num_file_reads: u64) {
        self.create_with(initial, max, implicit, num_file_reads, 0);
    }

    /// `create`, with `fs_ahead` bytes hinted to the file system ahead of the buffer.
    fn create_with(
        &mut self,
        initial: usize,
        max: usize,
        implicit: bool,
        num_file_reads: u64,
        fs_ahead: usize,
    ) {
        if self.buffer.is_none() {
            self.buffer = Some(Box::new(PrefetchBuffer {
                user_scan: !self.for_compaction,
                data: Vec::new(),
                offset: 0,
                filled: 0,
                readahead_size: initial,
                max_readahead_size: max,
                implicit,
                auto: self.auto,
                num_file_reads,
                pattern: Pattern::default(),
                pending: None,
                file_size: None,
                fs_ahead,
                fs_limit: 0,
                consumed_to: 0,
                stats: self.stats.clone(),
            }));
        }
    }

    /// RocksDB's `PrefetchIfNeeded`: the iterator moves to the data block at `offset`
    /// (`len` bytes with its trailer), before the block cache is asked for it.
    pub(super) fn before_block(&mut self, offset: u64, len: u64, no_io: bool) {
        if no_io {
            return;
        }
        if self.for_compaction {
            if self.fixed > 0 && self.fs_prefetch {
                // The file system reads `fixed` ahead; the buffer holds small pieces.
                let chunk = self.fixed.min(COMPACTION_READ_CHUNK);
                self.create_with(chunk, chunk, false, 0, self.fixed);
            } else if self.fixed > 0 {
                self.create(self.fixed, self.fixed, false, 0);
            }
            return;
        }
        if self.fixed > 0 {
            self.create(self.fixed, self.fixed, false, 0);
            return;
        }
        if !self.auto.enabled() {
            return;
        }
        if !self.pattern.is_sequential(offset) {
            self.pattern.update(offset, len);
            self.num_file_reads = 1;
            return;
        }
        self.pattern.update(offset, len);
        self.num_file_reads += 1;
        if self.num_file_reads <= self.auto.num_file_reads {
            return;
        }
        self.create(self.auto.initial(), self.auto.max, true, self.num_file_reads);
    }

    /// The block was found in the block cache: the buffer's read pattern still counts it
    /// (RocksDB's `UpdateReadPattern` without `adaptive_readahead`).
    pub(super) fn on_cache_hit(&mut self, offset: u64, len: u64) {
        if let Some(b) = self.buffer.as_mut() {
            b.pattern.update(offset, len);
        }
    }

    /// RocksDB's `TryReadFromCache`: the block at `offset` (`len` bytes with its trailer)
    /// from the buffer, reading ahead into it first when the block is not wholly there and
    /// readahead applies. None: read the block from the file as usual.
    pub(super) fn try_read(
        &mut self,
        file: &Arc<dyn RandomAccessFile>,
        offset: u64,
        len: usize,
        reads: &BlockReads,
        stats: Option<&Statistics>,
        name: &str,
    ) -> Result<Option<&[u8]>> {
        let limit = self.bound.flatten();
        let async_io = self.async_io;
        let pool = self.pool.as_ref();
        let Some(b) = self.buffer.as_deref_mut() else { return Ok(None) };
        if offset < b.offset {
            b.abort_pending(stats);
            return Ok(None);
        }
        let end = offset + len as u64;
        let mut prefetched = false;
        if end > b.offset + b.filled as u64 && async_io {
            // The bytes read in the background, if they are the ones the scan reached: a
            // read ahead, so the readahead grows as after a synchronous one.
            prefetched = b.take_pending(offset, stats)?;
        }
        if end > b.offset + b.filled as u64 {
            if b.readahead_size == 0 {
                return Ok(None);
            }
            if b.implicit && !b.eligible(offset, len as u64) {
                b.abort_pending(stats);
                return Ok(None);
            }
            // With async_io the readahead is split in halves, as RocksDB's two buffers: the
            // first is read now with the block, the second in the background below.
            let ahead = if async_io { b.readahead_size / 2 } else { b.readahead_size };
            // RocksDB's `auto_readahead_size`: no bytes past the block holding the upper
            // bound are read ahead (the block itself is always read).
            let mut want = len + ahead;
            if let Some(end) = limit {
                want = want.min(end.saturating_sub(offset) as usize).max(len);
            }
            b.abort_pending(stats);
            if b.fs_ahead > 0 && offset + want as u64 > b.fs_limit {
                // RocksDB's compaction path of `PrefetchIfNeeded`: the file system is asked
                // to read the block and `compaction_readahead_size` past it. A hint that fails
                // is no read error (RocksDB then reads without it); the piece is read below
                // all the same, and the next one asks again.
                let hint = len as u64 + b.fs_ahead as u64;
                if file.prefetch(offset, hint).is_ok() {
                    b.fs_limit = offset + hint;
                }
            }
            b.fill(file.as_ref(), offset, want, reads, stats, name)?;
            prefetched = true;
        } else if b.user_scan {
            crate::statistics::record_tick(stats, Ticker::PrefetchHits, 1);
            crate::statistics::record_tick(stats, Ticker::PrefetchBytesUseful, len as u64);
        }
        b.pattern.update(offset, len as u64);
        b.consumed_to = b.consumed_to.max(end);
        if prefetched {
            b.readahead_size = b.max_readahead_size.min(b.readahead_size * 2);
        }
        if async_io && b.pending.is_none() && b.readahead_size > 0 {
            // The next half, after the buffer, in the background.
            let at = b.offset + b.filled as u64;
            let mut n = (b.readahead_size / 2) as u64;
            if let Some(end) = limit {
                n = n.min(end.saturating_sub(at));
            }
            let file_size = b.file_size.get_or_insert_with(|| file.size().unwrap_or(u64::MAX));
            n = n.min(file_size.saturating_sub(at));
            if n > 0 && b.filled > 0 {
                b.pending = Some(Pending::start(pool, file, at, n as usize, reads, name));
                if b.user_scan {
                    crate::statistics::record_tick(stats, Ticker::PrefetchBytes, n);
                }
            }
        }
        let start = (offset - b.offset) as usize;
        // Short at the end of the file: the usual read reports the truncation.
        Ok(b.data[..b.filled].get(start..start + len))
    }
}

impl PrefetchBuffer {
    /// Waits for a background read the scan no longer needs and throws its bytes away
    /// (RocksDB's `AbortAllIOs`, timed in `rocksdb.async.prefetch.abort.micros`).
    fn abort_pending(&mut self, stats: Option<&Statistics>) {
        if let Some(p) = self.pending.take() {
            let _t = StopWatch::new(stats, Histogram::AsyncPrefetchAbortMicros);
            if let Ok(data) = p.wait() {
                hist(stats, Histogram::AsyncReadBytes, data.len() as u64);
            }
        }
    }

    /// The background read, when the block at `offset` starts inside its bytes or the
    /// buffer's: waits for it (`rocksdb.poll.wait.micros`), and the buffer becomes its own
    /// bytes from `offset` on followed by the read's. Otherwise the read is left alone.
    fn take_pending(&mut self, offset: u64, stats: Option<&Statistics>) -> Result<bool> {
        let held_end = self.offset + self.filled as u64;
        let Some(p) = self.pending.as_ref() else { return Ok(false) };
        if p.offset != held_end || offset < self.offset || offset >= p.offset + p.len as u64 {
            return Ok(false);
        }
        let Some(p) = self.pending.take() else { return Ok(false) };
        let data = {
            let _t = StopWatch::new(stats, Histogram::PollWaitMicros);
            p.wait()?
        };
        hist(stats, Histogram::AsyncReadBytes, data.len() as u64);
        // Keep what the buffer holds from `offset` on, then the read's bytes.
        let from = (offset.min(held_end) - self.offset) as usize;
        self.data.copy_within(from..self.filled, 0);
        let kept = self.filled - from;
        let skip = (offset.saturating_sub(held_end) as usize).min(data.len());
        let total = kept + data.len() - skip;
        if self.data.len() < total {
            self.data.resize(total, 0);
        }
        self.data[kept..total].copy_from_slice(&data[skip..]);
        self.offset = offset;
        self.filled = total;
        Ok(true)
    }

    /// RocksDB's `IsEligibleForPrefetch`.
    fn eligible(&mut self, offset: u64, len: u64) -> bool {
        if !self.pattern.is_sequential(offset) {
            self.pattern.update(offset, len);
            self.num_file_reads = 1;
            self.readahead_size = self.auto.initial().min(self.max_readahead_size);
            return false;
        }
        self.num_file_reads += 1;
        if self.num_file_reads <= self.auto.num_file_reads {
            self.pattern.update(offset, len);
            return false;
        }
        true
    }

    /// Makes the buffer hold `[offset, offset + want)` (less at the end of the file): the
    /// bytes it holds from `offset` on are kept, the rest is read with one file read.
    fn fill(
        &mut self,
        file: &dyn RandomAccessFile,
        offset: u64,
        want: usize,
        reads: &BlockReads,
        stats: Option<&Statistics>,
        name: &str,
    ) -> Result<()> {
        let held_end = self.offset + self.filled as u64;
        let kept = if offset >= self.offset && offset < held_end {
            let from = (offset - self.offset) as usize;
            self.data.copy_within(from..self.filled, 0);
            self.filled - from
        } else {
            0
        };
        if kept > 0 && self.user_scan {
            crate::statistics::record_tick(stats, Ticker::PrefetchBytesUseful, kept as u64);
        }
        self.offset = offset;
        self.filled = kept;
        if self.data.len() < want {
            self.data.resize(want, 0);
        }
        let read_len = want - kept;
        let at = offset + kept as u64;
        let dst = &mut self.data[kept..want];
        let got = {
            let _t = StopWatch::new(stats, Histogram::SstReadMicros);
            // One read: `read_at` returns fewer bytes only at the end of the file.
            reads.io(name, || file.read_at(at, dst))?
        };
        if self.user_scan {
            crate::statistics::record_tick(stats, Ticker::PrefetchBytes, read_len as u64);
        }
        self.filled = kept + got;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::fs::default_fs;
    use crate::key::{bytewise_internal_comparator, make_internal_key, ValueType};
    use crate::table::compression::CompressionType;
    use crate::table::reader::{Table, TableReaderOptions};
    use crate::table::{TableBuilder, TableBuilderOptions};

    /// A file that records each read (offset, length asked), and each prefetch hint when it
    /// says it takes them (`prefetchable`, as the POSIX file's).
    struct Recording {
        inner: Arc<dyn RandomAccessFile>,
        log: Mutex<Vec<(u64, usize)>>,
        prefetchable: bool,
        hints: Mutex<Vec<(u64, u64)>>,
    }

    impl RandomAccessFile for Recording {
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
            self.log.lock().unwrap().push((offset, buf.len()));
            self.inner.read_at(offset, buf)
        }
        fn size(&self) -> Result<u64> {
            self.inner.size()
        }
        fn prefetch(&self, offset: u64, len: u64) -> Result<()> {
            self.hints.lock().unwrap().push((offset, len));
            Ok(())
        }
        fn supports_prefetch(&self) -> bool {
            self.prefetchable
        }
    }

    impl Recording {
        fn take(&self) -> Vec<(u64, usize)> {
            std::mem::take(&mut *self.log.lock().unwrap())
        }
    }

    fn key(i: usize) -> Vec<u8> {
        make_internal_key(format!("key{i:08}").as_bytes(), 7, ValueType::Value)
    }

    /// A table of about 120 uncompressed 4 KiB data blocks, opened through a recording
    /// file, with statistics.
    fn table(dir: &std::path::Path) -> (Arc<Table>, Arc<Recording>, Arc<Statistics>, usize) {
        let path = dir.join("000007.sst");
        let n = 4000;
        let f = default_fs().new_writable_file(&path).unwrap();
        let mut o = TableBuilderOptions::new(bytewise_internal_comparator());
        o.compression = CompressionType::None;
        let mut b = TableBuilder::new(o, f);
        for i in 0..n {
            b.add(&key(i), format!("value {i} ").repeat(12).as_bytes()).unwrap();
        }
        b.finish().unwrap();
        let size = default_fs().file_size(&path).unwrap();
        let rec = Arc::new(Recording {
            inner: default_fs().new_random_access_file(&path).unwrap(),
            log: Mutex::new(Vec::new()),
            prefetchable: false,
            hints: Mutex::new(Vec::new()),
        });
        let stats = Arc::new(Statistics::new());
        let t = Table::open(
            rec.clone(),
            size,
            TableReaderOptions {
                statistics: Some(stats.clone()),
                ..TableReaderOptions::standalone(bytewise_internal_comparator(), path.display().to_string())
            },
        )
        .unwrap();
        rec.take();
        (t, rec, stats, n)
    }

    fn reads(readahead_size: usize) -> BlockReads {
        BlockReads { readahead_size, ..BlockReads::from(true) }
    }

    /// The data blocks (offset, size with trailer), in file order, as a backward scan
    /// reads them (no readahead: its reads are never sequential).
    fn blocks(t: &Arc<Table>, rec: &Recording, n: usize) -> Vec<(u64, usize)> {
        let mut it = t.iter(reads(0));
        it.seek_to_last();
        let mut count = 0;
        while it.valid() {
            count += 1;
            it.prev();
        }
        it.status().unwrap();
        assert_eq!(count, n);
        let mut b = rec.take();
        b.reverse();
        for w in b.windows(2) {
            assert_eq!(
                w[0].0 + w[0].1 as u64,
                w[1].0,
                "backward reads are whole blocks, no readahead: {b:?}"
            );
        }
        b
    }

    fn scan_forward(t: &Arc<Table>, r: BlockReads, n: usize) {
        let mut it = t.iter(r);
        it.seek_to_first();
        for i in 0..n {
            assert!(it.valid(), "{:?}", it.status());
            assert_eq!(it.key(), &key(i)[..]);
            assert_eq!(it.value(), format!("value {i} ").repeat(12).as_bytes());
            it.next();
        }
        assert!(!it.valid());
        it.status().unwrap();
    }

    #[test]
    fn auto_readahead_starts_after_two_sequential_reads_and_doubles() {
        let dir = tempfile::tempdir().unwrap();
        let (t, rec, stats, n) = table(dir.path());
        let blocks = blocks(&t, &rec, n);
        assert!(blocks.len() > 100, "{} blocks", blocks.len());
        let before = stats.ticker_count(Ticker::PrefetchHits);
        assert_eq!(before, 0);

        scan_forward(&t, reads(0), n);
        let r = rec.take();
        // Two reads of one block each, then the third block with 8 KiB more.
        assert_eq!(r[0], blocks[0]);
        assert_eq!(r[1], blocks[1]);
        assert_eq!(r[2], (blocks[2].0, blocks[2].1 + INITIAL_AUTO_READAHEAD_SIZE));
        // Each later read continues where the buffer ended (the bytes it still held of the
        // block are kept), asking for the block plus twice the readahead before, up to 256 KiB.
        let mut ra = INITIAL_AUTO_READAHEAD_SIZE * 2;
        for w in r[2..].windows(2) {
            let (off, len) = w[1];
            assert_eq!(w[0].0 + w[0].1 as u64, off, "{r:?}");
            assert!(
                len <= blocks[0].1.max(blocks[1].1) * 2 + ra && len > ra / 2,
                "read {len} at readahead {ra}: {r:?}"
            );
            ra = (ra * 2).min(MAX_AUTO_READAHEAD_SIZE);
        }
        let largest = r.iter().map(|x| x.1).max().unwrap();
        assert!(largest > MAX_AUTO_READAHEAD_SIZE / 2 && largest <= MAX_AUTO_READAHEAD_SIZE + 8192, "{r:?}");
        // Far fewer reads than blocks; every block not read alone came from the buffer.
        assert!(r.len() < blocks.len() / 4, "{} reads for {} blocks", r.len(), blocks.len());
        let hits = stats.ticker_count(Ticker::PrefetchHits);
        assert!(hits as usize >= blocks.len() - r.len(), "{hits} hits, {} reads", r.len());
        assert!(stats.ticker_count(Ticker::PrefetchBytes) > 0);
        assert!(
            stats.ticker_count(Ticker::PrefetchBytesUseful)
                >= blocks[3..].iter().map(|b| b.1 as u64).sum::<u64>() / 2
        );
    }

    /// With `async_io` a forward scan reads the second half of each readahead in the
    /// background (the reads come from another thread through the same file), reads no
    /// byte twice, returns the same entries, and counts the background reads in
    /// `rocksdb.async.read.bytes`; without it there are none.
    #[test]
    fn async_io_reads_the_next_half_in_the_background() {
        for fixed in [0, 64 << 10] {
            let dir = tempfile::tempdir().unwrap();
            let (t, rec, stats, n) = table(dir.path());
            let blocks = blocks(&t, &rec, n);
            let data: u64 = blocks.iter().map(|b| b.1 as u64).sum();
            scan_forward(&t, BlockReads { async_io: true, ..reads(fixed) }, n);
            let mut r = rec.take();
            r.sort_unstable();
            for w in r.windows(2) {
                assert!(w[0].0 + w[0].1 as u64 <= w[1].0, "a byte read twice: {r:?}");
            }
            let covered: u64 = r.iter().map(|x| x.1 as u64).sum();
            assert!(covered >= data, "every data block read: {covered} < {data}");
            let d = stats.histogram_data(Histogram::AsyncReadBytes);
            assert!(d.count() > 2, "readahead {fixed}: {} background reads", d.count());
            assert!(d.sum() > data / 3, "readahead {fixed}: {} of {data} bytes in the background", d.sum());
            assert!(stats.histogram_data(Histogram::PrefetchedBytesDiscarded).count() >= 1);
            assert!(stats.ticker_count(Ticker::PrefetchHits) > 0);

            let (t, rec, stats, n) = table(dir.path());
            scan_forward(&t, reads(fixed), n);
            rec.take();
            assert_eq!(stats.histogram_data(Histogram::AsyncReadBytes).count(), 0);
            assert_eq!(stats.histogram_data(Histogram::PrefetchedBytesDiscarded).count(), 1);
        }
    }

    /// A background read the scan no longer needs (it seeks elsewhere) is waited for and
    /// thrown away; the entries are right.
    #[test]
    fn async_io_aborts_a_read_the_scan_left() {
        let dir = tempfile::tempdir().unwrap();
        let (t, rec, stats, n) = table(dir.path());
        let mut it = t.iter(BlockReads { async_io: true, ..reads(64 << 10) });
        it.seek_to_first();
        assert_eq!(it.key(), &key(0)[..]);
        it.seek(&key(n - 10));
        assert_eq!(it.key(), &key(n - 10)[..]);
        it.seek(&key(5));
        assert_eq!(it.key(), &key(5)[..]);
        assert_eq!(it.value(), "value 5 ".repeat(12).as_bytes());
        drop(it);
        rec.take();
        // The read after the first blocks was thrown away by the seek near the end (whose
        // own buffer reaches the end of the file, so nothing is read after it).
        assert!(stats.histogram_data(Histogram::AsyncPrefetchAbortMicros).count() >= 1);
        assert!(stats.histogram_data(Histogram::AsyncReadBytes).count() >= 1);
    }

    #[test]
    fn fixed_readahead_from_the_first_read() {
        let dir = tempfile::tempdir().unwrap();
        let (t, rec, _stats, n) = table(dir.path());
        let blocks = blocks(&t, &rec, n);
        scan_forward(&t, reads(64 << 10), n);
        let r = rec.take();
        assert_eq!(r[0], (blocks[0].0, blocks[0].1 + (64 << 10)));
        for w in r.windows(2) {
            assert_eq!(w[0].0 + w[0].1 as u64, w[1].0, "{r:?}");
            assert!(w[1].1 <= (64 << 10) + 2 * blocks[0].1, "fixed size does not grow: {r:?}");
        }
        let total: u64 = blocks.iter().map(|b| b.1 as u64).sum();
        assert!(r.len() as u64 <= total / (60 << 10) + 2, "{} reads", r.len());
    }

    #[test]
    fn random_seeks_read_single_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let (t, rec, stats, n) = table(dir.path());
        let blocks = blocks(&t, &rec, n);
        let mut it = t.iter(reads(0));
        // Every seek lands two blocks or more away from the last one: never sequential.
        for i in 0..60 {
            let k = (i * 1543) % n;
            it.seek(&key(k));
            assert!(it.valid());
            assert_eq!(it.key(), &key(k)[..]);
        }
        for (off, len) in rec.take() {
            assert!(blocks.contains(&(off, len)), "read ({off}, {len}) is not one block");
        }
        assert_eq!(stats.ticker_count(Ticker::PrefetchBytes), 0);
    }

    /// A compaction's input through a file that reads ahead itself (the POSIX file's
    /// `fadvise`): the file is asked for `compaction_readahead_size` past the block each time
    /// a block passes the last hint's end (RocksDB's `BlockPrefetcher`), the buffer reads
    /// pieces of at most `COMPACTION_READ_CHUNK` (no 2 MiB buffer per input file), and every
    /// entry comes back. Without prefetch support the buffer reads the whole readahead.
    #[test]
    fn compaction_input_hints_the_readahead_and_reads_small_pieces() {
        let dir = tempfile::tempdir().unwrap();
        let (_t, rec, _stats, n) = table(dir.path());
        let path = dir.path().join("000007.sst");
        let size = default_fs().file_size(&path).unwrap();
        for (fixed, prefetchable) in [(2usize << 20, true), (128 << 10, true), (128 << 10, false)] {
            let rec = Arc::new(Recording {
                inner: default_fs().new_random_access_file(&path).unwrap(),
                log: Mutex::new(Vec::new()),
                prefetchable,
                hints: Mutex::new(Vec::new()),
            });
            let t = Table::open(
                rec.clone(),
                size,
                TableReaderOptions::standalone(bytewise_internal_comparator(), path.display().to_string()),
            )
            .unwrap();
            rec.take();
            let blocks = blocks(&t, &rec, n);
            let data: u64 = blocks.iter().map(|b| b.1 as u64).sum();
            let largest = blocks.iter().map(|b| b.1).max().unwrap();
            scan_forward(&t, BlockReads { for_compaction: true, fill_cache: false, ..reads(fixed) }, n);
            let r = rec.take();
            for w in r.windows(2) {
                assert_eq!(w[0].0 + w[0].1 as u64, w[1].0, "reads follow each other: {r:?}");
            }
            let hints = std::mem::take(&mut *rec.hints.lock().unwrap());
            if !prefetchable {
                assert!(hints.is_empty(), "{hints:?}");
                assert_eq!(r[0], (blocks[0].0, blocks[0].1 + fixed), "the whole readahead in the buffer");
                continue;
            }
            assert!(r.iter().all(|x| x.1 <= COMPACTION_READ_CHUNK + largest), "{r:?}");
            assert!(r.len() as u64 >= data / (COMPACTION_READ_CHUNK + largest) as u64, "{} reads", r.len());
            assert_eq!(hints[0], (blocks[0].0, (blocks[0].1 + fixed) as u64), "{hints:?}");
            for w in hints.windows(2) {
                // A new hint once the pieces pass the last one's end, from the block on.
                let end = w[0].0 + w[0].1;
                assert!(
                    w[1].0 <= end && w[1].0 + (COMPACTION_READ_CHUNK + largest) as u64 > end,
                    "{hints:?}"
                );
                assert!(w[1].1 > fixed as u64 && w[1].1 <= (fixed + largest) as u64, "{hints:?}");
                let advance = w[1].0 + w[1].1 - end;
                assert!(advance > (fixed - COMPACTION_READ_CHUNK) as u64, "{hints:?}");
            }
            let (least, most) =
                (data / (fixed + largest) as u64, data / (fixed - COMPACTION_READ_CHUNK) as u64 + 2);
            assert!((least..=most).contains(&(hints.len() as u64)), "{} hints: {hints:?}", hints.len());
        }
        drop(rec);
    }

    /// `table` opened again through a new recording file, with a block cache.
    fn reopen_with_cache(dir: &std::path::Path) -> (Arc<Table>, Arc<Recording>) {
        let path = dir.join("000007.sst");
        let size = default_fs().file_size(&path).unwrap();
        let rec = Arc::new(Recording {
            inner: default_fs().new_random_access_file(&path).unwrap(),
            log: Mutex::new(Vec::new()),
            prefetchable: false,
            hints: Mutex::new(Vec::new()),
        });
        let t = Table::open(
            rec.clone(),
            size,
            TableReaderOptions {
                block_cache: Some(Arc::new(crate::cache::BlockCache::new(64 << 20))),
                ..TableReaderOptions::standalone(bytewise_internal_comparator(), path.display().to_string())
            },
        )
        .unwrap();
        rec.take();
        (t, rec)
    }

    /// Scans forward from the first key until a user key reaches `upper` (as a DB
    /// iterator with that bound stops), with `auto_readahead_size`'s bound or without.
    fn scan_to(t: &Arc<Table>, r: BlockReads, upper: &[u8], bounded: bool) {
        let mut it = t.iter_bounded(r, None, bounded.then(|| Arc::new(upper.to_vec())));
        it.seek_to_first();
        while it.valid() && crate::key::user_key(it.key()) < upper {
            it.next();
        }
        it.status().unwrap();
    }

    #[test]
    fn auto_readahead_size_stops_at_the_upper_bounds_block() {
        let dir = tempfile::tempdir().unwrap();
        let (t, rec, _stats, n) = table(dir.path());
        let blocks = blocks(&t, &rec, n);
        let upper_key = key(n / 2);
        let upper = crate::key::user_key(&upper_key).to_vec();
        // The block holding the bound: the one a point seek to it reads.
        let mut it = t.iter(reads(0));
        it.seek(&upper_key);
        assert!(it.valid());
        let read = rec.take();
        assert_eq!(read.len(), 1, "{read:?}");
        let bound_end = read[0].0 + read[0].1 as u64;
        assert!(blocks.contains(&read[0]));
        drop(it);
        let no_fill = BlockReads { fill_cache: false, ..reads(0) };
        let (t, rec) = reopen_with_cache(dir.path());
        for fixed in [0, 64 << 10] {
            // With the bound: every read ends by the bound's block, and the scan read it.
            scan_to(&t, BlockReads { readahead_size: fixed, ..no_fill }, &upper, true);
            let r = rec.take();
            let end = r.iter().map(|(o, l)| o + *l as u64).max().unwrap();
            assert_eq!(end, bound_end, "readahead {fixed}: {r:?}");
            assert!(r.len() < blocks.len() / 4, "reads ahead still happen: {r:?}");
            // Without it (auto_readahead_size off), reads ahead go past it.
            scan_to(&t, BlockReads { readahead_size: fixed, ..no_fill }, &upper, false);
            let r = rec.take();
            let end = r.iter().map(|(o, l)| o + *l as u64).max().unwrap();
            assert!(end > bound_end + 4096, "readahead {fixed}: {end} vs {bound_end}");
        }
        // As RocksDB's, only a table with a block cache trims (`table` has none).
        let (t, rec, _stats, _) = table(dir.path());
        scan_to(&t, no_fill, &upper, true);
        let end = rec.take().iter().map(|(o, l)| o + *l as u64).max().unwrap();
        assert!(end > bound_end + 4096, "{end} vs {bound_end}");
    }

    #[test]
    fn auto_readahead_settings_apply() {
        let dir = tempfile::tempdir().unwrap();
        let (t, rec, _stats, n) = table(dir.path());
        let blocks = blocks(&t, &rec, n);
        // From the first read (num_file_reads_for_auto_readahead 0), 16 KiB doubling to 32 KiB.
        let auto = AutoReadahead { initial: 16 << 10, max: 32 << 10, num_file_reads: 0 };
        scan_forward(&t, BlockReads { auto_readahead: auto, ..reads(0) }, n);
        let r = rec.take();
        assert_eq!(r[0], (blocks[0].0, blocks[0].1 + (16 << 10)), "{r:?}");
        assert!(r.iter().all(|x| x.1 <= (32 << 10) + 2 * blocks[0].1), "{r:?}");
        assert!(r.iter().any(|x| x.1 > (24 << 10)), "doubled: {r:?}");
        // After 5 sequential reads instead of 2.
        let auto = AutoReadahead { num_file_reads: 5, ..AutoReadahead::default() };
        scan_forward(&t, BlockReads { auto_readahead: auto, ..reads(0) }, n);
        let r = rec.take();
        assert_eq!(&r[..5], &blocks[..5]);
        assert_eq!(r[5], (blocks[5].0, blocks[5].1 + INITIAL_AUTO_READAHEAD_SIZE));
        // An initial size above the max is the max.
        let auto = AutoReadahead { initial: 64 << 10, max: 16 << 10, num_file_reads: 2 };
        scan_forward(&t, BlockReads { auto_readahead: auto, ..reads(0) }, n);
        let r = rec.take();
        assert_eq!(r[2], (blocks[2].0, blocks[2].1 + (16 << 10)));
        // Either size 0: no implicit readahead, one read per block.
        for auto in [
            AutoReadahead { initial: 0, ..AutoReadahead::default() },
            AutoReadahead { max: 0, ..AutoReadahead::default() },
        ] {
            scan_forward(&t, BlockReads { auto_readahead: auto, ..reads(0) }, n);
            assert_eq!(rec.take(), blocks, "{auto:?}");
        }
    }

    #[test]
    fn no_readahead_without_io() {
        let mut ra = Readahead::new(0, false);
        for i in 0..10u64 {
            ra.before_block(i * 100, 100, true);
        }
        assert!(ra.buffer.is_none());
        let mut ra = Readahead::new(4096, false);
        ra.before_block(0, 100, true);
        assert!(ra.buffer.is_none());
        ra.before_block(0, 100, false);
        assert!(ra.buffer.is_some());
    }
}
