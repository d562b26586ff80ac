//! RocksDB's remote-compaction messages: `CompactionServiceInput` (what the primary hands
//! a worker: `input.bin` of ldb's `remote_compaction_primary`) and `CompactionServiceResult`
//! (what the worker hands back: `result.bin`). RocksDB 11.8.1's
//! `db/compaction/compaction_service_job.cc` writes and reads them with its options-string
//! serializer (`OptionTypeInfo::SerializeType`). Format documented in
//! docs/compaction-service.md.
//!
//! ```text
//! message := version:fixed32 (little-endian, 1 = kOptionsString) fields
//! fields  := { name "=" value ";" }            (any order; unknown names ignored)
//! value   := scalar | "{" fields "}"           (a struct)
//!          | list                              (a vector or array, items ":"-separated)
//! list    := item { ":" item }  |  "{" item { ":" item } "}"
//!            (an item holding ":" is wrapped in "{...}"; a list holding "=" is wrapped
//!             in "{...}" as a whole, so a vector of structs reads "{{{a=1;...}}}")
//! scalar  := decimal integer | "true" | "false" | uppercase hex of the bytes
//!            ("encoded string": cf_name, db_id, file names, keys, checksums)
//!
//! CompactionServiceInput:  cf_name(hex) snapshots(list u64) input_files(list hex)
//!   output_level(int) db_id(hex) has_begin(bool) begin(hex) has_end(bool) end(hex)
//!   options_file_number(u64)
//! CompactionServiceResult: status={code;subcode;severity;message(hex)}
//!   output_files=list of { file_name(hex) file_size smallest_seqno largest_seqno
//!     smallest_internal_key(hex) largest_internal_key(hex) oldest_ancester_time
//!     file_creation_time epoch_number file_checksum(hex) file_checksum_func_name(hex)
//!     paranoid_hash marked_for_compaction unique_id(list of 2 u64)
//!     table_properties={...TableProperties::Serialize...} is_proximal_level_output
//!     file_temperature(kUnknown|kHot|...) }
//!   output_level(int) output_path(hex) bytes_read bytes_written
//!   stats={CompactionJobStats} internal_stats={output_level_stats={..} has_proximal_level_output
//!     proximal_level_stats={..}}
//! ```
//!
//! Reading is as RocksDB's (`ignore_unknown_options`): unknown fields are skipped, missing
//! ones keep their defaults. A malformed message (wrong version, unbalanced braces, a field
//! without `=`, bad hex or number) is an error naming the field, never a panic.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::table::properties::{names, TableProperties};

/// The only message version RocksDB 11.8.1 writes and reads (`kOptionsString`).
pub const FORMAT_VERSION: u32 = 1;

// ---------------------------------------------------------------------------------------
// The options-string grammar

/// Uppercase hex of `b` (RocksDB's `Slice::ToString(true)`, an "encoded string").
pub fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push_str(&format!("{x:02X}"));
    }
    s
}

fn unhex(field: &str, s: &str) -> Result<Vec<u8>> {
    let bad = || Error::invalid_argument(format!("compaction service: bad hex in {field}: {s:?}"));
    if !s.len().is_multiple_of(2) {
        return Err(bad());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()).ok_or_else(bad))
        .collect()
}

fn unhex_str(field: &str, s: &str) -> Result<String> {
    String::from_utf8(unhex(field, s)?)
        .map_err(|_| Error::invalid_argument(format!("compaction service: {field} is not UTF-8")))
}

fn num<T: std::str::FromStr>(field: &str, s: &str) -> Result<T> {
    s.trim()
        .parse()
        .map_err(|_| Error::invalid_argument(format!("compaction service: bad number in {field}: {s:?}")))
}

fn boolean(field: &str, s: &str) -> Result<bool> {
    match s.trim() {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(Error::invalid_argument(format!("compaction service: bad boolean in {field}: {s:?}"))),
    }
}

