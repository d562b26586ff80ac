//! shale-kv-cluster: a replicated key-value store on openraft with Shale storage, over HTTP on
//! loopback. See the crate README for the two commands that run a 3-node cluster.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use shale_openraft::cluster::{start_node, Client};
use shale_openraft::{NodeId, ShaleStateMachine};

#[derive(Parser)]
#[command(
    name = "shale-kv-cluster",
    about = "A replicated key-value store: openraft on Shale, HTTP on loopback"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Runs one node in this process until SIGTERM or Ctrl-C.
    Node {
        #[arg(long)]
        id: NodeId,
        /// HTTP address to serve (loopback), e.g. 127.0.0.1:21001.
        #[arg(long)]
        http: SocketAddr,
        /// Data directory of this node (the Raft log and the state machine).
        #[arg(long)]
        dir: PathBuf,
    },
    /// Starts a 3-node cluster as 3 processes (data in DIR/1, DIR/2, DIR/3, HTTP on
    /// 127.0.0.1:PORT, PORT+1, PORT+2), initializes it and waits for Ctrl-C.
    Local {
        #[arg(long, default_value = "./shale-kv-data")]
        dir: PathBuf,
        #[arg(long, default_value_t = 21001)]
        port: u16,
    },
    /// Initializes a new cluster: `--members 1=127.0.0.1:21001,2=...,3=...`.
    Init {
        #[arg(long, value_delimiter = ',')]
        members: Vec<String>,
    },
    /// Puts a key (through the leader).
    Put {
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "127.0.0.1:21001,127.0.0.1:21002,127.0.0.1:21003"
        )]
        addr: Vec<String>,
        key: String,
        value: String,
    },
    /// Reads a key, linearizable (through the leader).
    Get {
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "127.0.0.1:21001,127.0.0.1:21002,127.0.0.1:21003"
        )]
        addr: Vec<String>,
        key: String,
    },
    /// Deletes a key (through the leader).
    Delete {
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "127.0.0.1:21001,127.0.0.1:21002,127.0.0.1:21003"
        )]
        addr: Vec<String>,
        key: String,
    },
    /// Adds a node as a learner (it receives the log but does not vote).
    AddLearner {
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "127.0.0.1:21001,127.0.0.1:21002,127.0.0.1:21003"
        )]
        addr: Vec<String>,
        id: NodeId,
        node_addr: String,
    },
    /// Sets the voters to the given node ids (each must be a member or learner already).
    ChangeMembership {
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "127.0.0.1:21001,127.0.0.1:21002,127.0.0.1:21003"
        )]
        addr: Vec<String>,
        ids: Vec<NodeId>,
    },
    /// Prints the Raft metrics of one node.
    Metrics {
        #[arg(long, default_value = "127.0.0.1:21001")]
        addr: String,
    },
    /// Prints every key-value of a stopped node's state machine (opened directly from DIR/sm).
    Dump {
        #[arg(long)]
        dir: PathBuf,
    },
    /// Jepsen-style test: NODES node processes in their own network namespaces (needs root),
    /// concurrent clients doing reads, writes and compare-and-set on a few keys, a nemesis
    /// (SIGKILL, SIGSTOP, partitions: halves, leader isolated, bridge) and a linearizability
    /// check of each run's history. Prints one line per run and a total; exits non-zero when
    /// any run found a violation, a lost acknowledged write, divergent nodes or an error.
    Jepsen {
        #[arg(long, default_value_t = 3)]
        nodes: usize,
        #[arg(long, default_value_t = 1)]
        runs: usize,
        /// Seconds of workload and faults per run.
        #[arg(long, default_value_t = 60)]
        secs: u64,
        #[arg(long, default_value_t = 8)]
        clients: usize,
        #[arg(long, default_value_t = 4)]
        keys: usize,
        /// Plant a bug: nodes serve reads from their local state without the read index
        /// (the checker must then report violations).
        #[arg(long)]
        planted_stale_reads: bool,
        /// Where the node data goes (a directory of its own is made inside).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Replicated-write benchmark: CLIENTS concurrent clients put REQUESTS keys in all, then
    /// prints writes/s and latency percentiles.
    Bench {
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "127.0.0.1:21001,127.0.0.1:21002,127.0.0.1:21003"
        )]
        addr: Vec<String>,
        #[arg(long, default_value_t = 32)]
        clients: usize,
        #[arg(long, default_value_t = 20000)]
        requests: usize,
        #[arg(long, default_value_t = 100)]
        value_size: usize,
        /// Pseudo-random letters and digits instead of one repeated letter, so the values do
        /// not compress (the rejoin figure needs a log of a known size on disk).
        #[arg(long)]
        random_values: bool,
    },
}

