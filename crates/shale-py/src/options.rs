//! `Options` and the small option classes of rocksdict, each over its `shale` counterpart.
//!
//! `Options` carries two things besides Shale's options: raw mode, and the kind of prefix
//! extractor (saved in `rocksdict-config.json`, since a prefix extractor is code and the
//! OPTIONS file keeps only its name). In default mode its comparator is rocksdict's
//! (`encoder::rocksdict_compare`), so int keys sort by value.

use crate::encoder::{encode_key, rocksdict_compare, COMPARATOR_NAME};
use crate::rdict::{RocksDictConfig, CONFIG_FILE};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The prefix extractors rocksdict can name in `rocksdict-config.json` (serde's externally
/// tagged form: `{"Fixed": 8}`, `{"MaxLen": 8}`, `"Noop"`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) enum SliceTransformType {
    Fixed(usize),
    MaxLen(usize),
    Noop,
}

/// A transform of a fixed maximum length must be a plain `fn` (Shale's `SliceTransform::create`
/// takes a function pointer): one instance per length, 1 to 128, as rocksdict offers.
fn max_len<const N: usize>(s: &[u8]) -> &[u8] {
    &s[..s.len().min(N)]
}

type PrefixFn = fn(&[u8]) -> &[u8];

macro_rules! max_len_table {
    ($($n:literal)*) => { [$(max_len::<$n> as PrefixFn),*] };
}

static MAX_LEN_FNS: [PrefixFn; 128] = max_len_table!(
    1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32
    33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64
    65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96
    97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120
    121 122 123 124 125 126 127 128
);

impl SliceTransformType {
    pub(crate) fn to_shale(&self) -> PyResult<shale::SliceTransform> {
        Ok(match *self {
            SliceTransformType::Fixed(n) => shale::SliceTransform::create_fixed_prefix(n),
            SliceTransformType::MaxLen(n) => match n.checked_sub(1).and_then(|i| MAX_LEN_FNS.get(i)) {
                Some(f) => shale::SliceTransform::create("max_len", *f, None),
                None => return Err(PyException::new_err("max len prefix only supports len from 1 to 128")),
            },
            SliceTransformType::Noop => shale::SliceTransform::create_noop(),
        })
    }
}

/// Database and column-family options (rocksdict's `Options`).
#[pyclass(name = "Options", module = "rocksdict")]
#[derive(Clone)]
pub(crate) struct OptionsPy {
    pub(crate) inner: shale::Options,
    pub(crate) raw_mode: bool,
    pub(crate) prefix_extractor: Option<SliceTransformType>,
}

impl OptionsPy {
    pub(crate) fn create(raw_mode: bool) -> OptionsPy {
        let mut inner = shale::Options::default();
        inner.create_if_missing(true);
        inner.set_block_based_table_factory(&BlockBasedOptionsPy::new().0);
        if !raw_mode {
            set_rocksdict_comparator(&mut inner);
        }
        OptionsPy { inner, raw_mode, prefix_extractor: None }
    }

    /// Options as loaded from an OPTIONS file, completed by rocksdict's config.
    fn compose(
        mut inner: shale::Options,
        raw_mode: bool,
        prefix: Option<SliceTransformType>,
    ) -> PyResult<OptionsPy> {
        if !raw_mode {
            set_rocksdict_comparator(&mut inner);
        }
        if let Some(p) = &prefix {
            inner.set_prefix_extractor(p.to_shale()?);
        }
        Ok(OptionsPy { inner, raw_mode, prefix_extractor: prefix })
    }

    /// The latest OPTIONS file of `path` and `rocksdict-config.json` (raw mode when the config
    /// file is absent, as rocksdict: a database it did not write is raw bytes).
    pub(crate) fn load_latest_inner(
        path: &str,
        env: shale::Env,
        ignore_unknown_options: bool,
        cache: shale::Cache,
    ) -> PyResult<(OptionsPy, Vec<(String, OptionsPy)>)> {
        let config = RocksDictConfig::load(&Path::new(path).join(CONFIG_FILE)).unwrap_or_default();
        let (opts, cfs) =
            shale::Options::load_latest(path, env, ignore_unknown_options, cache).map_err(crate::db_err)?;
        let default = OptionsPy::compose(
            opts,
            config.raw_mode,
            config.prefix_extractors.get(shale::DEFAULT_COLUMN_FAMILY_NAME).cloned(),
        )?;
        let mut out = Vec::with_capacity(cfs.len());
        for cf in cfs {
            let prefix = config.prefix_extractors.get(cf.name()).cloned();
            out.push((
                cf.name().to_string(),
                OptionsPy::compose(cf.options().clone(), config.raw_mode, prefix)?,
            ));
        }
        Ok((default, out))
    }
}

fn set_rocksdict_comparator(opts: &mut shale::Options) {
    opts.set_comparator(COMPARATOR_NAME, Box::new(rocksdict_compare));
}

/// `Options`' Python methods in one `#[pymethods]` block (PyO3 without its
/// `multiple-pymethods` feature, which costs an allocation on every method call of every
/// class): the methods written out, then the setters that pass their arguments straight to
/// Shale's `Options`, one line each.
macro_rules! options_methods {
    ({ $($methods:tt)* } $($name:ident($($arg:ident: $ty:ty),*);)*) => {
        #[pymethods]
        impl OptionsPy {
            $($methods)*

            $(
                fn $name(&mut self, $($arg: $ty),*) {
                    self.inner.$name($($arg),*)
                }
            )*
        }
    };
}

