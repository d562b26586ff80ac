//! Read sampling for `read_triggered_compaction_threshold` (RocksDB's
//! `should_sample_file_read` and `should_sample_file_read_next`): which point reads and
//! iterator moves count in a file's collapsible-read tally. Used by the point read
//! (`db/read.rs`) and the level iterator (`iter/level.rs`).

/// RocksDB's `kFileReadSampleRate`: one read in this many is sampled, and counts this many.
pub const FILE_READ_SAMPLE_RATE: u64 = 1024;

thread_local! {
    /// This thread's xorshift64 state for read sampling (never 0 once seeded).
    static SAMPLE_RNG: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Seeds the sampling generators of new threads apart from each other.
static SAMPLE_SEEDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0x2545_F491_4F6C_DD1D);

/// RocksDB's `should_sample_file_read`: true for one read in [`FILE_READ_SAMPLE_RATE`], at
/// random (a per-thread generator, so readers share nothing).
pub fn sample_read() -> bool {
    SAMPLE_RNG.with(|c| {
        let mut x = c.get();
        if x == 0 {
            // splitmix64 of a counter: distinct, well-mixed seeds per thread.
            let mut z = SAMPLE_SEEDS.fetch_add(0x9E37_79B9_7F4A_7C15, std::sync::atomic::Ordering::Relaxed);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            x = (z ^ (z >> 31)) | 1;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c.set(x);
        (x >> 32) % FILE_READ_SAMPLE_RATE == 307
    })
}

thread_local! {
    /// This thread's count of iterator steps (RocksDB's `should_sample_file_read_next`).
    static STEP_COUNT: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// RocksDB's `should_sample_file_read_next`: every 65536th iterator step of a thread (steps
/// are cheaper than seeks, so sampled 64 times less often).
pub fn sample_step() -> bool {
    STEP_COUNT.with(|c| {
        let n = c.get().wrapping_add(1);
        c.set(n);
        n & (FILE_READ_SAMPLE_RATE as u32 * 64 - 1) == 0
    })
}