fn parse_members(members: &[String]) -> Result<Vec<(NodeId, String)>, String> {
    members
        .iter()
        .map(|m| {
            let (id, addr) = m.split_once('=').ok_or_else(|| format!("member {m:?} is not ID=HOST:PORT"))?;
            let id = id.parse::<NodeId>().map_err(|e| format!("member {m:?}: bad id: {e}"))?;
            Ok((id, addr.to_string()))
        })
        .collect()
}

async fn wait_for_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

async fn run(cmd: Cmd) -> Result<(), String> {
    match cmd {
        Cmd::Node { id, http, dir } => {
            let node = start_node(id, http, &dir).await?;
            eprintln!("node {id} serving on {} with data in {}", node.addr, dir.display());
            wait_for_signal().await;
            node.shutdown().await?;
            eprintln!("node {id} stopped");
            Ok(())
        }
        Cmd::Local { dir, port } => {
            let exe = std::env::current_exe().map_err(|e| format!("own path: {e}"))?;
            let mut children = Vec::new();
            let mut members = Vec::new();
            for i in 0..3u16 {
                let id = NodeId::from(i) + 1;
                let addr = format!("127.0.0.1:{}", port + i);
                let child = std::process::Command::new(&exe)
                    .args(["node", "--id", &id.to_string(), "--http", &addr, "--dir"])
                    .arg(dir.join(id.to_string()))
                    .spawn()
                    .map_err(|e| format!("starting node {id}: {e}"))?;
                children.push(child);
                members.push((id, addr));
            }
            let client = Client::new(members.iter().map(|m| m.1.clone()).collect());
            // Wait until every node answers, then initialize (a restart finds it initialized).
            let deadline = Instant::now() + Duration::from_secs(20);
            for (_, a) in &members {
                while client.metrics(a).await.is_err() {
                    if Instant::now() > deadline {
                        return Err(format!("node at {a} did not start"));
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
            if let Err(e) = client.init(&members).await {
                eprintln!("init: {e} (a cluster that was initialized before keeps its state)");
            }
            let leader = client.wait_for_leader(Duration::from_secs(20)).await?;
            eprintln!("cluster up: nodes {members:?}, leader {leader}; Ctrl-C stops it");
            wait_for_signal().await;
            for c in &children {
                // SAFETY: kill(2) on the pid of a child this process spawned and has not reaped
                // yet (so the pid is still that child's); it touches no memory of ours.
                unsafe {
                    libc::kill(c.id() as libc::pid_t, libc::SIGTERM);
                }
            }
            for mut c in children {
                let _ = c.wait();
            }
            Ok(())
        }
        Cmd::Init { members } => {
            let members = parse_members(&members)?;
            let client = Client::new(members.iter().map(|m| m.1.clone()).collect());
            client.init(&members).await
        }
        Cmd::Put { addr, key, value } => Client::new(addr).put(&key, &value).await,
        Cmd::Delete { addr, key } => Client::new(addr).delete(&key).await,
        Cmd::Get { addr, key } => {
            match Client::new(addr).get(&key).await? {
                Some(v) => println!("{v}"),
                None => println!("(not found)"),
            }
            Ok(())
        }
        Cmd::AddLearner { addr, id, node_addr } => Client::new(addr).add_learner(id, &node_addr).await,
        Cmd::ChangeMembership { addr, ids } => {
            let ids: BTreeSet<NodeId> = ids.into_iter().collect();
            Client::new(addr).change_membership(&ids).await
        }
        Cmd::Metrics { addr } => {
            let m = Client::new(vec![addr.clone()]).metrics(&addr).await?;
            println!("{}", serde_json::to_string_pretty(&m).map_err(|e| e.to_string())?);
            Ok(())
        }
        Cmd::Dump { dir } => {
            let sm = ShaleStateMachine::open(&dir.join("sm"))
                .map_err(|e| format!("opening {}: {e}", dir.display()))?;
            for (k, v) in sm.scan().map_err(|e| e.to_string())? {
                println!("{}\t{}", String::from_utf8_lossy(&k), String::from_utf8_lossy(&v));
            }
            Ok(())
        }
        Cmd::Bench { addr, clients, requests, value_size, random_values } => {
            bench(addr, clients, requests, value_size, random_values).await
        }
        Cmd::Jepsen { .. } => Err("jepsen runs outside the runtime".into()),
    }
}

/// `len` letters and digits from a xorshift seeded with `seed`.
fn random_value(seed: u64, len: usize) -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            CHARS[(x % CHARS.len() as u64) as usize] as char
        })
        .collect()
}