options_methods! {
{
    #[new]
    #[pyo3(signature = (raw_mode = false))]
    fn new(raw_mode: bool) -> Self {
        OptionsPy::create(raw_mode)
    }

    /// `(Options, {name: Options})` of the database at `path`.
    #[staticmethod]
    #[pyo3(signature = (path, env = None, ignore_unknown_options = false, cache = None))]
    fn load_latest<'py>(
        py: Python<'py>,
        path: &str,
        env: Option<EnvPy>,
        ignore_unknown_options: bool,
        cache: Option<CachePy>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let env = match env {
            Some(e) => e.0,
            None => shale::Env::new().map_err(crate::db_err)?,
        };
        let cache = cache.map(|c| c.0).unwrap_or_else(|| shale::Cache::new_lru_cache(8 * 1024 * 1024));
        let (opts, cfs) =
            py.allow_threads(|| OptionsPy::load_latest_inner(path, env, ignore_unknown_options, cache))?;
        let dict = PyDict::new(py);
        for (name, o) in cfs {
            dict.set_item(name, Py::new(py, o)?)?;
        }
        PyTuple::new(py, [Py::new(py, opts)?.into_any(), dict.into_any().unbind()])
    }

    fn get_statistics(&self) -> Option<String> {
        self.inner.get_statistics()
    }

    fn set_block_based_table_factory(&mut self, factory: &BlockBasedOptionsPy) {
        self.inner.set_block_based_table_factory(&factory.0)
    }

    fn set_compaction_style(&mut self, style: &DBCompactionStylePy) {
        self.inner.set_compaction_style(style.0)
    }

    fn set_compression_per_level(&mut self, level_types: Vec<DBCompressionTypePy>) {
        let v: Vec<_> = level_types.into_iter().map(|t| t.0).collect();
        self.inner.set_compression_per_level(&v)
    }

    fn set_compression_type(&mut self, t: &DBCompressionTypePy) {
        self.inner.set_compression_type(t.0)
    }

    fn set_bottommost_compression_type(&mut self, t: &DBCompressionTypePy) {
        self.inner.set_bottommost_compression_type(t.0)
    }

    fn set_blob_compression_type(&mut self, val: &DBCompressionTypePy) {
        self.inner.set_blob_compression_type(val.0)
    }

    fn set_compression_options(&mut self, w_bits: i32, level: i32, strategy: i32, max_dict_bytes: i32) {
        self.inner.set_compression_options(w_bits, level, strategy, max_dict_bytes)
    }

    fn set_bottommost_compression_options(
        &mut self,
        w_bits: i32,
        level: i32,
        strategy: i32,
        max_dict_bytes: i32,
        enable: bool,
    ) {
        self.inner.set_bottommost_compression_options(w_bits, level, strategy, max_dict_bytes, enable)
    }

    fn set_cuckoo_table_factory(&mut self, factory: &CuckooTableOptionsPy) {
        self.inner.set_cuckoo_table_factory(&factory.to_shale())
    }

    fn set_plain_table_factory(&mut self, options: &PlainTableFactoryOptionsPy) {
        self.inner.set_plain_table_factory(&options.to_shale(self.raw_mode))
    }

    fn set_db_log_dir(&mut self, path: &str) {
        self.inner.set_db_log_dir(path)
    }

    fn set_wal_dir(&mut self, path: &str) {
        self.inner.set_wal_dir(path)
    }

    fn set_db_paths(&mut self, paths: Vec<PyRef<DBPathPy>>) -> PyResult<()> {
        let mut v = Vec::with_capacity(paths.len());
        for p in paths {
            v.push(shale::DBPath::new(&p.path, p.target_size).map_err(crate::db_err)?);
        }
        self.inner.set_db_paths(&v);
        Ok(())
    }

    fn set_env(&mut self, env: &EnvPy) {
        self.inner.set_env(&env.0)
    }

    fn set_fifo_compaction_options(&mut self, fco: &FifoCompactOptionsPy) {
        let mut o = shale::FifoCompactOptions::default();
        o.set_max_table_files_size(fco.max_table_files_size);
        self.inner.set_fifo_compaction_options(&o)
    }

    fn set_universal_compaction_options(&mut self, uco: &UniversalCompactOptionsPy) {
        self.inner.set_universal_compaction_options(&uco.to_shale())
    }

    fn set_max_bytes_for_level_multiplier_additional(&mut self, level_values: Vec<i32>) {
        self.inner.set_max_bytes_for_level_multiplier_additional(&level_values)
    }

    fn set_memtable_factory(&mut self, factory: &MemtableFactoryPy) {
        self.inner.set_memtable_factory(factory.0.clone())
    }

    fn set_prefix_extractor(&mut self, prefix_extractor: &SliceTransformPy) -> PyResult<()> {
        self.inner.set_prefix_extractor(prefix_extractor.0.to_shale()?);
        self.prefix_extractor = Some(prefix_extractor.0.clone());
        Ok(())
    }

    fn set_wal_recovery_mode(&mut self, mode: &DBRecoveryModePy) {
        self.inner.set_wal_recovery_mode(mode.0)
    }

    fn set_row_cache(&mut self, cache: &CachePy) {
        self.inner.set_row_cache(&cache.0)
    }

    fn set_write_buffer_manager(&mut self, write_buffer_manager: &WriteBufferManagerPy) {
        self.inner.set_write_buffer_manager(&write_buffer_manager.0)
    }

    /// RocksDB's `allow_mmap_reads`: Shale maps table and blob files and reads them from the
    /// mapping, as RocksDB does.
    fn set_allow_mmap_reads(&mut self, is_enabled: bool) {
        self.inner.set_allow_mmap_reads(is_enabled);
    }

    /// RocksDB's `allow_mmap_writes`: Shale writes table and blob files through a shared
    /// mapping, as RocksDB's `PosixMmapFile` does.
    fn set_allow_mmap_writes(&mut self, is_enabled: bool) {
        self.inner.set_allow_mmap_writes(is_enabled);
    }

    /// RocksDB removed this option in 11.x after making it a no-op in 10.5.0 (file sizes are
    /// always checked, in parallel, at open): accepted and, as in RocksDB 10.5+, without effect.
    fn set_skip_checking_sst_file_sizes_on_db_open(&mut self, _value: bool) {}
}
    create_if_missing(create_if_missing: bool);
    create_missing_column_families(create_missing_cfs: bool);
    enable_statistics();
    increase_parallelism(parallelism: i32);
    optimize_for_point_lookup(cache_size: u64);
    optimize_level_style_compaction(memtable_memory_budget: usize);
    optimize_universal_style_compaction(memtable_memory_budget: usize);
    prepare_for_bulk_load();
    set_advise_random_on_open(advise: bool);
    set_allow_concurrent_memtable_write(allow: bool);
    set_arena_block_size(size: usize);
    set_atomic_flush(atomic_flush: bool);
    set_bloom_locality(v: u32);
    set_bytes_per_sync(nbytes: u64);
    set_compaction_readahead_size(compaction_readahead_size: usize);
    set_bottommost_zstd_max_train_bytes(value: i32, enable: bool);
    set_db_write_buffer_size(size: usize);
    set_delete_obsolete_files_period_micros(micros: u64);
    set_disable_auto_compactions(disable: bool);
    set_dump_malloc_stats(enabled: bool);
    set_enable_pipelined_write(value: bool);
    set_enable_write_thread_adaptive_yield(enabled: bool);
    set_error_if_exists(enabled: bool);
    set_hard_pending_compaction_bytes_limit(limit: usize);
    set_inplace_update_locks(num: usize);
    set_inplace_update_support(enabled: bool);
    set_is_fd_close_on_exec(enabled: bool);
    set_keep_log_file_num(nfiles: usize);
    set_level_compaction_dynamic_level_bytes(v: bool);
    set_level_zero_file_num_compaction_trigger(n: i32);
    set_level_zero_slowdown_writes_trigger(n: i32);
    set_level_zero_stop_writes_trigger(n: i32);
    set_log_file_time_to_roll(secs: usize);
    set_manifest_preallocation_size(size: usize);
    set_max_background_jobs(jobs: i32);
    set_max_bytes_for_level_base(size: u64);
    set_max_bytes_for_level_multiplier(mul: f64);
    set_max_compaction_bytes(nbytes: u64);
    set_max_file_opening_threads(nthreads: i32);
    set_max_log_file_size(size: usize);
    set_max_manifest_file_size(size: usize);
    set_max_open_files(nfiles: i32);
    set_max_sequential_skip_in_iterations(num: u64);
    set_max_subcompactions(num: u32);
    set_max_successive_merges(num: usize);
    set_max_total_wal_size(size: u64);
    set_max_write_buffer_number(nbuf: i32);
    set_max_write_buffer_size_to_maintain(size: i64);
    set_memtable_huge_page_size(size: usize);
    set_memtable_prefix_bloom_ratio(ratio: f64);
    set_memtable_whole_key_filtering(whole_key_filter: bool);
    set_min_level_to_compress(lvl: i32);
    set_min_write_buffer_number(nbuf: i32);
    set_min_write_buffer_number_to_merge(to_merge: i32);
    set_num_levels(n: i32);
    set_optimize_filters_for_hits(optimize_for_hits: bool);
    set_paranoid_checks(enabled: bool);
    set_ratelimiter(rate_bytes_per_sec: i64, refill_period_us: i64, fairness: i32);
    set_auto_tuned_ratelimiter(rate_bytes_per_sec: i64, refill_period_us: i64, fairness: i32);
    set_recycle_log_file_num(num: usize);
    set_report_bg_io_stats(enable: bool);
    set_skip_stats_update_on_db_open(skip: bool);
    set_soft_pending_compaction_bytes_limit(limit: usize);
    set_stats_dump_period_sec(period: u32);
    set_stats_persist_period_sec(period: u32);
    set_table_cache_num_shard_bits(nbits: i32);
    set_target_file_size_base(size: u64);
    set_target_file_size_multiplier(multiplier: i32);
    set_unordered_write(unordered: bool);
    set_use_adaptive_mutex(enabled: bool);
    set_use_direct_io_for_flush_and_compaction(enabled: bool);
    set_use_direct_reads(enabled: bool);
    set_use_fsync(useit: bool);
    set_wal_bytes_per_sync(nbytes: u64);
    set_wal_size_limit_mb(size: u64);
    set_wal_ttl_seconds(secs: u64);
    set_writable_file_max_buffer_size(nbytes: u64);
    set_write_buffer_size(size: usize);
    set_zstd_max_train_bytes(value: i32);
    set_enable_blob_files(val: bool);
    set_min_blob_size(val: u64);
    set_blob_file_size(val: u64);
    set_enable_blob_gc(val: bool);
    set_blob_gc_age_cutoff(val: f64);
    set_blob_gc_force_threshold(val: f64);
    set_blob_compaction_readahead_size(val: u64);
    set_allow_ingest_behind(val: bool);
    add_compact_on_deletion_collector_factory(window_size: usize, num_dels_trigger: usize, deletion_ratio: f64);
    set_avoid_unnecessary_blocking_io(val: bool);
}