/// The end (exclusive) of the token starting at `start`, the byte index of `delim` or the
/// end of `s`; a token starting with `{` runs to its matching `}` (RocksDB's `NextToken`).
/// Returns (token without its outer braces when braced, index after the delimiter).
fn next_token(s: &str, delim: u8, start: usize) -> Result<(&str, usize)> {
    let b = s.as_bytes();
    let mut i = start;
    while i < b.len() && b[i] == b' ' {
        i += 1;
    }
    if i < b.len() && b[i] == b'{' {
        let mut depth = 0usize;
        let mut j = i;
        while j < b.len() {
            match b[j] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        if j >= b.len() {
            return Err(Error::invalid_argument(format!(
                "compaction service: mismatched braces at offset {i} of {s:?}"
            )));
        }
        let token = &s[i + 1..j];
        let mut k = j + 1;
        while k < b.len() && b[k] == b' ' {
            k += 1;
        }
        if k < b.len() && b[k] != delim {
            return Err(Error::invalid_argument(format!(
                "compaction service: missing delimiter after braces at offset {k} of {s:?}"
            )));
        }
        Ok((token, (k + 1).min(b.len() + 1)))
    } else {
        let end = b[i..].iter().position(|&c| c == delim).map_or(b.len(), |p| i + p);
        Ok((s[i..end].trim_end(), end + 1))
    }
}

/// Strips one `{...}` around the whole of `s`, if its first brace closes at its end.
fn strip_outer_braces(s: &str) -> &str {
    let b = s.as_bytes();
    if b.len() < 2 || b[0] != b'{' || b[b.len() - 1] != b'}' {
        return s;
    }
    let mut depth = 0usize;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 && i != b.len() - 1 {
                    return s;
                }
            }
            _ => {}
        }
    }
    &s[1..s.len() - 1]
}

/// `name=value;...` into its fields, in order (a braced value without its braces).
pub fn parse_fields(s: &str) -> Result<Vec<(String, String)>> {
    let s = strip_outer_braces(s.trim());
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < s.len() {
        let rest = &s[pos..];
        if rest.trim().is_empty() {
            break;
        }
        let eq = rest.find('=').ok_or_else(|| {
            Error::invalid_argument(format!("compaction service: field without '=' at offset {pos} of {s:?}"))
        })?;
        let name = rest[..eq].trim().to_string();
        let (value, next) = next_token(s, b';', pos + eq + 1)?;
        out.push((name, value.to_string()));
        pos = next;
    }
    Ok(out)
}

/// The items of a list (`a:b:c` or `{a:b:c}`; a braced item without its braces).
pub fn parse_list(s: &str) -> Result<Vec<String>> {
    let s = strip_outer_braces(s.trim());
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < s.len() {
        let (item, next) = next_token(s, b':', pos)?;
        out.push(item.to_string());
        pos = next;
    }
    Ok(out)
}

/// Writes `name=value;` fields.
#[derive(Default)]
struct Writer(String);

impl Writer {
    fn field(&mut self, name: &str, value: impl std::fmt::Display) {
        self.0.push_str(&format!("{name}={value};"));
    }
    fn hex(&mut self, name: &str, v: &[u8]) {
        self.field(name, hex(v));
    }
    fn strukt(&mut self, name: &str, inner: Writer) {
        self.field(name, format_args!("{{{}}}", inner.0));
    }
}

/// RocksDB's `SerializeVector` of serialized items with separator `:`.
fn write_list(items: &[String]) -> String {
    let mut result = String::new();
    let mut printed = 0;
    for item in items.iter().filter(|i| !i.is_empty()) {
        if printed > 0 {
            result.push(':');
        }
        printed += 1;
        if item.contains(':') {
            result.push_str(&format!("{{{item}}}"));
        } else {
            result.push_str(item);
        }
    }
    if result.contains('=') || (printed > 1 && result.starts_with('{')) {
        format!("{{{result}}}")
    } else {
        result
    }
}

// ---------------------------------------------------------------------------------------
// CompactionServiceInput

/// What the primary asks a worker to compact (RocksDB's `CompactionServiceInput`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactionServiceInput {
    pub cf_name: String,
    /// Live snapshots of the primary, ascending.
    pub snapshots: Vec<u64>,
    /// Table file names (`000023.sst`) of the inputs, in the primary's level order.
    pub input_files: Vec<String>,
    pub output_level: i32,
    pub db_id: String,
    /// A subcompaction's range: internal keys as RocksDB's `Slice::ToString`.
    pub has_begin: bool,
    pub begin: Vec<u8>,
    pub has_end: bool,
    pub end: Vec<u8>,
    /// The OPTIONS file the worker is to load.
    pub options_file_number: u64,
}

