//! RocksDB's OPTIONS-NNNNNN file: the options a database was last opened with, as text.
//!
//! Layout, exactly as RocksDB writes it (`⏎` = newline); Shale writes what RocksDB 11.8.1
//! writes (see docs/options-file.md):
//!
//! ```text
//! # This is a RocksDB option file.⏎            header comment, 5 lines, then a blank line
//! ...⏎
//! ⏎
//! [Version]⏎
//!   rocksdb_version=11.8.1⏎
//!   options_file_version=1.1⏎
//! ⏎
//! [DBOptions]⏎
//!   name=value⏎                                 every statement indented by two spaces
//!   ...⏎
//!   ⏎                                           each option list ends with an indent-only line
//! ⏎
//! [CFOptions "default"]⏎                       one per column family, "default" first
//!   name=value⏎ ... ⏎  ⏎
//! [TableOptions/BlockBasedTable "default"]⏎    the CF's table factory and its options
//!   name=value⏎ ... ⏎  ⏎
//! ⏎
//! [CFOptions "other"]⏎ ...
//! ```
//!
//! Reading follows RocksDB's parser: `#` starts a comment unless escaped as `\#`, lines are
//! trimmed, blank lines are skipped, a statement is `name=value`. Column family names in
//! section headers are escaped (`\\`, `\#`, `\:`, `\n`, `\r`); values are kept exactly as
//! written (still escaped — e.g. `merge_operator={id=StringAppendOperator;delimiter=\:;}`),
//! since their meaning depends on the option. A repeated name keeps its first value, as in
//! RocksDB. Errors carry the 1-based line number.
//!
//! Writing: `OPTIONS-<n>.dbtmp` is written and synced, renamed to `OPTIONS-<n>`, and the
//! directory is synced, as RocksDB does. Deleting older OPTIONS files is left to the caller.
//!
//! Unknown options follow RocksDB's `RocksDBOptionsParser`: an option neither RocksDB 7.8.3
//! nor 11.8.1 writes is an InvalidArgument naming it (`Extra option not recognized: <name>`,
//! or `Unrecognized option: <option>.<field>` inside a struct value), unless the caller
//! asked to ignore unknown options *and* the file was written by a RocksDB newer than 11.8
//! (major.minor), as RocksDB's parser turns `ignore_unknown_options` off for files of its own
//! version or older ([`OptionsFile::check_unknown_options`]).

#[cfg(test)]
mod tests;

use std::path::Path;

use crate::fs::{read_file, FileSystem};
use crate::{Error, ErrorKind, Result};

const HEADER: &str = "# This is a RocksDB option file.\n\
#\n\
# For detailed file format spec, please refer to the example file\n\
# in examples/rocksdb_option_file_example.ini\n\
#\n\
\n";

const TABLE_PREFIX: &str = "TableOptions/";
const FILE_PREFIX: &str = "OPTIONS-";
const TEMP_SUFFIX: &str = ".dbtmp";
const DEFAULT_CF: &str = "default";

/// The text of the OPTIONS file RocksDB 7.8.3 writes for `Options::default()` with
/// `create_if_missing = true` (one column family, "default").
pub const ROCKSDB_DEFAULTS_TEXT: &str = include_str!("options_file/rocksdb_defaults.ini");

/// The text of the OPTIONS file RocksDB 11.8.1 writes for `Options::default()` (one column
/// family, "default"): what 11.8.1's `ldb --create_if_missing put` wrote
/// (`testdata/OPTIONS-ldb-11.8.1`), with the two options ldb sets put back to the C++
/// defaults (`create_if_missing=false`, `merge_operator=nullptr`). Shale's OPTIONS files have
/// exactly these options, in this order (`db/options_writer.rs`).
pub const ROCKSDB_11_DEFAULTS_TEXT: &str = include_str!("options_file/rocksdb_11_defaults.ini");