/// Options of one write.
#[pyclass(name = "WriteOptions", module = "rocksdict")]
#[derive(Clone, Default)]
pub(crate) struct WriteOptionsPy {
    #[pyo3(get, set)]
    sync: bool,
    disable_wal_flag: bool,
    #[pyo3(get, set)]
    ignore_missing_column_families: bool,
    #[pyo3(get, set)]
    low_pri: bool,
    #[pyo3(get, set)]
    memtable_insert_hint_per_batch: bool,
    #[pyo3(get, set)]
    no_slowdown: bool,
}

impl WriteOptionsPy {
    pub(crate) fn to_shale(&self) -> shale::WriteOptions {
        let mut o = shale::WriteOptions::new();
        o.set_sync(self.sync);
        o.disable_wal(self.disable_wal_flag);
        o.set_ignore_missing_column_families(self.ignore_missing_column_families);
        o.set_low_pri(self.low_pri);
        o.set_memtable_insert_hint_per_batch(self.memtable_insert_hint_per_batch);
        o.set_no_slowdown(self.no_slowdown);
        o
    }
}

#[pymethods]
impl WriteOptionsPy {
    #[new]
    fn new() -> Self {
        WriteOptionsPy::default()
    }

    fn disable_wal(&mut self, disable: bool) {
        self.disable_wal_flag = disable
    }
}

