//! A Jepsen-style test of `shale-kv-cluster` (`shale-kv-cluster jepsen`): N node processes,
//! each in its own network namespace, concurrent clients doing reads, writes and
//! compare-and-set on a few keys, a nemesis that kills, pauses and partitions nodes, and the
//! [`crate::linearizability`] checker over the recorded history.
//!
//! Network (all made by the test, all deleted when it ends, on error too):
//!
//! ```text
//!   namespace <p>-hub: bridge br0 10.77.0.254/24   <- the test's own clients and nemesis
//!        |  veth v1 ... vN (bridge ports)
//!   namespace <p>-n1: eth0 10.77.0.1/24   node 1 on 10.77.0.1:7001
//!   ...
//!   namespace <p>-nN: eth0 10.77.0.N/24   node N
//! ```
//!
//! `<p>` is `shj<pid>`. The test process moves itself into the hub namespace; no address is
//! added outside the namespaces it created. A partition gives each side a permanent
//! neighbour entry for the other that names a MAC address nobody has, so their packets are
//! silently dropped (as a real partition does; this kernel has no `tc` u32 classifier or
//! netem, and no iptables); healing flushes the entries. A node is started with `ip netns exec`, so its pid is the node's own (SIGKILL,
//! SIGSTOP and SIGCONT reach it).
//!
//! A run: clients and the nemesis for `secs` seconds (faults of ~6 s with ~4 s of calm between,
//! cycling kill, pause, majority/minority partition, leader isolated, bridge), then everything
//! healed, a final read of every key, every node waited for to apply the leader's log, the
//! nodes stopped and their state machines read directly (all must be equal and agree with the
//! final reads). The history is checked per key; an acknowledged write is counted lost when
//! the final value was written by an operation that completed before that write began.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cluster::{JepsenOp, JepsenReply, UNSAFE_LOCAL_READS_ENV};
use crate::linearizability::{self, KeyVerdict, Op, OpKind};
use crate::ShaleStateMachine;

const SUBNET: &str = "10.77.0";
const PORT: u16 = 7001;
/// A locally administered MAC address no interface of the test has.
const NOWHERE_MAC: &str = "02:00:5e:00:de:ad";

/// The settings of a Jepsen test.
#[derive(Debug, Clone)]
pub struct Settings {
    pub nodes: usize,
    pub runs: usize,
    pub secs: u64,
    pub clients: usize,
    pub keys: usize,
    /// Serve reads from any node's local state (the planted bug the checker must catch).
    pub planted_stale_reads: bool,
    /// Where the nodes' data directories go (removed after each run).
    pub dir: PathBuf,
    /// The `shale-kv-cluster` executable the nodes run.
    pub exe: PathBuf,
}

/// The totals of a test, for the caller's exit status.
#[derive(Debug, Default, Clone)]
pub struct Totals {
    pub runs: usize,
    pub ops: usize,
    pub ok: usize,
    pub unknown: usize,
    pub violations: usize,
    pub gave_up: usize,
    pub lost: usize,
    pub divergent: usize,
    pub errors: usize,
}

impl Totals {
    pub fn clean(&self) -> bool {
        self.violations == 0 && self.gave_up == 0 && self.lost == 0 && self.divergent == 0 && self.errors == 0
    }
}

fn sh(args: &[&str]) -> Result<(), String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// The network namespaces.

/// The namespaces of one test; dropping it deletes them.
pub struct Net {
    pub prefix: String,
    pub n: usize,
}

impl Net {
    pub fn hub(&self) -> String {
        format!("{}-hub", self.prefix)
    }
    pub fn node_ns(&self, i: usize) -> String {
        format!("{}-n{}", self.prefix, i + 1)
    }
    pub fn node_ip(i: usize) -> String {
        format!("{SUBNET}.{}", i + 1)
    }
    pub fn node_addr(i: usize) -> String {
        format!("{}:{PORT}", Net::node_ip(i))
    }

    /// Creates the hub with its bridge and one namespace per node, wired to it.
    pub fn create(n: usize) -> Result<Net, String> {
        remove_stale_namespaces();
        let net = Net { prefix: format!("shj{}", std::process::id()), n };
        let hub = net.hub();
        sh(&["ip", "netns", "add", &hub])?;
        sh(&["ip", "-n", &hub, "link", "set", "lo", "up"])?;
        sh(&["ip", "-n", &hub, "link", "add", "br0", "type", "bridge"])?;
        sh(&["ip", "-n", &hub, "addr", "add", &format!("{SUBNET}.254/24"), "dev", "br0"])?;
        sh(&["ip", "-n", &hub, "link", "set", "br0", "up"])?;
        for i in 0..n {
            let ns = net.node_ns(i);
            let v = format!("v{}", i + 1);
            sh(&["ip", "netns", "add", &ns])?;
            sh(&["ip", "-n", &ns, "link", "set", "lo", "up"])?;
            sh(&["ip", "-n", &hub, "link", "add", &v, "type", "veth", "peer", "name", "eth0", "netns", &ns])?;
            sh(&["ip", "-n", &hub, "link", "set", &v, "master", "br0"])?;
            sh(&["ip", "-n", &hub, "link", "set", &v, "up"])?;
            sh(&["ip", "-n", &ns, "addr", "add", &format!("{}/24", Net::node_ip(i)), "dev", "eth0"])?;
            sh(&["ip", "-n", &ns, "link", "set", "eth0", "up"])?;
        }
        Ok(net)
    }