/// Options RocksDB 7.8.3's or 11.8.1's parser knows (registered, some deprecated) that their
/// default OPTIONS files do not hold: written only when set (`listeners`), or never; still
/// not "unknown" options.
pub const REGISTERED_NOT_WRITTEN: &[&str] = &[
    "allow_os_buffer",
    "base_background_compactions",
    "blob_cache",
    "blob_direct_write_partition_strategy",
    "block_based_table_factory",
    "block_cache",
    "block_cache_compressed",
    "bottommost_temperature",
    "compaction_measure_io_stats",
    "compression_per_level",
    "concurrent_prepare",
    "daily_offpeak_time_utc",
    "db_log_dir",
    "disableDataSync",
    "disable_data_sync",
    "env",
    "expanded_compaction_factor",
    "experimental_allow_mempurge",
    "experimental_mempurge_policy",
    "filter_deletes",
    "hard_rate_limit",
    "hash_index_allow_collision",
    "index_per_partition",
    "listeners",
    "max_grandparent_overlap_factor",
    "max_mem_compaction_level",
    "memtable",
    "memtable_prefix_bloom_bits",
    "memtable_prefix_bloom_huge_page_tlb_size",
    "memtable_prefix_bloom_probes",
    "memtable_veirfy_per_key_checksum_on_seek",
    "min_partial_merge_operands",
    "new_table_reader_for_compaction_inputs",
    "plain_table_factory",
    "preserve_deletes",
    "purge_redundant_kvs_while_flush",
    "rate_limit_delay_max_milliseconds",
    "rate_limiter",
    "rate_limiter_bytes_per_sec",
    "reserve_table_builder_memory",
    "reserve_table_reader_memory",
    "seq_per_batch",
    "skip_log_error_on_recovery",
    "skip_table_builder_flush",
    "snap_refresh_nanos",
    "soft_rate_limit",
    "source_compaction_factor",
    "statistics",
    "table_properties_collectors",
    "use_direct_writes",
    "verify_checksums_in_compaction",
    "wal_dir",
];

/// The RocksDB version Shale's OPTIONS files name: the one whose options they hold.
pub const WRITTEN_ROCKSDB_VERSION: &str = "11.8.1";

/// The (major, minor) of the RocksDB version Shale reads OPTIONS files as: a file of a newer
/// version may have options Shale does not know, which `ignore_unknown_options` skips.
pub const READER_VERSION: (u64, u64) = (11, 8);

/// The contents of an OPTIONS file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionsFile {
    /// "11.8.1" in the files Shale writes
    pub rocksdb_version: String,
    /// "1.1"
    pub options_file_version: String,
    pub db_options: Vec<(String, String)>,
    pub cfs: Vec<CfSection>,
}

/// One column family: its `[CFOptions]` and `[TableOptions/...]` sections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CfSection {
    /// The column family name, unescaped.
    pub name: String,
    pub options: Vec<(String, String)>,
    /// "BlockBasedTable"; empty when the file has no table section for this family.
    pub table_factory: String,
    pub table_options: Vec<(String, String)>,
}

impl CfSection {
    pub fn new(name: &str) -> CfSection {
        CfSection {
            name: name.to_string(),
            options: Vec::new(),
            table_factory: String::new(),
            table_options: Vec::new(),
        }
    }

    pub fn option(&self, name: &str) -> Option<&str> {
        get_option(&self.options, name)
    }

    pub fn table_option(&self, name: &str) -> Option<&str> {
        get_option(&self.table_options, name)
    }
}

/// The value of `name` in an option list.
pub fn get_option<'a>(list: &'a [(String, String)], name: &str) -> Option<&'a str> {
    list.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// Sets `name` in an option list, replacing its value in place or appending it.
pub fn set_option(list: &mut Vec<(String, String)>, name: &str, value: &str) {
    match list.iter_mut().find(|(k, _)| k == name) {
        Some(entry) => entry.1 = value.to_string(),
        None => list.push((name.to_string(), value.to_string())),
    }
}

/// RocksDB's escaping of option strings: `\`, `#`, `:`, CR and LF get a backslash (the
/// last two as `\r`, `\n`).
pub fn escape_option_string(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        match c {
            '\\' | '#' | ':' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            _ => out.push(c),
        }
    }
    out
}