/// Options of a flush.
#[pyclass(name = "FlushOptions", module = "rocksdict")]
#[derive(Clone, Copy)]
pub(crate) struct FlushOptionsPy {
    #[pyo3(get, set)]
    pub(crate) wait: bool,
}

#[pymethods]
impl FlushOptionsPy {
    #[new]
    fn new() -> Self {
        FlushOptionsPy { wait: true }
    }
}

/// Options of reads and iterators. Iterate bounds are Python keys, encoded when the options
/// are used (the encoding depends on the database's raw mode).
#[pyclass(name = "ReadOptions", module = "rocksdict")]
pub(crate) struct ReadOptionsPy {
    fill_cache: bool,
    iterate_lower_bound: Option<PyObject>,
    iterate_upper_bound: Option<PyObject>,
    prefix_same_as_start: bool,
    total_order_seek: bool,
    max_skippable_internal_keys: u64,
    background_purge_on_iterator_cleanup: bool,
    ignore_range_deletions: bool,
    verify_checksums: bool,
    readahead_size: usize,
    tailing: bool,
    pin_data: bool,
    async_io: bool,
}

impl Default for ReadOptionsPy {
    fn default() -> Self {
        // RocksDB's ReadOptions defaults.
        ReadOptionsPy {
            fill_cache: true,
            iterate_lower_bound: None,
            iterate_upper_bound: None,
            prefix_same_as_start: false,
            total_order_seek: false,
            max_skippable_internal_keys: 0,
            background_purge_on_iterator_cleanup: false,
            ignore_range_deletions: false,
            verify_checksums: true,
            readahead_size: 0,
            tailing: false,
            pin_data: false,
            async_io: false,
        }
    }
}

impl ReadOptionsPy {
    pub(crate) fn clone_ref(&self, py: Python<'_>) -> ReadOptionsPy {
        ReadOptionsPy {
            iterate_lower_bound: self.iterate_lower_bound.as_ref().map(|o| o.clone_ref(py)),
            iterate_upper_bound: self.iterate_upper_bound.as_ref().map(|o| o.clone_ref(py)),
            ..*self
        }
    }

    pub(crate) fn to_shale(&self, raw_mode: bool, py: Python<'_>) -> PyResult<shale::ReadOptions> {
        let mut o = shale::ReadOptions::default();
        o.fill_cache(self.fill_cache);
        if let Some(b) = &self.iterate_lower_bound {
            o.set_iterate_lower_bound(encode_key(b.bind(py), raw_mode)?.into_owned());
        }
        if let Some(b) = &self.iterate_upper_bound {
            o.set_iterate_upper_bound(encode_key(b.bind(py), raw_mode)?.into_owned());
        }
        o.set_prefix_same_as_start(self.prefix_same_as_start);
        o.set_total_order_seek(self.total_order_seek);
        o.set_max_skippable_internal_keys(self.max_skippable_internal_keys);
        o.set_background_purge_on_iterator_cleanup(self.background_purge_on_iterator_cleanup);
        o.set_ignore_range_deletions(self.ignore_range_deletions);
        o.set_verify_checksums(self.verify_checksums);
        o.set_readahead_size(self.readahead_size);
        o.set_tailing(self.tailing);
        o.set_pin_data(self.pin_data);
        o.set_async_io(self.async_io);
        Ok(o)
    }
}

// `Copy` fields for the struct-update in `clone_ref`.
impl Clone for ReadOptionsPy {
    fn clone(&self) -> Self {
        Python::with_gil(|py| self.clone_ref(py))
    }
}

#[pymethods]
impl ReadOptionsPy {
    #[new]
    #[pyo3(signature = (raw_mode = false))]
    fn new(raw_mode: bool) -> Self {
        let _ = raw_mode;
        ReadOptionsPy::default()
    }

    fn fill_cache(&mut self, v: bool) {
        self.fill_cache = v
    }
    fn set_iterate_lower_bound(&mut self, key: PyObject) {
        self.iterate_lower_bound = Some(key)
    }
    fn set_iterate_upper_bound(&mut self, key: PyObject) {
        self.iterate_upper_bound = Some(key)
    }
    fn set_prefix_same_as_start(&mut self, v: bool) {
        self.prefix_same_as_start = v
    }
    fn set_total_order_seek(&mut self, v: bool) {
        self.total_order_seek = v
    }
    fn set_max_skippable_internal_keys(&mut self, num: u64) {
        self.max_skippable_internal_keys = num
    }
    fn set_background_purge_on_iterator_cleanup(&mut self, v: bool) {
        self.background_purge_on_iterator_cleanup = v
    }
    fn set_ignore_range_deletions(&mut self, v: bool) {
        self.ignore_range_deletions = v
    }
    fn set_verify_checksums(&mut self, v: bool) {
        self.verify_checksums = v
    }
    fn set_readahead_size(&mut self, v: usize) {
        self.readahead_size = v
    }
    fn set_tailing(&mut self, v: bool) {
        self.tailing = v
    }
    fn set_pin_data(&mut self, v: bool) {
        self.pin_data = v
    }
    fn set_async_io(&mut self, v: bool) {
        self.async_io = v
    }
}

/// The block-based table `format_version` of rocksdict 0.3.27/0.3.29's RocksDB (9.x).
const ROCKSDICT_FORMAT_VERSION: i32 = 6;