    /// Moves the calling thread (and the threads it starts later) into the hub namespace.
    pub fn enter_hub(&self) -> Result<(), String> {
        let path = format!("/var/run/netns/{}", self.hub());
        let f = std::fs::File::open(&path).map_err(|e| format!("opening {path}: {e}"))?;
        use std::os::fd::AsRawFd;
        // SAFETY: setns(2) with a namespace file descriptor we hold open; it changes only
        // the network namespace of this thread and touches no memory of ours.
        let r = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
        if r != 0 {
            return Err(format!("setns({path}): {}", std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Drops every packet between node `a` and node `b` (both directions, silently: each
    /// side's neighbour entry for the other points at a MAC address no port has, so the
    /// bridge floods the frames and every interface discards them).
    pub fn cut(&self, a: usize, b: usize) -> Result<(), String> {
        for (x, y) in [(a, b), (b, a)] {
            let ns = self.node_ns(x);
            sh(&[
                "ip",
                "-n",
                &ns,
                "neigh",
                "replace",
                &Net::node_ip(y),
                "lladdr",
                NOWHERE_MAC,
                "dev",
                "eth0",
                "nud",
                "permanent",
            ])?;
        }
        Ok(())
    }

    /// Removes every partition (the nodes resolve each other again by ARP).
    pub fn heal(&self) -> Result<(), String> {
        for i in 0..self.n {
            sh(&["ip", "-n", &self.node_ns(i), "neigh", "flush", "dev", "eth0", "nud", "all"])?;
        }
        Ok(())
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for i in 0..self.n {
            let _ = sh(&["ip", "netns", "del", &self.node_ns(i)]);
        }
        let _ = sh(&["ip", "netns", "del", &self.hub()]);
    }
}

/// Deletes the namespaces of earlier tests (`shj<pid>-*`) whose process is gone.
fn remove_stale_namespaces() {
    let Ok(rd) = std::fs::read_dir("/var/run/netns") else { return };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("shj") else { continue };
        let Some((pid, _)) = rest.split_once('-') else { continue };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = sh(&["ip", "netns", "del", &name]);
        }
    }
}

/// Whether this machine lets us create network namespaces (root, `ip` present).
pub fn namespaces_available() -> Result<(), String> {
    let probe = format!("shj{}-probe", std::process::id());
    sh(&["ip", "netns", "add", &probe])?;
    let r =
        sh(&["ip", "-n", &probe, "link", "add", "p0", "type", "veth", "peer", "name", "p1"]).and_then(|_| {
            sh(&[
                "ip",
                "-n",
                &probe,
                "neigh",
                "replace",
                "10.77.0.9",
                "lladdr",
                NOWHERE_MAC,
                "dev",
                "p0",
                "nud",
                "permanent",
            ])
        });
    let _ = sh(&["ip", "netns", "del", &probe]);
    r
}

// ---------------------------------------------------------------------------------------------
// The node processes.

struct Nodes {
    procs: Vec<Option<Child>>,
    paused: Vec<bool>,
    dir: PathBuf,
    exe: PathBuf,
    ns: Vec<String>,
    planted: bool,
}

impl Nodes {
    fn spawn(&mut self, i: usize) -> Result<(), String> {
        let dir = self.dir.join(format!("{}", i + 1));
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(format!("node-{}.log", i + 1)))
            .map_err(|e| format!("node log: {e}"))?;
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.ns[i]])
            .arg(&self.exe)
            .args(["node", "--id", &(i + 1).to_string(), "--http", &Net::node_addr(i), "--dir"])
            .arg(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        if self.planted {
            cmd.env(UNSAFE_LOCAL_READS_ENV, "1");
        } else {
            cmd.env_remove(UNSAFE_LOCAL_READS_ENV);
        }
        let child = cmd.spawn().map_err(|e| format!("starting node {}: {e}", i + 1))?;
        self.procs[i] = Some(child);
        self.paused[i] = false;
        Ok(())
    }

    fn signal(&self, i: usize, sig: i32) {
        if let Some(c) = &self.procs[i] {
            // SAFETY: kill(2) on the pid of a child we spawned and have not reaped.
            unsafe {
                libc::kill(c.id() as libc::pid_t, sig);
            }
        }
    }

    fn kill(&mut self, i: usize) {
        self.signal(i, libc::SIGKILL);
        if let Some(mut c) = self.procs[i].take() {
            let _ = c.wait();
        }
        self.paused[i] = false;
    }

    fn pause(&mut self, i: usize) {
        self.signal(i, libc::SIGSTOP);
        self.paused[i] = true;
    }

    fn resume(&mut self, i: usize) {
        self.signal(i, libc::SIGCONT);
        self.paused[i] = false;
    }

    /// Every node running and not paused.
    fn restore(&mut self) -> Result<(), String> {
        for i in 0..self.procs.len() {
            if self.procs[i].is_none() {
                self.spawn(i)?;
            } else if self.paused[i] {
                self.resume(i);
            }
        }
        Ok(())
    }

    /// SIGTERM to all, waiting up to `timeout` for each; the ones that do not stop are killed
    /// and reported.
    fn stop_all(&mut self, timeout: Duration) -> Vec<String> {
        let mut problems = Vec::new();
        for i in 0..self.procs.len() {
            self.signal(i, libc::SIGCONT);
            self.signal(i, libc::SIGTERM);
        }
        let deadline = Instant::now() + timeout;
        for i in 0..self.procs.len() {
            let Some(mut c) = self.procs[i].take() else { continue };
            loop {
                match c.try_wait() {
                    Ok(Some(st)) => {
                        if !st.success() {
                            problems.push(format!("node {} exited with {st}", i + 1));
                        }
                        break;
                    }
                    Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                    _ => {
                        problems.push(format!("node {} did not stop on SIGTERM", i + 1));
                        // SAFETY: kill(2) on our unreaped child.
                        unsafe {
                            libc::kill(c.id() as libc::pid_t, libc::SIGKILL);
                        }
                        let _ = c.wait();
                        break;
                    }
                }
            }
        }
        problems
    }
}

impl Drop for Nodes {
    fn drop(&mut self) {
        for i in 0..self.procs.len() {
            self.kill(i);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The clients.

/// A small xorshift generator (the test needs no cryptographic randomness).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// How an operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Ok,
    /// Certainly did not happen (refused, or a read that failed).
    Fail,
    /// A write that may have happened.
    Unknown,
}

struct Record {
    op: Op,
    outcome: Outcome,
    is_write: bool,
}

struct Shared {
    t0: Instant,
    stop: std::sync::atomic::AtomicBool,
    history: Mutex<Vec<Record>>,
}

impl Shared {
    fn now(&self) -> u64 {
        self.t0.elapsed().as_micros() as u64
    }
}

/// Operation timeout of a client: a write not answered by then is unknown.
const OP_TIMEOUT: Duration = Duration::from_secs(2);

async fn send(
    http: &reqwest::Client,
    addr: &str,
    op: &JepsenOp,
    timeout: Duration,
) -> Result<JepsenReply, (bool, String)> {
    let r = http.post(format!("http://{addr}/jepsen/op")).timeout(timeout).json(op).send().await;
    match r {
        Ok(resp) => resp.json::<JepsenReply>().await.map_err(|e| (true, format!("{addr}: {e}"))),
        // A refused or unreachable connection: the request never reached the node.
        Err(e) if e.is_connect() => Err((false, format!("{addr}: {e}"))),
        Err(e) => Err((true, format!("{addr}: {e}"))),
    }
}

/// Runs one operation: to a random node for reads (followers refuse with the leader's
/// address), to the believed leader for writes; follows refusals until [`OP_TIMEOUT`].
async fn run_op(
    http: &reqwest::Client,
    n: usize,
    leader: &Mutex<Option<usize>>,
    rng: &mut Rng,
    op: &JepsenOp,
) -> (Outcome, Option<JepsenReply>) {
    let deadline = Instant::now() + OP_TIMEOUT;
    let is_write = !matches!(op, JepsenOp::Read { .. });
    let mut target = match (is_write, leader.lock().ok().and_then(|l| *l)) {
        (true, Some(l)) => l,
        _ => rng.below(n),
    };
    let mut maybe_sent = false;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        match send(http, &Net::node_addr(target), op, left).await {
            Ok(JepsenReply::NotLeader(hint)) => {
                let next = hint.and_then(|h| (0..n).find(|&i| Net::node_addr(i) == h));
                if let Ok(mut l) = leader.lock() {
                    *l = next;
                }
                match next {
                    Some(i) if i != target => target = i,
                    _ => {
                        target = rng.below(n);
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
            }
            Ok(JepsenReply::Failed(_)) => {
                if let Ok(mut l) = leader.lock() {
                    *l = None;
                }
                return (if is_write { Outcome::Unknown } else { Outcome::Fail }, None);
            }
            Ok(reply) => {
                if is_write {
                    if let Ok(mut l) = leader.lock() {
                        *l = Some(target);
                    }
                }
                return (Outcome::Ok, Some(reply));
            }
            Err((sent, _)) => {
                if sent {
                    maybe_sent = true;
                    if let Ok(mut l) = leader.lock() {
                        *l = None;
                    }
                    // A write sent and not answered may still happen: never resend it (a
                    // late copy could overwrite a later value).
                    if is_write {
                        break;
                    }
                }
                target = (target + 1 + rng.below(n.saturating_sub(1).max(1))) % n;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    (if is_write && maybe_sent { Outcome::Unknown } else { Outcome::Fail }, None)
}

async fn client_loop(id: u64, n: usize, keys: usize, shared: Arc<Shared>, leader: Arc<Mutex<Option<usize>>>) {
    let http = match reqwest::Client::builder()
        .connect_timeout(Duration::from_millis(500))
        .tcp_nodelay(true)
        .build()
    {
        Ok(h) => h,
        Err(_) => return,
    };
    let mut rng = Rng::new(id + 1);
    let mut seen: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut seq = 0u64;
    while !shared.stop.load(std::sync::atomic::Ordering::Relaxed) {
        let key = format!("k{}", rng.below(keys));
        seq += 1;
        let value = format!("c{id}-{seq}");
        let op = match rng.below(4) {
            0 => JepsenOp::Write { key: key.clone(), value: value.clone() },
            1 => JepsenOp::Cas {
                key: key.clone(),
                expected: seen.get(&key).cloned().flatten(),
                new: value.clone(),
            },
            _ => JepsenOp::Read { key: key.clone() },
        };
        let invoke = shared.now();
        let (outcome, reply) = run_op(&http, n, &leader, &mut rng, &op).await;
        let complete = shared.now();
        let kind = match (&op, &reply) {
            (JepsenOp::Read { .. }, Some(JepsenReply::Read(v))) => {
                seen.insert(key.clone(), v.clone());
                OpKind::Read { value: v.clone() }
            }
            (JepsenOp::Read { .. }, _) => OpKind::Read { value: None },
            (JepsenOp::Write { value, .. }, _) => {
                if outcome == Outcome::Ok {
                    seen.insert(key.clone(), Some(value.clone()));
                }
                OpKind::Write { value: value.clone() }
            }
            (JepsenOp::Cas { expected, new, .. }, r) => {
                let result = match r {
                    Some(JepsenReply::Cas(b)) => Some(*b),
                    _ => None,
                };
                if result == Some(true) {
                    seen.insert(key.clone(), Some(new.clone()));
                }
                OpKind::Cas { expected: expected.clone(), new: new.clone(), result }
            }
        };
        let rec = Record {
            op: Op {
                client: id,
                key,
                kind,
                invoke,
                complete: (outcome != Outcome::Unknown).then_some(complete),
            },
            outcome,
            is_write: !matches!(op, JepsenOp::Read { .. }),
        };
        // A record also carries the completion time of an unknown op for availability.
        let mut rec = rec;
        if outcome == Outcome::Unknown {
            rec.op.complete = None;
        }
        match shared.history.lock() {
            Ok(mut h) => h.push(rec),
            Err(_) => return,
        }
        if outcome == Outcome::Fail {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The nemesis.

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    Kill,
    Pause,
    PartitionHalves,
    PartitionLeader,
    Bridge,
}

impl Fault {
    pub const ALL: [Fault; 5] =
        [Fault::Kill, Fault::Pause, Fault::PartitionHalves, Fault::PartitionLeader, Fault::Bridge];
    pub fn name(self) -> &'static str {
        match self {
            Fault::Kill => "kill",
            Fault::Pause => "pause",
            Fault::PartitionHalves => "partition-halves",
            Fault::PartitionLeader => "partition-leader",
            Fault::Bridge => "bridge",
        }
    }
}

/// One fault: when it began and when it was healed (microseconds since the run began).
#[derive(Debug, Clone)]
struct Window {
    fault: Fault,
    start: u64,
    heal: u64,
}

/// The leader as the nodes report it (the node that says it leads), if any answers.
async fn find_leader(http: &reqwest::Client, n: usize) -> Option<usize> {
    for i in 0..n {
        let r = http
            .post(format!("http://{}/api/metrics", Net::node_addr(i)))
            .timeout(Duration::from_millis(300))
            .json(&())
            .send()
            .await;
        if let Ok(resp) = r {
            if let Ok(m) = resp.json::<openraft::RaftMetrics<crate::NodeId, crate::Node>>().await {
                if m.current_leader == Some(i as u64 + 1) {
                    return Some(i);
                }
            }
        }
    }
    None
}

fn shuffled(n: usize, rng: &mut Rng) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.below(i + 1);
        v.swap(i, j);
    }
    v
}

async fn apply_fault(
    fault: Fault,
    net: &Net,
    nodes: &Mutex<Nodes>,
    http: &reqwest::Client,
    rng: &mut Rng,
) -> Result<String, String> {
    let n = net.n;
    let leader = find_leader(http, n).await;
    let target = match leader {
        Some(l) if rng.below(2) == 0 => l,
        _ => rng.below(n),
    };
    let mut nodes = nodes.lock().map_err(|_| "nodes lock poisoned".to_string())?;
    Ok(match fault {
        Fault::Kill => {
            nodes.kill(target);
            format!("kill n{}", target + 1)
        }
        Fault::Pause => {
            nodes.pause(target);
            format!("pause n{}", target + 1)
        }
        Fault::PartitionHalves => {
            let order = shuffled(n, rng);
            let (minority, majority) = order.split_at(n / 2);
            for &a in minority {
                for &b in majority {
                    net.cut(a, b)?;
                }
            }
            format!("partition {minority:?}|{majority:?}")
        }
        Fault::PartitionLeader => {
            let l = leader.unwrap_or(target);
            for b in (0..n).filter(|&b| b != l) {
                net.cut(l, b)?;
            }
            format!("isolate n{}", l + 1)
        }
        Fault::Bridge => {
            let order = shuffled(n, rng);
            let half = n / 2;
            // order[half] is the bridge: it sees both sides, the sides do not see each other.
            for &a in &order[..half] {
                for &b in &order[half + 1..] {
                    net.cut(a, b)?;
                }
            }
            format!("bridge n{}", order[half] + 1)
        }
    })
}

// ---------------------------------------------------------------------------------------------
// One run.

/// Per fault kind, one entry per fault: (acknowledged operations/s during it, in the 3 s
/// after healing, ms from healing to the first acknowledged write invoked after it).
pub type Availability = BTreeMap<Fault, Vec<(f64, f64, Option<f64>)>>;

/// What one run found.
#[derive(Debug, Default, Clone)]
pub struct RunResult {
    pub ops: usize,
    pub ok: usize,
    pub fail: usize,
    pub unknown: usize,
    pub violations: usize,
    pub gave_up: usize,
    pub lost: usize,
    pub divergent: usize,
    pub errors: Vec<String>,
    pub faults: Vec<String>,
    /// Per fault kind: (ok ops/s during, ok ops/s in the 3 s after healing, ms from healing to
    /// the first acknowledged write invoked after it).
    pub availability: Availability,
    pub calm_ops_per_sec: f64,
    pub violation_detail: Vec<String>,
}

async fn final_read(http: &reqwest::Client, n: usize, key: &str, shared: &Shared) -> Result<Record, String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let leader = Mutex::new(None);
    let mut rng = Rng::new(99);
    let op = JepsenOp::Read { key: key.to_string() };
    loop {
        let invoke = shared.now();
        if let (Outcome::Ok, Some(JepsenReply::Read(v))) = run_op(http, n, &leader, &mut rng, &op).await {
            let complete = shared.now();
            return Ok(Record {
                op: Op {
                    client: u64::MAX,
                    key: key.to_string(),
                    kind: OpKind::Read { value: v },
                    invoke,
                    complete: Some(complete),
                },
                outcome: Outcome::Ok,
                is_write: false,
            });
        }
        if Instant::now() > deadline {
            return Err(format!("no final read of {key} within 60 s after healing"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until every node applied the leader's last log entry.
async fn wait_converged(http: &reqwest::Client, n: usize) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut applied = Vec::new();
        let mut last = None;
        for i in 0..n {
            let r = http
                .post(format!("http://{}/api/metrics", Net::node_addr(i)))
                .timeout(Duration::from_secs(2))
                .json(&())
                .send()
                .await;
            let m = match r {
                Ok(resp) => resp.json::<openraft::RaftMetrics<crate::NodeId, crate::Node>>().await.ok(),
                Err(_) => None,
            };
            if let Some(m) = &m {
                if m.current_leader == Some(i as u64 + 1) {
                    last = m.last_log_index;
                }
            }
            applied.push(m.and_then(|m| m.last_applied.map(|l| l.index)));
        }
        if last.is_some() && applied.iter().all(|a| *a == last) {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!(
                "nodes did not converge within 60 s: applied {applied:?}, leader's last {last:?}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Acknowledged writes lost: for each key, the final value's writer; an acknowledged write
/// invoked after that writer completed should have replaced it (or been replaced by a later
/// one), so the final value cannot be the writer's.
fn count_lost(history: &[Record], finals: &BTreeMap<String, Option<String>>) -> usize {
    let mut lost = 0;
    for (key, fin) in finals {
        let writer_done: Option<u64> = match fin {
            None => Some(0),
            Some(v) => history
                .iter()
                .filter(|r| r.op.key == *key)
                .find(|r| match &r.op.kind {
                    OpKind::Write { value } => value == v,
                    OpKind::Cas { new, .. } => new == v,
                    OpKind::Read { .. } => false,
                })
                .and_then(|r| r.op.complete),
        };
        let Some(done) = writer_done else { continue };
        lost += history
            .iter()
            .filter(|r| r.op.key == *key && r.outcome == Outcome::Ok && (fin.is_none() || r.op.invoke > done))
            .filter(|r| match &r.op.kind {
                OpKind::Write { value } => Some(value) != fin.as_ref(),
                OpKind::Cas { new, result: Some(true), .. } => Some(new) != fin.as_ref(),
                _ => false,
            })
            .count();
    }
    lost
}

async fn one_run(run: usize, s: &Settings, net: &Net) -> RunResult {
    let mut res = RunResult::default();
    let dir = s.dir.join(format!("run-{run}"));
    let _ = std::fs::remove_dir_all(&dir);
    let nodes = Arc::new(Mutex::new(Nodes {
        procs: (0..s.nodes).map(|_| None).collect(),
        paused: vec![false; s.nodes],
        dir: dir.clone(),
        exe: s.exe.clone(),
        ns: (0..s.nodes).map(|i| net.node_ns(i)).collect(),
        planted: s.planted_stale_reads,
    }));
    let r = run_inner(run, s, net, &nodes, &mut res).await;
    if let Err(e) = r {
        res.errors.push(e);
    }
    // Whatever happened: heal, stop the nodes; keep the data only when something is wrong.
    let _ = net.heal();
    if let Ok(mut n) = nodes.lock() {
        for i in 0..s.nodes {
            n.kill(i);
        }
    }
    let bad =
        !res.errors.is_empty() || res.violations > 0 || res.lost > 0 || res.divergent > 0 || res.gave_up > 0;
    if !bad || s.planted_stale_reads {
        let _ = std::fs::remove_dir_all(&dir);
    }
    res
}

async fn run_inner(
    run: usize,
    s: &Settings,
    net: &Net,
    nodes: &Arc<Mutex<Nodes>>,
    res: &mut RunResult,
) -> Result<(), String> {
    let n = s.nodes;
    {
        let mut g = nodes.lock().map_err(|_| "nodes lock poisoned")?;
        for i in 0..n {
            g.spawn(i)?;
        }
    }
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_millis(500))
        .build()
        .map_err(|e| e.to_string())?;
    // Wait for every node, initialize, wait for a leader.
    let deadline = Instant::now() + Duration::from_secs(30);
    for i in 0..n {
        loop {
            let ok = http
                .post(format!("http://{}/api/metrics", Net::node_addr(i)))
                .timeout(Duration::from_secs(1))
                .json(&())
                .send()
                .await
                .is_ok();
            if ok {
                break;
            }
            if Instant::now() > deadline {
                return Err(format!("node {} did not start within 30 s", i + 1));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let members: Vec<(u64, String)> = (0..n).map(|i| (i as u64 + 1, Net::node_addr(i))).collect();
    let init: Result<
        (),
        openraft::error::RaftError<u64, openraft::error::InitializeError<u64, crate::Node>>,
    > = http
        .post(format!("http://{}/api/init", Net::node_addr(0)))
        .json(&members)
        .send()
        .await
        .map_err(|e| format!("init: {e}"))?
        .json()
        .await
        .map_err(|e| format!("init: {e}"))?;
    init.map_err(|e| format!("init: {e}"))?;
    while find_leader(&http, n).await.is_none() {
        if Instant::now() > deadline {
            return Err("no leader within 30 s of starting".into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let shared = Arc::new(Shared { t0: Instant::now(), stop: false.into(), history: Mutex::new(Vec::new()) });
    let leader = Arc::new(Mutex::new(None));
    let mut clients = Vec::new();
    for c in 0..s.clients {
        clients.push(tokio::spawn(client_loop(c as u64, n, s.keys, shared.clone(), leader.clone())));
    }

    // The nemesis: calm, then faults of ~6 s with ~4 s of calm between, cycling the kinds.
    // Every kind occurs in every run: until each has had its turn, the time left is shared
    // among the kinds still to come (a fault lasts 3/5 of its share, at least MIN_FAULT),
    // so slow restarts and leader lookups on a loaded machine shorten the windows instead of
    // leaving a kind out (the run then ends a little after `secs`, never without it). After
    // that, more faults while a whole window fits.
    const MIN_FAULT: Duration = Duration::from_secs(1);
    let mut rng = Rng::new(run as u64 * 7919 + n as u64);
    let end = shared.t0 + Duration::from_secs(s.secs);
    let mut windows = Vec::new();
    let mut k = run % Fault::ALL.len();
    tokio::time::sleep(Duration::from_secs(3).min(Duration::from_secs(s.secs / 4))).await;
    let calm_end = shared.now();
    let fault_len = Duration::from_millis(6000.min(s.secs * 1000 / 4));
    let gap = Duration::from_millis(4000.min(s.secs * 1000 / 6));
    let mut applied = 0usize;
    loop {
        let to_come = Fault::ALL.len().saturating_sub(applied);
        let (this_len, this_gap) = if to_come > 0 {
            let share = end.saturating_duration_since(Instant::now()) / to_come as u32;
            (fault_len.min(share * 3 / 5).max(MIN_FAULT), gap.min(share * 2 / 5))
        } else if Instant::now() + fault_len < end {
            (fault_len, gap)
        } else {
            break;
        };
        let fault = Fault::ALL[k % Fault::ALL.len()];
        k += 1;
        applied += 1;
        let start = shared.now();
        let what = apply_fault(fault, net, nodes, &http, &mut rng).await?;
        tokio::time::sleep(this_len).await;
        net.heal()?;
        nodes.lock().map_err(|_| "nodes lock poisoned")?.restore()?;
        let heal = shared.now();
        res.faults.push(what);
        windows.push(Window { fault, start, heal });
        let left = end.saturating_duration_since(Instant::now());
        tokio::time::sleep(this_gap.min(left)).await;
    }
    let now = Instant::now();
    if now < end {
        tokio::time::sleep(end - now).await;
    }
    shared.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for c in clients {
        let _ = c.await;
    }
    let workload_end = shared.now();

    // Heal was done after every fault; read every key, wait for every node to catch up.
    let mut finals = BTreeMap::new();
    let mut final_recs = Vec::new();
    for k in 0..s.keys {
        let key = format!("k{k}");
        let r = final_read(&http, n, &key, &shared).await?;
        if let OpKind::Read { value } = &r.op.kind {
            finals.insert(key, value.clone());
        }
        final_recs.push(r);
    }
    wait_converged(&http, n).await?;
    let problems = nodes.lock().map_err(|_| "nodes lock poisoned")?.stop_all(Duration::from_secs(30));
    res.errors.extend(problems);

    // Every node's state machine, read directly: all equal, and equal to the final reads.
    let mut contents = Vec::new();
    for i in 0..n {
        let sm =
            ShaleStateMachine::open(&s.dir.join(format!("run-{run}")).join(format!("{}", i + 1)).join("sm"))
                .map_err(|e| format!("opening node {}'s state machine: {e}", i + 1))?;
        let kv: BTreeMap<String, String> = sm
            .scan()
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|(k, v)| {
                (String::from_utf8_lossy(&k).into_owned(), String::from_utf8_lossy(&v).into_owned())
            })
            .collect();
        contents.push(kv);
    }
    for (i, c) in contents.iter().enumerate() {
        let agrees = finals.iter().all(|(k, v)| c.get(k) == v.as_ref());
        if c != &contents[0] || !agrees {
            res.divergent += 1;
            res.violation_detail.push(format!(
                "node {}'s state machine differs from node 1's or from the final reads",
                i + 1
            ));
        }
    }

    let mut history = std::mem::take(&mut *shared.history.lock().map_err(|_| "history lock poisoned")?);
    history.extend(final_recs);
    res.ops = history.len();
    res.ok = history.iter().filter(|r| r.outcome == Outcome::Ok).count();
    res.fail = history.iter().filter(|r| r.outcome == Outcome::Fail).count();
    res.unknown = history.iter().filter(|r| r.outcome == Outcome::Unknown).count();
    res.lost = count_lost(&history, &finals);

    // Availability: acknowledged operations per second in the calm start, during each fault
    // and in the 3 s after it healed; time from healing to the first acknowledged write
    // invoked after it.
    let done_between = |a: u64, b: u64| {
        history
            .iter()
            .filter(|r| {
                r.outcome == Outcome::Ok
                    && r.op.client != u64::MAX
                    && r.op.complete.is_some_and(|c| c >= a && c < b)
            })
            .count() as f64
    };
    res.calm_ops_per_sec = done_between(0, calm_end) / (calm_end.max(1) as f64 / 1e6);
    for w in &windows {
        let during = done_between(w.start, w.heal) / ((w.heal - w.start).max(1) as f64 / 1e6);
        let after_end = (w.heal + 3_000_000).min(workload_end);
        let after =
            done_between(w.heal, after_end) / ((after_end.saturating_sub(w.heal)).max(1) as f64 / 1e6);
        let recover = history
            .iter()
            .filter(|r| r.is_write && r.outcome == Outcome::Ok && r.op.invoke >= w.heal)
            .filter_map(|r| r.op.complete)
            .min()
            .map(|c| (c - w.heal) as f64 / 1e3);
        res.availability.entry(w.fault).or_default().push((during, after, recover));
    }

    // The check, per key, over what certainly or possibly happened.
    let ops: Vec<Op> = history.into_iter().filter(|r| r.outcome != Outcome::Fail).map(|r| r.op).collect();
    let ops: Vec<Op> = ops
        .into_iter()
        .filter(|o| !(matches!(o.kind, OpKind::Read { .. }) && o.complete.is_none()))
        .collect();
    let report = linearizability::check(&ops, linearizability::DEFAULT_BUDGET);
    res.violations = report.violations();
    res.gave_up = report.gave_up();
    for (k, v) in &report.keys {
        match v {
            KeyVerdict::Linearizable => {}
            KeyVerdict::Violation { placed, of, stuck_at } => res.violation_detail.push(format!(
                "key {k}: not linearizable: {placed} of {of} completed operations placed, then stuck at {stuck_at:?}"
            )),
            KeyVerdict::GaveUp { steps } => res.violation_detail.push(format!("key {k}: checker gave up after {steps} steps")),
        }
    }
    Ok(())
}

fn fmt_avail(a: &Availability) -> String {
    let mut out = String::new();
    for (f, v) in a {
        let m = v.len().max(1) as f64;
        let during = v.iter().map(|x| x.0).sum::<f64>() / m;
        let after = v.iter().map(|x| x.1).sum::<f64>() / m;
        let rec: Vec<f64> = v.iter().filter_map(|x| x.2).collect();
        let recover = if rec.is_empty() {
            "none".to_string()
        } else {
            let max = rec.iter().cloned().fold(0.0f64, f64::max);
            let mean = rec.iter().sum::<f64>() / rec.len() as f64;
            format!("mean={mean:.0} max={max:.0} (after {} of {} heals)", rec.len(), v.len())
        };
        let _ = write!(
            out,
            " {}:[n={} during={:.0}/s after={:.0}/s recover_ms {}]",
            f.name(),
            v.len(),
            during,
            after,
            recover
        );
    }
    out
}

/// Runs the test: `runs` runs, one summary line each and a total. Stops by itself; tears the
/// namespaces down at the end, on error too.
pub fn main(s: &Settings) -> Result<Totals, String> {
    if s.nodes < 3 {
        return Err("--nodes must be 3 or more".into());
    }
    if s.nodes > 200 || s.clients == 0 || s.keys == 0 || s.secs < 4 {
        return Err("--nodes at most 200, --clients and --keys at least 1, --secs at least 4".into());
    }
    let net = Net::create(s.nodes)?;
    net.enter_hub()?;
    std::fs::create_dir_all(&s.dir).map_err(|e| format!("creating {}: {e}", s.dir.display()))?;
    let rt = tokio::runtime::Runtime::new().map_err(|e| format!("tokio runtime: {e}"))?;
    let totals = rt.block_on(async {
        let mut t = Totals::default();
        let mut avail: Availability = BTreeMap::new();
        let mut calm = Vec::new();
        let started = Instant::now();
        for run in 1..=s.runs {
            let r = tokio::select! {
                r = one_run(run, s, &net) => r,
                _ = tokio::signal::ctrl_c() => {
                    println!("interrupted");
                    t.errors += 1;
                    break;
                }
            };
            println!(
                "run {run}/{} nodes={} secs={} ops={} ok={} fail={} unknown={} faults=[{}] linearizability_violations={} checker_gave_up={} lost_acked_writes={} divergent_nodes={} errors={} calm={:.0}/s{}",
                s.runs,
                s.nodes,
                s.secs,
                r.ops,
                r.ok,
                r.fail,
                r.unknown,
                r.faults.join(", "),
                r.violations,
                r.gave_up,
                r.lost,
                r.divergent,
                r.errors.len(),
                r.calm_ops_per_sec,
                fmt_avail(&r.availability)
            );
            for d in r.violation_detail.iter().chain(&r.errors) {
                println!("  {d}");
            }
            t.runs += 1;
            t.ops += r.ops;
            t.ok += r.ok;
            t.unknown += r.unknown;
            t.violations += r.violations;
            t.gave_up += r.gave_up;
            t.lost += r.lost;
            t.divergent += r.divergent;
            t.errors += r.errors.len();
            calm.push(r.calm_ops_per_sec);
            for (f, v) in r.availability {
                avail.entry(f).or_default().extend(v);
            }
        }
        println!(
            "total: runs={} nodes={} secs={} planted_stale_reads={} ops={} ok={} unknown={} linearizability_violations={} checker_gave_up={} lost_acked_writes={} divergent_nodes={} errors={} calm={:.0}/s{} wall={:.0}s",
            t.runs,
            s.nodes,
            s.secs,
            s.planted_stale_reads,
            t.ops,
            t.ok,
            t.unknown,
            t.violations,
            t.gave_up,
            t.lost,
            t.divergent,
            t.errors,
            calm.iter().sum::<f64>() / calm.len().max(1) as f64,
            fmt_avail(&avail),
            started.elapsed().as_secs_f64()
        );
        t
    });
    drop(rt);
    let _ = std::fs::remove_dir(&s.dir);
    drop(net);
    Ok(totals)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn rec(key: &str, kind: OpKind, invoke: u64, complete: Option<u64>, outcome: Outcome) -> Record {
        Record { op: Op { client: 0, key: key.into(), kind, invoke, complete }, outcome, is_write: true }
    }

    #[test]
    fn a_write_overwritten_by_an_older_one_is_lost() {
        let h = vec![
            rec("k", OpKind::Write { value: "a".into() }, 0, Some(1), Outcome::Ok),
            rec("k", OpKind::Write { value: "b".into() }, 2, Some(3), Outcome::Ok),
        ];
        let mut finals = BTreeMap::new();
        finals.insert("k".to_string(), Some("a".to_string()));
        assert_eq!(count_lost(&h, &finals), 1);
        finals.insert("k".to_string(), Some("b".to_string()));
        assert_eq!(count_lost(&h, &finals), 0);
        finals.insert("k".to_string(), None);
        assert_eq!(count_lost(&h, &finals), 2);
    }
}