fn check_version<'a>(data: &'a [u8], what: &str) -> Result<&'a str> {
    if data.len() <= 4 {
        return Err(Error::invalid_argument(format!("Invalid {what} string")));
    }
    let v = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
    if v != FORMAT_VERSION {
        return Err(Error::not_supported(format!(
            "Compaction Service {what} data version not supported: {v}"
        )));
    }
    std::str::from_utf8(&data[4..]).map_err(|e| {
        Error::invalid_argument(format!("{what}: not UTF-8 text at offset {}", 4 + e.valid_up_to()))
    })
}

impl CompactionServiceInput {
    pub fn decode(data: &[u8]) -> Result<Self> {
        let text = check_version(data, "CompactionServiceInput")?;
        let mut r = CompactionServiceInput::default();
        for (name, v) in parse_fields(text)? {
            match name.as_str() {
                "cf_name" => r.cf_name = unhex_str("cf_name", &v)?,
                "snapshots" => {
                    r.snapshots =
                        parse_list(&v)?.iter().map(|x| num("snapshots", x)).collect::<Result<_>>()?
                }
                "input_files" => {
                    r.input_files =
                        parse_list(&v)?.iter().map(|x| unhex_str("input_files", x)).collect::<Result<_>>()?
                }
                "output_level" => r.output_level = num("output_level", &v)?,
                "db_id" => r.db_id = unhex_str("db_id", &v)?,
                "has_begin" => r.has_begin = boolean("has_begin", &v)?,
                "begin" => r.begin = unhex("begin", &v)?,
                "has_end" => r.has_end = boolean("has_end", &v)?,
                "end" => r.end = unhex("end", &v)?,
                "options_file_number" => r.options_file_number = num("options_file_number", &v)?,
                _ => {}
            }
        }
        Ok(r)
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.field("options_file_number", self.options_file_number);
        w.field("has_end", self.has_end);
        w.field("has_begin", self.has_begin);
        w.hex("db_id", self.db_id.as_bytes());
        w.field("output_level", self.output_level);
        w.hex("end", &self.end);
        let files: Vec<String> = self.input_files.iter().map(|f| hex(f.as_bytes())).collect();
        w.field("input_files", write_list(&files));
        w.hex("begin", &self.begin);
        let snaps: Vec<String> = self.snapshots.iter().map(|s| s.to_string()).collect();
        w.field("snapshots", write_list(&snaps));
        w.hex("cf_name", self.cf_name.as_bytes());
        let mut out = FORMAT_VERSION.to_le_bytes().to_vec();
        out.extend_from_slice(w.0.as_bytes());
        out
    }
}

// ---------------------------------------------------------------------------------------
// CompactionServiceResult

/// A RocksDB `Status` as the result carries it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServiceStatus {
    /// RocksDB's `Status::Code` (0 = OK).
    pub code: u8,
    pub subcode: u8,
    pub severity: u8,
    pub message: String,
}

/// One output table (RocksDB's `CompactionServiceOutputFile`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServiceOutputFile {
    pub file_name: String,
    pub file_size: u64,
    pub smallest_seqno: u64,
    pub largest_seqno: u64,
    pub smallest_internal_key: Vec<u8>,
    pub largest_internal_key: Vec<u8>,
    pub oldest_ancester_time: u64,
    pub file_creation_time: u64,
    pub epoch_number: u64,
    pub file_checksum: Vec<u8>,
    pub file_checksum_func_name: String,
    pub paranoid_hash: u64,
    pub marked_for_compaction: bool,
    pub unique_id: [u64; 2],
    /// The table's properties in RocksDB's `TableProperties::Serialize` fields (numbers as
    /// decimal text, strings decoded from hex), and its user-collected properties.
    pub table_properties: BTreeMap<String, String>,
    pub user_collected_properties: BTreeMap<Vec<u8>, Vec<u8>>,
    pub is_proximal_level_output: bool,
    /// `kUnknown`, `kHot`, `kWarm`, `kCool`, `kCold`, `kIce`.
    pub file_temperature: String,
}

/// The fields of `TableProperties::Serialize` that are encoded strings.
const TP_STRING_FIELDS: &[&str] = &[
    "db_id",
    "db_session_id",
    "db_host_id",
    "column_family_name",
    "filter_policy_name",
    "comparator_name",
    "merge_operator_name",
    "prefix_extractor_name",
    "property_collectors_names",
    "compression_name",
    "compression_options",
    "seqno_to_time_mapping",
];

