//! The replicated key-value service of the `shale-kv-cluster` example: one openraft node per
//! process, its storage on Shale, JSON over HTTP on loopback.
//!
//! Routes of a node (all POST, JSON bodies):
//!
//! ```text
//! /raft/append     AppendEntriesRequest   -> Result<AppendEntriesResponse, RaftError>
//! /raft/vote       VoteRequest            -> Result<VoteResponse, RaftError>
//! /raft/snapshot   InstallSnapshotRequest -> Result<InstallSnapshotResponse, RaftError<InstallSnapshotError>>
//! /api/write       Request                -> Result<ClientWriteResponse, RaftError<ClientWriteError>>
//! /api/read        key (string)           -> Result<Option<value>, RaftError<CheckIsLeaderError>>
//! /api/init        [[id, addr], ...]      -> Result<(), RaftError<InitializeError>>
//! /api/add-learner [id, addr]             -> Result<ClientWriteResponse, RaftError<ClientWriteError>>
//! /api/change-membership [id, ...]        -> Result<ClientWriteResponse, RaftError<ClientWriteError>>
//! /api/metrics     (empty)                -> RaftMetrics
//! ```
//!
//! A read is linearizable: the node asks openraft's `ensure_linearizable` (the leader confirms
//! its leadership with a quorum and waits until its state machine applied the read point), then
//! reads its state machine. A follower answers writes and reads with openraft's
//! `ForwardToLeader` error; [`Client`] follows it.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use openraft::error::{
    CheckIsLeaderError, ClientWriteError, InitializeError, InstallSnapshotError, NetworkError, RPCError,
    RaftError, RemoteError, Unreachable,
};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, ClientWriteResponse, InstallSnapshotRequest,
    InstallSnapshotResponse, VoteRequest, VoteResponse,
};
use openraft::{BasicNode, Config, RaftMetrics, SnapshotPolicy};
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::sync::Mutex;

use crate::{open_storage, Node, NodeId, Raft, Request, ShaleStateMachine, TypeConfig};

/// The Raft group id of the example's one group (its region in the log engine).
pub const GROUP: u64 = 1;

/// The Raft timing and snapshot settings of the example: elections within about a second
/// on loopback, a snapshot (and a log purge) every 5000 entries.
pub fn raft_config() -> Config {
    Config {
        cluster_name: "shale-kv-cluster".to_string(),
        heartbeat_interval: 100,
        election_timeout_min: 400,
        election_timeout_max: 800,
        snapshot_policy: SnapshotPolicy::LogsSinceLast(5000),
        max_in_snapshot_log_to_keep: 1000,
        ..Default::default()
    }
}

// ---------------------------------------------------------------------------------------------
// The network openraft uses between nodes.

/// Makes one [`Network`] per peer; they share one HTTP connection pool.
#[derive(Clone)]
pub struct NetworkFactory {
    http: reqwest::Client,
}

impl Default for NetworkFactory {
    fn default() -> Self {
        Self::new()
    }
}

impl NetworkFactory {
    pub fn new() -> NetworkFactory {
        NetworkFactory { http: reqwest::Client::new() }
    }
}

pub struct Network {
    http: reqwest::Client,
    target: NodeId,
    node: BasicNode,
}

impl Network {
    async fn call<Req, Resp, E>(
        &self,
        path: &str,
        req: &Req,
        option: &RPCOption,
    ) -> Result<Resp, RPCError<NodeId, Node, RaftError<NodeId, E>>>
    where
        Req: Serialize,
        Resp: DeserializeOwned,
        E: std::error::Error + DeserializeOwned,
    {
        let url = format!("http://{}/{}", self.node.addr, path);
        let resp = self.http.post(url).timeout(option.hard_ttl()).json(req).send().await.map_err(|e| {
            if e.is_connect() {
                RPCError::Unreachable(Unreachable::new(&e))
            } else {
                RPCError::Network(NetworkError::new(&e))
            }
        })?;
        let r: Result<Resp, RaftError<NodeId, E>> =
            resp.json().await.map_err(|e| RPCError::Network(NetworkError::new(&e)))?;
        r.map_err(|e| RPCError::RemoteError(RemoteError::new_with_node(self.target, self.node.clone(), e)))
    }
}

