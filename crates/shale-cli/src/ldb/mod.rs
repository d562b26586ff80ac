//! `shale ldb`: RocksDB's `ldb` commands, flags and output (tools/ldb_cmd.cc).
//!
//! ldb's command line is not a clap grammar: options (`--name=value`) and flags (`--name`)
//! may come before or after the command, and everything else is the command and its
//! parameters. This module parses it the way `LDBCommand::InitFromCmdLineArgs` does, so
//! runbooks written for `ldb` work unchanged; the top-level `shale` command stays clap.
//!
//! Output goes to stdout exactly as ldb prints it; a failure prints `Failed: <status>` on
//! stderr and exits 1, as ldb does.

mod backup_cmds;
mod db_cmds;
mod dump_path;
pub(crate) mod entity_cmds;
pub(crate) mod fmt;
mod levels;
mod manifest;
mod progress;
mod query;
mod remote;
mod update_manifest;
mod wal;

use std::collections::BTreeMap;

pub use fmt::{Failure, Res};

/// The command line split the way ldb splits it.
pub struct Parsed {
    pub cmd: String,
    pub params: Vec<String>,
    pub options: BTreeMap<String, String>,
    pub flags: Vec<String>,
}

impl Parsed {
    pub fn parse(args: &[String]) -> Parsed {
        let mut p =
            Parsed { cmd: String::new(), params: Vec::new(), options: BTreeMap::new(), flags: Vec::new() };
        let mut tokens = Vec::new();
        for a in args {
            if let Some(rest) = a.strip_prefix("--") {
                // ldb splits at '=' with std::getline, which drops a trailing empty piece:
                // `--name=` is the flag `name`; `--name=v=` the option `name` = `v`; with
                // more pieces the value is everything after the first '='.
                let pieces: Vec<&str> = {
                    let mut v: Vec<&str> = rest.split('=').collect();
                    if v.len() > 1 && v.last() == Some(&"") {
                        v.pop();
                    }
                    v
                };
                match pieces.len() {
                    1 => p.flags.push(pieces[0].to_string()),
                    2 => {
                        p.options.insert(pieces[0].to_string(), pieces[1].to_string());
                    }
                    _ => {
                        let (k, v) = rest.split_once('=').unwrap_or((rest, ""));
                        p.options.insert(k.to_string(), v.to_string());
                    }
                }
            } else {
                tokens.push(a.clone());
            }
        }
        if !tokens.is_empty() {
            p.cmd = tokens.remove(0);
        }
        p.params = tokens;
        p
    }

    pub fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
            || self.options.get(name).is_some_and(|v| v == "true" || v == "1")
    }

    pub fn opt(&self, name: &str) -> Option<&str> {
        self.options.get(name).map(String::as_str)
    }

    /// A boolean given as `--name` or `--name=true|false`, with ldb's default.
    pub fn bool_opt(&self, name: &str, default: bool) -> Res<bool> {
        if self.flags.iter().any(|f| f == name) {
            return Ok(true);
        }
        match self.options.get(name).map(String::as_str) {
            None => Ok(default),
            Some("true") | Some("1") => Ok(true),
            Some("false") | Some("0") => Ok(false),
            Some(v) => Err(Failure::new(format!("Invalid value for {name}: {v}"))),
        }
    }

    pub fn int_opt(&self, name: &str) -> Res<Option<i64>> {
        match self.options.get(name) {
            None => Ok(None),
            Some(v) => {
                v.parse::<i64>().map(Some).map_err(|_| Failure::new(format!("{name} has an invalid value.")))
            }
        }
    }

    /// Fails on an option or flag the command does not take, as ldb's ValidateCmdLineOptions:
    /// options (`--name=value`) first, then flags, each with its own words.
    pub fn check_known(&self, allowed: &[&str]) -> Res<()> {
        let built = !matches!(self.cmd.as_str(), "create_column_family" | "drop_column_family");
        let known = |name: &str| {
            COMMON_OPTIONS.contains(&name)
                || allowed.contains(&name)
                || (built && BUILD_OPTIONS.contains(&name))
        };
        if let Some(name) = self.options.keys().find(|n| !known(n)) {
            return Err(Failure::plain(format!("Invalid command-line option {name}")));
        }
        if let Some(name) = self.flags.iter().find(|n| !known(n)) {
            return Err(Failure::plain(format!("Invalid command-line flag {name}")));
        }
        Ok(())
    }
}

