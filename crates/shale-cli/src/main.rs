//! `shale`: look into and modify a Shale (or RocksDB) database from the shell, with
//! ldb-like commands and output (`key : value` lines; `--hex` for binary data).

mod admin;
mod bench;
mod families;
mod ldb;
mod power_loss;
mod raftlog;
mod sst_dump;
mod sst_raw;
mod sst_recompress;
mod stress;
mod stress_modes;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "shale", version, about = "Shale storage engine tools")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the value of KEY.
    Get(admin::KeyArgs),
    /// Set KEY to VALUE.
    Put(admin::PutArgs),
    /// Delete KEY.
    Delete(admin::KeyArgs),
    /// Print `key : value` for every key in [--from, --to).
    Scan(admin::ScanArgs),
    /// List the column families of a database.
    ListColumnFamilies(admin::DbArgs),
    /// RocksDB's `ldb` commands, flags and output (`shale ldb --db=<path> <command> ...`).
    #[command(disable_help_flag = true)]
    Ldb {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// RocksDB's `sst_dump` flags and output (`shale sst_dump --file=<sst or dir> --command=...`).
    #[command(name = "sst_dump", disable_help_flag = true)]
    SstDump {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Run db_bench's workloads (same flags and output) against a Shale database.
    Bench(Box<bench::BenchArgs>),
    /// Random concurrent operations checked against an expected state that survives crashes.
    Stress(stress::StressArgs),
    /// Run `stress` as a child, SIGKILL it at random moments, reopen and verify, repeatedly.
    CrashTest(stress::CrashTestArgs),
    /// Raft log (shale-raftlog, raft-engine's format) tools: dump, check, stress.
    Raftlog(raftlog::RaftlogArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Ldb { args } => return ExitCode::from(ldb::run(&args) as u8),
        Command::SstDump { args } => return ExitCode::from(sst_dump::run(&args) as u8),
        Command::Get(a) => admin::get(&a),
        Command::Put(a) => admin::put(&a),
        Command::Delete(a) => admin::delete(&a),
        Command::Scan(a) => admin::scan(&a),
        Command::ListColumnFamilies(a) => admin::list_cf(&a),
        Command::Bench(a) => bench::run(&a),
        Command::Stress(a) => stress::stress(&a),
        Command::CrashTest(a) => stress::crash_test(&a),
        Command::Raftlog(a) => raftlog::run(&a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Failed: {e}");
            ExitCode::FAILURE
        }
    }
}