async fn bench(
    addr: Vec<String>,
    clients: usize,
    requests: usize,
    value_size: usize,
    random_values: bool,
) -> Result<(), String> {
    let clients = clients.max(1);
    let client = Arc::new(Client::new(addr));
    client.wait_for_leader(Duration::from_secs(20)).await?;
    let value = "v".repeat(value_size);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let client = client.clone();
        let value = value.clone();
        let n = requests / clients + usize::from(c < requests % clients);
        tasks.push(tokio::spawn(async move {
            let mut h = hdrhistogram::Histogram::<u64>::new(3).map_err(|e| e.to_string())?;
            for i in 0..n {
                let v = if random_values {
                    random_value((c * 1_000_003 + i) as u64, value_size)
                } else {
                    value.clone()
                };
                let t = Instant::now();
                client.put(&format!("bench-{c}-{i}"), &v).await?;
                h.record(t.elapsed().as_micros() as u64).map_err(|e| e.to_string())?;
            }
            Ok::<_, String>(h)
        }));
    }
    let mut all = hdrhistogram::Histogram::<u64>::new(3).map_err(|e| e.to_string())?;
    for t in tasks {
        let h = t.await.map_err(|e| e.to_string())??;
        all.add(&h).map_err(|e| e.to_string())?;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{requests} replicated writes, {clients} clients, {value_size}-byte values: {:.0} writes/s; latency us p50 {} p99 {} p99.9 {} max {}",
        requests as f64 / secs,
        all.value_at_quantile(0.5),
        all.value_at_quantile(0.99),
        all.value_at_quantile(0.999),
        all.max()
    );
    Ok(())
}

/// The Jepsen test makes its own runtime after moving into its network namespace.
fn jepsen(cmd: Cmd) -> ExitCode {
    let Cmd::Jepsen { nodes, runs, secs, clients, keys, planted_stale_reads, dir } = cmd else {
        return ExitCode::FAILURE;
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: own path: {e}");
            return ExitCode::FAILURE;
        }
    };
    let base = dir.unwrap_or_else(std::env::temp_dir);
    let settings = shale_openraft::jepsen::Settings {
        nodes,
        runs,
        secs,
        clients,
        keys,
        planted_stale_reads,
        dir: base.join(format!("shale-jepsen-{}", std::process::id())),
        exe,
    };
    match shale_openraft::jepsen::main(&settings) {
        Ok(t) if t.clean() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(cli.cmd, Cmd::Jepsen { .. }) {
        return jepsen(cli.cmd);
    }
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(cli.cmd)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