/// The inverse of [`escape_option_string`]: a backslash takes the next character literally,
/// except `\n` and `\r`.
pub fn unescape_option_string(escaped: &str) -> String {
    let mut out = String::with_capacity(escaped.len());
    let mut chars = escaped.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

impl OptionsFile {
    /// The options RocksDB 7.8.3 writes by default (see [`ROCKSDB_DEFAULTS_TEXT`]).
    pub fn rocksdb_defaults() -> OptionsFile {
        OptionsFile::rocksdb_defaults_ref().clone()
    }

    /// [`OptionsFile::rocksdb_defaults`], parsed once.
    pub fn rocksdb_defaults_ref() -> &'static OptionsFile {
        static PARSED: std::sync::OnceLock<OptionsFile> = std::sync::OnceLock::new();
        PARSED.get_or_init(|| match OptionsFile::parse(ROCKSDB_DEFAULTS_TEXT) {
            Ok(o) => o,
            // The embedded text is fixed and covered by tests.
            Err(e) => unreachable!("embedded RocksDB defaults do not parse: {e}"),
        })
    }

    /// The options RocksDB 11.8.1 writes by default (see [`ROCKSDB_11_DEFAULTS_TEXT`]).
    pub fn rocksdb_11_defaults() -> OptionsFile {
        OptionsFile::rocksdb_11_defaults_ref().clone()
    }

    /// [`OptionsFile::rocksdb_11_defaults`], parsed once (the writer starts every OPTIONS
    /// file's lists from it).
    pub fn rocksdb_11_defaults_ref() -> &'static OptionsFile {
        static PARSED: std::sync::OnceLock<OptionsFile> = std::sync::OnceLock::new();
        PARSED.get_or_init(|| match OptionsFile::parse(ROCKSDB_11_DEFAULTS_TEXT) {
            Ok(o) => o,
            // The embedded text is fixed and covered by tests.
            Err(e) => unreachable!("embedded RocksDB 11.8.1 defaults do not parse: {e}"),
        })
    }

    /// The (major, minor) of the file's `rocksdb_version`; None when it has none.
    pub fn version(&self) -> Option<(u64, u64)> {
        let mut parts = self.rocksdb_version.split('.').map(|p| p.parse::<u64>().ok());
        let major = parts.next().flatten()?;
        let minor = parts.next().flatten().unwrap_or(0);
        Some((major, minor))
    }

    /// Whether a RocksDB newer than the one Shale reads as ([`READER_VERSION`]) wrote the
    /// file: only then may `ignore_unknown_options` skip options, as in RocksDB's parser.
    pub fn is_from_newer_version(&self) -> bool {
        self.version().is_some_and(|v| v > READER_VERSION)
    }

    /// RocksDB's rule for unknown options (see the module comment): Ok when every option is
    /// one RocksDB 7.8.3 or 11.8.1 writes (struct fields too), or when `ignore_unknown` and
    /// the file is from a newer RocksDB; otherwise InvalidArgument naming the first unknown
    /// option in RocksDB 11.8.1's words.
    pub fn check_unknown_options(&self, ignore_unknown: bool) -> Result<()> {
        if ignore_unknown && self.is_from_newer_version() {
            return Ok(());
        }
        match self.unknown_option_names().into_iter().next() {
            Some((_, name)) if name.contains('.') => {
                Err(Error::invalid_argument(format!("Unrecognized option: {name}")))
            }
            Some((_, name)) => Err(Error::invalid_argument(format!("Extra option not recognized: {name}"))),
            None => Ok(()),
        }
    }

    pub fn db_option(&self, name: &str) -> Option<&str> {
        get_option(&self.db_options, name)
    }

    pub fn cf(&self, name: &str) -> Option<&CfSection> {
        self.cfs.iter().find(|c| c.name == name)
    }

    /// The file's text, byte for byte as RocksDB writes it.
    pub fn to_text(&self) -> String {
        let mut s = String::from(HEADER);
        s.push_str("[Version]\n");
        s.push_str(&format!("  rocksdb_version={}\n", self.rocksdb_version));
        s.push_str(&format!("  options_file_version={}\n", self.options_file_version));
        s.push_str("\n[DBOptions]\n");
        push_list(&mut s, &self.db_options);
        for cf in &self.cfs {
            let name = escape_option_string(&cf.name);
            s.push_str(&format!("\n[CFOptions \"{name}\"]\n"));
            push_list(&mut s, &cf.options);
            if !cf.table_factory.is_empty() {
                s.push_str(&format!("[{TABLE_PREFIX}{} \"{name}\"]\n", cf.table_factory));
                push_list(&mut s, &cf.table_options);
            }
        }
        s
    }

    /// Parses an OPTIONS file's text.
    pub fn parse(text: &str) -> Result<OptionsFile> {
        Parser::default().run(text)
    }

    /// The options of this file that neither RocksDB 7.8.3's nor 11.8.1's OPTIONS files
    /// have (added after 11.8.1, or unknown altogether), as `section.name`: what RocksDB
    /// with `ignore_unknown_options` would skip in a newer file. Struct fields are named
    /// `option.field`.
    pub fn unknown_options(&self) -> Vec<String> {
        self.unknown_option_names().into_iter().map(|(section, name)| format!("{section}.{name}")).collect()
    }

    /// (section, name) of each unknown option (see [`OptionsFile::unknown_options`]).
    fn unknown_option_names(&self) -> Vec<(String, String)> {
        let known = [OptionsFile::rocksdb_defaults_ref(), OptionsFile::rocksdb_11_defaults_ref()];
        let db: Vec<&[(String, String)]> = known.iter().map(|k| k.db_options.as_slice()).collect();
        let cf: Vec<&[(String, String)]> =
            known.iter().filter_map(|k| k.cfs.first()).map(|c| c.options.as_slice()).collect();
        let table: Vec<&[(String, String)]> =
            known.iter().filter_map(|k| k.cfs.first()).map(|c| c.table_options.as_slice()).collect();
        let mut out = Vec::new();
        unknown_in(&self.db_options, &db, "DBOptions", &mut out);
        for cf_section in &self.cfs {
            unknown_in(&cf_section.options, &cf, &format!("CFOptions \"{}\"", cf_section.name), &mut out);
            // Only the block-based table's options are listed in the defaults; the plain
            // and cuckoo factories' few options are checked where they are applied.
            if matches!(cf_section.table_factory.as_str(), "" | "BlockBasedTable") {
                let section = format!("TableOptions/BlockBasedTable \"{}\"", cf_section.name);
                unknown_in(&cf_section.table_options, &table, &section, &mut out);
            }
        }
        out
    }
}