/// Options every command takes (ldb's LDBCommand constructor).
const COMMON_OPTIONS: &[&str] = &[
    "db",
    "column_family",
    "key_hex",
    "value_hex",
    "hex",
    "create_if_missing",
    "try_load_options",
    "ignore_unknown_options",
    "disable_consistency_checks",
    "env_uri",
    "fs_uri",
];

/// Options of ldb's BuildCmdLineOptions that Shale takes: `--auto_compaction=<true|false>`
/// (the families' disable_auto_compactions). Every command takes them but
/// create_column_family and drop_column_family (whose constructors list `--db` only).
const BUILD_OPTIONS: &[&str] = &["auto_compaction"];

pub const HELP: &str = "ldb - RocksDB Tool

commands MUST specify --db=<full_path_to_db_directory> when necessary

The following optional parameters control if keys/values are input/output as hex or as plain strings:
  --key_hex : Keys are input/output as hex
  --value_hex : Values are input/output as hex
  --hex : Both keys and values are input/output as hex

The following optional parameters control the database internals:
  --column_family=<string> : name of the column family to operate on. default: default column family
  --try_load_options : Try to load option file from DB.
  --ignore_unknown_options : Ignore unknown options when loading option file.
  --create_if_missing : create the database if it does not exist
  --auto_compaction=<true|false>

Data Access Commands:
  put <key> <value> [--create_if_missing]
  get <key>
  multi_get <key_1> <key_2> <key_3> ...
  get_entity <key>
  multi_get_entity <key_1> <key_2> <key_3> ...
  put_entity <key> <column1_name>:<column1_value> <column2_name>:<column2_value> <...> [--create_if_missing]
  batchput <key> <value> [<key> <value>] [..] [--create_if_missing]
  scan [--from] [--to] [--max_keys=<N>] [--no_value]
  delete <key>
  singledelete <key>
  deleterange <begin key> <end key>
  query
    Starts a REPL shell.  Type help for list of available commands.
  approxsize [--from] [--to]
  checkconsistency
  list_file_range_deletes [--max_keys=<N>] : print tombstones in SST files.

Admin Commands:
  dump_wal --walfile=<write_ahead_log_file_path> [--header] [--print_value]
  compact [--from] [--to]
  reduce_levels --new_levels=<New number of levels> [--print_old_levels]
  change_compaction_style --old_compaction_style=<Old compaction style: 0 for level compaction, 1 for universal compaction> --new_compaction_style=<New compaction style: 0 for level compaction, 1 for universal compaction>
  dump [--from] [--to] [--max_keys=<N>] [--count_only]
  load [--create_if_missing] [--disable_wal] [--bulk_load] [--compact]
  manifest_dump [--verbose] [--json] [--path=<path_to_manifest_file>]
  compaction_progress_dump [--path=<path_to_compaction_progress_file>]
  update_manifest [--update_temperatures]      MUST NOT be used on a live DB.
  file_checksum_dump [--path=<path_to_manifest_file>]
  get_property <property_name>
  list_column_families
  create_column_family --db=<db_path> <new_column_family_name>
  drop_column_family --db=<db_path> <column_family_name_to_drop>
  dump_live_files
  idump [--from] [--to] [--input_key_hex] [--max_keys=<N>] [--count_only]
  list_live_files_metadata [--sort_by_filename]
  repair [--verbose]
  backup [--backup_dir] [--num_threads]
  restore [--backup_dir] [--num_threads]
  checkpoint [--checkpoint_dir]
  write_extern_sst <output_sst_path>
  ingest_extern_sst <input_sst_path> [--move_files] [--snapshot_consistency]
    [--allow_global_seqno] [--allow_blocking_flush] [--ingest_behind]
  unsafe_remove_sst_file <SST file number>      MUST NOT be used on a live DB.

  remote_compaction_primary --db=<db_path> --job_dir=<dir>
    Open an existing DB and run CompactRange() through LocalFileCompactionService.
    Schedule() writes job_dir/input.bin (once). Wait() polls for job_dir/result.bin.
    Must run with remote_compaction_worker in background on the same --db and --job_dir,
    otherwise Wait() will hang until timeout.
  remote_compaction_worker --db=<db_path> --job_dir=<dir>
    Read job_dir/input.bin, run DB::OpenAndCompact(), write job_dir/result.bin.