/// Options of the block-based table format.
#[pyclass(name = "BlockBasedOptions", module = "rocksdict")]
#[derive(Clone)]
pub(crate) struct BlockBasedOptionsPy(shale::BlockBasedOptions);

#[pymethods]
impl BlockBasedOptionsPy {
    /// RocksDB's defaults, except `format_version`: 6, the newest that rocksdict 0.3.27's
    /// RocksDB (9.x) reads and its default, so tables Shale writes open in rocksdict.
    #[new]
    fn new() -> Self {
        let mut o = shale::BlockBasedOptions::default();
        o.set_format_version(ROCKSDICT_FORMAT_VERSION);
        BlockBasedOptionsPy(o)
    }
    fn disable_cache(&mut self) {
        self.0.disable_cache()
    }
    fn set_block_cache(&mut self, cache: &CachePy) {
        self.0.set_block_cache(&cache.0)
    }
    fn set_block_restart_interval(&mut self, interval: i32) {
        self.0.set_block_restart_interval(interval)
    }
    fn set_block_size(&mut self, size: usize) {
        self.0.set_block_size(size)
    }
    fn set_bloom_filter(&mut self, bits_per_key: f64, block_based: bool) {
        self.0.set_bloom_filter(bits_per_key, block_based)
    }
    fn set_cache_index_and_filter_blocks(&mut self, v: bool) {
        self.0.set_cache_index_and_filter_blocks(v)
    }
    fn set_data_block_hash_ratio(&mut self, ratio: f64) {
        self.0.set_data_block_hash_ratio(ratio)
    }
    fn set_data_block_index_type(&mut self, index_type: &DataBlockIndexTypePy) {
        self.0.set_data_block_index_type(index_type.0)
    }
    fn set_format_version(&mut self, version: i32) {
        self.0.set_format_version(version)
    }
    fn set_index_block_restart_interval(&mut self, interval: i32) {
        self.0.set_index_block_restart_interval(interval)
    }
    fn set_index_type(&mut self, index_type: &BlockBasedIndexTypePy) {
        self.0.set_index_type(index_type.0)
    }
    fn set_metadata_block_size(&mut self, size: usize) {
        self.0.set_metadata_block_size(size)
    }
    fn set_partition_filters(&mut self, size: bool) {
        self.0.set_partition_filters(size)
    }
    fn set_pin_l0_filter_and_index_blocks_in_cache(&mut self, v: bool) {
        self.0.set_pin_l0_filter_and_index_blocks_in_cache(v)
    }
    fn set_pin_top_level_index_and_filter(&mut self, v: bool) {
        self.0.set_pin_top_level_index_and_filter(v)
    }
    fn set_checksum_type(&mut self, checksum_type: &ChecksumTypePy) {
        self.0.set_checksum_type(checksum_type.0)
    }
}

/// Options of the cuckoo table format (kept as values: Shale's type is not `Clone`).
#[pyclass(name = "CuckooTableOptions", module = "rocksdict")]
#[derive(Clone, Default)]
pub(crate) struct CuckooTableOptionsPy {
    hash_ratio: Option<f64>,
    max_search_depth: Option<u32>,
    cuckoo_block_size: Option<u32>,
    identity_as_first_hash: Option<bool>,
    use_module_hash: Option<bool>,
}

impl CuckooTableOptionsPy {
    fn to_shale(&self) -> shale::CuckooTableOptions {
        let mut o = shale::CuckooTableOptions::default();
        if let Some(v) = self.hash_ratio {
            o.set_hash_ratio(v);
        }
        if let Some(v) = self.max_search_depth {
            o.set_max_search_depth(v);
        }
        if let Some(v) = self.cuckoo_block_size {
            o.set_cuckoo_block_size(v);
        }
        if let Some(v) = self.identity_as_first_hash {
            o.set_identity_as_first_hash(v);
        }
        if let Some(v) = self.use_module_hash {
            o.set_use_module_hash(v);
        }
        o
    }
}

#[pymethods]
impl CuckooTableOptionsPy {
    #[new]
    fn new() -> Self {
        CuckooTableOptionsPy::default()
    }
    fn set_hash_ratio(&mut self, ratio: f64) {
        self.hash_ratio = Some(ratio)
    }
    fn set_max_search_depth(&mut self, depth: u32) {
        self.max_search_depth = Some(depth)
    }
    fn set_cuckoo_block_size(&mut self, size: u32) {
        self.cuckoo_block_size = Some(size)
    }
    fn set_identity_as_first_hash(&mut self, flag: bool) {
        self.identity_as_first_hash = Some(flag)
    }
    fn set_use_module_hash(&mut self, flag: bool) {
        self.use_module_hash = Some(flag)
    }
}

/// Options of the plain table format. In default mode a fixed `user_key_length` counts the
/// type byte too (one more than given), as rocksdict.
#[pyclass(name = "PlainTableFactoryOptions", module = "rocksdict")]
#[derive(Clone)]
pub(crate) struct PlainTableFactoryOptionsPy {
    #[pyo3(get, set)]
    user_key_length: u32,
    #[pyo3(get, set)]
    bloom_bits_per_key: i32,
    #[pyo3(get, set)]
    hash_table_ratio: f64,
    #[pyo3(get, set)]
    index_sparseness: usize,
    #[pyo3(get, set)]
    huge_page_tlb_size: usize,
    #[pyo3(get, set)]
    encoding_type: KeyEncodingTypePy,
    #[pyo3(get, set)]
    full_scan_mode: bool,
    #[pyo3(get, set)]
    store_index_in_file: bool,
}