/// Table properties Shale keeps raw (varint64) whose serialized name differs from the
/// property name.
const TP_RAW_U64: &[(&str, &str)] = &[
    ("uncompressed_data_size", "rocksdb.uncompressed.data.size"),
    ("udi_is_primary_index", names::UDI_IS_PRIMARY_INDEX),
    ("num_data_blocks_compression_rejected", names::NUM_DATA_BLOCKS_COMPRESSION_REJECTED),
    ("num_data_blocks_compression_bypassed", names::NUM_DATA_BLOCKS_COMPRESSION_BYPASSED),
    ("num_uniform_blocks", names::NUM_UNIFORM_BLOCKS),
    ("newest_key_time", names::NEWEST_KEY_TIME),
    ("tail_start_offset", names::TAIL_START_OFFSET),
    ("user_defined_timestamps_persisted", names::USER_DEFINED_TIMESTAMPS_PERSISTED),
    ("key_largest_seqno", names::KEY_LARGEST_SEQNO),
    ("key_smallest_seqno", names::KEY_SMALLEST_SEQNO),
    ("data_block_restart_interval", names::DATA_BLOCK_RESTART_INTERVAL),
    ("index_block_restart_interval", names::INDEX_BLOCK_RESTART_INTERVAL),
    ("separate_key_value_in_data_block", names::SEPARATE_KEY_VALUE_IN_DATA_BLOCK),
];

/// Properties RocksDB reads into named fields, not into `user_collected_properties`.
fn is_predefined_property(name: &str) -> bool {
    name.starts_with("rocksdb.")
        && !name.starts_with("rocksdb.block.based.table.")
        && name != "rocksdb.external_sst_file.version"
        && name != "rocksdb.external_sst_file.global_seqno"
}

impl ServiceOutputFile {
    /// The serialized-field view of a table's properties (what RocksDB's worker sends).
    pub fn set_table_properties(&mut self, p: &TableProperties) {
        let mut t = BTreeMap::new();
        let nums: [(&str, u64); 24] = [
            ("orig_file_number", p.orig_file_number),
            ("data_size", p.data_size),
            ("index_size", p.index_size),
            ("index_partitions", p.index_partitions),
            ("top_level_index_size", p.top_level_index_size),
            ("index_key_is_user_key", p.index_key_is_user_key),
            ("index_value_is_delta_encoded", p.index_value_is_delta_encoded),
            ("filter_size", p.filter_size),
            ("raw_key_size", p.raw_key_size),
            ("raw_value_size", p.raw_value_size),
            ("num_data_blocks", p.num_data_blocks),
            ("num_entries", p.num_entries),
            ("num_filter_entries", p.num_filter_entries),
            ("num_deletions", p.num_deletions),
            ("num_merge_operands", p.num_merge_operands),
            ("num_range_deletions", p.num_range_deletions),
            ("format_version", p.format_version),
            ("fixed_key_len", p.fixed_key_len),
            ("column_family_id", p.column_family_id),
            ("creation_time", p.creation_time),
            ("oldest_key_time", p.oldest_key_time),
            ("file_creation_time", p.file_creation_time),
            ("slow_compression_estimated_data_size", p.slow_compression_estimated_data_size),
            ("fast_compression_estimated_data_size", p.fast_compression_estimated_data_size),
        ];
        for (k, v) in nums {
            t.insert(k.to_string(), v.to_string());
        }
        for (k, prop) in TP_RAW_U64 {
            // RocksDB's TableProperties default `user_defined_timestamps_persisted` to 1
            // (the property is written only when 0); the others to 0.
            let absent = u64::from(*prop == names::USER_DEFINED_TIMESTAMPS_PERSISTED);
            t.insert(k.to_string(), p.raw_u64(prop).unwrap_or(absent).to_string());
        }
        t.insert("external_sst_file_global_seqno_offset".into(), "0".into());
        let strs: [(&str, &str); 11] = [
            ("db_id", &p.db_id),
            ("db_session_id", &p.db_session_id),
            ("db_host_id", &p.db_host_id),
            ("column_family_name", &p.column_family_name),
            ("filter_policy_name", &p.filter_policy_name),
            ("comparator_name", &p.comparator_name),
            ("merge_operator_name", &p.merge_operator_name),
            ("prefix_extractor_name", &p.prefix_extractor_name),
            ("property_collectors_names", &p.property_collectors_names),
            ("compression_name", &p.compression_name),
            ("compression_options", &p.compression_options),
        ];
        for (k, v) in strs {
            t.insert(k.to_string(), v.to_string());
        }
        t.insert("seqno_to_time_mapping".into(), String::from_utf8_lossy(&p.seqno_to_time_mapping).into());
        self.table_properties = t;
        self.user_collected_properties = p
            .user_collected
            .iter()
            .filter(|(k, _)| !is_predefined_property(k))
            .map(|(k, v)| (k.as_bytes().to_vec(), v.clone()))
            .collect();
    }