";

/// Runs `shale ldb <args>`; returns the process exit status.
pub fn run(args: &[String]) -> i32 {
    // ldb's LDBCommandRunner: with at most one argument, only --version and --help do
    // something; anything else prints the help on stderr and fails.
    if args.len() <= 1 {
        match args.first().map(String::as_str) {
            Some("--version") => {
                println!("ldb from Shale {} (RocksDB 11.8.1's commands)", env!("CARGO_PKG_VERSION"));
                return 0;
            }
            Some("--help") => {
                print!("{HELP}");
                return 0;
            }
            _ => {
                eprint!("{HELP}");
                return 1;
            }
        }
    }
    let p = Parsed::parse(args);
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let r = dispatch(&p, &mut out);
    use std::io::Write;
    let flushed = out.flush();
    match r {
        Ok(()) => {
            if flushed.is_err() {
                return 1;
            }
            0
        }
        Err(f) => {
            drop(out);
            f.report();
            1
        }
    }
}

pub use fmt::Out;

fn dispatch(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    if p.cmd.is_empty() && p.flags.iter().any(|f| f == "help") {
        out.write_all(HELP.as_bytes()).map_err(Failure::io)?;
        return Ok(());
    }
    if p.cmd.is_empty() {
        return Err(Failure::usage("Command not specified!".to_string()));
    }
    match p.cmd.as_str() {
        "get" => db_cmds::get(p, out),
        "multi_get" => db_cmds::multi_get(p, out),
        "put_entity" => entity_cmds::put_entity(p, out),
        "get_entity" => entity_cmds::get_entity(p, out),
        "multi_get_entity" => entity_cmds::multi_get_entity(p, out),
        "reduce_levels" => levels::reduce_levels(p, out),
        "change_compaction_style" => levels::change_compaction_style(p, out),
        "load" => db_cmds::load(p, out),
        "query" => query::query(p, out),
        "file_checksum_dump" => manifest::file_checksum_dump(p, out),
        "update_manifest" => update_manifest::update_manifest(p, out),
        "compaction_progress_dump" => progress::compaction_progress_dump(p, out),
        "remote_compaction_worker" => remote::remote_compaction_worker(p, out),
        "remote_compaction_primary" => remote::remote_compaction_primary(p, out),
        "put" => db_cmds::put(p, out),
        "batchput" => db_cmds::batchput(p, out),
        "delete" => db_cmds::delete(p, out, false),
        "singledelete" => db_cmds::delete(p, out, true),
        "deleterange" => db_cmds::deleterange(p, out),
        "scan" => db_cmds::scan(p, out),
        "dump" => db_cmds::dump(p, out),
        "idump" => db_cmds::idump(p, out),
        "compact" => db_cmds::compact(p, out),
        "approxsize" => db_cmds::approxsize(p, out),
        "get_property" => db_cmds::get_property(p, out),
        "list_column_families" => db_cmds::list_column_families(p, out),
        "create_column_family" => db_cmds::create_column_family(p, out),
        "drop_column_family" => db_cmds::drop_column_family(p, out),
        "repair" => db_cmds::repair(p, out),
        "checkconsistency" => manifest::checkconsistency(p, out),
        "manifest_dump" => manifest::manifest_dump(p, out),
        "dump_live_files" => manifest::dump_live_files(p, out),
        "list_file_range_deletes" => manifest::list_file_range_deletes(p, out),
        "unsafe_remove_sst_file" => manifest::unsafe_remove_sst_file(p, out),
        "list_live_files_metadata" => manifest::list_live_files_metadata(p, out),
        "dump_wal" => wal::dump_wal(p, out),
        "checkpoint" => backup_cmds::checkpoint(p, out),
        "backup" => backup_cmds::backup(p, out),
        "restore" => backup_cmds::restore(p, out),
        "write_extern_sst" => backup_cmds::write_extern_sst(p, out),
        "ingest_extern_sst" => backup_cmds::ingest_extern_sst(p, out),
        "help" | "--help" => {
            out.write_all(HELP.as_bytes()).map_err(Failure::io)?;
            Ok(())
        }
        _ => Err(Failure::usage("Unknown command".to_string())),
    }
}
