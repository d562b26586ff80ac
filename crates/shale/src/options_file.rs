//! RocksDB's OPTIONS-NNNNNN file: the options a database was last opened with, as text.
//!
//! Layout, exactly as RocksDB 7.8.3 writes it (`⏎` = newline):
//!
//! ```text
//! # This is a RocksDB option file.⏎            header comment, 5 lines, then a blank line
//! ...⏎
//! ⏎
//! [Version]⏎
//!   rocksdb_version=7.8.3⏎
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

/// The contents of an OPTIONS file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionsFile {
    /// "7.8.3"
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
        match OptionsFile::parse(ROCKSDB_DEFAULTS_TEXT) {
            Ok(o) => o,
            // The embedded text is fixed and covered by tests.
            Err(e) => unreachable!("embedded RocksDB defaults do not parse: {e}"),
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

    /// The options of this file that RocksDB 7.8.3's OPTIONS files do not have (added by
    /// RocksDB 8.x to 11.x, or unknown altogether), as `section.name`: what RocksDB with
    /// `ignore_unknown_options` would skip. Reading a newer file never fails on them; the
    /// caller reports them.
    pub fn unknown_options(&self) -> Vec<String> {
        let known = OptionsFile::rocksdb_defaults();
        let known_cf = known.cfs.first();
        let has = |list: Option<&Vec<(String, String)>>, name: &str| {
            list.is_some_and(|l| l.iter().any(|(k, _)| k == name))
        };
        let mut out = Vec::new();
        for (k, _) in &self.db_options {
            if !has(Some(&known.db_options), k) {
                out.push(format!("DBOptions.{k}"));
            }
        }
        for cf in &self.cfs {
            for (k, _) in &cf.options {
                if !has(known_cf.map(|c| &c.options), k) {
                    out.push(format!("CFOptions \"{}\".{k}", cf.name));
                }
            }
            for (k, _) in &cf.table_options {
                if !has(known_cf.map(|c| &c.table_options), k) {
                    out.push(format!("TableOptions/{} \"{}\".{k}", cf.table_factory, cf.name));
                }
            }
        }
        out
    }
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
    Ok(Some((number, parsed)))
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
