//! Fuzzes the table reader: `Table::open` over the input as a whole SST file (footer,
//! metaindex, properties, filter, range-deletion and dictionary blocks, index), then a full
//! forward and backward scan, seeks and point lookups.
//!
//! ```text
//! input = flags | SST file bytes     (flags bit 0: verify data-block checksums)
//! ```
//! Meta blocks are always checksum-verified by the reader; data and index blocks are read
//! unverified unless bit 0 is set, so mutations reach the block and decompression decoders.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use shale::key::{bytewise_internal_comparator, lookup_key, user_key};
use shale::table::{Table, TableReaderOptions};
use shale_fuzz::BytesFile;

/// Scans stop here: an index may point many times at one block, so entries are not
/// bounded by the file size (a slow input, not a hang).
const MAX_STEPS: usize = 20_000;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, body)) = data.split_first() else { return };
    let file = Arc::new(BytesFile(Arc::new(body.to_vec())));
    let opts = TableReaderOptions {
        icmp: bytewise_internal_comparator(),
        block_cache: None,
        verify_checksums: flags & 1 != 0,
        file_name: "fuzz.sst".into(),
        cache_id: 0,
    };
    let Ok(table) = Table::open(file, body.len() as u64, opts) else { return };
    let _ = (table.properties(), table.footer(), table.range_tombstones().len());

    let mut it = table.iter(false);
    let mut keys = Vec::new();
    it.seek_to_first();
    while it.valid() && keys.len() < MAX_STEPS {
        if keys.len() < 8 {
            keys.push(it.key().to_vec());
        }
        let _ = it.value().len();
        it.next();
    }
    let _ = it.status();
    let mut n = 0;
    it.seek_to_last();
    while it.valid() && n < MAX_STEPS {
        n += 1;
        it.prev();
    }
    for k in &keys {
        it.seek(k);
        it.seek_for_prev(k);
        let uk = user_key(k);
        let _ = table.get(&lookup_key(uk, u64::MAX >> 8), false);
        let _ = table.may_contain(uk);
        let _ = table.approximate_offset_of(k);
    }
    let _ = table.get(&lookup_key(b"", 0), false);
});