impl PlainTableFactoryOptionsPy {
    fn to_shale(&self, raw_mode: bool) -> shale::PlainTableFactoryOptions {
        shale::PlainTableFactoryOptions {
            user_key_length: if raw_mode || self.user_key_length == 0 {
                self.user_key_length
            } else {
                self.user_key_length + 1
            },
            bloom_bits_per_key: self.bloom_bits_per_key,
            hash_table_ratio: self.hash_table_ratio,
            index_sparseness: self.index_sparseness,
            huge_page_tlb_size: self.huge_page_tlb_size,
            encoding_type: self.encoding_type.0,
            full_scan_mode: self.full_scan_mode,
            store_index_in_file: self.store_index_in_file,
        }
    }
}

#[pymethods]
impl PlainTableFactoryOptionsPy {
    #[new]
    fn new() -> Self {
        // rocksdict's defaults.
        PlainTableFactoryOptionsPy {
            user_key_length: 0,
            bloom_bits_per_key: 10,
            hash_table_ratio: 0.75,
            index_sparseness: 16,
            huge_page_tlb_size: 0,
            encoding_type: KeyEncodingTypePy(shale::KeyEncodingType::Plain),
            full_scan_mode: false,
            store_index_in_file: false,
        }
    }
}

/// A block cache.
#[pyclass(name = "Cache", module = "rocksdict")]
#[derive(Clone)]
pub(crate) struct CachePy(pub(crate) shale::Cache);

#[pymethods]
impl CachePy {
    #[new]
    fn new(capacity: usize) -> Self {
        CachePy(shale::Cache::new_lru_cache(capacity))
    }
    #[staticmethod]
    fn new_hyper_clock_cache(capacity: usize, estimated_entry_charge: usize) -> Self {
        CachePy(shale::Cache::new_hyper_clock_cache(capacity, estimated_entry_charge))
    }
    fn get_usage(&self) -> usize {
        self.0.get_usage()
    }
    fn get_pinned_usage(&self) -> usize {
        self.0.get_pinned_usage()
    }
    fn set_capacity(&mut self, capacity: usize) {
        self.0.set_capacity(capacity)
    }
}

/// A memtable budget shared by column families and databases.
#[pyclass(name = "WriteBufferManager", module = "rocksdict")]
#[derive(Clone)]
pub(crate) struct WriteBufferManagerPy(shale::WriteBufferManager);

#[pymethods]
impl WriteBufferManagerPy {
    #[new]
    fn new(buffer_size: usize, allow_stall: bool) -> Self {
        WriteBufferManagerPy(shale::WriteBufferManager::new_write_buffer_manager(buffer_size, allow_stall))
    }
    #[staticmethod]
    fn new_write_buffer_manager_with_cache(buffer_size: usize, allow_stall: bool, cache: &CachePy) -> Self {
        WriteBufferManagerPy(shale::WriteBufferManager::new_write_buffer_manager_with_cache(
            buffer_size,
            allow_stall,
            cache.0.clone(),
        ))
    }
    fn get_usage(&self) -> usize {
        self.0.get_usage()
    }
    fn get_buffer_size(&self) -> usize {
        self.0.get_buffer_size()
    }
    fn set_buffer_size(&self, new_size: usize) {
        self.0.set_buffer_size(new_size)
    }
    fn enabled(&self) -> bool {
        self.0.enabled()
    }
    fn set_allow_stall(&self, allow_stall: bool) {
        self.0.set_allow_stall(allow_stall)
    }
}

/// An environment: the file system and the background thread pools.
#[pyclass(name = "Env", module = "rocksdict")]
#[derive(Clone)]
pub(crate) struct EnvPy(pub(crate) shale::Env);

#[pymethods]
impl EnvPy {
    #[new]
    fn new() -> PyResult<Self> {
        Ok(EnvPy(shale::Env::new().map_err(crate::db_err)?))
    }
    #[staticmethod]
    fn mem_env() -> PyResult<Self> {
        Ok(EnvPy(shale::Env::mem_env().map_err(crate::db_err)?))
    }
    fn set_background_threads(&mut self, num_threads: i32) {
        self.0.set_background_threads(num_threads)
    }
    fn set_high_priority_background_threads(&mut self, n: i32) {
        self.0.set_high_priority_background_threads(n)
    }
    fn set_low_priority_background_threads(&mut self, n: i32) {
        self.0.set_low_priority_background_threads(n)
    }
    fn set_bottom_priority_background_threads(&mut self, n: i32) {
        self.0.set_bottom_priority_background_threads(n)
    }
    fn join_all_threads(&mut self) {
        self.0.join_all_threads()
    }
    fn lower_thread_pool_io_priority(&mut self) {
        self.0.lower_thread_pool_io_priority()
    }
    fn lower_high_priority_thread_pool_io_priority(&mut self) {
        self.0.lower_high_priority_thread_pool_io_priority()
    }
    fn lower_thread_pool_cpu_priority(&mut self) {
        self.0.lower_thread_pool_cpu_priority()
    }
    fn lower_high_priority_thread_pool_cpu_priority(&mut self) {
        self.0.lower_high_priority_thread_pool_cpu_priority()
    }
}

/// A table directory with a target size.
#[pyclass(name = "DBPath", module = "rocksdict")]
pub(crate) struct DBPathPy {
    path: String,
    target_size: u64,
}

#[pymethods]
impl DBPathPy {
    #[new]
    fn new(path: String, target_size: u64) -> Self {
        DBPathPy { path, target_size }
    }
}

/// Options of FIFO compaction.
#[pyclass(name = "FifoCompactOptions", module = "rocksdict")]
pub(crate) struct FifoCompactOptionsPy {
    #[pyo3(get, set)]
    max_table_files_size: u64,
}

#[pymethods]
impl FifoCompactOptionsPy {
    #[new]
    fn new() -> Self {
        // RocksDB's default: 1 GiB.
        FifoCompactOptionsPy { max_table_files_size: 1024 * 1024 * 1024 }
    }
}

