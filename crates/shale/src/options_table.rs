//! The one table of the options Shale applies by RocksDB's names (RocksDB's
//! `db_options_type_info` / `cf_mutable_options_type_info` / `cf_immutable_options_type_info`
//! / `block_based_table_type_info` are the model): one row per option, with its section,
//! kind, whether `set_options` changes it, a getter (its text as RocksDB 11.8.1 writes it to
//! an OPTIONS file) and a setter (from that text). Every user of option names goes through it:
//!
//! - `Options::get_options_from_string` (`options_api.rs`): the setters of DB and CF rows;
//! - `Options::load_latest` (`options_load.rs`): the setters of each section's rows; a name
//!   without a row (or a value a setter does not apply) is accepted at RocksDB's default only;
//! - the OPTIONS file Shale writes (`db/options_writer.rs`): RocksDB 11.8.1's defaults, in its
//!   order, with each row's getter value put over its default;
//! - `set_options` (`db/dyn_options.rs`): the setters of mutable CF rows;
//! - the LOG's `Options.<name>: <value>` lines of a family (`db/dyn_options.rs::log_cf_options`):
//!   the getters of the rows [`LOG_CF_ORDER`] lists, in RocksDB's LOG spelling.
//!
//! Enum values have their RocksDB names in one place too ([`enum_names`]).

use crate::error::{Error, Result};
use crate::options::{BlockBasedOptions, DBCompressionType, Options};
use crate::table::filter::InternalFilterPolicy;

/// The OPTIONS file section an option lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Section {
    Db,
    Cf,
    /// `[TableOptions/BlockBasedTable]`.
    Table,
}

/// How an option's text is read and shown (RocksDB's `OptionType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Bool,
    Int,
    Double,
    Enum,
    /// `{field=value;...}`.
    Struct,
    String,
    /// A name of code the caller supplies (comparator, merge operator, ...): written, never
    /// applied from text.
    Function,
}

/// Whether `set_options` changes an option of a live family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mutable {
    /// Changes at once (see `db/dyn_options.rs` for what each does).
    Yes,
    /// Fixed while the database is open (RocksDB's immutable options): InvalidArgument.
    No,
    /// Mutable in RocksDB, fixed in Shale while open: NotSupported naming it.
    NotBuilt,
}

/// A DB or CF option's setter: `(options, option name, text)`; false when the value is one
/// Shale has no way to apply.
pub(crate) type OptsSetter = fn(&mut Options, &str, &str) -> Result<bool>;

/// Reads or writes the option on the value it belongs to.
#[derive(Clone, Copy)]
pub(crate) enum Access {
    /// A DB or column-family option. `set` is None for function-valued options; it returns
    /// false for a value Shale has no way to apply (then accepted at RocksDB's default only).
    Opts { get: Option<fn(&Options) -> String>, set: Option<OptsSetter> },
    /// A block-based table option.
    Table {
        get: Option<fn(&BlockBasedOptions) -> String>,
        set: fn(&mut BlockBasedOptions, &str, &str) -> Result<bool>,
    },
}

/// One option.
#[derive(Clone, Copy)]
pub(crate) struct OptionRow {
    pub name: &'static str,
    pub section: Section,
    pub kind: Kind,
    pub mutable: Mutable,
    pub access: Access,
}

impl OptionRow {
    /// The option's text in `o` (an OPTIONS file's spelling); None when Shale does not keep it
    /// (then RocksDB's default is what Shale behaves as).
    pub fn get(&self, o: &Options) -> Option<String> {
        match self.access {
            Access::Opts { get, .. } => get.map(|g| g(o)),
            Access::Table { get, .. } => get.map(|g| g(&o.table)),
        }
    }

    /// Applies `v`; false when Shale has no way to apply this value (or the option is
    /// function-valued).
    pub fn set(&self, o: &mut Options, v: &str) -> Result<bool> {
        match self.access {
            Access::Opts { set: Some(s), .. } => s(o, self.name, v),
            Access::Opts { set: None, .. } => Ok(false),
            Access::Table { set, .. } => set(&mut o.table, self.name, v),
        }
    }

    /// `set` on a block-based table's options alone.
    pub fn set_table(&self, t: &mut BlockBasedOptions, v: &str) -> Result<bool> {
        match self.access {
            Access::Table { set, .. } => set(t, self.name, v),
            Access::Opts { .. } => Ok(false),
        }
    }

    /// The text of a table row on `t`.
    pub fn get_table(&self, t: &BlockBasedOptions) -> Option<String> {
        match self.access {
            Access::Table { get, .. } => get.map(|g| g(t)),
            Access::Opts { .. } => None,
        }
    }
}

/// The row of `name` in `section`.
pub(crate) fn find(section: Section, name: &str) -> Option<&'static OptionRow> {
    ROWS.iter().find(|r| r.section == section && r.name == name)
}

/// The rows of one section, in table order.
pub(crate) fn rows(section: Section) -> impl Iterator<Item = &'static OptionRow> {
    ROWS.iter().filter(move |r| r.section == section)
}

/// Applies a DB or column-family option by name (`get_options_from_string`): false when no
/// row has it or its setter does not apply the value.
pub(crate) fn apply_named(o: &mut Options, name: &str, v: &str) -> Result<bool> {
    match find(Section::Db, name).or_else(|| find(Section::Cf, name)) {
        Some(r) => r.set(o, v),
        None => Ok(false),
    }
}

/// RocksDB's names of enum values, in one place.
pub(crate) mod enum_names {
    use crate::options::DBCompressionType;
    use crate::table::builder::IndexShorteningMode;
    use crate::table::format::ChecksumType;
    use crate::wal::WalRecoveryMode;
    use crate::{BlockBasedTablePinningTier, DBCompactionStyle, DataBlockIndexType, LogLevel};
    use shale_engine::config::StopStyle;

    pub const COMPRESSION: &[(&str, DBCompressionType)] = &[
        ("kNoCompression", DBCompressionType::None),
        ("kSnappyCompression", DBCompressionType::Snappy),
        ("kZlibCompression", DBCompressionType::Zlib),
        ("kBZip2Compression", DBCompressionType::Bz2),
        ("kLZ4Compression", DBCompressionType::Lz4),
        ("kLZ4HCCompression", DBCompressionType::Lz4hc),
        ("kZSTD", DBCompressionType::Zstd),
    ];
    pub const COMPACTION_STYLE: &[(&str, DBCompactionStyle)] = &[
        ("kCompactionStyleLevel", DBCompactionStyle::Level),
        ("kCompactionStyleUniversal", DBCompactionStyle::Universal),
        ("kCompactionStyleFIFO", DBCompactionStyle::Fifo),
    ];
    pub const STOP_STYLE: &[(&str, StopStyle)] = &[
        ("kCompactionStopStyleSimilarSize", StopStyle::Similar),
        ("kCompactionStopStyleTotalSize", StopStyle::Total),
    ];
    pub const WAL_RECOVERY: &[(&str, WalRecoveryMode)] = &[
        ("kTolerateCorruptedTailRecords", WalRecoveryMode::TolerateCorruptedTailRecords),
        ("kAbsoluteConsistency", WalRecoveryMode::AbsoluteConsistency),
        ("kPointInTimeRecovery", WalRecoveryMode::PointInTime),
        ("kSkipAnyCorruptedRecords", WalRecoveryMode::SkipAnyCorruptedRecord),
    ];
    pub const BLOCK_SEARCH: &[(&str, crate::options_tbl::BlockSearchType)] = &[
        ("kBinary", crate::options_tbl::BlockSearchType::Binary),
        ("kInterpolation", crate::options_tbl::BlockSearchType::Interpolation),
        ("kAuto", crate::options_tbl::BlockSearchType::Auto),
    ];
    pub const CHECKSUM: &[(&str, ChecksumType)] = &[
        ("kNoChecksum", ChecksumType::None),
        ("kCRC32c", ChecksumType::Crc32c),
        ("kxxHash", ChecksumType::XxHash),
        ("kxxHash64", ChecksumType::XxHash64),
        ("kXXH3", ChecksumType::Xxh3),
    ];
    pub const INDEX_SHORTENING: &[(&str, IndexShorteningMode)] = &[
        ("kNoShortening", IndexShorteningMode::NoShortening),
        ("kShortenSeparators", IndexShorteningMode::ShortenSeparators),
        ("kShortenSeparatorsAndSuccessor", IndexShorteningMode::ShortenSeparatorsAndSuccessor),
    ];
    pub const DATA_BLOCK_INDEX: &[(&str, DataBlockIndexType)] = &[
        ("kDataBlockBinarySearch", DataBlockIndexType::BinarySearch),
        ("kDataBlockBinaryAndHash", DataBlockIndexType::BinaryAndHash),
    ];
    pub const PREPOPULATE_BLOCK_CACHE: &[(&str, crate::PrepopulateBlockCache)] = &[
        ("kDisable", crate::PrepopulateBlockCache::Disable),
        ("kFlushOnly", crate::PrepopulateBlockCache::FlushOnly),
        ("kFlushAndCompaction", crate::PrepopulateBlockCache::FlushAndCompaction),
    ];
    pub const PINNING_TIER: &[(&str, BlockBasedTablePinningTier)] = &[
        ("kFallback", BlockBasedTablePinningTier::Fallback),
        ("kNone", BlockBasedTablePinningTier::None),
        ("kFlushedAndSimilar", BlockBasedTablePinningTier::FlushAndSimilar),
        ("kAll", BlockBasedTablePinningTier::All),
    ];
    /// RocksDB's `Temperature` bytes.
    pub const TEMPERATURE: &[(&str, u8)] = &[
        ("kUnknown", 0x00),
        ("kHot", 0x04),
        ("kWarm", 0x08),
        ("kCool", 0x0A),
        ("kCold", 0x0C),
        ("kIce", 0x10),
    ];
    pub const COMPACTION_PRI: &[(&str, crate::CompactionPri)] = &[
        ("kByCompensatedSize", crate::CompactionPri::ByCompensatedSize),
        ("kOldestLargestSeqFirst", crate::CompactionPri::OldestLargestSeqFirst),
        ("kOldestSmallestSeqFirst", crate::CompactionPri::OldestSmallestSeqFirst),
        ("kMinOverlappingRatio", crate::CompactionPri::MinOverlappingRatio),
        ("kRoundRobin", crate::CompactionPri::RoundRobin),
    ];
    pub const INFO_LOG_LEVEL: &[(&str, LogLevel)] = &[
        ("DEBUG_LEVEL", LogLevel::Debug),
        ("INFO_LEVEL", LogLevel::Info),
        ("WARN_LEVEL", LogLevel::Warn),
        ("ERROR_LEVEL", LogLevel::Error),
        ("FATAL_LEVEL", LogLevel::Fatal),
        ("HEADER_LEVEL", LogLevel::Header),
    ];