/// Appends to `out` the options of `list` that none of the `known` lists has, and the
/// fields of struct values (`{a=1;b=2;}`) that the known value of the option lacks.
fn unknown_in(
    list: &[(String, String)],
    known: &[&[(String, String)]],
    section: &str,
    out: &mut Vec<(String, String)>,
) {
    for (k, v) in list {
        let values: Vec<&str> = known.iter().filter_map(|l| get_option(l, k)).collect();
        if values.is_empty() {
            if !REGISTERED_NOT_WRITTEN.contains(&k.as_str()) {
                out.push((section.to_string(), k.clone()));
            }
            continue;
        }
        let Some(fields) = struct_field_names(v) else { continue };
        let known_fields: Vec<&str> = values.iter().filter_map(|d| struct_field_names(d)).flatten().collect();
        if known_fields.is_empty() {
            continue;
        }
        for f in fields {
            if !known_fields.contains(&f) {
                out.push((section.to_string(), format!("{k}.{f}")));
            }
        }
    }
}

/// The top-level field names of a struct value `{a=1;b={x=2;};}`; None for other values.
fn struct_field_names(v: &str) -> Option<Vec<&str>> {
    let inner = v.strip_prefix('{')?.strip_suffix('}')?;
    let mut names = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ';' if depth == 0 => {
                if let Some((k, _)) = inner[start..i].split_once('=') {
                    names.push(k.trim());
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    if let Some((k, _)) = inner[start..].split_once('=') {
        names.push(k.trim());
    }
    Some(names.into_iter().filter(|k| !k.is_empty()).collect())
}

/// Writes `  name=value` lines, then the indent-only line RocksDB ends each list with.
fn push_list(s: &mut String, list: &[(String, String)]) {
    for (k, v) in list {
        s.push_str("  ");
        s.push_str(k);
        s.push('=');
        s.push_str(v);
        s.push('\n');
    }
    s.push_str("  \n");
}

/// "OPTIONS-000005"
pub fn options_file_name(number: u64) -> String {
    format!("{FILE_PREFIX}{number:06}")
}

/// The number of an OPTIONS file name ("OPTIONS-000005" -> 5); None for other names,
/// including the temporary "OPTIONS-000005.dbtmp".
pub fn parse_options_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix(FILE_PREFIX)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Writes `dir/OPTIONS-<number>` durably: temp file, sync, rename, directory sync.
pub fn write_options_file(fs: &dyn FileSystem, dir: &Path, number: u64, opts: &OptionsFile) -> Result<()> {
    let name = options_file_name(number);
    let temp = dir.join(format!("{name}{TEMP_SUFFIX}"));
    let write = || -> Result<()> {
        let mut f = fs.new_writable_file(&temp)?;
        f.append(opts.to_text().as_bytes())?;
        f.sync()
    };
    if let Err(e) = write() {
        let _ = fs.remove_file(&temp);
        return Err(e);
    }
    fs.rename(&temp, &dir.join(&name))?;
    fs.sync_dir(dir)
}

/// The highest-numbered OPTIONS file in `dir`, parsed; None when there is none.
pub fn latest_options_file(fs: &dyn FileSystem, dir: &Path) -> Result<Option<(u64, OptionsFile)>> {
    let Some(number) = fs.children(dir)?.iter().filter_map(|n| parse_options_file_name(n)).max() else {
        return Ok(None);
    };
    Ok(Some((number, read_options_file(fs, dir, number)?)))
}

/// The OPTIONS file numbered `number` in `dir`, parsed (NotFound / IO error when absent).
pub fn read_options_file(fs: &dyn FileSystem, dir: &Path, number: u64) -> Result<OptionsFile> {
    let path = dir.join(options_file_name(number));
    let bytes = read_file(fs, &path)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        Error::corruption(format!("{}: not UTF-8 at offset {}", path.display(), e.utf8_error().valid_up_to()))
    })?;
    let parsed = OptionsFile::parse(&text).map_err(|e| {
        let kind = e.kind();
        let msg = e.into_string();
        let body = msg.split_once(": ").map_or(msg.as_str(), |(_, rest)| rest);
        Error::new(kind, format!("{}: {body}", path.display()))
    })?;
    Ok(parsed)
}