    /// A numeric table property by its serialized name (0 when absent).
    pub fn table_property_u64(&self, name: &str) -> u64 {
        self.table_properties.get(name).and_then(|v| v.parse().ok()).unwrap_or(0)
    }

    fn decode(text: &str) -> Result<Self> {
        let mut f = ServiceOutputFile { file_temperature: "kUnknown".into(), ..Default::default() };
        for (name, v) in parse_fields(text)? {
            let n = name.as_str();
            match n {
                "file_name" => f.file_name = unhex_str(n, &v)?,
                "file_size" => f.file_size = num(n, &v)?,
                "smallest_seqno" => f.smallest_seqno = num(n, &v)?,
                "largest_seqno" => f.largest_seqno = num(n, &v)?,
                "smallest_internal_key" => f.smallest_internal_key = unhex(n, &v)?,
                "largest_internal_key" => f.largest_internal_key = unhex(n, &v)?,
                "oldest_ancester_time" => f.oldest_ancester_time = num(n, &v)?,
                "file_creation_time" => f.file_creation_time = num(n, &v)?,
                "epoch_number" => f.epoch_number = num(n, &v)?,
                "file_checksum" => f.file_checksum = unhex(n, &v)?,
                "file_checksum_func_name" => f.file_checksum_func_name = unhex_str(n, &v)?,
                "paranoid_hash" => f.paranoid_hash = num(n, &v)?,
                "marked_for_compaction" => f.marked_for_compaction = boolean(n, &v)?,
                "unique_id" => {
                    let items = parse_list(&v)?;
                    for (i, x) in items.iter().take(2).enumerate() {
                        f.unique_id[i] = num(n, x)?;
                    }
                }
                "is_proximal_level_output" => f.is_proximal_level_output = boolean(n, &v)?,
                "file_temperature" => f.file_temperature = v.trim().to_string(),
                "table_properties" => {
                    for (k, tv) in parse_fields(&v)? {
                        match k.as_str() {
                            "user_collected_properties" => {
                                for (uk, uv) in parse_fields(&tv)? {
                                    f.user_collected_properties.insert(unhex(&k, &uk)?, unhex(&k, &uv)?);
                                }
                            }
                            "readable_properties" => {}
                            s if TP_STRING_FIELDS.contains(&s) => {
                                let bytes = unhex(s, &tv)?;
                                f.table_properties.insert(k, String::from_utf8_lossy(&bytes).into_owned());
                            }
                            _ => {
                                num::<u64>(&k, &tv)?;
                                f.table_properties.insert(k, tv.trim().to_string());
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(f)
    }

    fn encode(&self) -> String {
        let mut tp = Writer::default();
        tp.field("readable_properties", "{}");
        let mut uc = Writer::default();
        for (k, v) in &self.user_collected_properties {
            uc.hex(&hex(k), v);
        }
        tp.strukt("user_collected_properties", uc);
        for (k, v) in &self.table_properties {
            if TP_STRING_FIELDS.contains(&k.as_str()) {
                tp.hex(k, v.as_bytes());
            } else {
                tp.field(k, v);
            }
        }
        let mut w = Writer::default();
        w.field("file_temperature", &self.file_temperature);
        w.field("is_proximal_level_output", self.is_proximal_level_output);
        w.strukt("table_properties", tp);
        w.field("unique_id", write_list(&[self.unique_id[0].to_string(), self.unique_id[1].to_string()]));
        w.hex("file_checksum", &self.file_checksum);
        w.field("file_size", self.file_size);
        w.field("smallest_seqno", self.smallest_seqno);
        w.field("largest_seqno", self.largest_seqno);
        w.hex("largest_internal_key", &self.largest_internal_key);
        w.field("oldest_ancester_time", self.oldest_ancester_time);
        w.hex("smallest_internal_key", &self.smallest_internal_key);
        w.field("paranoid_hash", self.paranoid_hash);
        w.field("file_creation_time", self.file_creation_time);
        w.hex("file_name", self.file_name.as_bytes());
        w.field("epoch_number", self.epoch_number);
        w.hex("file_checksum_func_name", self.file_checksum_func_name.as_bytes());
        w.field("marked_for_compaction", self.marked_for_compaction);
        format!("{{{}}}", w.0)
    }
}

/// RocksDB's `CompactionJobStats` fields, in the order this module writes them; all are
/// numbers except the booleans and hex strings named below.
pub const JOB_STATS_FIELDS: &[&str] = &[
    "elapsed_micros",
    "cpu_micros",
    "has_accurate_num_input_records",
    "num_input_records",
    "num_blobs_read",
    "num_input_files",
    "num_input_files_at_output_level",
    "num_output_records",
    "num_output_files",
    "num_output_files_blob",
    "is_full_compaction",
    "is_manual_compaction",
    "is_remote_compaction",
    "total_input_bytes",
    "total_blob_bytes_read",
    "total_output_bytes",
    "total_output_bytes_blob",
    "num_records_replaced",
    "total_input_raw_key_bytes",
    "total_input_raw_value_bytes",
    "num_input_deletion_records",
    "num_expired_deletion_records",
    "num_corrupt_keys",
    "file_write_nanos",
    "file_range_sync_nanos",
    "file_fsync_nanos",
    "file_prepare_write_nanos",
    "smallest_output_key_prefix",
    "largest_output_key_prefix",
    "num_single_del_fallthru",
    "num_single_del_mismatch",
];

const JOB_STATS_BOOLS: &[&str] =
    &["has_accurate_num_input_records", "is_full_compaction", "is_manual_compaction", "is_remote_compaction"];
const JOB_STATS_HEX: &[&str] = &["smallest_output_key_prefix", "largest_output_key_prefix"];

/// RocksDB's `InternalStats::CompactionStats` fields (all numbers but `counts`, a list of
/// `COMPACTION_REASON_COUNTS` ints: one per CompactionReason but the last).
pub const LEVEL_STATS_FIELDS: &[&str] = &[
    "micros",
    "cpu_micros",
    "bytes_read_non_output_levels",
    "bytes_read_output_level",
    "bytes_skipped_non_output_levels",
    "bytes_skipped_output_level",
    "bytes_read_blob",
    "bytes_written",
    "bytes_written_blob",
    "bytes_moved",
    "num_input_files_in_non_output_levels",
    "num_input_files_in_output_level",
    "num_filtered_input_files_in_non_output_levels",
    "num_filtered_input_files_in_output_level",
    "num_output_files",
    "num_output_files_blob",
    "num_input_records",
    "num_dropped_records",
    "num_output_records",
    "count",
];

/// How many CompactionReason counts RocksDB 11.8.1 writes (`kNumOfReasons - 1`).
pub const COMPACTION_REASON_COUNTS: usize = 20;

/// One level's compaction statistics: numbers by field name, and the per-reason counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LevelStats {
    pub values: BTreeMap<String, u64>,
    pub counts: Vec<i64>,
}

impl LevelStats {
    pub fn get(&self, name: &str) -> u64 {
        self.values.get(name).copied().unwrap_or(0)
    }
    pub fn set(&mut self, name: &str, v: u64) {
        self.values.insert(name.to_string(), v);
    }

    fn decode(text: &str) -> Result<Self> {
        let mut s = LevelStats::default();
        for (k, v) in parse_fields(text)? {
            if k == "counts" {
                s.counts = parse_list(&v)?.iter().map(|x| num("counts", x)).collect::<Result<_>>()?;
            } else if LEVEL_STATS_FIELDS.contains(&k.as_str()) {
                let n: i64 = num(&k, &v)?;
                s.values.insert(k, n as u64);
            }
        }
        Ok(s)
    }

    fn encode(&self) -> Writer {
        let mut w = Writer::default();
        let mut counts = self.counts.clone();
        counts.resize(COMPACTION_REASON_COUNTS, 0);
        let counts: Vec<String> = counts.iter().map(|c| c.to_string()).collect();
        w.field("counts", write_list(&counts));
        for f in LEVEL_STATS_FIELDS {
            w.field(f, self.get(f));
        }
        w
    }
}

/// What the worker hands back (RocksDB's `CompactionServiceResult`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactionServiceResult {
    pub status: ServiceStatus,
    pub output_files: Vec<ServiceOutputFile>,
    pub output_level: i32,
    /// The directory holding the output files, as the worker named it.
    pub output_path: String,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// `CompactionJobStats`: numbers (booleans as 0/1) by field name; the two key prefixes
    /// are in `stats_prefixes`.
    pub stats: BTreeMap<String, u64>,
    pub stats_prefixes: BTreeMap<String, Vec<u8>>,
    pub output_level_stats: LevelStats,
    pub has_proximal_level_output: bool,
    pub proximal_level_stats: LevelStats,
}

impl CompactionServiceResult {
    pub fn stat(&self, name: &str) -> u64 {
        self.stats.get(name).copied().unwrap_or(0)
    }

    pub fn decode(data: &[u8]) -> Result<Self> {
        let text = check_version(data, "CompactionServiceResult")?;
        let mut r = CompactionServiceResult::default();
        for (name, v) in parse_fields(text)? {
            let n = name.as_str();
            match n {
                "status" => {
                    for (k, sv) in parse_fields(&v)? {
                        match k.as_str() {
                            "code" => r.status.code = num(&k, &sv)?,
                            "subcode" => r.status.subcode = num(&k, &sv)?,
                            "severity" => r.status.severity = num(&k, &sv)?,
                            "message" => r.status.message = String::from_utf8_lossy(&unhex(&k, &sv)?).into(),
                            _ => {}
                        }
                    }
                }
                "output_files" => {
                    r.output_files =
                        parse_list(&v)?.iter().map(|x| ServiceOutputFile::decode(x)).collect::<Result<_>>()?
                }
                "output_level" => r.output_level = num(n, &v)?,
                "output_path" => r.output_path = unhex_str(n, &v)?,
                "bytes_read" => r.bytes_read = num(n, &v)?,
                "bytes_written" => r.bytes_written = num(n, &v)?,
                "stats" => {
                    for (k, sv) in parse_fields(&v)? {
                        if JOB_STATS_HEX.contains(&k.as_str()) {
                            let b = unhex(&k, &sv)?;
                            r.stats_prefixes.insert(k, b);
                        } else if JOB_STATS_BOOLS.contains(&k.as_str()) {
                            let b = boolean(&k, &sv)?;
                            r.stats.insert(k, b as u64);
                        } else if JOB_STATS_FIELDS.contains(&k.as_str()) {
                            let x = num(&k, &sv)?;
                            r.stats.insert(k, x);
                        }
                    }
                }
                "internal_stats" => {
                    for (k, sv) in parse_fields(&v)? {
                        match k.as_str() {
                            "output_level_stats" => r.output_level_stats = LevelStats::decode(&sv)?,
                            "proximal_level_stats" => r.proximal_level_stats = LevelStats::decode(&sv)?,
                            "has_proximal_level_output" => r.has_proximal_level_output = boolean(&k, &sv)?,
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(r)
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut stats = Writer::default();
        for f in JOB_STATS_FIELDS {
            if JOB_STATS_HEX.contains(f) {
                stats.hex(f, self.stats_prefixes.get(*f).map_or(&[][..], |v| v));
            } else if JOB_STATS_BOOLS.contains(f) {
                stats.field(f, self.stat(f) != 0);
            } else {
                stats.field(f, self.stat(f));
            }
        }
        let mut internal = Writer::default();
        internal.strukt("proximal_level_stats", self.proximal_level_stats.encode());
        internal.field("has_proximal_level_output", self.has_proximal_level_output);
        internal.strukt("output_level_stats", self.output_level_stats.encode());
        let mut status = Writer::default();
        status.hex("message", self.status.message.as_bytes());
        status.field("severity", self.status.severity);
        status.field("subcode", self.status.subcode);
        status.field("code", self.status.code);

        let mut w = Writer::default();
        w.strukt("stats", stats);
        w.field("bytes_read", self.bytes_read);
        w.hex("output_path", self.output_path.as_bytes());
        w.strukt("internal_stats", internal);
        w.field("bytes_written", self.bytes_written);
        w.field("output_level", self.output_level);
        let files: Vec<String> = self.output_files.iter().map(|f| f.encode()).collect();
        w.field("output_files", write_list(&files));
        w.strukt("status", status);
        let mut out = FORMAT_VERSION.to_le_bytes().to_vec();
        out.extend_from_slice(w.0.as_bytes());
        out
    }
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