impl RaftNetworkFactory<TypeConfig> for NetworkFactory {
    type Network = Network;

    async fn new_client(&mut self, target: NodeId, node: &BasicNode) -> Network {
        Network { http: self.http.clone(), target, node: node.clone() }
    }
}

impl RaftNetwork<TypeConfig> for Network {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<NodeId>, RPCError<NodeId, Node, RaftError<NodeId>>> {
        self.call("raft/append", &rpc, &option).await
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<
        InstallSnapshotResponse<NodeId>,
        RPCError<NodeId, Node, RaftError<NodeId, InstallSnapshotError>>,
    > {
        self.call("raft/snapshot", &rpc, &option).await
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> Result<VoteResponse<NodeId>, RPCError<NodeId, Node, RaftError<NodeId>>> {
        self.call("raft/vote", &rpc, &option).await
    }
}

// ---------------------------------------------------------------------------------------------
// A node: the Raft instance, its storage and its HTTP server.

#[derive(Clone)]
struct App {
    id: NodeId,
    raft: Raft,
    sm: ShaleStateMachine,
    /// The planted bug of the Jepsen test's checker check: serve `/jepsen/op` reads from
    /// this node's local state machine without the read index (set by the environment
    /// variable [`UNSAFE_LOCAL_READS_ENV`]; never in normal use).
    unsafe_local_reads: bool,
}

/// Environment variable that plants a bug for the Jepsen test to catch: when set to `1`, a
/// node answers `/jepsen/op` reads from its own state machine, leader or not, without
/// openraft's `ensure_linearizable` (stale reads from followers and deposed leaders).
pub const UNSAFE_LOCAL_READS_ENV: &str = "SHALE_KV_UNSAFE_LOCAL_READS";

/// An operation of the Jepsen test's clients (`/jepsen/op`).
#[derive(Serialize, serde::Deserialize, Debug, Clone, PartialEq, Eq)]
pub enum JepsenOp {
    Read { key: String },
    Write { key: String, value: String },
    Cas { key: String, expected: Option<String>, new: String },
}

/// The answer to a [`JepsenOp`]: unlike the general API it says whether a failed write may
/// still take effect, which the linearizability check needs.
#[derive(Serialize, serde::Deserialize, Debug, Clone, PartialEq, Eq)]
pub enum JepsenReply {
    Read(Option<String>),
    Written,
    /// Whether the compare-and-set swapped.
    Cas(bool),
    /// This node is not the leader and did not submit the operation (it certainly did not
    /// happen); the leader's address when known.
    NotLeader(Option<String>),
    /// The operation was submitted and failed: a write may still take effect.
    Failed(String),
}

/// A running node. [`NodeHandle::shutdown`] stops Raft and the server; the storage closes when
/// the handle drops.
pub struct NodeHandle {
    pub raft: Raft,
    pub sm: ShaleStateMachine,
    pub addr: SocketAddr,
    server: tokio::task::JoinHandle<()>,
    stop: tokio::sync::oneshot::Sender<()>,
}

impl NodeHandle {
    pub async fn shutdown(self) -> Result<(), String> {
        let _ = self.stop.send(());
        let _ = self.server.await;
        self.raft.shutdown().await.map_err(|e| format!("raft shutdown: {e}"))?;
        Ok(())
    }
}

/// Starts node `id` with its data in `dir`, serving HTTP on `http` (e.g. 127.0.0.1:21001).
pub async fn start_node(id: NodeId, http: SocketAddr, dir: &Path) -> Result<NodeHandle, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let (log, sm) = open_storage(dir, GROUP)?;
    let config = Arc::new(raft_config().validate().map_err(|e| format!("raft config: {e}"))?);
    let raft = Raft::new(id, config, NetworkFactory::new(), log, sm.clone())
        .await
        .map_err(|e| format!("raft: {e}"))?;
    let unsafe_local_reads = std::env::var(UNSAFE_LOCAL_READS_ENV).is_ok_and(|v| v == "1");
    let app = App { id, raft: raft.clone(), sm: sm.clone(), unsafe_local_reads };
    let router = Router::new()
        .route("/raft/append", post(raft_append))
        .route("/raft/vote", post(raft_vote))
        .route("/raft/snapshot", post(raft_snapshot))
        .route("/api/write", post(api_write))
        .route("/api/read", post(api_read))
        .route("/api/init", post(api_init))
        .route("/api/add-learner", post(api_add_learner))
        .route("/api/change-membership", post(api_change_membership))
        .route("/api/metrics", post(api_metrics))
        .route("/jepsen/op", post(jepsen_op))
        // axum refuses bodies above 2 MB by default; an append RPC carries up to
        // `max_payload_entries` entries of any size, and a refused one never gets through
        // (a follower then stays behind for good, as seen with 210 KB values).
        .layer(axum::extract::DefaultBodyLimit::disable())
        .with_state(app);
    let listener = tokio::net::TcpListener::bind(http).await.map_err(|e| format!("binding {http}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| format!("local address: {e}"))?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        // No Nagle: with delayed ACKs it holds small responses back by tens of milliseconds.
        let _ = axum::serve(listener, router)
            .tcp_nodelay(true)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await;
    });
    Ok(NodeHandle { raft, sm, addr, server, stop })
}

type J<T> = Json<T>;

async fn raft_append(
    State(app): State<App>,
    Json(req): Json<AppendEntriesRequest<TypeConfig>>,
) -> J<Result<AppendEntriesResponse<NodeId>, RaftError<NodeId>>> {
    Json(app.raft.append_entries(req).await)
}

async fn raft_vote(
    State(app): State<App>,
    Json(req): Json<VoteRequest<NodeId>>,
) -> J<Result<VoteResponse<NodeId>, RaftError<NodeId>>> {
    Json(app.raft.vote(req).await)
}

async fn raft_snapshot(
    State(app): State<App>,
    Json(req): Json<InstallSnapshotRequest<TypeConfig>>,
) -> J<Result<InstallSnapshotResponse<NodeId>, RaftError<NodeId, InstallSnapshotError>>> {
    Json(app.raft.install_snapshot(req).await)
}

type WriteResult = Result<ClientWriteResponse<TypeConfig>, RaftError<NodeId, ClientWriteError<NodeId, Node>>>;

async fn api_write(State(app): State<App>, Json(req): Json<Request>) -> J<WriteResult> {
    Json(app.raft.client_write(req).await)
}

type ReadResult = Result<Option<String>, RaftError<NodeId, CheckIsLeaderError<NodeId, Node>>>;

async fn api_read(State(app): State<App>, Json(key): Json<String>) -> J<ReadResult> {
    if let Err(e) = app.raft.ensure_linearizable().await {
        return Json(Err(e));
    }
    // A read error of the local database is a storage error of this node.
    let r = match app.sm.get(key.as_bytes()) {
        Ok(v) => Ok(v.map(|v| String::from_utf8_lossy(&v).into_owned())),
        Err(e) => Err(RaftError::Fatal(openraft::error::Fatal::StorageError(openraft::StorageError::IO {
            source: openraft::StorageIOError::read_state_machine(openraft::AnyError::error(e.to_string())),
        }))),
    };
    Json(r)
}

/// The leader's address as this node knows it (a hint for a client it refuses).
fn leader_hint(app: &App) -> Option<String> {
    let m = app.raft.metrics().borrow().clone();
    let leader = m.current_leader?;
    m.membership_config.membership().get_node(&leader).map(|n| n.addr.clone())
}

fn local_read(app: &App, key: &str) -> JepsenReply {
    match app.sm.get(key.as_bytes()) {
        Ok(v) => JepsenReply::Read(v.map(|v| String::from_utf8_lossy(&v).into_owned())),
        Err(e) => JepsenReply::Failed(format!("reading the state machine: {e}")),
    }
}

async fn jepsen_op(State(app): State<App>, Json(op): Json<JepsenOp>) -> J<JepsenReply> {
    let write = |r: Request| async {
        // Refuse before submitting when this node does not think it leads: the client then
        // knows the operation did not happen and may send it elsewhere.
        if app.raft.metrics().borrow().current_leader != Some(app.id) {
            return JepsenReply::NotLeader(leader_hint(&app));
        }
        match app.raft.client_write(r).await {
            Ok(resp) => JepsenReply::Cas(resp.data.swapped),
            // Submitted: it may be committed by a later leader (openraft answers a truncated
            // entry with ForwardToLeader too).
            Err(e) => JepsenReply::Failed(e.to_string()),
        }
    };
    let reply = match op {
        JepsenOp::Read { key } => {
            if app.unsafe_local_reads {
                local_read(&app, &key)
            } else {
                match app.raft.ensure_linearizable().await {
                    Ok(_) => local_read(&app, &key),
                    Err(RaftError::APIError(CheckIsLeaderError::ForwardToLeader(f))) => {
                        JepsenReply::NotLeader(f.leader_node.map(|n| n.addr))
                    }
                    Err(e) => JepsenReply::Failed(e.to_string()),
                }
            }
        }
        JepsenOp::Write { key, value } => match write(Request::Set { key, value }).await {
            JepsenReply::Cas(_) => JepsenReply::Written,
            other => other,
        },
        JepsenOp::Cas { key, expected, new } => write(Request::Cas { key, expected, new }).await,
    };
    Json(reply)
}

async fn api_init(
    State(app): State<App>,
    Json(nodes): Json<Vec<(NodeId, String)>>,
) -> J<Result<(), RaftError<NodeId, InitializeError<NodeId, Node>>>> {
    let members: BTreeMap<NodeId, BasicNode> =
        nodes.into_iter().map(|(id, addr)| (id, BasicNode { addr })).collect();
    Json(app.raft.initialize(members).await)
}

async fn api_add_learner(State(app): State<App>, Json((id, addr)): Json<(NodeId, String)>) -> J<WriteResult> {
    Json(app.raft.add_learner(id, BasicNode { addr }, true).await)
}

async fn api_change_membership(
    State(app): State<App>,
    Json(members): Json<BTreeSet<NodeId>>,
) -> J<WriteResult> {
    Json(app.raft.change_membership(members, false).await)
}

async fn api_metrics(State(app): State<App>) -> J<RaftMetrics<NodeId, Node>> {
    let m = app.raft.metrics().borrow().clone();
    Json(m)
}

// ---------------------------------------------------------------------------------------------
// The client: finds the leader, follows ForwardToLeader, retries while a leader is elected.

/// A client of the cluster. It remembers the leader it found; when the node it asks is down or
/// not the leader, it follows the hint or tries the next address until `timeout` passes.
pub struct Client {
    http: reqwest::Client,
    addrs: Vec<String>,
    leader: Mutex<Option<String>>,
    pub timeout: Duration,
}

/// Why a call failed for good: the last error seen, as text.
pub type ClientError = String;

impl Client {
    /// A client of the nodes at `addrs` (host:port).
    pub fn new(addrs: Vec<String>) -> Client {
        Client {
            http: reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap_or_default(),
            addrs,
            leader: Mutex::new(None),
            timeout: Duration::from_secs(20),
        }
    }