/// Options of universal compaction.
#[pyclass(name = "UniversalCompactOptions", module = "rocksdict")]
pub(crate) struct UniversalCompactOptionsPy {
    #[pyo3(get, set)]
    size_ratio: i32,
    #[pyo3(get, set)]
    min_merge_width: i32,
    #[pyo3(get, set)]
    max_merge_width: i32,
    #[pyo3(get, set)]
    max_size_amplification_percent: i32,
    #[pyo3(get, set)]
    compression_size_percent: i32,
    #[pyo3(get, set)]
    stop_style: UniversalCompactionStopStylePy,
}

impl UniversalCompactOptionsPy {
    fn to_shale(&self) -> shale::UniversalCompactOptions {
        let mut o = shale::UniversalCompactOptions::default();
        o.set_size_ratio(self.size_ratio);
        o.set_min_merge_width(self.min_merge_width);
        o.set_max_merge_width(self.max_merge_width);
        o.set_max_size_amplification_percent(self.max_size_amplification_percent);
        o.set_compression_size_percent(self.compression_size_percent);
        o.set_stop_style(self.stop_style.0);
        o
    }
}

#[pymethods]
impl UniversalCompactOptionsPy {
    #[new]
    fn new() -> Self {
        // RocksDB's CompactionOptionsUniversal defaults.
        UniversalCompactOptionsPy {
            size_ratio: 1,
            min_merge_width: 2,
            max_merge_width: i32::MAX,
            max_size_amplification_percent: 200,
            compression_size_percent: -1,
            stop_style: UniversalCompactionStopStylePy(shale::UniversalCompactionStopStyle::Total),
        }
    }
}

/// Options of `compact_range`.
#[pyclass(name = "CompactOptions", module = "rocksdict")]
#[derive(Clone)]
pub(crate) struct CompactOptionsPy {
    exclusive_manual_compaction: bool,
    bottommost_level_compaction: shale::BottommostLevelCompaction,
    change_level: bool,
    target_level: i32,
}

impl CompactOptionsPy {
    pub(crate) fn to_shale(&self) -> shale::CompactOptions {
        let mut o = shale::CompactOptions::default();
        o.set_exclusive_manual_compaction(self.exclusive_manual_compaction);
        o.set_bottommost_level_compaction(self.bottommost_level_compaction);
        o.set_change_level(self.change_level);
        o.set_target_level(self.target_level);
        o
    }
}

#[pymethods]
impl CompactOptionsPy {
    #[new]
    pub(crate) fn new() -> Self {
        // RocksDB's CompactRangeOptions defaults.
        CompactOptionsPy {
            exclusive_manual_compaction: true,
            bottommost_level_compaction: shale::BottommostLevelCompaction::IfHaveCompactionFilter,
            change_level: false,
            target_level: -1,
        }
    }
    fn set_exclusive_manual_compaction(&mut self, v: bool) {
        self.exclusive_manual_compaction = v
    }
    fn set_bottommost_level_compaction(&mut self, lvl: &BottommostLevelCompactionPy) {
        self.bottommost_level_compaction = lvl.0
    }
    fn set_change_level(&mut self, v: bool) {
        self.change_level = v
    }
    fn set_target_level(&mut self, lvl: i32) {
        self.target_level = lvl
    }
}

/// Options of `ingest_external_file`.
#[pyclass(name = "IngestExternalFileOptions", module = "rocksdict")]
#[derive(Clone)]
pub(crate) struct IngestExternalFileOptionsPy {
    move_files: bool,
    snapshot_consistency: bool,
    allow_global_seqno: bool,
    allow_blocking_flush: bool,
    ingest_behind: bool,
}

impl IngestExternalFileOptionsPy {
    pub(crate) fn to_shale(&self) -> shale::IngestExternalFileOptions {
        let mut o = shale::IngestExternalFileOptions::default();
        o.set_move_files(self.move_files);
        o.set_snapshot_consistency(self.snapshot_consistency);
        o.set_allow_global_seqno(self.allow_global_seqno);
        o.set_allow_blocking_flush(self.allow_blocking_flush);
        o.set_ingest_behind(self.ingest_behind);
        o
    }
}

#[pymethods]
impl IngestExternalFileOptionsPy {
    #[new]
    pub(crate) fn new() -> Self {
        // RocksDB's IngestExternalFileOptions defaults.
        IngestExternalFileOptionsPy {
            move_files: false,
            snapshot_consistency: true,
            allow_global_seqno: true,
            allow_blocking_flush: true,
            ingest_behind: false,
        }
    }
    fn set_move_files(&mut self, v: bool) {
        self.move_files = v
    }
    fn set_snapshot_consistency(&mut self, v: bool) {
        self.snapshot_consistency = v
    }
    fn set_allow_global_seqno(&mut self, v: bool) {
        self.allow_global_seqno = v
    }
    fn set_allow_blocking_flush(&mut self, v: bool) {
        self.allow_blocking_flush = v
    }
    fn set_ingest_behind(&mut self, v: bool) {
        self.ingest_behind = v
    }
}

/// A prefix extractor, named by kind (saved in `rocksdict-config.json`).
#[pyclass(name = "SliceTransform", module = "rocksdict")]
#[derive(Clone)]
pub(crate) struct SliceTransformPy(pub(crate) SliceTransformType);

#[pymethods]
impl SliceTransformPy {
    #[staticmethod]
    fn create_fixed_prefix(len: usize) -> Self {
        SliceTransformPy(SliceTransformType::Fixed(len))
    }
    #[staticmethod]
    fn create_max_len_prefix(len: usize) -> Self {
        SliceTransformPy(SliceTransformType::MaxLen(len))
    }
    #[staticmethod]
    fn create_noop() -> Self {
        SliceTransformPy(SliceTransformType::Noop)
    }
}

/// The enum-like classes: a static method per variant.
macro_rules! enum_class {
    ($py:ident, $name:literal, $ty:ty, { $($method:ident => $val:expr),* $(,)? }) => {
        #[pyclass(name = $name, module = "rocksdict")]
        #[derive(Clone)]
        pub(crate) struct $py(pub(crate) $ty);

        #[pymethods]
        impl $py {
            $(
                #[staticmethod]
                fn $method() -> Self {
                    $py($val)
                }
            )*
        }
    };
}