/// Which section statements currently go to.
#[derive(Clone, Copy)]
enum Section {
    None,
    Version,
    Db,
    Cf(usize),
    Table(usize),
}

#[derive(Default)]
struct Parser {
    version: Option<Vec<(String, String)>>,
    db: Option<Vec<(String, String)>>,
    cfs: Vec<CfSection>,
}

fn line_error(line: usize, msg: &str) -> Error {
    Error::invalid_argument(format!("[RocksDBOptionsParser Error] : {msg} (at line {line})"))
}

/// Drops a `#` comment (unless the `#` is escaped) and surrounding whitespace.
fn strip_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let end = (0..bytes.len())
        .find(|&i| bytes[i] == b'#' && (i == 0 || bytes[i - 1] != b'\\'))
        .unwrap_or(bytes.len());
    line[..end].trim_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b')
}

fn trim(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b')
}

impl Parser {
    fn run(mut self, text: &str) -> Result<OptionsFile> {
        let mut section = Section::None;
        for (i, raw) in text.split('\n').enumerate() {
            let line_no = i + 1;
            let line = strip_comment(raw);
            if line.is_empty() {
                continue;
            }
            if line.len() >= 2 && line.starts_with('[') && line.ends_with(']') {
                section = self.start_section(line, line_no)?;
                continue;
            }
            let Some((name, value)) = line.split_once('=') else {
                return Err(line_error(line_no, "A valid statement must have a '='."));
            };
            let (name, value) = (trim(name), trim(value));
            if name.is_empty() {
                return Err(line_error(line_no, "A valid statement must have a variable name."));
            }
            let list = match section {
                Section::None => continue,
                Section::Version => self.version.get_or_insert_with(Vec::new),
                Section::Db => self.db.get_or_insert_with(Vec::new),
                Section::Cf(i) => &mut self.cfs[i].options,
                Section::Table(i) => &mut self.cfs[i].table_options,
            };
            if get_option(list, name).is_none() {
                list.push((name.to_string(), value.to_string()));
            }
        }
        self.finish()
    }