    async fn post<Req: Serialize, Resp: DeserializeOwned>(
        &self,
        addr: &str,
        path: &str,
        req: &Req,
    ) -> Result<Resp, String> {
        let resp = self
            .http
            .post(format!("http://{addr}/{path}"))
            .json(req)
            .send()
            .await
            .map_err(|e| format!("{addr}: {e}"))?;
        resp.json().await.map_err(|e| format!("{addr}: {e}"))
    }

    /// Sends `req` to the leader (found on the way) and returns its answer. Errors other than
    /// "not the leader" and "unreachable" are returned at once.
    async fn leader_call<Req, Resp, E>(&self, path: &str, req: &Req) -> Result<Resp, ClientError>
    where
        Req: Serialize,
        Resp: DeserializeOwned,
        E: std::error::Error
            + DeserializeOwned
            + openraft::TryAsRef<openraft::error::ForwardToLeader<NodeId, Node>>,
    {
        if self.addrs.is_empty() {
            return Err("the client has no node address".to_string());
        }
        let deadline = Instant::now() + self.timeout;
        let mut next = 0usize;
        let mut last_err: String;
        loop {
            let addr = match self.leader.lock().await.clone() {
                Some(a) => a,
                None => {
                    let a = self.addrs[next % self.addrs.len()].clone();
                    next += 1;
                    a
                }
            };
            match self.post::<Req, Result<Resp, RaftError<NodeId, E>>>(&addr, path, req).await {
                Ok(Ok(r)) => {
                    *self.leader.lock().await = Some(addr);
                    return Ok(r);
                }
                Ok(Err(e)) => {
                    let hint = e.forward_to_leader().map(|f| f.leader_node.clone().map(|n| n.addr));
                    match hint {
                        Some(Some(leader)) if leader != addr => *self.leader.lock().await = Some(leader),
                        Some(_) => {
                            // No leader known yet (or a stale hint): ask around after a pause.
                            *self.leader.lock().await = None;
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                        None => return Err(format!("{addr}: {e}")),
                    }
                    last_err = format!("{addr}: {e}");
                }
                Err(e) => {
                    *self.leader.lock().await = None;
                    last_err = e;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            if Instant::now() > deadline {
                return Err(format!("no leader answered within {:?}; last error: {last_err}", self.timeout));
            }
        }
    }

    /// Puts `key` = `value` through the leader; Ok means the write is committed.
    pub async fn put(&self, key: &str, value: &str) -> Result<(), ClientError> {
        let req = Request::Set { key: key.to_string(), value: value.to_string() };
        self.write(&req).await
    }

    /// Deletes `key` through the leader.
    pub async fn delete(&self, key: &str) -> Result<(), ClientError> {
        self.write(&Request::Delete { key: key.to_string() }).await
    }

    async fn write(&self, req: &Request) -> Result<(), ClientError> {
        self.leader_call::<_, ClientWriteResponse<TypeConfig>, ClientWriteError<NodeId, Node>>(
            "api/write",
            req,
        )
        .await
        .map(|_| ())
    }

    /// A linearizable read through the leader.
    pub async fn get(&self, key: &str) -> Result<Option<String>, ClientError> {
        self.leader_call::<_, Option<String>, CheckIsLeaderError<NodeId, Node>>("api/read", &key.to_string())
            .await
    }

    /// Initializes a new cluster with `members` as voters (sent to the first address).
    pub async fn init(&self, members: &[(NodeId, String)]) -> Result<(), ClientError> {
        let addr = self.addrs.first().ok_or("no address")?;
        let r: Result<(), RaftError<NodeId, InitializeError<NodeId, Node>>> =
            self.post(addr, "api/init", &members.to_vec()).await?;
        r.map_err(|e| format!("{addr}: {e}"))
    }

    /// Adds node `id` at `addr` as a learner (waits until it caught up).
    pub async fn add_learner(&self, id: NodeId, addr: &str) -> Result<(), ClientError> {
        self.leader_call::<_, ClientWriteResponse<TypeConfig>, ClientWriteError<NodeId, Node>>(
            "api/add-learner",
            &(id, addr.to_string()),
        )
        .await
        .map(|_| ())
    }

    /// Changes the voters to `members` (joint consensus, done by openraft).
    pub async fn change_membership(&self, members: &BTreeSet<NodeId>) -> Result<(), ClientError> {
        self.leader_call::<_, ClientWriteResponse<TypeConfig>, ClientWriteError<NodeId, Node>>(
            "api/change-membership",
            members,
        )
        .await
        .map(|_| ())
    }

    /// The Raft metrics of the node at `addr`.
    pub async fn metrics(&self, addr: &str) -> Result<RaftMetrics<NodeId, Node>, ClientError> {
        self.post(addr, "api/metrics", &()).await
    }

    /// Waits until the node at some address reports a leader, and returns its id.
    pub async fn wait_for_leader(&self, timeout: Duration) -> Result<NodeId, ClientError> {
        let deadline = Instant::now() + timeout;
        loop {
            for a in &self.addrs {
                if let Ok(m) = self.metrics(a).await {
                    if let Some(l) = m.current_leader {
                        return Ok(l);
                    }
                }
            }
            if Instant::now() > deadline {
                return Err(format!("no leader within {timeout:?}"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