enum_class!(DBCompressionTypePy, "DBCompressionType", shale::DBCompressionType, {
    none => shale::DBCompressionType::None,
    snappy => shale::DBCompressionType::Snappy,
    zlib => shale::DBCompressionType::Zlib,
    bz2 => shale::DBCompressionType::Bz2,
    lz4 => shale::DBCompressionType::Lz4,
    lz4hc => shale::DBCompressionType::Lz4hc,
    zstd => shale::DBCompressionType::Zstd,
});
enum_class!(DBCompactionStylePy, "DBCompactionStyle", shale::DBCompactionStyle, {
    level => shale::DBCompactionStyle::Level,
    universal => shale::DBCompactionStyle::Universal,
    fifo => shale::DBCompactionStyle::Fifo,
});
enum_class!(DBRecoveryModePy, "DBRecoveryMode", shale::DBRecoveryMode, {
    tolerate_corrupted_tail_records => shale::DBRecoveryMode::TolerateCorruptedTailRecords,
    absolute_consistency => shale::DBRecoveryMode::AbsoluteConsistency,
    point_in_time => shale::DBRecoveryMode::PointInTime,
    skip_any_corrupted_record => shale::DBRecoveryMode::SkipAnyCorruptedRecord,
});
enum_class!(ChecksumTypePy, "ChecksumType", shale::ChecksumType, {
    no_checksum => shale::ChecksumType::NoChecksum,
    crc32c => shale::ChecksumType::CRC32c,
    xxhash => shale::ChecksumType::XXHash,
    xxhash64 => shale::ChecksumType::XXHash64,
    xxh3 => shale::ChecksumType::XXH3,
});
enum_class!(DataBlockIndexTypePy, "DataBlockIndexType", shale::DataBlockIndexType, {
    binary_search => shale::DataBlockIndexType::BinarySearch,
    binary_and_hash => shale::DataBlockIndexType::BinaryAndHash,
});
enum_class!(BlockBasedIndexTypePy, "BlockBasedIndexType", shale::BlockBasedIndexType, {
    binary_search => shale::BlockBasedIndexType::BinarySearch,
    hash_search => shale::BlockBasedIndexType::HashSearch,
    two_level_index_search => shale::BlockBasedIndexType::TwoLevelIndexSearch,
});
enum_class!(KeyEncodingTypePy, "KeyEncodingType", shale::KeyEncodingType, {
    plain => shale::KeyEncodingType::Plain,
    none => shale::KeyEncodingType::Plain,
    prefix => shale::KeyEncodingType::Prefix,
});
enum_class!(UniversalCompactionStopStylePy, "UniversalCompactionStopStyle", shale::UniversalCompactionStopStyle, {
    similar => shale::UniversalCompactionStopStyle::Similar,
    total => shale::UniversalCompactionStopStyle::Total,
});
enum_class!(BottommostLevelCompactionPy, "BottommostLevelCompaction", shale::BottommostLevelCompaction, {
    skip => shale::BottommostLevelCompaction::Skip,
    if_have_compaction_filter => shale::BottommostLevelCompaction::IfHaveCompactionFilter,
    force => shale::BottommostLevelCompaction::Force,
    force_optimized => shale::BottommostLevelCompaction::ForceOptimized,
});

/// Memtable representations (RocksDB's defaults for the hash kinds' parameters).
#[pyclass(name = "MemtableFactory", module = "rocksdict")]
#[derive(Clone)]
pub(crate) struct MemtableFactoryPy(shale::MemtableFactory);

#[pymethods]
impl MemtableFactoryPy {
    #[staticmethod]
    fn vector() -> Self {
        MemtableFactoryPy(shale::MemtableFactory::Vector)
    }
    #[staticmethod]
    fn hash_skip_list(bucket_count: usize, height: i32, branching_factor: i32) -> Self {
        MemtableFactoryPy(shale::MemtableFactory::HashSkipList { bucket_count, height, branching_factor })
    }
    #[staticmethod]
    fn hash_link_list(bucket_count: usize) -> Self {
        MemtableFactoryPy(shale::MemtableFactory::HashLinkList { bucket_count })
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<OptionsPy>()?;
    m.add_class::<WriteOptionsPy>()?;
    m.add_class::<FlushOptionsPy>()?;
    m.add_class::<ReadOptionsPy>()?;
    m.add_class::<BlockBasedOptionsPy>()?;
    m.add_class::<CuckooTableOptionsPy>()?;
    m.add_class::<PlainTableFactoryOptionsPy>()?;
    m.add_class::<CachePy>()?;
    m.add_class::<WriteBufferManagerPy>()?;
    m.add_class::<EnvPy>()?;
    m.add_class::<DBPathPy>()?;
    m.add_class::<FifoCompactOptionsPy>()?;
    m.add_class::<UniversalCompactOptionsPy>()?;
    m.add_class::<CompactOptionsPy>()?;
    m.add_class::<IngestExternalFileOptionsPy>()?;
    m.add_class::<SliceTransformPy>()?;
    m.add_class::<DBCompressionTypePy>()?;
    m.add_class::<DBCompactionStylePy>()?;
    m.add_class::<DBRecoveryModePy>()?;
    m.add_class::<ChecksumTypePy>()?;
    m.add_class::<DataBlockIndexTypePy>()?;
    m.add_class::<BlockBasedIndexTypePy>()?;
    m.add_class::<KeyEncodingTypePy>()?;
    m.add_class::<UniversalCompactionStopStylePy>()?;
    m.add_class::<BottommostLevelCompactionPy>()?;
    m.add_class::<MemtableFactoryPy>()?;
    Ok(())
}