    /// The name of `v` in `table` ("" if it has none: every table lists every value).
    pub fn name_of<T: PartialEq + Copy>(table: &[(&'static str, T)], v: T) -> &'static str {
        table.iter().find(|(_, x)| *x == v).map_or("", |(n, _)| n)
    }

    /// The value named `text` in `table`.
    pub fn value_of<T: Copy>(table: &[(&'static str, T)], text: &str) -> Option<T> {
        table.iter().find(|(n, _)| *n == text).map(|(_, v)| *v)
    }
}

use enum_names::{name_of, value_of};

/// `text` as a value of `table`, InvalidArgument naming the option otherwise.
fn parse_enum<T: Copy>(table: &[(&'static str, T)], name: &str, text: &str) -> Result<T> {
    value_of(table, text).ok_or_else(|| bad_value(name, text))
}

pub(crate) fn compression(name: &str, v: &str) -> Result<DBCompressionType> {
    parse_enum(enum_names::COMPRESSION, name, v)
}

pub(crate) fn compression_name(c: DBCompressionType) -> &'static str {
    name_of(enum_names::COMPRESSION, c)
}

/// A compression-options struct (`{level=..;checksum=..}`) parsed over `base` and its
/// `enabled` flag, as RocksDB parses a struct option over the value in force: the fields
/// named change, the others keep theirs (`bottommost_compression_opts`,
/// `blob_compression_opts`).
fn compression_opts_over(
    name: &str,
    v: &str,
    base: &crate::table::builder::CompressionOpts,
    enabled: bool,
) -> Result<(crate::table::builder::CompressionOpts, bool)> {
    let (mut b, mut enabled) = (base.clone(), enabled);
    for (k, x) in struct_fields(name, v)? {
        match k {
            "window_bits" => b.window_bits = number(k, x)?,
            "level" => b.level = number(k, x)?,
            "strategy" => b.strategy = number(k, x)?,
            "max_dict_bytes" => b.max_dict_bytes = number(k, x)?,
            "zstd_max_train_bytes" => b.zstd_max_train_bytes = number(k, x)?,
            "max_dict_buffer_bytes" => b.max_dict_buffer_bytes = number(k, x)?,
            "use_zstd_dict_trainer" => b.use_zstd_dict_trainer = boolean(k, x)?,
            "enabled" => enabled = boolean(k, x)?,
            "parallel_threads" => b.parallel_threads = number(k, x)?,
            "checksum" => b.checksum = boolean(k, x)?,
            "max_compressed_bytes_per_kb" => b.max_compressed_bytes_per_kb = number(k, x)?,
            _ => return Err(Error::invalid_argument(format!("Unrecognized option: {name}.{k}"))),
        }
    }
    Ok((b, enabled))
}

/// A `CompressionOptions` value as RocksDB 11.8.1 writes it: its fields in its order, those
/// Shale lacks at their defaults.
fn compression_opts_text(z: &crate::table::builder::CompressionOpts, enabled: bool) -> String {
    format!(
        "{{checksum={};max_dict_buffer_bytes={};enabled={enabled};max_dict_bytes={};\
         max_compressed_bytes_per_kb={};parallel_threads={};zstd_max_train_bytes={};level={};\
         use_zstd_dict_trainer={};strategy={};window_bits={};}}",
        z.checksum,
        z.max_dict_buffer_bytes,
        z.max_dict_bytes,
        z.max_compressed_bytes_per_kb,
        z.parallel_threads,
        z.zstd_max_train_bytes,
        z.level,
        z.use_zstd_dict_trainer,
        z.strategy,
        z.window_bits
    )
}

fn double(v: f64) -> String {
    format!("{v:.6}")
}

fn name_or_null(n: Option<&str>) -> String {
    n.map_or("nullptr".to_string(), str::to_string)
}

/// A DB or CF row.
const fn opt(
    name: &'static str,
    section: Section,
    kind: Kind,
    mutable: Mutable,
    get: Option<fn(&Options) -> String>,
    set: Option<OptsSetter>,
) -> OptionRow {
    OptionRow { name, section, kind, mutable, access: Access::Opts { get, set } }
}

/// A row of an option RocksDB 11.8.1 marks deprecated (`OptionVerificationType::kDeprecated`):
/// `OptionTypeInfo::Parse` returns OK for any text without reading it and `Serialize`
/// skips it, so the row accepts any value, changes nothing and is never written.
const fn deprecated(name: &'static str, section: Section, kind: Kind, mutable: Mutable) -> OptionRow {
    opt(name, section, kind, mutable, None, Some(|_, _, _| Ok(true)))
}

/// A block-based table row.
const fn tbl(
    name: &'static str,
    kind: Kind,
    get: Option<fn(&BlockBasedOptions) -> String>,
    set: fn(&mut BlockBasedOptions, &str, &str) -> Result<bool>,
) -> OptionRow {
    OptionRow {
        name,
        section: Section::Table,
        kind,
        mutable: Mutable::NotBuilt,
        access: Access::Table { get, set },
    }
}

use Kind::{Bool, Double as Dbl, Enum, Function, Int, String as Str, Struct};
use Mutable::{No, Yes};
use Section::{Cf, Db};

/// Every option Shale applies or writes, by section (DB options, then CF, then table).
pub(crate) static ROWS: &[OptionRow] = &[
    // ---- DBOptions ----
    opt(
        "create_if_missing",
        Db,
        Bool,
        No,
        Some(|o| o.create_if_missing.to_string()),
        Some(|o, n, v| {
            o.create_if_missing(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "create_missing_column_families",
        Db,
        Bool,
        No,
        Some(|o| o.create_missing_column_families.to_string()),
        Some(|o, n, v| {
            o.create_missing_column_families(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "error_if_exists",
        Db,
        Bool,
        No,
        Some(|o| o.error_if_exists.to_string()),
        Some(|o, n, v| {
            o.set_error_if_exists(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "paranoid_checks",
        Db,
        Bool,
        No,
        Some(|o| o.paranoid_checks.to_string()),
        Some(|o, n, v| {
            o.set_paranoid_checks(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "max_open_files",
        Db,
        Int,
        Yes,
        Some(|o| o.max_open_files.to_string()),
        Some(|o, n, v| {
            o.set_max_open_files(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "max_background_jobs",
        Db,
        Int,
        Yes,
        Some(|o| o.max_background_jobs.to_string()),
        Some(|o, n, v| {
            o.set_max_background_jobs(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "max_background_compactions",
        Db,
        Int,
        Yes,
        Some(|o| o.max_background_compactions.to_string()),
        Some(|o, n, v| {
            o.max_background_compactions = number(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "max_background_flushes",
        Db,
        Int,
        Yes,
        Some(|o| o.max_background_flushes.to_string()),
        Some(|o, n, v| {
            o.max_background_flushes = number(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "use_fsync",
        Db,
        Bool,
        No,
        Some(|o| o.use_fsync.to_string()),
        Some(|o, n, v| {
            o.set_use_fsync(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "wal_recovery_mode",
        Db,
        Enum,
        No,
        Some(|o| name_of(enum_names::WAL_RECOVERY, o.wal_recovery_mode).to_string()),
        Some(|o, n, v| {
            o.wal_recovery_mode = parse_enum(enum_names::WAL_RECOVERY, n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "max_manifest_file_size",
        Db,
        Int,
        Yes,
        Some(|o| o.max_manifest_file_size.to_string()),
        Some(|o, n, v| {
            o.set_max_manifest_file_size(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "keep_log_file_num",
        Db,
        Int,
        No,
        Some(|o| o.keep_log_file_num.to_string()),
        Some(|o, n, v| {
            o.set_keep_log_file_num(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "max_bgerror_resume_count",
        Db,
        Int,
        No,
        Some(|o| o.max_bgerror_resume_count.to_string()),
        Some(|o, n, v| {
            o.set_max_bgerror_resume_count(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "bgerror_resume_retry_interval",
        Db,
        Int,
        No,
        Some(|o| o.bgerror_resume_retry_interval.to_string()),
        Some(|o, n, v| {
            o.set_bgerror_resume_retry_interval(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "stats_dump_period_sec",
        Db,
        Int,
        Yes,
        Some(|o| o.stats_dump_period_sec.to_string()),
        Some(|o, n, v| {
            o.set_stats_dump_period_sec(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "stats_persist_period_sec",
        Db,
        Int,
        Yes,
        Some(|o| o.stats_persist_period_sec.to_string()),
        Some(|o, n, v| {
            o.set_stats_persist_period_sec(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "stats_history_buffer_size",
        Db,
        Int,
        Yes,
        Some(|o| o.stats_history_buffer_size.to_string()),
        Some(|o, n, v| {
            o.set_stats_history_buffer_size(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "persist_stats_to_disk",
        Db,
        Bool,
        No,
        Some(|o| o.persist_stats_to_disk.to_string()),
        Some(|o, n, v| {
            o.set_persist_stats_to_disk(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "delayed_write_rate",
        Db,
        Int,
        Yes,
        Some(|o| o.delayed_write_rate().to_string()),
        Some(|o, n, v| {
            o.set_delayed_write_rate(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "db_write_buffer_size",
        Db,
        Int,
        No,
        Some(|o| o.db_write_buffer_size.to_string()),
        Some(|o, n, v| {
            o.set_db_write_buffer_size(number(n, v)?);
            Ok(true)
        }),
    ),
    // A TransactionDB's WAL holds two-phase-commit records; RocksDB's tools (ldb) read this
    // to recover it.
    opt(
        "allow_2pc",
        Db,
        Bool,
        No,
        Some(|o| o.allow_2pc.to_string()),
        Some(|o, n, v| {
            o.allow_2pc = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "manual_wal_flush",
        Db,
        Bool,
        No,
        Some(|o| o.manual_wal_flush.to_string()),
        Some(|o, n, v| {
            o.set_manual_wal_flush(boolean(n, v)?);
            Ok(true)
        }),
    ),
    // Written as RocksDB's SanitizeOptions leaves it: false with `allow_2pc`.
    opt(
        "avoid_flush_during_recovery",
        Db,
        Bool,
        No,
        Some(|o| (o.avoid_flush_during_recovery && !o.allow_2pc).to_string()),
        Some(|o, n, v| {
            o.set_avoid_flush_during_recovery(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "avoid_flush_during_shutdown",
        Db,
        Bool,
        Yes,
        Some(|o| o.avoid_flush_during_shutdown.to_string()),
        Some(|o, n, v| {
            o.set_avoid_flush_during_shutdown(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "write_identity_file",
        Db,
        Bool,
        No,
        Some(|o| o.write_identity_file.to_string()),
        Some(|o, n, v| {
            o.set_write_identity_file(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "db_host_id",
        Db,
        Str,
        No,
        Some(|o| crate::options_file::escape_option_string(&o.db_host_id)),
        Some(|o, _, v| {
            o.set_db_host_id(&crate::options_file::unescape_option_string(v));
            Ok(true)
        }),
    ),
    opt(
        "log_readahead_size",
        Db,
        Int,
        No,
        Some(|o| o.log_readahead_size.to_string()),
        Some(|o, n, v| {
            o.set_log_readahead_size(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "max_write_batch_group_size_bytes",
        Db,
        Int,
        No,
        Some(|o| o.max_write_batch_group_size_bytes.to_string()),
        Some(|o, n, v| {
            o.set_max_write_batch_group_size_bytes(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "wal_compression",
        Db,
        Enum,
        No,
        Some(|o| {
            let zstd = o.wal_compression == crate::table::compression::CompressionType::Zstd;
            (if zstd { "kZSTD" } else { "kNoCompression" }).to_string()
        }),
        Some(|o, n, v| {
            // RocksDB parses any compression type and its SanitizeOptions turns one without
            // a streaming compressor (every one but ZSTD) into none ("wal_compression is
            // disabled since only zstd is supported").
            match compression(n, v)? {
                DBCompressionType::Zstd => o.set_wal_compression_type(DBCompressionType::Zstd),
                _ => o.set_wal_compression_type(DBCompressionType::None),
            }
            Ok(true)
        }),
    ),
    opt(
        "wal_bytes_per_sync",
        Db,
        Int,
        Yes,
        Some(|o| o.wal_bytes_per_sync.to_string()),
        Some(|o, n, v| {
            o.set_wal_bytes_per_sync(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "bytes_per_sync",
        Db,
        Int,
        Yes,
        Some(|o| o.sanitized_bytes_per_sync().to_string()),
        Some(|o, n, v| {
            o.set_bytes_per_sync(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "writable_file_max_buffer_size",
        Db,
        Int,
        Yes,
        Some(|o| o.writable_file_max_buffer_size.to_string()),
        Some(|o, n, v| {
            o.set_writable_file_max_buffer_size(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "dump_malloc_stats",
        Db,
        Bool,
        No,
        Some(|o| o.dump_malloc_stats.to_string()),
        Some(|o, n, v| {
            o.set_dump_malloc_stats(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "unordered_write",
        Db,
        Bool,
        No,
        Some(|o| o.unordered_write.to_string()),
        Some(|o, n, v| {
            o.set_unordered_write(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "allow_concurrent_memtable_write",
        Db,
        Bool,
        No,
        Some(|o| o.allow_concurrent_memtable_write.to_string()),
        Some(|o, n, v| {
            o.set_allow_concurrent_memtable_write(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "enable_pipelined_write",
        Db,
        Bool,
        No,
        Some(|o| o.enable_pipelined_write.to_string()),
        Some(|o, n, v| {
            o.set_enable_pipelined_write(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "two_write_queues",
        Db,
        Bool,
        No,
        Some(|o| o.two_write_queues.to_string()),
        Some(|o, n, v| {
            o.two_write_queues = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "enable_write_thread_adaptive_yield",
        Db,
        Bool,
        No,
        Some(|o| o.enable_write_thread_adaptive_yield.to_string()),
        Some(|o, n, v| {
            o.set_enable_write_thread_adaptive_yield(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "write_thread_max_yield_usec",
        Db,
        Int,
        No,
        Some(|o| o.write_thread_max_yield_usec.to_string()),
        Some(|o, n, v| {
            o.set_write_thread_max_yield_usec(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "write_thread_slow_yield_usec",
        Db,
        Int,
        No,
        Some(|o| o.write_thread_slow_yield_usec.to_string()),
        Some(|o, n, v| {
            o.set_write_thread_slow_yield_usec(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "compaction_readahead_size",
        Db,
        Int,
        Yes,
        Some(|o| o.compaction_readahead_size.to_string()),
        Some(|o, n, v| {
            o.set_compaction_readahead_size(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "table_cache_numshardbits",
        Db,
        Int,
        No,
        Some(|o| o.table_cache_numshardbits.to_string()),
        Some(|o, n, v| {
            o.set_table_cache_num_shard_bits(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "write_dbid_to_manifest",
        Db,
        Bool,
        No,
        Some(|o| o.write_dbid_to_manifest.to_string()),
        Some(|o, n, v| {
            o.set_write_dbid_to_manifest(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "track_and_verify_wals_in_manifest",
        Db,
        Bool,
        No,
        Some(|o| o.track_and_verify_wals_in_manifest.to_string()),
        Some(|o, n, v| {
            o.set_track_and_verify_wals_in_manifest(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "max_total_wal_size",
        Db,
        Int,
        Yes,
        Some(|o| o.max_total_wal_size.to_string()),
        Some(|o, n, v| {
            o.set_max_total_wal_size(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "max_subcompactions",
        Db,
        Int,
        Yes,
        Some(|o| o.max_subcompactions.to_string()),
        Some(|o, n, v| {
            o.set_max_subcompactions(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "use_direct_reads",
        Db,
        Bool,
        No,
        Some(|o| o.use_direct_reads.to_string()),
        Some(|o, n, v| {
            o.set_use_direct_reads(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "use_direct_io_for_flush_and_compaction",
        Db,
        Bool,
        No,
        Some(|o| o.use_direct_io_for_flush_and_compaction.to_string()),
        Some(|o, n, v| {
            o.set_use_direct_io_for_flush_and_compaction(boolean(n, v)?);
            Ok(true)
        }),
    ),
    // Deprecated in RocksDB 11.8.1 (parsed, then ignored: a failure to persist the OPTIONS
    // file always fails the call, as in Shale); RocksDB 8.x-10.x files say true. Not written.
    opt(
        "fail_if_options_file_error",
        Db,
        Bool,
        No,
        None,
        Some(|_, n, v| {
            boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "atomic_flush",
        Db,
        Bool,
        No,
        Some(|o| o.atomic_flush.to_string()),
        Some(|o, n, v| {
            o.set_atomic_flush(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "avoid_unnecessary_blocking_io",
        Db,
        Bool,
        No,
        Some(|o| o.avoid_unnecessary_blocking_io.to_string()),
        Some(|o, n, v| {
            o.set_avoid_unnecessary_blocking_io(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "WAL_ttl_seconds",
        Db,
        Int,
        No,
        Some(|o| o.wal_ttl_seconds.to_string()),
        Some(|o, n, v| {
            o.set_wal_ttl_seconds(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "WAL_size_limit_MB",
        Db,
        Int,
        No,
        Some(|o| o.wal_size_limit_mb.to_string()),
        Some(|o, n, v| {
            o.set_wal_size_limit_mb(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "max_log_file_size",
        Db,
        Int,
        No,
        Some(|o| o.max_log_file_size.to_string()),
        Some(|o, n, v| {
            o.set_max_log_file_size(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "log_file_time_to_roll",
        Db,
        Int,
        No,
        Some(|o| o.log_file_time_to_roll.to_string()),
        Some(|o, n, v| {
            o.set_log_file_time_to_roll(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "recycle_log_file_num",
        Db,
        Int,
        No,
        Some(|o| o.sanitized_recycle_log_file_num().to_string()),
        Some(|o, n, v| {
            o.set_recycle_log_file_num(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "skip_stats_update_on_db_open",
        Db,
        Bool,
        No,
        Some(|o| o.dbmisc.skip_stats_update_on_db_open.to_string()),
        Some(|o, n, v| {
            o.set_skip_stats_update_on_db_open(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "advise_random_on_open",
        Db,
        Bool,
        No,
        Some(|o| o.advise_random_on_open.to_string()),
        Some(|o, n, v| {
            o.set_advise_random_on_open(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "is_fd_close_on_exec",
        Db,
        Bool,
        No,
        Some(|o| o.is_fd_close_on_exec.to_string()),
        Some(|o, n, v| {
            o.set_is_fd_close_on_exec(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "allow_mmap_reads",
        Db,
        Bool,
        No,
        Some(|o| o.allow_mmap_reads.to_string()),
        Some(|o, n, v| {
            o.set_allow_mmap_reads(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "allow_mmap_writes",
        Db,
        Bool,
        No,
        Some(|o| o.allow_mmap_writes.to_string()),
        Some(|o, n, v| {
            o.set_allow_mmap_writes(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "manifest_preallocation_size",
        Db,
        Int,
        Yes,
        Some(|o| o.manifest_preallocation_size.to_string()),
        Some(|o, n, v| {
            o.set_manifest_preallocation_size(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "delete_obsolete_files_period_micros",
        Db,
        Int,
        Yes,
        Some(|o| o.delete_obsolete_files_period_micros.to_string()),
        Some(|o, n, v| {
            o.set_delete_obsolete_files_period_micros(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "max_file_opening_threads",
        Db,
        Int,
        No,
        Some(|o| o.max_file_opening_threads.to_string()),
        Some(|o, n, v| {
            o.set_max_file_opening_threads(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "use_adaptive_mutex",
        Db,
        Bool,
        No,
        Some(|o| o.use_adaptive_mutex.to_string()),
        Some(|o, n, v| {
            o.set_use_adaptive_mutex(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "allow_ingest_behind",
        Db,
        Bool,
        No,
        Some(|o| o.allow_ingest_behind.to_string()),
        Some(|o, n, v| {
            o.set_allow_ingest_behind(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "cf_allow_ingest_behind",
        Cf,
        Bool,
        No,
        Some(|o| o.cf_allow_ingest_behind.to_string()),
        Some(|o, n, v| {
            o.set_cf_allow_ingest_behind(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "info_log_level",
        Db,
        Enum,
        No,
        Some(|o| enum_names::name_of(enum_names::INFO_LOG_LEVEL, o.info_log_level).to_string()),
        Some(|o, n, v| {
            o.set_log_level(parse_enum(enum_names::INFO_LOG_LEVEL, n, v)?);
            Ok(true)
        }),
    ),
    // Read, not written: RocksDB 11.8.1's OPTIONS file has no `wal_dir` line.
    opt(
        "wal_dir",
        Db,
        Str,
        No,
        None,
        Some(|o, _, v| {
            if !v.is_empty() {
                o.set_wal_dir(crate::options_file::unescape_option_string(v));
            }
            Ok(true)
        }),
    ),
    opt(
        "db_log_dir",
        Db,
        Str,
        No,
        None,
        Some(|o, _, v| {
            if !v.is_empty() {
                o.set_db_log_dir(crate::options_file::unescape_option_string(v));
            }
            Ok(true)
        }),
    ),
    // ---- helper `rows` (issue 33): DB options that had no row ----
    // Files reserve space ahead of their writes (`shale_base::fs::Preallocating`).
    opt(
        "allow_fallocate",
        Db,
        Bool,
        No,
        Some(|o| o.allow_fallocate.to_string()),
        Some(|o, n, v| {
            o.set_allow_fallocate(boolean(n, v)?);
            Ok(true)
        }),
    ),
    // RocksDB's thread-status registry has no reader in rust-rocksdb's API, nor in Shale
    // (`Options::set_enable_thread_tracking`).
    opt(
        "enable_thread_tracking",
        Db,
        Bool,
        No,
        Some(|o| o.enable_thread_tracking.to_string()),
        Some(|o, n, v| {
            o.set_enable_thread_tracking(boolean(n, v)?);
            Ok(true)
        }),
    ),
    // ---- end of helper `rows` DB block ----
    // ---- helper `dbwal` DB block (`options_dbwal.rs` says what each does) ----
    opt(
        "track_and_verify_wals",
        Db,
        Bool,
        No,
        Some(|o| o.dbwal.track_and_verify_wals.to_string()),
        Some(|o, n, v| {
            o.dbwal.track_and_verify_wals = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "verify_sst_unique_id_in_manifest",
        Db,
        Bool,
        No,
        Some(|o| o.dbwal.verify_sst_unique_id_in_manifest.to_string()),
        Some(|o, n, v| {
            o.dbwal.verify_sst_unique_id_in_manifest = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "max_manifest_space_amp_pct",
        Db,
        Int,
        Yes,
        Some(|o| o.dbwal.max_manifest_space_amp_pct.to_string()),
        Some(|o, n, v| {
            o.dbwal.max_manifest_space_amp_pct = number(n, v)?;
            Ok(true)
        }),
    ),
    // ---- end of helper `dbwal` DB block ----
    // ---- helper `fchk` DB block (`options_dbfile.rs` says what each does) ----
    // RocksDB's built-in factory by name (kByNameAllowFromNull); `nullptr` or empty: none;
    // another name is none too (its registry holds no other, and an unsupported name is
    // accepted under ConfigOptions' default `ignore_unsupported_options`).
    opt(
        "file_checksum_gen_factory",
        Db,
        Function,
        No,
        Some(|o| {
            if o.dbfile.file_checksum_crc32c {
                shale_format::file_checksum::CRC32C_FACTORY_NAME
            } else {
                "nullptr"
            }
            .to_string()
        }),
        Some(|o, _, v| {
            o.dbfile.file_checksum_crc32c = v.trim() == shale_format::file_checksum::CRC32C_FACTORY_NAME;
            Ok(true)
        }),
    ),
    opt(
        "use_direct_io_for_compaction_reads",
        Db,
        Bool,
        No,
        Some(|o| o.dbfile.use_direct_io_for_compaction_reads.to_string()),
        Some(|o, n, v| {
            o.dbfile.use_direct_io_for_compaction_reads = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "enforce_write_buffer_manager_during_recovery",
        Db,
        Bool,
        No,
        Some(|o| o.dbfile.enforce_write_buffer_manager_during_recovery.to_string()),
        Some(|o, n, v| {
            o.dbfile.enforce_write_buffer_manager_during_recovery = boolean(n, v)?;
            Ok(true)
        }),
    ),
    // ---- end of helper `fchk` DB block ----
    // ---- helper `mfst` DB block (`options_mfst.rs` says what each does) ----
    opt(
        "verify_manifest_content_on_close",
        Db,
        Bool,
        Yes,
        Some(|o| o.mfst.verify_manifest_content_on_close.to_string()),
        Some(|o, n, v| {
            o.mfst.verify_manifest_content_on_close = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "reuse_manifest_on_open",
        Db,
        Bool,
        No,
        Some(|o| o.mfst.reuse_manifest_on_open.to_string()),
        Some(|o, n, v| {
            o.mfst.reuse_manifest_on_open = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "async_wal_precreate",
        Db,
        Bool,
        No,
        // RocksDB's SanitizeOptions turns it off with WAL recycling.
        Some(|o| (o.mfst.async_wal_precreate && o.sanitized_recycle_log_file_num() == 0).to_string()),
        Some(|o, n, v| {
            o.mfst.async_wal_precreate = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "background_close_inactive_wals",
        Db,
        Bool,
        No,
        Some(|o| o.mfst.background_close_inactive_wals.to_string()),
        Some(|o, n, v| {
            o.mfst.background_close_inactive_wals = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "optimize_manifest_for_recovery",
        Db,
        Bool,
        Yes,
        Some(|o| o.mfst.optimize_manifest_for_recovery.to_string()),
        Some(|o, n, v| {
            o.mfst.optimize_manifest_for_recovery = boolean(n, v)?;
            Ok(true)
        }),
    ),
    // ---- end of helper `mfst` DB block ----
    // Deprecated in RocksDB 11.8.1 (`OptionVerificationType::kDeprecated` in its
    // `options/db_options.cc`): its parser accepts any value and changes nothing, and its
    // OPTIONS files and LOG leave them out; so do these rows (`deprecated`).
    deprecated("allow_os_buffer", Db, Bool, Yes),
    deprecated("base_background_compactions", Db, Int, Yes),
    deprecated("use_direct_writes", Db, Bool, No),
    deprecated("disableDataSync", Db, Bool, No),
    deprecated("experimental_allow_mempurge", Db, Bool, No),
    deprecated("experimental_mempurge_policy", Db, Str, No),
    deprecated("skip_log_error_on_recovery", Db, Bool, No),
    deprecated("skip_checking_sst_file_sizes_on_db_open", Db, Bool, No),
    deprecated("new_table_reader_for_compaction_inputs", Db, Bool, No),
    deprecated("random_access_max_buffer_size", Db, Int, No),
    deprecated("preserve_deletes", Db, Bool, No),
    deprecated("seq_per_batch", Db, Bool, No),
    // ---- helper `dbopt` DB block (`options_dbopt.rs` says what each does) ----
    deprecated("disable_data_sync", Db, Bool, No),
    deprecated("concurrent_prepare", Db, Bool, No),
    deprecated("access_hint_on_compaction_start", Db, Enum, No),
    deprecated("rate_limiter", Db, Str, No),
    // RocksDB parses it as a generic rate limiter and never writes it (kDontSerialize).
    opt(
        "rate_limiter_bytes_per_sec",
        Db,
        Int,
        No,
        None,
        Some(|o, n, v| {
            o.set_ratelimiter(number(n, v)?, 100 * 1000, 10);
            Ok(true)
        }),
    ),
    opt(
        "enforce_single_del_contracts",
        Db,
        Bool,
        No,
        Some(|o| o.dbopt.enforce_single_del_contracts.to_string()),
        Some(|o, n, v| {
            o.dbopt.enforce_single_del_contracts = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "best_efforts_recovery",
        Db,
        Bool,
        No,
        Some(|o| o.dbopt.best_efforts_recovery.to_string()),
        Some(|o, n, v| {
            o.dbopt.best_efforts_recovery = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "prefix_seek_opt_in_only",
        Db,
        Bool,
        No,
        Some(|o| o.dbopt.prefix_seek_opt_in_only.to_string()),
        Some(|o, n, v| {
            o.dbopt.prefix_seek_opt_in_only = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "strict_bytes_per_sync",
        Db,
        Bool,
        Yes,
        Some(|o| o.dbopt.strict_bytes_per_sync.to_string()),
        Some(|o, n, v| {
            o.dbopt.strict_bytes_per_sync = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "flush_verify_memtable_count",
        Db,
        Bool,
        No,
        Some(|o| o.dbopt.flush_verify_memtable_count.to_string()),
        Some(|o, n, v| {
            o.dbopt.flush_verify_memtable_count = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "compaction_verify_record_count",
        Db,
        Bool,
        No,
        Some(|o| o.dbopt.compaction_verify_record_count.to_string()),
        Some(|o, n, v| {
            o.dbopt.compaction_verify_record_count = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "read_io_executor_threads",
        Db,
        Int,
        No,
        Some(|o| o.dbopt.read_io_executor_threads.to_string()),
        Some(|o, n, v| {
            o.dbopt.read_io_executor_threads = number(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "lowest_used_cache_tier",
        Db,
        Enum,
        No,
        Some(|o| o.dbopt.lowest_used_cache_tier.to_string()),
        Some(|o, n, v| {
            let tier =
                crate::options_dbopt::CACHE_TIERS.iter().find(|t| **t == v).ok_or_else(|| bad_value(n, v))?;
            o.dbopt.lowest_used_cache_tier = tier;
            Ok(true)
        }),
    ),
    opt(
        "follower_refresh_catchup_period_ms",
        Db,
        Int,
        No,
        Some(|o| o.dbopt.follower_refresh_catchup_period_ms.to_string()),
        Some(|o, n, v| {
            o.dbopt.follower_refresh_catchup_period_ms = number(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "follower_catchup_retry_count",
        Db,
        Int,
        No,
        Some(|o| o.dbopt.follower_catchup_retry_count.to_string()),
        Some(|o, n, v| {
            o.dbopt.follower_catchup_retry_count = number(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "follower_catchup_retry_wait_ms",
        Db,
        Int,
        No,
        Some(|o| o.dbopt.follower_catchup_retry_wait_ms.to_string()),
        Some(|o, n, v| {
            o.dbopt.follower_catchup_retry_wait_ms = number(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "metadata_write_temperature",
        Db,
        Enum,
        No,
        Some(|o| name_of(enum_names::TEMPERATURE, o.dbopt.metadata_write_temperature).to_string()),
        Some(|o, n, v| {
            o.dbopt.metadata_write_temperature = parse_enum(enum_names::TEMPERATURE, n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "wal_write_temperature",
        Db,
        Enum,
        No,
        Some(|o| name_of(enum_names::TEMPERATURE, o.dbopt.wal_write_temperature).to_string()),
        Some(|o, n, v| {
            o.dbopt.wal_write_temperature = parse_enum(enum_names::TEMPERATURE, n, v)?;
            Ok(true)
        }),
    ),
    // ---- end of helper `dbopt` DB block ----
    // ---- helper `dbmisc` DB block (`options_dbmisc.rs` says what each does) ----
    opt(
        "allow_data_in_errors",
        Db,
        Bool,
        No,
        Some(|o| o.dbmisc.allow_data_in_errors.to_string()),
        Some(|o, n, v| {
            o.dbmisc.allow_data_in_errors = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "daily_offpeak_time_utc",
        Db,
        Str,
        Yes,
        // RocksDB writes a string option escaped (`23\:30-04\:00`).
        Some(|o| crate::options_file::escape_option_string(&o.dbmisc.daily_offpeak_time_utc)),
        Some(|o, _, v| {
            o.dbmisc.daily_offpeak_time_utc = crate::options_file::unescape_option_string(v);
            Ok(true)
        }),
    ),
    // The object-registry names (`options_dbmisc.rs` says what RocksDB does with each):
    // parsed as RocksDB's `CreateFromString` with its default `ignore_unsupported_options`,
    // never written by these rows (`env`, `statistics`: RocksDB's kDontSerialize;
    // `listeners` has ids to write only when a registered listener was named, and RocksDB
    // registers none; `wal_filter=nullptr` is the OPTIONS file's default line).
    opt("env", Db, Function, No, None, Some(|o, _, v| crate::options_dbmisc::set_env(o, v))),
    opt("statistics", Db, Function, No, None, Some(|o, _, v| crate::options_dbmisc::set_statistics(o, v))),
    opt("listeners", Db, Function, No, None, Some(|o, _, v| crate::options_dbmisc::set_listeners(o, v))),
    opt("wal_filter", Db, Function, No, None, Some(|o, _, v| crate::options_dbmisc::set_wal_filter(o, v))),
    opt(
        "max_compaction_trigger_wakeup_seconds",
        Db,
        Int,
        Yes,
        Some(|o| o.dbmisc.max_compaction_trigger_wakeup_seconds.to_string()),
        Some(|o, n, v| {
            o.dbmisc.max_compaction_trigger_wakeup_seconds = number(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "fast_sst_open",
        Db,
        Bool,
        Yes,
        Some(|o| o.dbmisc.fast_sst_open.to_string()),
        Some(|o, n, v| {
            o.dbmisc.fast_sst_open = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "open_files_async",
        Db,
        Bool,
        No,
        Some(|o| o.dbmisc.open_files_async.to_string()),
        Some(|o, n, v| {
            o.dbmisc.open_files_async = boolean(n, v)?;
            Ok(true)
        }),
    ),
    // ---- end of helper `dbmisc` DB block ----
    // ---- CFOptions ----
    opt("comparator", Cf, Function, No, Some(|c| c.comparator.name().to_string()), None),
    opt(
        "merge_operator",
        Cf,
        Function,
        No,
        Some(|c| name_or_null(c.merge_operator.as_ref().map(|m| m.options_value()))),
        None,
    ),
    opt(
        "compaction_filter",
        Cf,
        Function,
        No,
        Some(|c| name_or_null(c.compaction_filter.as_ref().map(|f| f.name()))),
        None,
    ),
    opt(
        "compaction_filter_factory",
        Cf,
        Function,
        No,
        Some(|c| name_or_null(c.compaction_filter_factory.as_ref().map(|f| f.name()))),
        None,
    ),
    opt(
        "write_buffer_size",
        Cf,
        Int,
        Yes,
        Some(|c| c.write_buffer_size.to_string()),
        // 0 parses, as RocksDB's size_t: the open raises it to 64 KiB (`Options::sanitize_cf`),
        // SetOptions takes it as given.
        Some(|o, n, v| {
            o.write_buffer_size = number(n, v)?;
            Ok(true)
        }),
    ),
    // As RocksDB sanitizes it (the default from the write buffer size: a fixed 1 MiB would
    // make a RocksDB that loads the file with a small write buffer flush each memtable at its
    // creation; 7.8.3's debug build asserts on it). Memtables made from then on take blocks
    // of a new size.
    opt(
        "arena_block_size",
        Cf,
        Int,
        Yes,
        Some(|c| c.sanitized_arena_block_size().to_string()),
        Some(|o, n, v| {
            o.set_arena_block_size(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "max_write_buffer_number",
        Cf,
        Int,
        Yes,
        Some(|c| c.max_write_buffer_number.to_string()),
        Some(|o, n, v| {
            o.set_max_write_buffer_number(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "min_write_buffer_number_to_merge",
        Cf,
        Int,
        No,
        Some(|c| c.flush_merge_min().to_string()),
        Some(|o, n, v| {
            o.set_min_write_buffer_number_to_merge(number(n, v)?);
            Ok(true)
        }),
    ),
    // Taken by the next memtable, as RocksDB's.
    opt(
        "max_successive_merges",
        Cf,
        Int,
        Yes,
        Some(|c| c.max_successive_merges.to_string()),
        Some(|o, n, v| {
            o.max_successive_merges = number(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "num_levels",
        Cf,
        Int,
        No,
        Some(|c| c.num_levels.to_string()),
        Some(|o, n, v| {
            o.set_num_levels(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "level0_file_num_compaction_trigger",
        Cf,
        Int,
        Yes,
        Some(|c| c.level0_file_num_compaction_trigger.to_string()),
        Some(|o, n, v| {
            o.level0_file_num_compaction_trigger = number(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "level0_slowdown_writes_trigger",
        Cf,
        Int,
        Yes,
        Some(|c| c.level0_slowdown_writes_trigger.to_string()),
        Some(|o, n, v| {
            o.level0_slowdown_writes_trigger = number(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "level0_stop_writes_trigger",
        Cf,
        Int,
        Yes,
        Some(|c| c.level0_stop_writes_trigger.to_string()),
        Some(|o, n, v| {
            o.level0_stop_writes_trigger = number(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "target_file_size_base",
        Cf,
        Int,
        Yes,
        Some(|c| c.target_file_size_base.to_string()),
        // 0 parses, as RocksDB's uint64_t (each compaction output then ends after its first
        // key, as RocksDB's `CompactionOutputs::ShouldStopBefore`).
        Some(|o, n, v| {
            o.set_target_file_size_base(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "target_file_size_multiplier",
        Cf,
        Int,
        Yes,
        Some(|c| c.target_file_size_multiplier.to_string()),
        Some(|o, n, v| {
            o.set_target_file_size_multiplier(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "max_bytes_for_level_base",
        Cf,
        Int,
        Yes,
        Some(|c| c.max_bytes_for_level_base.to_string()),
        Some(|o, n, v| {
            o.set_max_bytes_for_level_base(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "max_bytes_for_level_multiplier",
        Cf,
        Dbl,
        Yes,
        Some(|c| double(c.max_bytes_for_level_multiplier)),
        // Any double parses, as RocksDB's; the open raises one of 0 or less to 1
        // (`Options::sanitize_cf`), SetOptions takes it as given.
        Some(|o, n, v| {
            o.set_max_bytes_for_level_multiplier(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "disable_auto_compactions",
        Cf,
        Bool,
        Yes,
        Some(|c| c.disable_auto_compactions.to_string()),
        Some(|o, n, v| {
            o.disable_auto_compactions = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "max_compaction_bytes",
        Cf,
        Int,
        Yes,
        Some(|c| c.max_compaction_bytes().to_string()),
        Some(|o, n, v| {
            o.set_max_compaction_bytes(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "soft_pending_compaction_bytes_limit",
        Cf,
        Int,
        Yes,
        Some(|c| c.soft_pending_compaction_bytes_limit.to_string()),
        Some(|o, n, v| {
            o.set_soft_pending_compaction_bytes_limit(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "hard_pending_compaction_bytes_limit",
        Cf,
        Int,
        Yes,
        Some(|c| c.hard_pending_compaction_bytes_limit.to_string()),
        Some(|o, n, v| {
            o.set_hard_pending_compaction_bytes_limit(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "paranoid_file_checks",
        Cf,
        Bool,
        Yes,
        Some(|c| c.paranoid_file_checks.to_string()),
        Some(|o, n, v| {
            o.paranoid_file_checks = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "report_bg_io_stats",
        Cf,
        Bool,
        Yes,
        Some(|c| c.report_bg_io_stats.to_string()),
        Some(|o, n, v| {
            o.report_bg_io_stats = boolean(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "compression",
        Cf,
        Enum,
        Yes,
        Some(|c| compression_name(c.compression).to_string()),
        Some(|o, n, v| {
            o.set_compression_type(compression(n, v)?);
            Ok(true)
        }),
    ),
    // Colon-separated codecs, as RocksDB writes a vector option (not written when empty).
    opt(
        "compression_per_level",
        Cf,
        Str,
        Yes,
        Some(|c| c.compression_per_level.iter().map(|&x| compression_name(x)).collect::<Vec<_>>().join(":")),
        Some(|o, n, v| {
            o.compression_per_level =
                v.split(':').filter(|x| !x.is_empty()).map(|x| compression(n, x)).collect::<Result<_>>()?;
            Ok(true)
        }),
    ),
    // kDisableCompressionOption: the bottommost level uses what the other levels do.
    opt(
        "bottommost_compression",
        Cf,
        Enum,
        Yes,
        Some(|c| c.bottommost_compression.map_or("kDisableCompressionOption", compression_name).to_string()),
        Some(|o, n, v| {
            o.bottommost_compression = match v {
                "kDisableCompressionOption" => None,
                _ => Some(compression(n, v)?),
            };
            Ok(true)
        }),
    ),
    opt(
        "bottommost_compression_opts",
        Cf,
        Struct,
        Yes,
        Some(|c| {
            compression_opts_text(&c.bottommost_compression_opts, c.bottommost_compression_opts_enabled)
        }),
        Some(|o, name, v| {
            let (b, enabled) = compression_opts_over(
                name,
                v,
                &o.bottommost_compression_opts,
                o.bottommost_compression_opts_enabled,
            )?;
            o.bottommost_compression_opts = b;
            o.bottommost_compression_opts_enabled = enabled;
            Ok(true)
        }),
    ),
    // RocksDB 11.8.1's fields, in its order; those Shale lacks at their defaults.
    opt(
        "compression_opts",
        Cf,
        Struct,
        // helper cfopt: mutable as RocksDB's; the fields named change, the others keep their
        // values (RocksDB parses a struct option over the value in force), and flushes and
        // compactions from then on compress with them (`CfConfig::compression_opts`).
        Yes,
        Some(|c| compression_opts_text(&c.compression_opts, false)),
        Some(|o, name, v| {
            let co = &o.compression_opts;
            let (mut window_bits, mut level, mut strategy, mut max_dict) =
                (co.window_bits, co.level, co.strategy, co.max_dict_bytes as i32);
            for (k, x) in struct_fields(name, v)? {
                match k {
                    "window_bits" => window_bits = number(k, x)?,
                    "level" => level = number(k, x)?,
                    "strategy" => strategy = number(k, x)?,
                    "max_dict_bytes" => max_dict = number(k, x)?,
                    "zstd_max_train_bytes" => o.set_zstd_max_train_bytes(number(k, x)?),
                    "parallel_threads" => o.set_compression_options_parallel_threads(number(k, x)?),
                    "max_dict_buffer_bytes" => o.compression_opts.max_dict_buffer_bytes = number(k, x)?,
                    "use_zstd_dict_trainer" => o.compression_opts.use_zstd_dict_trainer = boolean(k, x)?,
                    // Only bottommost_compression_opts reads `enabled`.
                    "enabled" => {
                        boolean(k, x)?;
                    }
                    // RocksDB 8+: ZSTD's frame checksum, and the largest compressed size
                    // per KiB a block is kept at.
                    "checksum" => o.compression_opts.checksum = boolean(k, x)?,
                    "max_compressed_bytes_per_kb" => {
                        o.compression_opts.max_compressed_bytes_per_kb = number(k, x)?
                    }
                    _ => {
                        return Err(Error::invalid_argument(format!(
                            "Unrecognized option: compression_opts.{k}"
                        )))
                    }
                }
            }
            o.set_compression_options(window_bits, level, strategy, max_dict);
            Ok(true)
        }),
    ),
    opt(
        "experimental_mempurge_threshold",
        Cf,
        Dbl,
        Yes,
        Some(|c| double(c.experimental_mempurge_threshold)),
        // Any double parses, as RocksDB's: MemPurge is on above 0 only.
        Some(|o, n, v| {
            o.experimental_mempurge_threshold = number(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "compaction_style",
        Cf,
        Enum,
        No,
        Some(|c| {
            if c.compaction_style_none {
                "kCompactionStyleNone".to_string()
            } else {
                name_of(enum_names::COMPACTION_STYLE, c.compaction_style).to_string()
            }
        }),
        // kCompactionStyleNone has no value of rust-rocksdb's DBCompactionStyle: the family
        // then compacts with RocksDB's NullCompactionPicker (nothing is ever picked).
        Some(|o, _, v| match (v, value_of(enum_names::COMPACTION_STYLE, v)) {
            (_, Some(s)) => {
                o.set_compaction_style(s);
                Ok(true)
            }
            ("kCompactionStyleNone", None) => {
                o.set_compaction_style(crate::DBCompactionStyle::Level);
                o.compaction_style_none = true;
                Ok(true)
            }
            _ => Ok(false),
        }),
    ),
    opt(
        "compaction_options_fifo",
        Cf,
        Struct,
        Yes,
        // RocksDB serializes the struct's fields in its map's order (libstdc++'s: the reverse
        // of their insertion) and the thresholds as `{{age=..;temperature=..;}:{...}}`.
        Some(|c| {
            format!(
                "{{use_kv_ratio_compaction={};max_data_files_size={};trivial_copy_buffer_size={};\
                 allow_trivial_copy_when_change_temperature={};file_temperature_age_thresholds={};\
                 allow_compaction={};age_for_warm={};max_table_files_size={};}}",
                c.fifo_use_kv_ratio_compaction,
                c.fifo_max_data_files_size,
                c.fifo_trivial_copy_buffer_size,
                c.fifo_trivial_copy,
                temperature_ages_text(&c.fifo_temperature_ages),
                c.fifo_allow_compaction,
                c.fifo_age_for_warm,
                c.fifo_max_table_files_size
            )
        }),
        Some(|o, name, v| {
            for (k, x) in struct_fields(name, v)? {
                match k {
                    "max_table_files_size" => o.fifo_max_table_files_size = number(k, x)?,
                    "allow_compaction" => o.fifo_allow_compaction = boolean(k, x)?,
                    // Deprecated in RocksDB 11.8.1 (`kDeprecated`): any text, no effect; the
                    // family's `ttl` is FIFO's age limit.
                    "ttl" => {}
                    // helper cfblob: deprecated in RocksDB 11.8.1, whose parser keeps the
                    // value (written back to the OPTIONS file) and whose code reads it nowhere.
                    "age_for_warm" => o.fifo_age_for_warm = number(k, x)?,
                    "max_data_files_size" => o.fifo_max_data_files_size = number(k, x)?,
                    "use_kv_ratio_compaction" => o.fifo_use_kv_ratio_compaction = boolean(k, x)?,
                    "allow_trivial_copy_when_change_temperature" => o.fifo_trivial_copy = boolean(k, x)?,
                    "trivial_copy_buffer_size" => o.fifo_trivial_copy_buffer_size = number(k, x)?,
                    "file_temperature_age_thresholds" => o.fifo_temperature_ages = temperature_ages(k, x)?,
                    _ => return Err(Error::invalid_argument(format!("Unrecognized option: {name}.{k}"))),
                }
            }
            Ok(true)
        }),
    ),
    opt(
        "compaction_options_universal",
        Cf,
        Struct,
        Yes,
        Some(|c| {
            let u = &c.universal;
            format!(
                "{{reduce_file_locking={};incremental={};compression_size_percent={};\
                 allow_trivial_move={};max_size_amplification_percent={};max_merge_width={};\
                 stop_style={};min_merge_width={};max_read_amp={};size_ratio={};}}",
                u.reduce_file_locking,
                u.incremental,
                u.compression_size_percent,
                u.allow_trivial_move,
                u.max_size_amplification_percent,
                u.max_merge_width,
                name_of(enum_names::STOP_STYLE, u.stop_style),
                u.min_merge_width,
                u.max_read_amp,
                u.size_ratio
            )
        }),
        Some(|o, name, v| {
            for (k, x) in struct_fields(name, v)? {
                let u = &mut o.universal;
                match k {
                    "size_ratio" => u.size_ratio = number(k, x)?,
                    "min_merge_width" => u.min_merge_width = number(k, x)?,
                    "max_merge_width" => u.max_merge_width = number(k, x)?,
                    "max_size_amplification_percent" => u.max_size_amplification_percent = number(k, x)?,
                    "compression_size_percent" => u.compression_size_percent = number(k, x)?,
                    // RocksDB 11's read-amplification target (`compaction/universal.rs`
                    // `max_files_for_read_amp`; checked by `Options::check_supported`).
                    "max_read_amp" => u.max_read_amp = number(k, x)?,
                    "stop_style" => u.stop_style = parse_enum(enum_names::STOP_STYLE, k, x)?,
                    // What a compaction handed to the BOTTOM pool holds while it waits
                    // (`shale-engine` `db/scheduler.rs`, `picker::intended_for_bottom`).
                    "reduce_file_locking" => u.reduce_file_locking = boolean(k, x)?,
                    // Disjoint inputs move unchanged (`compaction/universal.rs::pick_universal`).
                    "allow_trivial_move" => u.allow_trivial_move = boolean(k, x)?,
                    // RocksDB's EXPERIMENTAL incremental size-amplification compactions
                    // (`compaction/universal.rs` of shale-engine).
                    "incremental" => u.incremental = boolean(k, x)?,
                    _ => return Err(Error::invalid_argument(format!("Unrecognized option: {name}.{k}"))),
                }
            }
            Ok(true)
        }),
    ),
    // The ages as RocksDB sanitizes them (`Options::sanitized_ttl`, `age_compaction_seconds`);
    // universal compaction folds `ttl` into the periodic compaction, whose value is written,
    // and the file keeps `ttl` itself.
    opt(
        "ttl",
        Cf,
        Int,
        Yes,
        Some(|c| c.sanitized_ttl().to_string()),
        Some(|o, n, v| {
            o.ttl = number(n, v)?;
            Ok(true)
        }),
    ),
    // The engine's sequence-number-to-time mapping (`db/seqno_time.rs` of shale-engine).
    opt(
        "preserve_internal_time_seconds",
        Cf,
        Int,
        Yes,
        Some(|c| c.preserve_internal_time_seconds.to_string()),
        Some(|o, n, v| {
            o.preserve_internal_time_seconds = number(n, v)?;
            Ok(true)
        }),
    ),
    // Tiered storage (shale-engine `compaction/proximal.rs`): data younger than this many
    // seconds stays out of the last level (per-key placement into the level above it).
    opt(
        "preclude_last_level_data_seconds",
        Cf,
        Int,
        Yes,
        Some(|c| c.preclude_last_level_data_seconds.to_string()),
        Some(|o, n, v| {
            o.preclude_last_level_data_seconds = number(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "periodic_compaction_seconds",
        Cf,
        Int,
        Yes,
        Some(|c| c.age_compaction_seconds().1.to_string()),
        Some(|o, n, v| {
            o.periodic_compaction_seconds = number(n, v)?;
            Ok(true)
        }),
    ),
    // Read by each point read (whether to sample it) and by the picker at each pick, so
    // `set_options` takes effect at once.
    opt(
        "read_triggered_compaction_threshold",
        Cf,
        Dbl,
        Yes,
        Some(|c| double(c.read_triggered_compaction_threshold)),
        Some(|o, n, v| {
            o.read_triggered_compaction_threshold = number(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "level_compaction_dynamic_level_bytes",
        Cf,
        Bool,
        No,
        Some(|c| c.dynamic_level_bytes_in_force().to_string()),
        Some(|o, n, v| {
            o.set_level_compaction_dynamic_level_bytes(boolean(n, v)?);
            Ok(true)
        }),
    ),
    // helper cfblob (issue 33): mutable as RocksDB's. Memtables and tables made from then
    // on are built with the new extractor; a read compares it with each table's recorded
    // extractor (`Table::prefix_extractor_changed_for`) and each memtable's
    // (`MemTable::prefix_bloom_matches`) and consults their prefix filters only where they
    // agree (or an upper bound proves the seek stays within one prefix). RocksDB's built-in
    // extractors by name (`rocksdb.FixedPrefix.N`, `rocksdb.CappedPrefix.N`, `fixed:N`,
    // `capped:N`, `rocksdb.Noop`) or `nullptr`; another name is not applied.
    opt(
        "prefix_extractor",
        Cf,
        Function,
        Yes,
        Some(|c| name_or_null(c.prefix_extractor.as_ref().map(|t| t.name()))),
        Some(|o, _, v| {
            o.prefix_extractor = match v {
                "nullptr" | "" => None,
                _ => match crate::SliceTransform::from_name(v) {
                    Some(t) => Some(std::sync::Arc::new(t)),
                    None => return Ok(false),
                },
            };
            Ok(true)
        }),
    ),
    opt(
        "memtable_prefix_bloom_size_ratio",
        Cf,
        Dbl,
        // helper cfopt: memtables made from then on take it (`MemTable::with_bloom_of`
        // reads the family's config at each switch), as RocksDB's memtable captures it.
        Yes,
        Some(|c| double(c.memtable_prefix_bloom_ratio)),
        Some(|o, n, v| {
            o.set_memtable_prefix_bloom_ratio(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "memtable_whole_key_filtering",
        Cf,
        Bool,
        // helper cfopt: memtables made from then on take it (`MemTable::with_bloom_of`
        // reads the family's config at each switch), as RocksDB's memtable captures it.
        Yes,
        Some(|c| c.memtable_whole_key_filtering.to_string()),
        Some(|o, n, v| {
            o.set_memtable_whole_key_filtering(boolean(n, v)?);
            Ok(true)
        }),
    ),
    // The skip list, the hash memtables and the vector, as RocksDB rebuilds these built-in
    // factories from their ids; a factory its registry cannot build leaves the value as it was.
    opt(
        "memtable_factory",
        Cf,
        Struct,
        No,
        // As RocksDB's SanitizeCfOptions leaves it (VectorRepFactory with
        // `disallow_memtable_writes`).
        Some(|c| crate::options::MemtableRep::sanitized(c).options_value(c.prefix_extractor.is_some())),
        Some(|o, n, v| {
            // A value RocksDB's registry cannot build is NotSupported there, which
            // `ignore_unsupported_options` (true in LoadLatestOptions and
            // GetOptionsFromString) turns into OK with the factory left as it was.
            if let Some(rep) = crate::options::MemtableRep::parse(n, v)? {
                o.memtable_rep = rep;
            }
            Ok(true)
        }),
    ),
    // RocksDB's TableFactoryParseFn through TableFactory::CreateFromString: a new factory
    // of the name given, with RocksDB's defaults and the fields named (`{id=..;..}`); tables
    // written from then on are of that format (`set_options`: `db/dyn_options.rs`).
    opt(
        "table_factory",
        Cf,
        Function,
        Yes,
        Some(|c| c.table_format.factory_name().to_string()),
        Some(|o, _, v| {
            apply_table_factory_value(o, v)?;
            Ok(true)
        }),
    ),
    // BlobDB's rows: each flush and compaction reads them when it starts
    // (`db/flush.rs::blob_write_options`, `db/compact.rs`), so `set_options` acts from the
    // next one, as RocksDB's mutable options.
    opt(
        "enable_blob_files",
        Cf,
        Bool,
        Yes,
        Some(|c| c.blob.enable_blob_files.to_string()),
        Some(|o, n, v| {
            o.set_enable_blob_files(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "min_blob_size",
        Cf,
        Int,
        Yes,
        Some(|c| c.blob.min_blob_size.to_string()),
        Some(|o, n, v| {
            o.set_min_blob_size(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "blob_file_size",
        Cf,
        Int,
        Yes,
        Some(|c| c.blob.blob_file_size.to_string()),
        Some(|o, n, v| {
            o.set_blob_file_size(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "blob_compression_type",
        Cf,
        Enum,
        Yes,
        Some(|c| compression_name(c.blob.compression).to_string()),
        Some(|o, n, v| {
            o.set_blob_compression_type(compression(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "enable_blob_garbage_collection",
        Cf,
        Bool,
        Yes,
        Some(|c| c.blob.enable_gc.to_string()),
        Some(|o, n, v| {
            o.set_enable_blob_gc(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "blob_garbage_collection_age_cutoff",
        Cf,
        Dbl,
        Yes,
        Some(|c| double(c.blob.gc_age_cutoff)),
        Some(|o, n, v| {
            o.set_blob_gc_age_cutoff(number(n, v)?);
            Ok(true)
        }),
    ),
    // Read by the picker at each pick, so `set_options` takes effect at once.
    opt(
        "blob_garbage_collection_force_threshold",
        Cf,
        Dbl,
        Yes,
        Some(|c| double(c.blob.gc_force_threshold)),
        Some(|o, n, v| {
            o.set_blob_gc_force_threshold(number(n, v)?);
            Ok(true)
        }),
    ),
    // Read by each flush (`db/flush.rs::write_level0_table_of`).
    opt(
        "prepopulate_blob_cache",
        Cf,
        Enum,
        Yes,
        Some(|c| if c.blob.prepopulate_cache { "kFlushOnly" } else { "kDisable" }.to_string()),
        Some(|o, n, v| {
            o.blob.prepopulate_cache = match v {
                "kFlushOnly" => true,
                "kDisable" => false,
                _ => return Err(bad_value(n, v)),
            };
            Ok(true)
        }),
    ),
    opt(
        "blob_compaction_readahead_size",
        Cf,
        Int,
        Yes,
        Some(|c| c.blob.compaction_readahead_size.to_string()),
        Some(|o, n, v| {
            o.set_blob_compaction_readahead_size(number(n, v)?);
            Ok(true)
        }),
    ),
    // The temperature recorded for the tables the next flushes and compactions write
    // (`db/flush.rs`, `db/compact.rs`, `CfConfig::output_temperature`).
    opt(
        "default_write_temperature",
        Cf,
        Enum,
        Yes,
        Some(|c| name_of(enum_names::TEMPERATURE, c.default_write_temperature).to_string()),
        Some(|o, n, v| {
            o.default_write_temperature = parse_enum(enum_names::TEMPERATURE, n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "last_level_temperature",
        Cf,
        Enum,
        Yes,
        Some(|c| name_of(enum_names::TEMPERATURE, c.last_level_temperature).to_string()),
        Some(|o, n, v| {
            o.last_level_temperature = parse_enum(enum_names::TEMPERATURE, n, v)?;
            Ok(true)
        }),
    ),
    // Taken when a table leaves the database (`db/versions.rs`, `table_cache.rs`): its
    // readers erase their cached blocks when dropped.
    opt(
        "uncache_aggressiveness",
        Cf,
        Int,
        Yes,
        Some(|c| c.uncache_aggressiveness.to_string()),
        Some(|o, n, v| {
            o.uncache_aggressiveness = number(n, v)?;
            Ok(true)
        }),
    ),
    // Taken by the iterators created afterwards.
    opt(
        "max_sequential_skip_in_iterations",
        Cf,
        Int,
        Yes,
        Some(|c| c.max_sequential_skip_in_iterations.to_string()),
        Some(|o, n, v| {
            o.max_sequential_skip_in_iterations = number(n, v)?;
            Ok(true)
        }),
    ),
    // Every order of RocksDB (`compaction/picker.rs::pick_level`); immutable as in RocksDB.
    opt(
        "compaction_pri",
        Cf,
        Enum,
        No,
        Some(|c| name_of(enum_names::COMPACTION_PRI, c.compaction_pri).to_string()),
        Some(|o, n, v| match value_of(enum_names::COMPACTION_PRI, v) {
            Some(p) => {
                o.set_compaction_pri(p);
                Ok(true)
            }
            None => Err(bad_value(n, v)),
        }),
    ),
    // Colon-separated, RocksDB's vector text.
    opt(
        "max_bytes_for_level_multiplier_additional",
        Cf,
        Str,
        Yes,
        Some(|c| {
            c.max_bytes_for_level_multiplier_additional
                .iter()
                .map(i32::to_string)
                .collect::<Vec<_>>()
                .join(":")
        }),
        Some(|o, n, v| {
            o.max_bytes_for_level_multiplier_additional =
                v.split(':').filter(|x| !x.is_empty()).map(|x| number(n, x)).collect::<Result<_>>()?;
            Ok(true)
        }),
    ),
    opt(
        "inplace_update_support",
        Cf,
        Bool,
        No,
        Some(|c| c.inplace_update_support.to_string()),
        Some(|o, n, v| {
            o.set_inplace_update_support(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "inplace_update_num_locks",
        Cf,
        Int,
        Yes,
        Some(|c| c.inplace_update_num_locks.to_string()),
        Some(|o, n, v| {
            o.set_inplace_update_locks(number(n, v)?);
            Ok(true)
        }),
    ),
    // Taken by the memtables made afterwards, as RocksDB's mutable option.
    opt(
        "memtable_huge_page_size",
        Cf,
        Int,
        Yes,
        Some(|c| c.memtable_huge_page_size.to_string()),
        Some(|o, n, v| {
            o.set_memtable_huge_page_size(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "bloom_locality",
        Cf,
        Int,
        No,
        Some(|c| c.bloom_locality.to_string()),
        Some(|o, n, v| {
            o.set_bloom_locality(number(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "optimize_filters_for_hits",
        Cf,
        Bool,
        No,
        Some(|c| c.optimize_filters_for_hits.to_string()),
        Some(|o, n, v| {
            o.set_optimize_filters_for_hits(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "max_write_buffer_size_to_maintain",
        Cf,
        Int,
        No,
        Some(|c| c.sanitized_max_write_buffer_size_to_maintain().to_string()),
        Some(|o, n, v| {
            o.set_max_write_buffer_size_to_maintain(number(n, v)?);
            Ok(true)
        }),
    ),
    // Memtables made afterwards are full at this many range deletions (RocksDB's
    // `MemTable::ShouldFlushNow`).
    opt(
        "memtable_max_range_deletions",
        Cf,
        Int,
        Yes,
        Some(|c| c.memtable_max_range_deletions.to_string()),
        Some(|o, n, v| {
            o.memtable_max_range_deletions = number::<u32>(n, v)?.into();
            Ok(true)
        }),
    ),
    // The tables written afterwards sample blocks with LZ4 and ZSTD (`table/builder.rs`).
    opt(
        "sample_for_compression",
        Cf,
        Int,
        Yes,
        Some(|c| c.sample_for_compression.to_string()),
        Some(|o, n, v| {
            o.sample_for_compression = number(n, v)?;
            Ok(true)
        }),
    ),
    // Flushes and compactions into lower levels keep values in their tables.
    opt(
        "blob_file_starting_level",
        Cf,
        Int,
        Yes,
        Some(|c| c.blob.file_starting_level.to_string()),
        Some(|o, n, v| {
            o.blob.file_starting_level = number(n, v)?;
            Ok(true)
        }),
    ),
    opt(
        "strict_max_successive_merges",
        Cf,
        Bool,
        Yes,
        Some(|c| c.strict_max_successive_merges.to_string()),
        Some(|o, n, v| {
            o.set_strict_max_successive_merges(boolean(n, v)?);
            Ok(true)
        }),
    ),
    opt(
        "disallow_memtable_writes",
        Cf,
        Bool,
        No,
        Some(|c| c.disallow_memtable_writes.to_string()),
        Some(|o, n, v| {
            o.set_disallow_memtable_writes(boolean(n, v)?);
            Ok(true)
        }),
    ),
    // ---- helper `rows` (issue 33): CF options that had no row ----
    // The level layout checked at open (`Version::check_level_order`).
    opt(
        "force_consistency_checks",
        Cf,
        Bool,
        No,
        Some(|o| o.force_consistency_checks.to_string()),
        Some(|o, n, v| {
            o.set_force_consistency_checks(boolean(n, v)?);
            Ok(true)
        }),
    ),
    // ---- end of helper `rows` CF block ----
    // ---- helper cfopt (issue 33): CF options that had no row ----
    // Memtables made from then on keep that many checksum bytes per entry, verified by every
    // read and flush (`shale_engine::memtable`); open and set_options refuse other than
    // 0, 1, 2, 4, 8 with RocksDB's NotSupported (`Options::check_supported`).
    opt(
        "memtable_protection_bytes_per_key",
        Cf,
        Int,
        Yes,
        Some(|c| c.memtable_protection_bytes_per_key.to_string()),
        Some(|o, n, v| {
            o.memtable_protection_bytes_per_key = number(n, v)?;
            Ok(true)
        }),
    ),
    // Memtables made from then on check the key order their reads land on and step over.
    opt(
        "paranoid_memory_checks",
        Cf,
        Bool,
        Yes,
        Some(|c| c.paranoid_memory_checks.to_string()),
        Some(|o, n, v| {
            o.paranoid_memory_checks = boolean(n, v)?;
            Ok(true)
        }),
    ),
    // A bottommost file becomes a "BottommostFiles" compaction's input only this many seconds
    // after it was made (`compaction::picker::pick_bottommost_files`).
    opt(
        "bottommost_file_compaction_delay",
        Cf,
        Int,
        Yes,
        Some(|c| c.bottommost_file_compaction_delay.to_string()),
        Some(|o, n, v| {
            o.bottommost_file_compaction_delay = number(n, v)?;
            Ok(true)
        }),
    ),
    // Compactions from then on cut outputs counting their estimated tail
    // (`TableBuilder::estimated_tail_size`), so a table stays near target_file_size.
    opt(
        "target_file_size_is_upper_bound",
        Cf,
        Bool,
        Yes,
        Some(|c| c.target_file_size_is_upper_bound.to_string()),
        Some(|o, n, v| {
            o.target_file_size_is_upper_bound = boolean(n, v)?;
            Ok(true)
        }),
    ),
    // Table files of kUnknown temperature are counted at this one when read
    // (`shale_format::io_stats`, opened by `db/table_cache.rs`).
    opt(
        "default_temperature",
        Cf,
        Enum,
        No,
        Some(|c| name_of(enum_names::TEMPERATURE, c.default_temperature).to_string()),
        Some(|o, n, v| {
            o.default_temperature = parse_enum(enum_names::TEMPERATURE, n, v)?;
            Ok(true)
        }),
    ),
    // RocksDB's `memtable`: an alias (kAlias) of memtable_factory, read by the same
    // MemTableRepFactory::CreateFromString; as an alias it is never written.
    opt(
        "memtable",
        Cf,
        Struct,
        No,
        None,
        Some(|o, n, v| {
            // A value RocksDB's registry cannot build is NotSupported there, which
            // `ignore_unsupported_options` (true in LoadLatestOptions and
            // GetOptionsFromString) turns into OK with the factory left as it was.
            if let Some(rep) = crate::options::MemtableRep::parse(n, v)? {
                o.memtable_rep = rep;
            }
            Ok(true)
        }),
    ),
    // ---- end of helper cfopt CF block ----
    // ---- helper cfblob (issue 33): CF options that had no row ----
    // Memtables made from then on, with memtable_protection_bytes_per_key above 0, check
    // every entry a skip-list search compares against on its way
    // (`shale_engine::memtable`, `MemTableConfig::verify_checksum_on_seek`).
    opt(
        "memtable_verify_per_key_checksum_on_seek",
        Cf,
        Bool,
        Yes,
        Some(|c| c.memtable_verify_per_key_checksum_on_seek.to_string()),
        Some(|o, n, v| {
            o.memtable_verify_per_key_checksum_on_seek = boolean(n, v)?;
            Ok(true)
        }),
    ),
    // RocksDB 11.8.1's misspelled name of the same option (kAlias): read, never written.
    opt(
        "memtable_veirfy_per_key_checksum_on_seek",
        Cf,
        Bool,
        Yes,
        None,
        Some(|o, n, v| {
            o.memtable_verify_per_key_checksum_on_seek = boolean(n, v)?;
            Ok(true)
        }),
    ),
    // RocksDB's aliases of table_factory (kAlias, never written): the family's block-based
    // or plain table options with the fields named changed, the others kept; InvalidArgument
    // "Cannot modify <factory> as <name>" on a family of another table format, as RocksDB's
    // TableFactoryParseFn. Flushes and compactions from then on write tables with them
    // (`set_options` of block_based_table_factory: `db/dyn_options.rs::apply_table_factory`).
    opt(
        "block_based_table_factory",
        Cf,
        Struct,
        Yes,
        None,
        Some(|o, _, v| {
            crate::options_tbl::apply_block_based_table_factory(o, v)?;
            Ok(true)
        }),
    ),
    opt(
        "plain_table_factory",
        Cf,
        Struct,
        Yes,
        None,
        Some(|o, _, v| {
            apply_plain_table_factory(o, v)?;
            Ok(true)
        }),
    ),
    // The codec settings blobs are compressed with by flushes and compactions from then on
    // (`shale_base::compression::compress_forced`, RocksDB's BlobFileBuilder); the fields
    // named change, the others keep their values.
    opt(
        "blob_compression_opts",
        Cf,
        Struct,
        Yes,
        Some(|c| compression_opts_text(&c.blob_compression_opts, c.blob_compression_opts_enabled)),
        Some(|o, name, v| {
            let (b, enabled) =
                compression_opts_over(name, v, &o.blob_compression_opts, o.blob_compression_opts_enabled)?;
            o.blob_compression_opts = b;
            o.blob_compression_opts_enabled = enabled;
            Ok(true)
        }),
    ),
    // RocksDB 11's compression manager by id (kByNameAllowNull): "nullptr" (or empty) none;
    // "BuiltinV2", the one id RocksDB 11.8.1 registers, its built-in manager, which
    // compresses as without one but is recorded in each table's compression options
    // (`TableBuilderOptions::builtin_compression_manager`); RocksDB writes it by its
    // GetId(), "BuiltinCompressionManagerV2". Any other id is, as RocksDB's
    // CreateFromString under ConfigOptions' default ignore_unsupported_options, accepted
    // as none (so is RocksDB's own written name, which its registry does not hold).
    opt(
        "compression_manager",
        Cf,
        Function,
        Yes,
        Some(|c| {
            if c.builtin_compression_manager { "BuiltinCompressionManagerV2" } else { "nullptr" }.to_string()
        }),
        Some(|o, _, v| {
            let id = v.trim();
            let id = match id.strip_prefix('{').and_then(|x| x.strip_suffix('}')) {
                Some(fields) => {
                    fields.split(';').find_map(|f| f.trim().strip_prefix("id=")).unwrap_or("").trim()
                }
                None => id,
            };
            o.builtin_compression_manager = id == "BuiltinV2";
            Ok(true)
        }),
    ),
    // The family's blob value cache by text, as RocksDB's Cache::CreateFromString (a size,
    // `{capacity=..;...}`, or null: `options_tbl::parse_block_cache`), the same cache
    // `set_blob_cache` gives; immutable and never written (kDontSerialize), as RocksDB's.
    opt(
        "blob_cache",
        Cf,
        Struct,
        No,
        None,
        Some(|o, n, v| {
            o.blob_cache = crate::options_tbl::parse_block_cache(n, v)?.map(|c| c.0.clone());
            Ok(true)
        }),
    ),
    // ---- helper blobdw (issue 33): blob direct write (RocksDB 11.8.1) ----
    // Taken when the family is opened (`CfHandle::new` makes its `DirectBlobWriter`); written
    // as RocksDB's sanitizing leaves it (false without blob files), as its OPTIONS file and
    // LOG show it.
    opt(
        "enable_blob_direct_write",
        Cf,
        Bool,
        No,
        Some(|c| (c.blob.direct_write && c.blob.enable_blob_files).to_string()),
        Some(|o, n, v| {
            o.set_enable_blob_direct_write(boolean(n, v)?);
            Ok(true)
        }),
    ),
    // 0 is written as 1, as RocksDB's SanitizeCfOptions leaves it.
    opt(
        "blob_direct_write_partitions",
        Cf,
        Int,
        No,
        Some(|c| c.blob.direct_write_partitions.max(1).to_string()),
        Some(|o, n, v| {
            o.set_blob_direct_write_partitions(number(n, v)?);
            Ok(true)
        }),
    ),
    // An application callback in RocksDB (kUnknown type, no parser, kDontSerialize): never
    // written, and any text is refused as its `OptionTypeInfo::Parse` refuses it; null keeps
    // the default round-robin choice.
    opt(
        "blob_direct_write_partition_strategy",
        Cf,
        Function,
        No,
        None,
        Some(|_, n, _| Err(Error::invalid_argument(format!("Error parsing:: {n}")))),
    ),
    // ---- end of helper cfblob CF block ----
    // ---- helper prot (issue 33) ----
    // Table readers opened from then on protect each entry of the data, index and metaindex
    // blocks they parse with that many checksum bytes (`shale_format::table::block`); open
    // and set_options refuse other than 0, 1, 2, 4, 8 with RocksDB's NotSupported
    // (`Options::check_supported`). RocksDB 11.8.1's LOG dump prints no line for it.
    opt(
        "block_protection_bytes_per_key",
        Cf,
        Int,
        Yes,
        Some(|c| c.block_protection_bytes_per_key.to_string()),
        Some(|o, n, v| {
            o.block_protection_bytes_per_key = number(n, v)?;
            Ok(true)
        }),
    ),
    // ---- end of helper prot CF block ----
    // ---- helper cfmisc (issue 33): CF options that had no row ----
    // Iterators made from then on (not tailing ones; 0 in a read-only or secondary
    // database) mark the active memtable for flush when one step passes this many hidden
    // entries of it (`shale_engine::iter::db_iter::ScanFlush`); the next write switches it.
    opt(
        "memtable_op_scan_flush_trigger",
        Cf,
        Int,
        Yes,
        Some(|c| c.memtable_op_scan_flush_trigger.to_string()),
        Some(|o, n, v| {
            o.memtable_op_scan_flush_trigger = number(n, v)?;
            Ok(true)
        }),
    ),
    // The same for the average of hidden entries per step between two positioning calls
    // (only with memtable_op_scan_flush_trigger, whose count the window must reach).
    opt(
        "memtable_avg_op_scan_flush_trigger",
        Cf,
        Int,
        Yes,
        Some(|c| c.memtable_avg_op_scan_flush_trigger.to_string()),
        Some(|o, n, v| {
            o.memtable_avg_op_scan_flush_trigger = number(n, v)?;
            Ok(true)
        }),
    ),
    // ---- helper mtrc (issue 33) ----
    // Iterators made from then on (read-write, not tailing, not of a family with
    // user-defined timestamps, total-order or prefix_same_as_start) add a range tombstone
    // to the active memtable over a run of this many point tombstones a step passes, in
    // either direction (`shale_engine::iter::db_iter::RangeConv`).
    opt(
        "min_tombstones_for_range_conversion",
        Cf,
        Int,
        Yes,
        Some(|c| c.min_tombstones_for_range_conversion.to_string()),
        Some(|o, n, v| {
            o.min_tombstones_for_range_conversion = number(n, v)?;
            Ok(true)
        }),
    ),
    // ---- end of helper mtrc block ----
    // ---- helper ts (issue 33) ----
    // Immutable: what the family's tables hold of user-defined timestamps (see
    // `Options::persist_user_defined_timestamps`); rust-rocksdb 0.25 has no setter, so it
    // comes from an options string or an OPTIONS file.
    opt(
        "persist_user_defined_timestamps",
        Cf,
        Bool,
        No,
        Some(|o| o.persist_user_defined_timestamps.to_string()),
        Some(|o, n, v| {
            o.persist_user_defined_timestamps = boolean(n, v)?;
            Ok(true)
        }),
    ),
    // ---- end of helper ts block ----
    // RocksDB's VerifyOutputFlags bits (written as the number): compactions from then on
    // check their output tables' block checksums and/or re-read them against a hash of
    // what was written (`db/compact.rs`, `db/verify_output.rs`).
    opt(
        "verify_output_flags",
        Cf,
        Int,
        Yes,
        Some(|c| c.verify_output_flags.to_string()),
        Some(|o, n, v| {
            o.verify_output_flags = number(n, v)?;
            Ok(true)
        }),
    ),
    // multi_get looks a family's keys up in sorted order, each skip-list memtable searched
    // from the path the previous key left (`db/read.rs`, `memtable::skiplist::Finger`).
    opt(
        "memtable_batch_lookup_optimization",
        Cf,
        Bool,
        No,
        Some(|c| c.memtable_batch_lookup_optimization.to_string()),
        Some(|o, n, v| {
            o.memtable_batch_lookup_optimization = boolean(n, v)?;
            Ok(true)
        }),
    ),
    // Memtables' skip-list inserts by the write leader start from a splice kept per prefix
    // of this extractor (`shale_engine::memtable::InsertHints`); RocksDB's built-in
    // extractors by name, as prefix_extractor's row reads them.
    opt(
        "memtable_insert_with_hint_prefix_extractor",
        Cf,
        Function,
        No,
        Some(|c| name_or_null(c.memtable_insert_with_hint_prefix_extractor.as_ref().map(|t| t.name()))),
        Some(|o, _, v| {
            o.memtable_insert_with_hint_prefix_extractor = match v {
                "nullptr" | "" => None,
                _ => match crate::SliceTransform::from_name(v) {
                    Some(t) => Some(std::sync::Arc::new(t)),
                    None => return Ok(false),
                },
            };
            Ok(true)
        }),
    ),
    // ---- end of helper cfmisc CF block ----
    // ---- helper cftbl CF block (issue 33) ----
    // RocksDB's built-in partitioner factory by its id and `length` (`SstPartitionerFactory::
    // CreateFromString`): compaction outputs are cut at prefix boundaries
    // (`shale_engine::compaction::partitioner`). An id RocksDB 11.8.1 does not register is
    // accepted as none, as its ConfigOptions' ignore_unsupported_options does.
    opt(
        "sst_partitioner_factory",
        Cf,
        Function,
        No,
        Some(|c| match &c.sst_partitioner_factory {
            None => "nullptr".to_string(),
            Some(crate::SstPartitionerFactory::FixedPrefix { length }) => {
                format!("{{id=SstPartitionerFixedPrefixFactory;length={length};}}")
            }
        }),
        Some(|o, n, v| {
            o.sst_partitioner_factory = parse_sst_partitioner(n, v)?;
            Ok(true)
        }),
    ),
    // The collector factories RocksDB 11.8.1 registers, as a vector (`{{id=..;..}:{id=..}}`),
    // the same list `add_compact_on_deletion_collector_factory` adds to
    // (`table/deletion_collector.rs`). Not written when empty, as RocksDB's.
    opt(
        "table_properties_collectors",
        Cf,
        Function,
        No,
        Some(|c| {
            if c.deletion_collectors.is_empty() {
                return String::new();
            }
            let items: Vec<String> = c.deletion_collectors.iter().map(|f| f.options_text()).collect();
            format!("{{{}}}", items.join(":"))
        }),
        Some(|o, n, v| {
            o.deletion_collectors = parse_collectors(n, v)?;
            Ok(true)
        }),
    ),
    // ---- end of helper cftbl CF block ----
    // Deprecated in RocksDB 11.8.1 (`OptionVerificationType::kDeprecated` in its
    // `options/cf_options.cc`): its parser accepts any value and changes nothing, and its
    // OPTIONS files and LOG leave them out; so do these rows (`deprecated`).
    deprecated("filter_deletes", Cf, Bool, Yes),
    deprecated("check_flush_compaction_key_order", Cf, Bool, Yes),
    deprecated("verify_checksums_in_compaction", Cf, Bool, Yes),
    deprecated("hard_rate_limit", Cf, Dbl, Yes),
    deprecated("soft_rate_limit", Cf, Dbl, Yes),
    deprecated("ignore_max_compaction_bytes_for_input", Cf, Bool, Yes),
    deprecated("expanded_compaction_factor", Cf, Int, Yes),
    deprecated("max_grandparent_overlap_factor", Cf, Int, Yes),
    deprecated("source_compaction_factor", Cf, Int, Yes),
    deprecated("memtable_prefix_bloom_huge_page_tlb_size", Cf, Int, Yes),
    deprecated("memtable_prefix_bloom_bits", Cf, Int, Yes),
    deprecated("memtable_prefix_bloom_probes", Cf, Int, Yes),
    deprecated("min_partial_merge_operands", Cf, Int, Yes),
    deprecated("snap_refresh_nanos", Cf, Int, Yes),
    deprecated("bottommost_temperature", Cf, Enum, Yes),
    deprecated("compaction_measure_io_stats", Cf, Bool, No),
    deprecated("purge_redundant_kvs_while_flush", Cf, Bool, No),
    deprecated("level_compaction_dynamic_file_size", Cf, Bool, No),
    deprecated("max_mem_compaction_level", Cf, Int, No),
    deprecated("max_write_buffer_number_to_maintain", Cf, Int, No),
    deprecated("rate_limit_delay_max_milliseconds", Cf, Int, No),
    // ---- TableOptions/BlockBasedTable ----
    tbl("block_size", Int, Some(|t| t.block_size.to_string()), |t, n, v| {
        t.set_block_size(number(n, v)?);
        Ok(true)
    }),
    tbl("block_restart_interval", Int, Some(|t| t.block_restart_interval.to_string()), |t, n, v| {
        t.set_block_restart_interval(number(n, v)?);
        Ok(true)
    }),
    tbl(
        "index_block_restart_interval",
        Int,
        Some(|t| t.sanitized_index_block_restart_interval().to_string()),
        |t, n, v| {
            t.set_index_block_restart_interval(number(n, v)?);
            Ok(true)
        },
    ),
    tbl("format_version", Int, Some(|t| t.format_version.to_string()), |t, n, v| {
        t.set_format_version(number(n, v)?);
        Ok(true)
    }),
    tbl("whole_key_filtering", Bool, Some(|t| t.whole_key_filtering.to_string()), |t, n, v| {
        t.set_whole_key_filtering(boolean(n, v)?);
        Ok(true)
    }),
    tbl(
        "optimize_filters_for_memory",
        Bool,
        Some(|t| t.optimize_filters_for_memory.to_string()),
        |t, n, v| {
            t.set_optimize_filters_for_memory(boolean(n, v)?);
            Ok(true)
        },
    ),
    tbl("no_block_cache", Bool, Some(|t| t.no_block_cache.to_string()), |t, n, v| {
        t.no_block_cache = boolean(n, v)?;
        Ok(true)
    }),
    tbl(
        "cache_index_and_filter_blocks",
        Bool,
        Some(|t| t.cache_index_and_filter_blocks.to_string()),
        |t, n, v| {
            t.set_cache_index_and_filter_blocks(boolean(n, v)?);
            Ok(true)
        },
    ),
    tbl(
        "cache_index_and_filter_blocks_with_high_priority",
        Bool,
        Some(|t| t.cache_index_and_filter_blocks_with_high_priority.to_string()),
        |t, n, v| {
            t.set_cache_index_and_filter_blocks_with_high_priority(boolean(n, v)?);
            Ok(true)
        },
    ),
    tbl(
        "pin_l0_filter_and_index_blocks_in_cache",
        Bool,
        Some(|t| t.pin_l0_filter_and_index_blocks_in_cache.to_string()),
        |t, n, v| {
            t.set_pin_l0_filter_and_index_blocks_in_cache(boolean(n, v)?);
            Ok(true)
        },
    ),
    tbl(
        "pin_top_level_index_and_filter",
        Bool,
        Some(|t| t.pin_top_level_index_and_filter.to_string()),
        |t, n, v| {
            t.set_pin_top_level_index_and_filter(boolean(n, v)?);
            Ok(true)
        },
    ),
    tbl(
        "metadata_cache_options",
        Struct,
        Some(|t| {
            let [top, part, unpart] = t.pinning_tiers;
            let tier = |x| name_of(enum_names::PINNING_TIER, x);
            format!(
                "{{unpartitioned_pinning={};partition_pinning={};top_level_index_pinning={};}}",
                tier(unpart),
                tier(part),
                tier(top)
            )
        }),
        |t, name, v| {
            for (k, x) in struct_fields(name, v)? {
                let tier = parse_enum(enum_names::PINNING_TIER, k, x)?;
                match k {
                    "top_level_index_pinning" => t.set_top_level_index_pinning_tier(tier),
                    "partition_pinning" => t.set_partition_pinning_tier(tier),
                    "unpartitioned_pinning" => t.set_unpartitioned_pinning_tier(tier),
                    _ => return Err(Error::invalid_argument(format!("Unrecognized option: {name}.{k}"))),
                }
            }
            Ok(true)
        },
    ),
    tbl(
        "filter_policy",
        Str,
        Some(|t| match (t.filter_internal, t.bloom_bits_per_key, t.ribbon_bloom_before_level) {
            // RocksDB's ids of its internal policies: the name, then the bits (none for the
            // read-only policy).
            (Some(p), Some(b), _) => format!("{}{}", p.name(), crate::table::filter::bits_per_key_suffix(b)),
            (Some(p), None, _) => p.name().to_string(),
            (None, None, _) => "nullptr".to_string(),
            // RocksDB 11.8.1's text: the policy's id, then its one mutable option.
            (None, Some(b), Some(before)) => format!(
                "{{id=ribbonfilter{}:{before};bloom_before_level={before};}}",
                crate::table::filter::bits_per_key_suffix(b)
            ),
            (None, Some(b), None) => format!("bloomfilter:{b}:false"),
        }),
        set_filter_policy,
    ),
    tbl("checksum", Enum, Some(|t| name_of(enum_names::CHECKSUM, t.checksum).to_string()), |t, n, v| {
        t.checksum = parse_enum(enum_names::CHECKSUM, n, v)?;
        Ok(true)
    }),
    tbl(
        "index_type",
        Enum,
        Some(|t| {
            (match (t.partitioned_index, t.hash_index) {
                _ if t.first_key_index => "kBinarySearchWithFirstKey",
                (true, _) => "kTwoLevelIndexSearch",
                (false, true) => "kHashSearch",
                (false, false) => "kBinarySearch",
            })
            .to_string()
        }),
        |t, _, v| {
            t.set_index_type(match v {
                "kBinarySearch" => crate::BlockBasedIndexType::BinarySearch,
                "kHashSearch" => crate::BlockBasedIndexType::HashSearch,
                "kTwoLevelIndexSearch" => crate::BlockBasedIndexType::TwoLevelIndexSearch,
                "kBinarySearchWithFirstKey" => {
                    t.set_index_type(crate::BlockBasedIndexType::BinarySearch);
                    t.first_key_index = true;
                    return Ok(true);
                }
                _ => return Ok(false),
            });
            Ok(true)
        },
    ),
    tbl("metadata_block_size", Int, Some(|t| t.metadata_block_size.to_string()), |t, n, v| {
        t.set_metadata_block_size(number(n, v)?);
        Ok(true)
    }),
    // RocksDB's sanitizing turns partition_filters off without a partitioned index.
    tbl(
        "partition_filters",
        Bool,
        Some(|t| (t.partitioned_index && t.partition_filters).to_string()),
        |t, n, v| {
            t.set_partition_filters(boolean(n, v)?);
            Ok(true)
        },
    ),
    tbl(
        "decouple_partitioned_filters",
        Bool,
        Some(|t| t.decouple_partitioned_filters.to_string()),
        |t, n, v| {
            t.decouple_partitioned_filters = boolean(n, v)?;
            Ok(true)
        },
    ),
    // Which keys the index stores for its blocks (`table/builder.rs` IndexShorteningMode).
    tbl(
        "index_shortening",
        Enum,
        Some(|t| name_of(enum_names::INDEX_SHORTENING, t.index_shortening).to_string()),
        |t, n, v| {
            t.index_shortening = parse_enum(enum_names::INDEX_SHORTENING, n, v)?;
            Ok(true)
        },
    ),
    tbl(
        "data_block_index_type",
        Enum,
        Some(|t| name_of(enum_names::DATA_BLOCK_INDEX, t.data_block_index_type).to_string()),
        |t, _, v| match value_of(enum_names::DATA_BLOCK_INDEX, v) {
            Some(x) => {
                t.set_data_block_index_type(x);
                Ok(true)
            }
            None => Ok(false),
        },
    ),
    tbl("data_block_hash_table_util_ratio", Dbl, Some(|t| double(t.data_block_hash_ratio)), |t, n, v| {
        t.set_data_block_hash_ratio(number(n, v)?);
        Ok(true)
    }),
    // Where data blocks (and index partitions) are cut (`table/builder.rs` should_flush);
    // written as RocksDB's factory sanitizes it (outside 0..=100: 0).
    tbl(
        "block_size_deviation",
        Int,
        Some(|t| {
            (if (0..=100).contains(&t.block_size_deviation) { t.block_size_deviation } else { 0 }).to_string()
        }),
        |t, n, v| {
            t.block_size_deviation = number(n, v)?;
            Ok(true)
        },
    ),
    // Data-block keys stored whole when false (`table/block.rs`).
    tbl("use_delta_encoding", Bool, Some(|t| t.use_delta_encoding.to_string()), |t, n, v| {
        t.use_delta_encoding = boolean(n, v)?;
        Ok(true)
    }),
    // Data blocks with their keys first, then their values (`table/block.rs`).
    tbl(
        "separate_key_value_in_data_block",
        Bool,
        Some(|t| t.separate_key_value_in_data_block.to_string()),
        |t, n, v| {
            t.set_separate_key_value_in_data_block(boolean(n, v)?);
            Ok(true)
        },
    ),
    // Index blocks and partitions stored uncompressed when false.
    tbl("enable_index_compression", Bool, Some(|t| t.enable_index_compression.to_string()), |t, n, v| {
        t.enable_index_compression = boolean(n, v)?;
        Ok(true)
    }),
    // Each compressed block decompressed and compared before it is written.
    tbl("verify_compression", Bool, Some(|t| t.verify_compression.to_string()), |t, n, v| {
        t.verify_compression = boolean(n, v)?;
        Ok(true)
    }),
    // Data blocks padded to min(block_size, 4096); needs compression off.
    tbl("block_align", Bool, Some(|t| t.block_align.to_string()), |t, n, v| {
        t.block_align = boolean(n, v)?;
        Ok(true)
    }),
    tbl("super_block_alignment_size", Int, Some(|t| t.super_block_alignment_size.to_string()), |t, n, v| {
        t.super_block_alignment_size = number(n, v)?;
        Ok(true)
    }),
    tbl(
        "super_block_alignment_space_overhead_ratio",
        Int,
        Some(|t| t.super_block_alignment_space_overhead_ratio.to_string()),
        |t, n, v| {
            t.super_block_alignment_space_overhead_ratio = number(n, v)?;
            Ok(true)
        },
    ),
    // Iterators' implicit readahead (`table/prefetch.rs`).
    tbl("max_auto_readahead_size", Int, Some(|t| t.auto_readahead.max.to_string()), |t, n, v| {
        t.auto_readahead.max = number(n, v)?;
        Ok(true)
    }),
    tbl("initial_auto_readahead_size", Int, Some(|t| t.auto_readahead.initial.to_string()), |t, n, v| {
        t.auto_readahead.initial = number(n, v)?;
        Ok(true)
    }),
    tbl(
        "num_file_reads_for_auto_readahead",
        Int,
        Some(|t| t.auto_readahead.num_file_reads.to_string()),
        |t, n, v| {
            t.auto_readahead.num_file_reads = number(n, v)?;
            Ok(true)
        },
    ),
    // RocksDB 11.8.1 checks these only with a `user_defined_index_factory`, which no Shale
    // API sets (so a table never needs a UDI block); `use_udi_as_primary_index` without one
    // fails validation, as RocksDB's (`Options::check_supported`).
    tbl("fail_if_no_udi_on_open", Bool, Some(|t| t.fail_if_no_udi_on_open.to_string()), |t, n, v| {
        t.fail_if_no_udi_on_open = boolean(n, v)?;
        Ok(true)
    }),
    tbl("use_udi_as_primary_index", Bool, Some(|t| t.use_udi_as_primary_index.to_string()), |t, n, v| {
        t.use_udi_as_primary_index = boolean(n, v)?;
        Ok(true)
    }),
    // Options RocksDB 11.8.1 registers as kDeprecated (`block_based_table_type_info`): any
    // value is accepted and has no effect there either; never written.
    tbl("hash_index_allow_collision", Bool, None, deprecated_table),
    tbl("index_per_partition", Int, None, deprecated_table),
    tbl("reserve_table_builder_memory", Bool, None, deprecated_table),
    tbl("reserve_table_reader_memory", Bool, None, deprecated_table),
    tbl("skip_table_builder_flush", Bool, None, deprecated_table),
    tbl("block_cache_compressed", Str, None, deprecated_table),
    // ---- helper tbl (issue 33): block-based table options without a rust-rocksdb setter ----
    // `block_cache` as text (RocksDB's `Cache::CreateFromString`, `options_tbl.rs`); like
    // RocksDB's (kDontSerialize) never written to an OPTIONS file or the LOG.
    tbl("block_cache", Str, None, |t, n, v| {
        t.block_cache = crate::options_tbl::parse_block_cache(n, v)?;
        Ok(true)
    }),
    // New tables' data blocks put into the block cache as written (`table/builder.rs` warm).
    tbl(
        "prepopulate_block_cache",
        Enum,
        Some(|t| name_of(enum_names::PREPOPULATE_BLOCK_CACHE, t.prepopulate_block_cache).to_string()),
        |t, _, v| match value_of(enum_names::PREPOPULATE_BLOCK_CACHE, v) {
            Some(x) => {
                t.set_prepopulate_block_cache(x);
                Ok(true)
            }
            None => Ok(false),
        },
    ),
    // Each filter built checked against its entries (`table/filter.rs` finish_checked).
    tbl(
        "detect_filter_construct_corruption",
        Bool,
        Some(|t| t.detect_filter_construct_corruption.to_string()),
        |t, n, v| {
            t.set_detect_filter_construct_corruption(boolean(n, v)?);
            Ok(true)
        },
    ),
    // Index blocks flagged uniform when their restart keys are evenly spread (`table/block.rs`).
    tbl("uniform_cv_threshold", Dbl, Some(|t| double(t.uniform_cv_threshold)), |t, n, v| {
        t.set_uniform_cv_threshold(number(n, v)?);
        Ok(true)
    }),
    // helper tbl3 (issue 33): the read-amplification bitmap of data blocks (`table/block.rs`).
    // RocksDB 11.8.1 parses the text as a u64 and keeps its low 32 bits (its fix for the
    // 6.10-6.14 releases, which wrote 8 bytes from the u32's address).
    tbl("read_amp_bytes_per_bit", Int, Some(|t| t.read_amp_bytes_per_bit.to_string()), |t, n, v| {
        t.set_read_amp_bytes_per_bit(number::<u64>(n, v)? as u32);
        Ok(true)
    }),
    // helper tbl2 (issue 33): how table readers search index blocks (`table/block_iter.rs`).
    tbl(
        "index_block_search_type",
        Enum,
        Some(|t| name_of(enum_names::BLOCK_SEARCH, t.index_block_search_type).to_string()),
        |t, n, v| {
            t.set_index_block_search_type(parse_enum(enum_names::BLOCK_SEARCH, n, v)?);
            Ok(true)
        },
    ),
];

/// A table option RocksDB 11.8.1 marks deprecated: parsed by neither RocksDB nor Shale.
/// helper cfblob: `plain_table_factory={name=value;...}` (RocksDB's `TableFactoryParseFn`
/// on a PlainTable family: every field of `plain_table_type_info` may change, for the tables
/// written from then on).
pub(crate) fn apply_plain_table_factory(o: &mut Options, v: &str) -> Result<()> {
    use crate::table::plain::PlainEncoding;
    use crate::table::TableFormat;
    let name = "plain_table_factory";
    let TableFormat::Plain(current) = &o.table_format else {
        return Err(Error::invalid_argument(format!(
            "Cannot modify {} as {name}",
            o.table_format.factory_name()
        )));
    };
    let mut p = current.clone();
    for (k, x) in struct_fields(name, v)? {
        match k {
            "user_key_len" => p.user_key_len = number(k, x)?,
            "bloom_bits_per_key" => p.bloom_bits_per_key = number(k, x)?,
            "hash_table_ratio" => p.hash_table_ratio = number(k, x)?,
            "index_sparseness" => p.index_sparseness = number(k, x)?,
            "huge_page_tlb_size" => p.huge_page_tlb_size = number(k, x)?,
            "encoding_type" => {
                p.encoding = match x {
                    "kPlain" => PlainEncoding::Plain,
                    "kPrefix" => PlainEncoding::Prefix,
                    _ => return Err(bad_value(k, x)),
                }
            }
            "full_scan_mode" => p.full_scan_mode = boolean(k, x)?,
            "store_index_in_file" => p.store_index_in_file = boolean(k, x)?,
            _ => return Err(Error::invalid_argument(format!("Could not find option: {k}"))),
        }
    }
    o.table_format = TableFormat::Plain(p);
    Ok(())
}

/// `table_factory=<name>` or `table_factory={id=<name>;field=value;...}`: RocksDB 11.8.1's
/// `TableFactoryParseFn`, which makes a new factory by `TableFactory::CreateFromString` (the
/// registry's BlockBasedTable, PlainTable and CuckooTable) with RocksDB's default options and
/// the fields named set; the family's current table options are not carried over, even for
/// the same name. A block-based factory without `block_cache` reads through the database's
/// default block cache (RocksDB's makes its own 32 MiB LRU cache). RocksDB answers OK for an
/// empty value or an unregistered name and leaves the family with no table factory (its next
/// flush or read dereferences it); Shale answers InvalidArgument naming the value.
pub(crate) fn apply_table_factory_value(o: &mut Options, v: &str) -> Result<()> {
    use crate::table::TableFormat;
    let name = "table_factory";
    let v = v.trim();
    let (id, fields): (&str, Vec<(&str, &str)>) = if v.contains('=') {
        let all = struct_fields(name, v)?;
        let id = all.iter().find(|(k, _)| *k == "id").map(|(_, x)| *x).unwrap_or("");
        (id, all.into_iter().filter(|(k, _)| *k != "id").collect())
    } else {
        (v.strip_prefix('{').and_then(|t| t.strip_suffix('}')).unwrap_or(v).trim(), Vec::new())
    };
    let rest = || {
        let mut s = String::from("{");
        for (k, x) in &fields {
            s.push_str(&format!("{k}={x};"));
        }
        s.push('}');
        s
    };
    match id {
        "BlockBasedTable" => {
            let mut n = o.clone();
            n.set_block_based_table_factory(&BlockBasedOptions::default());
            crate::options_tbl::apply_block_based_table_factory(&mut n, &rest())?;
            o.table = n.table;
            o.table_format = n.table_format;
        }
        "PlainTable" => {
            let mut n = o.clone();
            n.table_format = TableFormat::Plain(crate::table::plain::PlainTableOptions::default());
            apply_plain_table_factory(&mut n, &rest())?;
            o.table_format = n.table_format;
        }
        "CuckooTable" => {
            let mut c = crate::table::cuckoo::CuckooOptions::default();
            for (k, x) in &fields {
                match *k {
                    "hash_table_ratio" => c.hash_table_ratio = number(k, x)?,
                    "max_search_depth" => c.max_search_depth = number(k, x)?,
                    "cuckoo_block_size" => c.cuckoo_block_size = number(k, x)?,
                    "identity_as_first_hash" => c.identity_as_first_hash = boolean(k, x)?,
                    "use_module_hash" => c.use_module_hash = boolean(k, x)?,
                    _ => return Err(Error::invalid_argument(format!("Could not find option: {k}"))),
                }
            }
            o.table_format = TableFormat::Cuckoo(c);
        }
        "" if fields.is_empty() => {
            return Err(Error::invalid_argument("table_factory: an empty value leaves no table factory"))
        }
        // RocksDB's NewSharedObject: options without an id.
        "" => return Err(Error::not_supported("Cannot reset object ")),
        other => return Err(Error::invalid_argument(format!("Could not load TableFactory: {other}"))),
    }
    Ok(())
}

fn deprecated_table(_: &mut BlockBasedOptions, _: &str, _: &str) -> Result<bool> {
    Ok(true)
}

/// `filter_policy`: RocksDB's texts of its Bloom and Ribbon policies.
/// Whether RocksDB 11.8.1's object registry builds a filter policy of this id
/// (`RegisterBuiltinFilterPolicies`): the read-only builtin policy by name, or a policy's name
/// (or nickname) with `:<bits>` and the suffixes its pattern takes.
fn registry_builds_filter(id: &str) -> bool {
    if id == "rocksdb.BuiltinBloomFilter" {
        return true;
    }
    let parts: Vec<&str> = id.split(':').collect();
    // The registry's MatchesDecimal / MatchesInteger: an optional '-', digits (one '.').
    let digits = |b: &str, point: bool| {
        let b = b.strip_prefix('-').unwrap_or(b);
        b.bytes().any(|c| c.is_ascii_digit())
            && b.bytes().all(|c| c.is_ascii_digit() || (point && c == b'.'))
            && b.bytes().filter(|&c| c == b'.').count() <= 1
    };
    let bits_ok = |b: &str| digits(b, true);
    let int_ok = |b: &str| digits(b, false);
    match parts.as_slice() {
        [_, bits] if !bits_ok(bits) => false,
        [_, bits, ..] if !bits_ok(bits) => false,
        ["bloomfilter" | "rocksdb.BloomFilter", _] => true,
        ["bloomfilter" | "rocksdb.BloomFilter", _, "true" | "false"] => true,
        ["ribbonfilter" | "rocksdb.RibbonFilter", _] => true,
        ["ribbonfilter" | "rocksdb.RibbonFilter", _, level] => int_ok(level),
        ["rocksdb.internal.LegacyBloomFilter"
        | "rocksdb.internal.FastLocalBloomFilter"
        | "rocksdb.internal.Standard128RibbonFilter", _] => true,
        _ => false,
    }
}

fn set_filter_policy(t: &mut BlockBasedOptions, name: &str, v: &str) -> Result<bool> {
    // A value RocksDB's registry cannot build (no id, an id no pattern of it matches) is
    // NotSupported in FilterPolicy::CreateFromString, which `ignore_unsupported_options`
    // (true in LoadLatestOptions and GetOptionsFromString) turns into OK with the policy
    // left as it was.
    if !matches!(v, "nullptr" | "") {
        let id = if v.starts_with('{') {
            struct_fields(name, v)?.into_iter().find(|(k, _)| *k == "id").map(|(_, x)| x)
        } else {
            Some(v)
        };
        if !id.is_some_and(registry_builds_filter) {
            return Ok(true);
        }
    }
    match v {
        "nullptr" | "" => {
            t.bloom_bits_per_key = None;
            t.filter_internal = None;
        }
        // RocksDB's `ReadOnlyBuiltinFilterPolicy`: no filter for new tables.
        _ if InternalFilterPolicy::from_name(v) == Some(InternalFilterPolicy::ReadOnlyBuiltin) => {
            t.bloom_bits_per_key = None;
            t.ribbon_bloom_before_level = None;
            t.filter_internal = Some(InternalFilterPolicy::ReadOnlyBuiltin);
        }
        // RocksDB 11's Ribbon policy: "{id=ribbonfilter:<bits>:<level>;bloom_before_level=<level>;}"
        // (the explicit option wins over the id's).
        _ if v.starts_with('{') => {
            let inner = v.trim_start_matches('{').trim_end_matches('}');
            let fields: Vec<(&str, &str)> = inner.split(';').filter_map(|f| f.split_once('=')).collect();
            let field = |k: &str| fields.iter().find(|(n, _)| n.trim() == k).map(|(_, v)| v.trim());
            let id = field("id").ok_or_else(|| bad_value(name, v))?;
            let parts: Vec<&str> = id.split(':').collect();
            let before = match (field("bloom_before_level"), parts.get(2).copied()) {
                (Some(l), _) | (None, Some(l)) => number(name, l)?,
                (None, None) => 0,
            };
            match parts.as_slice() {
                ["ribbonfilter" | "rocksdb.RibbonFilter", bits, ..] => {
                    t.set_hybrid_ribbon_filter(number(name, bits)?, before)
                }
                ["bloomfilter" | "rocksdb.BloomFilter", bits, ..] => {
                    t.set_bloom_filter(number(name, bits)?, false)
                }
                [id, bits] if internal_with_bits(id).is_some() => set_internal_filter(t, name, id, bits)?,
                [id] if InternalFilterPolicy::from_name(id)
                    == Some(InternalFilterPolicy::ReadOnlyBuiltin) =>
                {
                    return set_filter_policy(t, name, id);
                }
                _ => return Ok(false),
            }
        }
        _ => {
            // "bloomfilter:<bits>:<use_block_based>", RocksDB's text of its Bloom policy;
            // "ribbonfilter:<bits>:<bloom_before_level>" for Ribbon; the registry takes each
            // policy's class name (`rocksdb.BloomFilter`, `rocksdb.RibbonFilter`) as well.
            let parts: Vec<&str> = v.split(':').collect();
            match parts.as_slice() {
                ["bloomfilter" | "rocksdb.BloomFilter", bits, block_based] => {
                    t.set_bloom_filter(number(name, bits)?, boolean(name, block_based)?)
                }
                ["bloomfilter" | "rocksdb.BloomFilter", bits] => {
                    t.set_bloom_filter(number(name, bits)?, false)
                }
                ["ribbonfilter" | "rocksdb.RibbonFilter", bits, before] => {
                    t.set_hybrid_ribbon_filter(number(name, bits)?, number(name, before)?)
                }
                ["ribbonfilter" | "rocksdb.RibbonFilter", bits] => t.set_ribbon_filter(number(name, bits)?),
                [id, bits] if internal_with_bits(id).is_some() => set_internal_filter(t, name, id, bits)?,
                _ => return Ok(false),
            }
        }
    }
    Ok(true)
}

/// One of RocksDB's internal policies whose id is `<name>:<bits>`.
fn internal_with_bits(id: &str) -> Option<InternalFilterPolicy> {
    InternalFilterPolicy::from_name(id).filter(|p| *p != InternalFilterPolicy::ReadOnlyBuiltin)
}

/// `rocksdb.internal.<...>Filter:<bits>`: the policy with RocksDB's `bits_per_key`
/// (`NewBuiltinFilterPolicyWithBits`); the rounding balance starts anew as for any policy.
fn set_internal_filter(t: &mut BlockBasedOptions, name: &str, id: &str, bits: &str) -> Result<()> {
    let p = internal_with_bits(id).ok_or_else(|| bad_value(name, id))?;
    t.set_bloom_filter(number(name, bits)?, false);
    t.filter_internal = Some(p);
    Ok(())
}

/// How a value of RocksDB's `ColumnFamilyOptions::Dump` is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogFmt {
    /// The row's text, booleans as 0/1 (`%d`); doubles already print as `%f`.
    Plain,
    /// A boolean as `true`/`false` (`%s`).
    TrueFalse,
    /// A user object's `Name()`; when there is none, the line's default, else `None`.
    Callback,
    /// A prefix extractor's `Name()` (its id without the length), or `nullptr`.
    Extractor,
    /// A compression type by RocksDB's `CompressionTypeToString`.
    Codec,
    /// An enum printed as its value: the name's index in the list.
    Index(&'static [&'static str]),
}

/// One line of RocksDB 11.8.1's `ColumnFamilyOptions::Dump`, in its order: the label as
/// RocksDB pads it, the entry (a row's name, `a.b` for field `b` of struct option `a`, or
/// `@...` for a line the LOG writer builds itself), how its value prints, and the value
/// printed when no row holds the entry (an option Shale keeps at RocksDB's default).
#[derive(Clone, Copy)]
pub(crate) struct LogLine {
    pub label: &'static str,
    pub entry: &'static str,
    pub fmt: LogFmt,
    pub default: Option<&'static str>,
}

const fn log_line(
    label: &'static str,
    entry: &'static str,
    fmt: LogFmt,
    default: Option<&'static str>,
) -> LogLine {
    LogLine { label, entry, fmt, default }
}

/// The column-family part of the LOG's options dump, line by line as RocksDB 11.8.1's
/// `ColumnFamilyOptions::Dump` writes it (options/options.cc).
pub(crate) static LOG_CF_LINES: &[LogLine] = &[
    log_line("              Options.comparator", "comparator", LogFmt::Plain, None),
    log_line(
        "              Options.persist_user_defined_timestamps",
        "@persist_ts",
        LogFmt::TrueFalse,
        Some("true"),
    ),
    log_line("          Options.merge_operator", "merge_operator", LogFmt::Callback, None),
    log_line("       Options.compaction_filter", "compaction_filter", LogFmt::Callback, None),
    log_line("       Options.compaction_filter_factory", "compaction_filter_factory", LogFmt::Callback, None),
    log_line(" Options.sst_partitioner_factory", "sst_partitioner_factory", LogFmt::Callback, Some("None")),
    log_line("        Options.memtable_factory", "memtable_factory", LogFmt::Callback, None),
    log_line("           Options.table_factory", "@table_factory", LogFmt::Plain, None),
    log_line("       Options.write_buffer_size", "write_buffer_size", LogFmt::Plain, None),
    log_line(" Options.max_write_buffer_number", "max_write_buffer_number", LogFmt::Plain, None),
    log_line("         Options.compression", "@compression", LogFmt::Plain, None),
    log_line(
        "                 Options.bottommost_compression",
        "@bottommost_compression",
        LogFmt::Plain,
        None,
    ),
    log_line("      Options.prefix_extractor", "prefix_extractor", LogFmt::Extractor, None),
    log_line(
        "  Options.memtable_insert_with_hint_prefix_extractor",
        "memtable_insert_with_hint_prefix_extractor",
        LogFmt::Extractor,
        None,
    ),
    log_line("            Options.num_levels", "num_levels", LogFmt::Plain, None),
    log_line(
        "       Options.min_write_buffer_number_to_merge",
        "min_write_buffer_number_to_merge",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "    Options.max_write_buffer_size_to_maintain",
        "max_write_buffer_size_to_maintain",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "           Options.bottommost_compression_opts.window_bits",
        "bottommost_compression_opts.window_bits",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "                 Options.bottommost_compression_opts.level",
        "bottommost_compression_opts.level",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "              Options.bottommost_compression_opts.strategy",
        "bottommost_compression_opts.strategy",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "        Options.bottommost_compression_opts.max_dict_bytes",
        "bottommost_compression_opts.max_dict_bytes",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "        Options.bottommost_compression_opts.zstd_max_train_bytes",
        "bottommost_compression_opts.zstd_max_train_bytes",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "        Options.bottommost_compression_opts.parallel_threads",
        "bottommost_compression_opts.parallel_threads",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "                 Options.bottommost_compression_opts.enabled",
        "bottommost_compression_opts.enabled",
        LogFmt::TrueFalse,
        None,
    ),
    log_line(
        "        Options.bottommost_compression_opts.max_dict_buffer_bytes",
        "bottommost_compression_opts.max_dict_buffer_bytes",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "        Options.bottommost_compression_opts.use_zstd_dict_trainer",
        "bottommost_compression_opts.use_zstd_dict_trainer",
        LogFmt::TrueFalse,
        None,
    ),
    log_line(
        "           Options.compression_opts.window_bits",
        "compression_opts.window_bits",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "                 Options.compression_opts.level",
        "compression_opts.level",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "              Options.compression_opts.strategy",
        "compression_opts.strategy",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "        Options.compression_opts.max_dict_bytes",
        "compression_opts.max_dict_bytes",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "        Options.compression_opts.zstd_max_train_bytes",
        "compression_opts.zstd_max_train_bytes",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "        Options.compression_opts.use_zstd_dict_trainer",
        "compression_opts.use_zstd_dict_trainer",
        LogFmt::TrueFalse,
        None,
    ),
    log_line(
        "        Options.compression_opts.parallel_threads",
        "compression_opts.parallel_threads",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "                 Options.compression_opts.enabled",
        "compression_opts.enabled",
        LogFmt::TrueFalse,
        None,
    ),
    log_line(
        "        Options.compression_opts.max_dict_buffer_bytes",
        "compression_opts.max_dict_buffer_bytes",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "     Options.level0_file_num_compaction_trigger",
        "level0_file_num_compaction_trigger",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "         Options.level0_slowdown_writes_trigger",
        "level0_slowdown_writes_trigger",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "             Options.level0_stop_writes_trigger",
        "level0_stop_writes_trigger",
        LogFmt::Plain,
        None,
    ),
    log_line("                  Options.target_file_size_base", "target_file_size_base", LogFmt::Plain, None),
    log_line(
        "            Options.target_file_size_multiplier",
        "target_file_size_multiplier",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "           Options.target_file_size_is_upper_bound",
        "target_file_size_is_upper_bound",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "               Options.max_bytes_for_level_base",
        "max_bytes_for_level_base",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "Options.level_compaction_dynamic_level_bytes",
        "level_compaction_dynamic_level_bytes",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "         Options.max_bytes_for_level_multiplier",
        "max_bytes_for_level_multiplier",
        LogFmt::Plain,
        None,
    ),
    log_line("Options.max_bytes_for_level_multiplier_addtl", "@addtl", LogFmt::Plain, None),
    log_line(
        "      Options.max_sequential_skip_in_iterations",
        "max_sequential_skip_in_iterations",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "         Options.memtable_op_scan_flush_trigger",
        "memtable_op_scan_flush_trigger",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "     Options.memtable_avg_op_scan_flush_trigger",
        "memtable_avg_op_scan_flush_trigger",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "     Options.min_tombstones_for_range_conversion",
        "min_tombstones_for_range_conversion",
        LogFmt::Plain,
        None,
    ),
    log_line("                   Options.max_compaction_bytes", "max_compaction_bytes", LogFmt::Plain, None),
    log_line("                       Options.arena_block_size", "arena_block_size", LogFmt::Plain, None),
    log_line(
        "  Options.soft_pending_compaction_bytes_limit",
        "soft_pending_compaction_bytes_limit",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "  Options.hard_pending_compaction_bytes_limit",
        "hard_pending_compaction_bytes_limit",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "               Options.disable_auto_compactions",
        "disable_auto_compactions",
        LogFmt::Plain,
        None,
    ),
    log_line("                       Options.compaction_style", "compaction_style", LogFmt::Plain, None),
    log_line("                         Options.compaction_pri", "compaction_pri", LogFmt::Plain, None),
    log_line(
        "Options.compaction_options_universal.size_ratio",
        "compaction_options_universal.size_ratio",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "Options.compaction_options_universal.min_merge_width",
        "compaction_options_universal.min_merge_width",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "Options.compaction_options_universal.max_merge_width",
        "compaction_options_universal.max_merge_width",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "Options.compaction_options_universal.max_size_amplification_percent",
        "compaction_options_universal.max_size_amplification_percent",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "Options.compaction_options_universal.compression_size_percent",
        "compaction_options_universal.compression_size_percent",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "Options.compaction_options_universal.stop_style",
        "compaction_options_universal.stop_style",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "Options.compaction_options_universal.max_read_amp",
        "compaction_options_universal.max_read_amp",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "Options.compaction_options_universal.reduce_file_locking",
        "compaction_options_universal.reduce_file_locking",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "Options.compaction_options_fifo.max_table_files_size",
        "compaction_options_fifo.max_table_files_size",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "Options.compaction_options_fifo.allow_compaction",
        "compaction_options_fifo.allow_compaction",
        LogFmt::Plain,
        None,
    ),
    log_line("                  Options.table_properties_collectors", "@collectors", LogFmt::Plain, None),
    log_line(
        "                  Options.inplace_update_support",
        "inplace_update_support",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "                Options.inplace_update_num_locks",
        "inplace_update_num_locks",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "              Options.memtable_prefix_bloom_size_ratio",
        "memtable_prefix_bloom_size_ratio",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "              Options.memtable_whole_key_filtering",
        "memtable_whole_key_filtering",
        LogFmt::Plain,
        None,
    ),
    log_line("  Options.memtable_huge_page_size", "memtable_huge_page_size", LogFmt::Plain, None),
    log_line("                          Options.bloom_locality", "bloom_locality", LogFmt::Plain, None),
    log_line(
        "                   Options.max_successive_merges",
        "max_successive_merges",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "            Options.strict_max_successive_merges",
        "strict_max_successive_merges",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "               Options.optimize_filters_for_hits",
        "optimize_filters_for_hits",
        LogFmt::Plain,
        None,
    ),
    log_line("               Options.paranoid_file_checks", "paranoid_file_checks", LogFmt::Plain, None),
    log_line(
        "               Options.force_consistency_checks",
        "force_consistency_checks",
        LogFmt::Plain,
        None,
    ),
    log_line("               Options.report_bg_io_stats", "report_bg_io_stats", LogFmt::Plain, None),
    log_line(
        "               Options.disallow_memtable_writes",
        "disallow_memtable_writes",
        LogFmt::Plain,
        None,
    ),
    log_line("                              Options.ttl", "@ttl", LogFmt::Plain, None),
    log_line(
        "         Options.periodic_compaction_seconds",
        "periodic_compaction_seconds",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "                       Options.default_temperature",
        "default_temperature",
        LogFmt::Plain,
        None,
    ),
    log_line(
        " Options.preclude_last_level_data_seconds",
        "preclude_last_level_data_seconds",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "   Options.preserve_internal_time_seconds",
        "preserve_internal_time_seconds",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line("                      Options.enable_blob_files", "enable_blob_files", LogFmt::TrueFalse, None),
    log_line("                          Options.min_blob_size", "min_blob_size", LogFmt::Plain, None),
    log_line("                         Options.blob_file_size", "blob_file_size", LogFmt::Plain, None),
    log_line("                  Options.blob_compression_type", "blob_compression_type", LogFmt::Codec, None),
    log_line(
        "            Options.blob_compression_opts.level",
        "blob_compression_opts.level",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "         Options.enable_blob_garbage_collection",
        "enable_blob_garbage_collection",
        LogFmt::TrueFalse,
        None,
    ),
    log_line(
        "     Options.blob_garbage_collection_age_cutoff",
        "blob_garbage_collection_age_cutoff",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "Options.blob_garbage_collection_force_threshold",
        "blob_garbage_collection_force_threshold",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "         Options.blob_compaction_readahead_size",
        "blob_compaction_readahead_size",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "               Options.blob_file_starting_level",
        "blob_file_starting_level",
        LogFmt::Plain,
        None,
    ),
    log_line("                          Options.blob_cache", "@blob_cache", LogFmt::Plain, None),
    log_line(
        "        Options.experimental_mempurge_threshold",
        "experimental_mempurge_threshold",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "           Options.memtable_max_range_deletions",
        "memtable_max_range_deletions",
        LogFmt::Plain,
        None,
    ),
    log_line(
        "                 Options.cf_allow_ingest_behind",
        "cf_allow_ingest_behind",
        LogFmt::TrueFalse,
        None,
    ),
    log_line(
        "  Options.memtable_batch_lookup_optimization",
        "memtable_batch_lookup_optimization",
        LogFmt::TrueFalse,
        None,
    ),
    log_line(
        "             Options.enable_blob_direct_write",
        "enable_blob_direct_write",
        LogFmt::TrueFalse,
        Some("false"),
    ),
    log_line(
        "           Options.blob_direct_write_partitions",
        "blob_direct_write_partitions",
        LogFmt::Plain,
        Some("1"),
    ),
];

/// RocksDB's `WALRecoveryMode` names by value (the LOG prints the number).
const WAL_RECOVERY_MODES: &[&str] = &[
    "kTolerateCorruptedTailRecords",
    "kAbsoluteConsistency",
    "kPointInTimeRecovery",
    "kSkipAnyCorruptedRecords",
];

/// RocksDB's built-in `CompressionType` names by value 0..=7 (the LOG prints the number).
const COMPRESSION_CODES: &[&str] = &[
    "kNoCompression",
    "kSnappyCompression",
    "kZlibCompression",
    "kBZip2Compression",
    "kLZ4Compression",
    "kLZ4HCCompression",
    "kXpressCompression",
    "kZSTD",
];

/// The database part of the LOG's options dump, line by line as RocksDB 11.8.1's
/// `ImmutableDBOptions::Dump` then `MutableDBOptions::Dump` write it (options/db_options.cc);
/// the defaults are RocksDB's, printed for options Shale has no row for yet.
pub(crate) static LOG_DB_LINES: &[LogLine] = &[
    log_line("                        Options.error_if_exists", "error_if_exists", LogFmt::Plain, Some("0")),
    log_line(
        "                      Options.create_if_missing",
        "create_if_missing",
        LogFmt::Plain,
        Some("1"),
    ),
    log_line("                        Options.paranoid_checks", "paranoid_checks", LogFmt::Plain, Some("1")),
    log_line("                       Options.open_files_async", "open_files_async", LogFmt::Plain, Some("0")),
    log_line(
        "            Options.flush_verify_memtable_count",
        "flush_verify_memtable_count",
        LogFmt::Plain,
        Some("1"),
    ),
    log_line(
        "         Options.compaction_verify_record_count",
        "compaction_verify_record_count",
        LogFmt::Plain,
        Some("1"),
    ),
    log_line(
        "                              Options.track_and_verify_wals_in_manifest",
        "track_and_verify_wals_in_manifest",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "                              Options.track_and_verify_wals",
        "track_and_verify_wals",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "       Options.verify_sst_unique_id_in_manifest",
        "verify_sst_unique_id_in_manifest",
        LogFmt::Plain,
        Some("1"),
    ),
    log_line("                                    Options.env", "@env", LogFmt::Plain, None),
    log_line("                                     Options.fs", "@fs", LogFmt::Plain, None),
    log_line("                               Options.info_log", "@info_log", LogFmt::Plain, None),
    log_line(
        "               Options.max_file_opening_threads",
        "max_file_opening_threads",
        LogFmt::Plain,
        Some("16"),
    ),
    log_line(
        "               Options.read_io_executor_threads",
        "read_io_executor_threads",
        LogFmt::Plain,
        Some("1"),
    ),
    log_line("                             Options.statistics", "@statistics", LogFmt::Plain, None),
    log_line("                              Options.use_fsync", "use_fsync", LogFmt::Plain, Some("0")),
    log_line(
        "                      Options.max_log_file_size",
        "max_log_file_size",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "                  Options.log_file_time_to_roll",
        "log_file_time_to_roll",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "                      Options.keep_log_file_num",
        "keep_log_file_num",
        LogFmt::Plain,
        Some("1000"),
    ),
    log_line(
        "                   Options.recycle_log_file_num",
        "recycle_log_file_num",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "                    Options.async_wal_precreate",
        "async_wal_precreate",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line("                        Options.allow_fallocate", "allow_fallocate", LogFmt::Plain, Some("1")),
    log_line("                       Options.allow_mmap_reads", "allow_mmap_reads", LogFmt::Plain, Some("0")),
    log_line(
        "                      Options.allow_mmap_writes",
        "allow_mmap_writes",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line("                       Options.use_direct_reads", "use_direct_reads", LogFmt::Plain, Some("0")),
    log_line(
        "            Options.use_direct_io_for_compaction_reads",
        "use_direct_io_for_compaction_reads",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "        Options.use_direct_io_for_flush_and_compaction",
        "use_direct_io_for_flush_and_compaction",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "         Options.create_missing_column_families",
        "create_missing_column_families",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line("                             Options.db_log_dir", "@db_log_dir", LogFmt::Plain, None),
    log_line("                                Options.wal_dir", "@wal_dir", LogFmt::Plain, None),
    log_line(
        "               Options.table_cache_numshardbits",
        "table_cache_numshardbits",
        LogFmt::Plain,
        Some("6"),
    ),
    log_line("                        Options.WAL_ttl_seconds", "WAL_ttl_seconds", LogFmt::Plain, Some("0")),
    log_line(
        "                      Options.WAL_size_limit_MB",
        "WAL_size_limit_MB",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "                       Options.max_write_batch_group_size_bytes",
        "max_write_batch_group_size_bytes",
        LogFmt::Plain,
        Some("1048576"),
    ),
    log_line(
        "                    Options.is_fd_close_on_exec",
        "is_fd_close_on_exec",
        LogFmt::Plain,
        Some("1"),
    ),
    log_line(
        "                  Options.advise_random_on_open",
        "advise_random_on_open",
        LogFmt::Plain,
        Some("1"),
    ),
    log_line(
        "                   Options.db_write_buffer_size",
        "db_write_buffer_size",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line("                   Options.write_buffer_manager", "@write_buffer_manager", LogFmt::Plain, None),
    log_line(
        "                     Options.use_adaptive_mutex",
        "use_adaptive_mutex",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line("                           Options.rate_limiter", "@rate_limiter", LogFmt::Plain, None),
    log_line("    Options.sst_file_manager.rate_bytes_per_sec", "@sfm_rate", LogFmt::Plain, None),
    log_line(
        "                      Options.wal_recovery_mode",
        "wal_recovery_mode",
        LogFmt::Index(WAL_RECOVERY_MODES),
        Some("2"),
    ),
    log_line(
        "                 Options.enable_thread_tracking",
        "enable_thread_tracking",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "                 Options.enable_pipelined_write",
        "enable_pipelined_write",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line("                 Options.unordered_write", "unordered_write", LogFmt::Plain, Some("0")),
    log_line(
        "        Options.allow_concurrent_memtable_write",
        "allow_concurrent_memtable_write",
        LogFmt::Plain,
        Some("1"),
    ),
    log_line(
        "     Options.enable_write_thread_adaptive_yield",
        "enable_write_thread_adaptive_yield",
        LogFmt::Plain,
        Some("1"),
    ),
    log_line(
        "            Options.write_thread_max_yield_usec",
        "write_thread_max_yield_usec",
        LogFmt::Plain,
        Some("100"),
    ),
    log_line(
        "           Options.write_thread_slow_yield_usec",
        "write_thread_slow_yield_usec",
        LogFmt::Plain,
        Some("3"),
    ),
    log_line("                              Options.row_cache", "@row_cache", LogFmt::Plain, None),
    log_line("                             Options.wal_filter", "wal_filter", LogFmt::Callback, Some("None")),
    log_line(
        "            Options.avoid_flush_during_recovery",
        "avoid_flush_during_recovery",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "        Options.enforce_write_buffer_manager_during_recovery",
        "enforce_write_buffer_manager_during_recovery",
        LogFmt::Plain,
        Some("1"),
    ),
    log_line("            Options.allow_ingest_behind", "allow_ingest_behind", LogFmt::Plain, Some("0")),
    log_line("            Options.two_write_queues", "two_write_queues", LogFmt::Plain, Some("0")),
    log_line("            Options.manual_wal_flush", "manual_wal_flush", LogFmt::Plain, Some("0")),
    log_line(
        "            Options.wal_compression",
        "wal_compression",
        LogFmt::Index(COMPRESSION_CODES),
        Some("0"),
    ),
    log_line(
        "            Options.background_close_inactive_wals",
        "background_close_inactive_wals",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line("            Options.atomic_flush", "atomic_flush", LogFmt::Plain, Some("0")),
    log_line(
        "            Options.avoid_unnecessary_blocking_io",
        "avoid_unnecessary_blocking_io",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "            Options.prefix_seek_opt_in_only",
        "prefix_seek_opt_in_only",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "                Options.persist_stats_to_disk",
        "persist_stats_to_disk",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "                Options.write_dbid_to_manifest",
        "write_dbid_to_manifest",
        LogFmt::Plain,
        Some("1"),
    ),
    log_line(
        "                Options.reuse_manifest_on_open",
        "reuse_manifest_on_open",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line("                Options.write_identity_file", "write_identity_file", LogFmt::Plain, Some("1")),
    log_line("                Options.log_readahead_size", "log_readahead_size", LogFmt::Plain, Some("0")),
    log_line(
        "                Options.file_checksum_gen_factory",
        "file_checksum_gen_factory",
        LogFmt::Callback,
        Some("Unknown"),
    ),
    log_line(
        "                Options.best_efforts_recovery",
        "best_efforts_recovery",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "               Options.max_bgerror_resume_count",
        "max_bgerror_resume_count",
        LogFmt::Plain,
        Some("2147483647"),
    ),
    log_line(
        "           Options.bgerror_resume_retry_interval",
        "bgerror_resume_retry_interval",
        LogFmt::Plain,
        Some("1000000"),
    ),
    log_line("            Options.allow_data_in_errors", "allow_data_in_errors", LogFmt::Plain, Some("0")),
    log_line("            Options.db_host_id", "db_host_id", LogFmt::Plain, Some("__hostname__")),
    log_line(
        "            Options.enforce_single_del_contracts",
        "enforce_single_del_contracts",
        LogFmt::TrueFalse,
        Some("true"),
    ),
    log_line(
        "            Options.metadata_write_temperature",
        "metadata_write_temperature",
        LogFmt::Plain,
        Some("kUnknown"),
    ),
    log_line(
        "            Options.wal_write_temperature",
        "wal_write_temperature",
        LogFmt::Plain,
        Some("kUnknown"),
    ),
    log_line("            Options.max_background_jobs", "max_background_jobs", LogFmt::Plain, Some("2")),
    log_line(
        "            Options.max_background_compactions",
        "max_background_compactions",
        LogFmt::Plain,
        Some("-1"),
    ),
    log_line("            Options.max_subcompactions", "max_subcompactions", LogFmt::Plain, Some("1")),
    log_line(
        "            Options.avoid_flush_during_shutdown",
        "avoid_flush_during_shutdown",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "          Options.writable_file_max_buffer_size",
        "writable_file_max_buffer_size",
        LogFmt::Plain,
        Some("1048576"),
    ),
    log_line(
        "            Options.delayed_write_rate ",
        "delayed_write_rate",
        LogFmt::Plain,
        Some("16777216"),
    ),
    log_line("            Options.max_total_wal_size", "max_total_wal_size", LogFmt::Plain, Some("0")),
    log_line(
        "            Options.delete_obsolete_files_period_micros",
        "delete_obsolete_files_period_micros",
        LogFmt::Plain,
        Some("21600000000"),
    ),
    log_line(
        "                  Options.stats_dump_period_sec",
        "stats_dump_period_sec",
        LogFmt::Plain,
        Some("600"),
    ),
    log_line(
        "                Options.stats_persist_period_sec",
        "stats_persist_period_sec",
        LogFmt::Plain,
        Some("600"),
    ),
    log_line(
        "                Options.stats_history_buffer_size",
        "stats_history_buffer_size",
        LogFmt::Plain,
        Some("1048576"),
    ),
    log_line("                         Options.max_open_files", "max_open_files", LogFmt::Plain, Some("-1")),
    log_line("                         Options.bytes_per_sync", "bytes_per_sync", LogFmt::Plain, Some("0")),
    log_line(
        "                     Options.wal_bytes_per_sync",
        "wal_bytes_per_sync",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "                  Options.strict_bytes_per_sync",
        "strict_bytes_per_sync",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "      Options.compaction_readahead_size",
        "compaction_readahead_size",
        LogFmt::Plain,
        Some("2097152"),
    ),
    log_line(
        "                 Options.max_background_flushes",
        "max_background_flushes",
        LogFmt::Plain,
        Some("-1"),
    ),
    log_line(
        "                 Options.max_manifest_file_size",
        "max_manifest_file_size",
        LogFmt::Plain,
        Some("1073741824"),
    ),
    log_line(
        "                 Options.max_manifest_space_amp_pct",
        "max_manifest_space_amp_pct",
        LogFmt::Plain,
        Some("500"),
    ),
    log_line(
        "            Options.manifest_preallocation_size",
        "manifest_preallocation_size",
        LogFmt::Plain,
        Some("4194304"),
    ),
    log_line(
        "      Options.verify_manifest_content_on_close",
        "verify_manifest_content_on_close",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line(
        "         Options.optimize_manifest_for_recovery",
        "optimize_manifest_for_recovery",
        LogFmt::Plain,
        Some("0"),
    ),
    log_line("Options.daily_offpeak_time_utc", "daily_offpeak_time_utc", LogFmt::Plain, Some("")),
    log_line(
        "Options.max_compaction_trigger_wakeup_seconds",
        "max_compaction_trigger_wakeup_seconds",
        LogFmt::Plain,
        Some("43200"),
    ),
    log_line("                         Options.fast_sst_open", "fast_sst_open", LogFmt::Plain, Some("0")),
];

/// The LOG's value of `o` for `line` (not an `@` line): the row's getter in the LOG's
/// spelling, or the line's default when no row holds the entry.
pub(crate) fn log_value(o: &Options, line: &LogLine) -> Option<String> {
    let text = match line.entry.split_once('.') {
        Some((name, field)) => {
            let whole = find(Section::Cf, name)?.get(o)?;
            struct_fields(name, &whole).ok()?.into_iter().find(|(k, _)| *k == field)?.1.to_string()
        }
        // A row with no getter is one RocksDB's OPTIONS file does not hold either: the LOG
        // prints RocksDB's default, which such an option keeps in Shale.
        None => match find(Section::Cf, line.entry)
            .or_else(|| find(Section::Db, line.entry))
            .and_then(|r| r.get(o))
        {
            Some(v) => v,
            None => return line.default.map(str::to_string),
        },
    };
    Some(match line.fmt {
        LogFmt::Plain => match text.as_str() {
            "true" => "1".to_string(),
            "false" => "0".to_string(),
            _ => text,
        },
        LogFmt::TrueFalse => text,
        LogFmt::Callback => match text.as_str() {
            "nullptr" | "" => line.default.unwrap_or("None").to_string(),
            // A struct-valued callback (`{id=StringAppendOperator;delimiter=..;}`): its id.
            t if t.starts_with('{') => struct_fields(line.entry, t)
                .ok()
                .and_then(|f| f.into_iter().find(|(k, _)| *k == "id").map(|(_, v)| v.to_string()))
                .unwrap_or_else(|| t.to_string()),
            t => t.to_string(),
        },
        LogFmt::Extractor => {
            // RocksDB's built-in extractors' `Name()` is their class name; the OPTIONS
            // file's id adds the length ("rocksdb.FixedPrefix.3").
            match text.rsplit_once('.') {
                Some((class, len))
                    if (class == "rocksdb.FixedPrefix" || class == "rocksdb.CappedPrefix")
                        && len.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    class.to_string()
                }
                _ => text,
            }
        }
        LogFmt::Codec => compression(line.entry, &text).ok()?.to_table().name().to_string(),
        LogFmt::Index(names) => names.iter().position(|n| *n == text)?.to_string(),
    })
}

/// Parses a boolean option value (`true`/`false`/`1`/`0`), as RocksDB's `ParseBoolean`.
pub(crate) fn boolean(name: &str, v: &str) -> Result<bool> {
    match v {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(bad_value(name, v)),
    }
}

pub(crate) fn number<T: std::str::FromStr>(name: &str, v: &str) -> Result<T> {
    v.trim().parse().map_err(|_| bad_value(name, v))
}

pub(crate) fn bad_value(name: &str, v: &str) -> Error {
    Error::invalid_argument(format!("Error parsing option {name}: invalid value `{v}`"))
}

/// `v` without one pair of outer braces (and surrounding blanks).
fn unbraced(v: &str) -> &str {
    let t = v.trim();
    t.strip_prefix('{').and_then(|x| x.strip_suffix('}')).map_or(t, str::trim)
}

/// A customizable object's id and its other fields (`name=value`).
type CustomObject<'a> = (&'a str, Vec<(&'a str, &'a str)>);

/// A customizable object's text (RocksDB's `LoadSharedObject`): `nullptr` or empty (none), a
/// bare id, or `{id=<id>;field=value;...}` (braces optional). Returns the id and the other
/// fields.
fn custom_object<'a>(name: &str, v: &'a str) -> Result<Option<CustomObject<'a>>> {
    let t = unbraced(v);
    if t.is_empty() || t == "nullptr" {
        return Ok(None);
    }
    if !t.contains('=') {
        return Ok(Some((t, Vec::new())));
    }
    let mut fields = struct_fields(name, t)?;
    let Some(at) = fields.iter().position(|(k, _)| *k == "id") else {
        return Err(Error::invalid_argument(format!("Error parsing option {name}: No id given in `{v}`")));
    };
    let id = fields.remove(at).1;
    Ok(Some((id, fields)))
}

/// `sst_partitioner_factory`'s value (see its row).
fn parse_sst_partitioner(name: &str, v: &str) -> Result<Option<crate::SstPartitionerFactory>> {
    let Some((id, fields)) = custom_object(name, v)? else { return Ok(None) };
    if id != "SstPartitionerFixedPrefixFactory" {
        return Ok(None);
    }
    // RocksDB's registry makes the factory with length 0, then sets the fields given.
    let mut length = 0usize;
    for (k, x) in fields {
        match k {
            "length" => length = number(name, x)?,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "Error parsing option {name}: Could not find option: {k}"
                )))
            }
        }
    }
    Ok(Some(crate::SstPartitionerFactory::FixedPrefix { length }))
}

/// `table_properties_collectors`' value (RocksDB's vector of customizable objects: elements
/// split at top-level ':', each a custom object; ids it does not register are left out).
fn parse_collectors(name: &str, v: &str) -> Result<Vec<crate::table::deletion_collector::CollectorFactory>> {
    let t = unbraced(v);
    let mut elems = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in t.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.checked_sub(1).ok_or_else(|| bad_value(name, v))?,
            ':' if depth == 0 => {
                elems.push(&t[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(bad_value(name, v));
    }
    elems.push(&t[start..]);
    let mut out = Vec::new();
    for e in elems {
        let Some((id, fields)) = custom_object(name, e)? else { continue };
        match crate::table::deletion_collector::CollectorFactory::from_fields(id, &fields) {
            Ok(Some(f)) => out.push(f),
            Ok(None) => {}
            Err(why) => return Err(Error::invalid_argument(format!("Error parsing option {name}: {why}"))),
        }
    }
    Ok(out)
}

/// The fields of a struct-valued option, `{a=1;b=2;}` (braces optional). A field's value
/// may itself be a struct (`{a={x=1;y=2;};b=3}`): its ';'s stay inside it.
/// The index of the `}` closing the `{` at the start of `t`.
fn closing_brace(t: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in t.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// RocksDB's `compaction_options_fifo.file_temperature_age_thresholds` text (its
/// `ParseVector` with separator `:` over `FileTemperatureAge` structs): `{{age=10;
/// temperature=kWarm}:{age=20;temperature=kCold}}`, or one element without the outer braces;
/// empty for none. Fields left out are RocksDB's defaults (age 0, kUnknown).
fn temperature_ages(name: &str, v: &str) -> Result<Vec<(u64, u8)>> {
    let mut t = v.trim();
    if t.starts_with('{') && closing_brace(t) == Some(t.len() - 1) {
        t = &t[1..t.len() - 1];
    }
    let mut out = Vec::new();
    let mut rest = t.trim_start();
    while !rest.is_empty() {
        let (token, after) = if rest.starts_with('{') {
            let end = closing_brace(rest).ok_or_else(|| bad_value(name, v))?;
            let after = rest[end + 1..].trim_start();
            let after = match after.strip_prefix(':') {
                Some(a) => a,
                None if after.is_empty() => after,
                None => return Err(bad_value(name, v)),
            };
            (&rest[1..end], after)
        } else {
            match rest.find(':') {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => (rest, ""),
            }
        };
        let (mut age, mut temperature) = (0u64, 0u8);
        for (k, x) in struct_fields(name, token)? {
            match k {
                "age" => age = number(k, x)?,
                "temperature" => temperature = parse_enum(enum_names::TEMPERATURE, k, x)?,
                _ => return Err(Error::invalid_argument(format!("Unrecognized option: {name}.{k}"))),
            }
        }
        out.push((age, temperature));
        rest = after.trim_start();
    }
    Ok(out)
}

/// The text RocksDB's `SerializeVector` writes for the thresholds (see [`temperature_ages`]).
fn temperature_ages_text(ages: &[(u64, u8)]) -> String {
    if ages.is_empty() {
        return String::new();
    }
    let items: Vec<String> = ages
        .iter()
        .map(|&(age, t)| {
            format!("{{age={age};temperature={};}}", enum_names::name_of(enum_names::TEMPERATURE, t))
        })
        .collect();
    format!("{{{}}}", items.join(":"))
}

pub(crate) fn struct_fields<'a>(name: &str, v: &'a str) -> Result<Vec<(&'a str, &'a str)>> {
    let t = v.trim();
    let t = t.strip_prefix('{').and_then(|t| t.strip_suffix('}')).unwrap_or(t);
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in t.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.checked_sub(1).ok_or_else(|| bad_value(name, v))?,
            ';' if depth == 0 => {
                parts.push(&t[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(bad_value(name, v));
    }
    parts.push(&t[start..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(|f| f.split_once('=').map(|(k, x)| (k.trim(), x.trim())).ok_or_else(|| bad_value(name, v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_per_section() {
        for (i, a) in ROWS.iter().enumerate() {
            for b in &ROWS[i + 1..] {
                assert!(!(a.section == b.section && a.name == b.name), "{} twice", a.name);
            }
        }
    }

    /// Every row with a getter reads back what its setter applied (a fixed point).
    #[test]
    fn getters_read_back_setters() {
        let o = Options::default();
        for r in ROWS {
            let Some(text) = r.get(&o) else { continue };
            if r.kind == Kind::Function {
                continue;
            }
            let mut back = Options::default();
            assert!(r.set(&mut back, &text).unwrap(), "{}={text} not applied", r.name);
            assert_eq!(r.get(&back).as_deref(), Some(text.as_str()), "{}", r.name);
        }
    }

    /// The options RocksDB 11.8.1 marks `kDeprecated` (db_options.cc, cf_options.cc) that
    /// have a row: accepted with any text, never written (no getter).
    #[test]
    fn deprecated_rows_accept_anything_and_are_never_written() {
        let db = [
            "allow_os_buffer",
            "base_background_compactions",
            "use_direct_writes",
            "disableDataSync",
            "experimental_allow_mempurge",
            "experimental_mempurge_policy",
            "skip_log_error_on_recovery",
            "skip_checking_sst_file_sizes_on_db_open",
            "new_table_reader_for_compaction_inputs",
            "random_access_max_buffer_size",
            "preserve_deletes",
            "seq_per_batch",
        ];
        let cf = [
            "filter_deletes",
            "check_flush_compaction_key_order",
            "verify_checksums_in_compaction",
            "hard_rate_limit",
            "soft_rate_limit",
            "ignore_max_compaction_bytes_for_input",
            "expanded_compaction_factor",
            "max_grandparent_overlap_factor",
            "source_compaction_factor",
            "memtable_prefix_bloom_huge_page_tlb_size",
            "memtable_prefix_bloom_bits",
            "memtable_prefix_bloom_probes",
            "min_partial_merge_operands",
            "snap_refresh_nanos",
            "bottommost_temperature",
            "compaction_measure_io_stats",
            "purge_redundant_kvs_while_flush",
            "level_compaction_dynamic_file_size",
            "max_mem_compaction_level",
            "max_write_buffer_number_to_maintain",
            "rate_limit_delay_max_milliseconds",
        ];
        let sections = db.iter().map(|n| (Section::Db, *n)).chain(cf.iter().map(|n| (Section::Cf, *n)));
        for (section, name) in sections {
            let r = find(section, name).unwrap_or_else(|| panic!("{name} has no row"));
            let mut o = Options::default();
            assert!(r.set(&mut o, "no value RocksDB parses").unwrap(), "{name}");
            assert!(r.get(&o).is_none(), "{name} has a getter");
            let f = crate::db::options_writer::options_file_of(&o, &[("default", &o)]);
            assert!(f.db_option(name).is_none() && f.cfs[0].option(name).is_none(), "{name} written");
        }
    }

    #[test]
    fn every_log_entry_has_a_value() {
        let o = Options::default();
        let line = |e: &str| LOG_CF_LINES.iter().find(|l| l.entry == e).unwrap();
        for l in LOG_CF_LINES.iter().filter(|l| !l.entry.starts_with('@')) {
            assert!(log_value(&o, l).is_some(), "{}", l.entry);
        }
        assert_eq!(log_value(&o, line("disable_auto_compactions")).as_deref(), Some("0"));
        assert_eq!(log_value(&o, line("compaction_options_universal.size_ratio")).as_deref(), Some("1"));
        assert_eq!(log_value(&o, line("enable_blob_files")).as_deref(), Some("false"));
        assert_eq!(log_value(&o, line("merge_operator")).as_deref(), Some("None"));
        assert_eq!(log_value(&o, line("prefix_extractor")).as_deref(), Some("nullptr"));
        assert_eq!(log_value(&o, line("blob_compression_type")).as_deref(), Some("NoCompression"));
        assert_eq!(log_value(&o, line("max_bytes_for_level_multiplier")).as_deref(), Some("10.000000"));
        let mut o = Options::default();
        o.set_prefix_extractor(crate::SliceTransform::create_fixed_prefix(3));
        o.set_merge_operator_associative("concat", |_, _, _| None);
        assert_eq!(log_value(&o, line("prefix_extractor")).as_deref(), Some("rocksdb.FixedPrefix"));
        assert_eq!(log_value(&o, line("merge_operator")).as_deref(), Some("concat"));
    }
}

#[cfg(test)]
mod recorded_tests {
    use super::*;

    /// `bloom_locality` is kept and written, as RocksDB 11.8.1 does (and read back).
    #[test]
    fn bloom_locality_is_recorded() {
        let mut o = Options::default();
        o.set_bloom_locality(4);
        assert!(o.check_supported().is_ok());
        let f = crate::db::options_writer::options_file_of(&o, &[("default", &o)]);
        assert_eq!(f.cfs[0].option("bloom_locality"), Some("4"));
        let mut back = Options::default();
        assert!(find(Section::Cf, "bloom_locality").unwrap().set(&mut back, "4").unwrap());
        assert_eq!(back.bloom_locality, 4);
    }
}