    fn start_section(&mut self, line: &str, line_no: usize) -> Result<Section> {
        let inner = &line[1..line.len() - 1];
        let (title, arg) = match (line.find('"'), line.rfind('"')) {
            (Some(a), Some(b)) if a != b => (trim(&line[1..a]), unescape_option_string(&line[a + 1..b])),
            _ => (trim(inner), String::new()),
        };
        match title {
            "Version" => {
                if self.version.is_some() {
                    return Err(line_error(
                        line_no,
                        "More than one Version section found in the option config file.",
                    ));
                }
                self.version = Some(Vec::new());
                Ok(Section::Version)
            }
            "DBOptions" => {
                if self.db.is_some() {
                    return Err(line_error(
                        line_no,
                        "More than one DBOption section found in the option config file",
                    ));
                }
                self.db = Some(Vec::new());
                Ok(Section::Db)
            }
            "CFOptions" => {
                if (arg == DEFAULT_CF) != self.cfs.is_empty() {
                    let msg =
                        "Default column family must be the first CFOptions section in the option config file";
                    return Err(line_error(line_no, msg));
                }
                if self.cfs.iter().any(|c| c.name == arg) {
                    return Err(line_error(
                        line_no,
                        "Two identical column families found in option config file",
                    ));
                }
                self.cfs.push(CfSection::new(&arg));
                Ok(Section::Cf(self.cfs.len() - 1))
            }
            t if t.len() > TABLE_PREFIX.len() && t.starts_with(TABLE_PREFIX) => {
                let Some(i) = self.cfs.iter().position(|c| c.name == arg) else {
                    let msg = format!(
                        "Does not find a matched column family name in TableOptions section.  Column Family Name:{arg}"
                    );
                    return Err(line_error(line_no, &msg));
                };
                let cf = &mut self.cfs[i];
                cf.table_factory = t[TABLE_PREFIX.len()..].to_string();
                cf.table_options.clear();
                Ok(Section::Table(i))
            }
            _ => Err(Error::invalid_argument(format!("Unknown section {line} (at line {line_no})"))),
        }
    }

    fn finish(self) -> Result<OptionsFile> {
        let version = self.version.unwrap_or_default();
        let rocksdb_version = get_option(&version, "rocksdb_version").unwrap_or("").to_string();
        let options_file_version = get_option(&version, "options_file_version").unwrap_or("").to_string();
        check_version("rocksdb_version", &rocksdb_version, 3)?;
        check_version("options_file_version", &options_file_version, 2)?;
        let major = options_file_version.split('.').next().and_then(|m| m.parse::<u64>().ok()).unwrap_or(0);
        if !options_file_version.is_empty() && major < 1 {
            return Err(Error::invalid_argument("A valid options_file_version must be at least 1."));
        }
        let Some(db_options) = self.db else {
            return Err(Error::corruption("A RocksDB Option file must have a single DBOptions section"));
        };
        if self.cfs.first().is_none_or(|c| c.name != DEFAULT_CF) {
            return Err(Error::corruption(
                "A RocksDB Option file must have a single CFOptions:default section",
            ));
        }
        Ok(OptionsFile { rocksdb_version, options_file_version, db_options, cfs: self.cfs })
    }
}

/// RocksDB's check of a version string: at most `max_parts` dot-separated runs of digits.
fn check_version(name: &str, v: &str, max_parts: usize) -> Result<()> {
    let err = |what: &str| Err(Error::new(ErrorKind::InvalidArgument, format!("A valid {name} {what}")));
    if v.is_empty() {
        return Ok(());
    }
    let parts: Vec<&str> = v.split('.').collect();
    if v.bytes().any(|b| b != b'.' && !b.is_ascii_digit()) {
        return err("can only contains dots and numbers.");
    }
    if parts.len() > max_parts {
        return err(&format!("can only contains at most {} dots.", max_parts - 1));
    }
    if parts[..parts.len() - 1].iter().any(|p| p.is_empty()) {
        return err("must have at least one digit before each dot.");
    }
    if parts.len() > 1 && parts[parts.len() - 1].is_empty() {
        return err("must have at least one digit after each dot.");
    }
    Ok(())
}

/// A double as C++'s `ostream <<` prints it by default (`%g`, 6 significant digits):
/// `0.5`, `1`, `0.333333`, `1e+06`.
pub fn cpp_ostream_double(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "nan".into()
        } else if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    // Rounded to 6 significant digits, the decimal exponent decides the style.
    let sci = format!("{v:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |m: &str| -> String {
        if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            m.to_string()
        }
    };
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    } else {
        let decimals = (5 - exp).max(0) as usize;
        trim(&format!("{v:.decimals$}"))
    }
}
