//! `Rdict`: a database (or one of its column families) with a dict's protocol.
//!
//! Every `Rdict` of one database, its iterators and snapshots hold the database by `Arc`:
//! `close()` flushes and lets go of this object's share, and the database closes when the
//! last share goes (as rocksdict). A closed `Rdict` raises `DbClosedError`.
//!
//! `rocksdict-config.json` in the database directory records raw mode and the kind of each
//! family's prefix extractor (JSON, as rocksdict writes it:
//! `{"raw_mode":false,"prefix_extractors":{"default":{"MaxLen":8}}}`); opening without options
//! reads it back with the latest OPTIONS file.

use crate::encoder::{decode_value, encode_key, encode_value, rocksdict_compare};
use crate::extras::{Snapshot, WriteBatchPy};
use crate::iter::{RdictColumns, RdictEntities, RdictItems, RdictIter, RdictKeys, RdictValues};
use crate::options::{
    CompactOptionsPy, FlushOptionsPy, IngestExternalFileOptionsPy, OptionsPy, ReadOptionsPy,
    SliceTransformType, WriteOptionsPy,
};
use crate::{closed_err, db_err, Db};
use pyo3::exceptions::{PyException, PyKeyError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use serde::{Deserialize, Serialize};
use shale::{BoundColumnFamily, ColumnFamilyDescriptor, DEFAULT_COLUMN_FAMILY_NAME};
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) const CONFIG_FILE: &str = "rocksdict-config.json";

/// The keys of a batch get read by one engine call (see `Rdict::get_batch`).
const BATCH_RUN: usize = 4096;

/// The block cache `Options.load_latest` gives loaded table options when none is passed
/// (rocksdict's: 8 MiB).
const DEFAULT_LRU_CACHE_SIZE: usize = 8 * 1024 * 1024;

/// rocksdict's `rocksdict-config.json`.
#[derive(Serialize, Deserialize, Clone)]
pub(crate) struct RocksDictConfig {
    pub(crate) raw_mode: bool,
    pub(crate) prefix_extractors: HashMap<String, SliceTransformType>,
}

impl Default for RocksDictConfig {
    /// A database without the file was not written by rocksdict: raw bytes.
    fn default() -> Self {
        RocksDictConfig { raw_mode: true, prefix_extractors: HashMap::new() }
    }
}

impl RocksDictConfig {
    pub(crate) fn load(path: &Path) -> PyResult<RocksDictConfig> {
        let text = std::fs::read(path).map_err(|e| PyException::new_err(e.to_string()))?;
        serde_json::from_slice(&text).map_err(|e| PyException::new_err(e.to_string()))
    }

    pub(crate) fn save_to_dir(&self, dir: &str) -> PyResult<()> {
        let text = serde_json::to_vec(self).map_err(|e| PyException::new_err(e.to_string()))?;
        std::fs::write(Path::new(dir).join(CONFIG_FILE), text)
            .map_err(|e| PyException::new_err(e.to_string()))
    }
}

/// A column family's handle together with the database it belongs to.
pub(crate) struct CfRef {
    // Declared first, so dropped before the database share below.
    pub(crate) handle: Arc<BoundColumnFamily<'static>>,
    pub(crate) db: Arc<Db>,
}

impl Clone for CfRef {
    fn clone(&self) -> Self {
        CfRef { handle: self.handle.clone(), db: self.db.clone() }
    }
}

impl CfRef {
    /// The handle of family `name` of `db`, if it exists.
    pub(crate) fn bind(db: &Arc<Db>, name: &str) -> Option<CfRef> {
        let handle = db.cf_handle(name)?;
        // SAFETY: `BoundColumnFamily<'a>` owns its family's handle (an `Arc` inside Shale); 'a
        // only ties it to the database's lifetime. The database outlives it here: `CfRef`
        // keeps an `Arc` of the database and drops the handle first (field order).
        let handle: Arc<BoundColumnFamily<'static>> = unsafe { std::mem::transmute(handle) };
        Some(CfRef { handle, db: db.clone() })
    }
}

#[derive(Clone)]
pub(crate) enum Access {
    ReadWrite,
    ReadOnly { error_if_log_file_exist: bool },
    Secondary { secondary_path: String },
    WithTtl { ttl: Duration },
}

/// How to open a database (rocksdict's `AccessType`).
#[pyclass(name = "AccessType", module = "rocksdict")]
#[derive(Clone)]
pub(crate) struct AccessType(pub(crate) Access);

#[pymethods]
impl AccessType {
    #[staticmethod]
    fn read_write() -> Self {
        AccessType(Access::ReadWrite)
    }
    #[staticmethod]
    #[pyo3(signature = (error_if_log_file_exist = false))]
    fn read_only(error_if_log_file_exist: bool) -> Self {
        AccessType(Access::ReadOnly { error_if_log_file_exist })
    }
    #[staticmethod]
    fn secondary(secondary_path: String) -> Self {
        AccessType(Access::Secondary { secondary_path })
    }
    #[staticmethod]
    fn with_ttl(duration: u64) -> Self {
        AccessType(Access::WithTtl { ttl: Duration::from_secs(duration) })
    }
}

/// A column family's handle, for `WriteBatch`.
#[pyclass(name = "ColumnFamily", module = "rocksdict")]
#[derive(Clone)]
pub(crate) struct ColumnFamilyPy(pub(crate) CfRef);

/// When a point read first tries the memtables and the block cache holding the GIL (see
/// `Rdict::point_get`). A try that finds the key's block not cached is wasted: the read is
/// done again in full with the GIL released. So after a miss the next tries are skipped,
/// for 1, 2, 4, ... up to [`CacheProbe::MAX_SKIP`] reads while misses go on (each skipped
/// read goes straight to the full read), and a hit halves the skip that the next miss sets.
/// A wasted try costs the memtable lookup and the index seek (a few thousand instructions)
/// where a hit saves only the GIL's release and retake (a few hundred, more with other
/// threads waiting for it), so tries pay only while most of them hit: a workload whose data
/// is cached keeps the cheap path (the skip stays near 0), one whose hits are a minority
/// drifts to a try every `MAX_SKIP` reads. (Resetting the skip on every hit made random
/// reads of a database four times the cache try on one read in 13, three of four tries
/// wasted: 3% of the instructions; halving it tries on one read in 45.) Relaxed atomics:
/// the counts are a heuristic shared by the threads reading this `Rdict`, never a
/// correctness matter.
#[derive(Default)]
struct CacheProbe {
    /// Reads left to send straight to the full read.
    skip: AtomicU32,
    /// The skip set after the next miss (doubles on each miss in a row).
    backoff: AtomicU32,
}

impl CacheProbe {
    const MAX_SKIP: u32 = 64;

    /// Whether this read should try the cache tier first.
    fn should_try(&self) -> bool {
        let left = self.skip.load(Ordering::Relaxed);
        if left == 0 {
            return true;
        }
        self.skip.store(left - 1, Ordering::Relaxed);
        false
    }

    fn hit(&self) {
        let b = self.backoff.load(Ordering::Relaxed);
        if b != 0 {
            self.backoff.store(b / 2, Ordering::Relaxed);
        }
    }

    fn miss(&self) {
        let next = (self.backoff.load(Ordering::Relaxed) * 2).clamp(1, Self::MAX_SKIP);
        self.backoff.store(next, Ordering::Relaxed);
        self.skip.store(next, Ordering::Relaxed);
    }
}

/// A database, or one of its column families, with a dict's protocol.
#[pyclass(name = "Rdict", module = "rocksdict")]
pub(crate) struct Rdict {
    /// None once closed.
    pub(crate) cf: Option<CfRef>,
    pub(crate) raw_mode: bool,
    pub(crate) loads: PyObject,
    pub(crate) dumps: PyObject,
    pub(crate) read_opt: shale::ReadOptions,
    /// `read_opt` limited to the memtables and the block cache (`ReadTier::BlockCache`):
    /// a point read first tries it holding the GIL (see `get`). None when statistics are
    /// on (the retry would count the read twice).
    cached_read_opt: Option<shale::ReadOptions>,
    /// When that cache-tier try is worth making (see `CacheProbe`).
    probe: CacheProbe,
    /// Whether the database counts statistics (a batch get is then one engine call).
    statistics: bool,
    pub(crate) read_opt_py: ReadOptionsPy,
    write_opt: shale::WriteOptions,
    write_opt_py: WriteOptionsPy,
    flush_opt: FlushOptionsPy,
    opt_py: OptionsPy,
    access: Access,
    slice_transforms: Arc<Mutex<HashMap<String, SliceTransformType>>>,
    path: String,
}

impl Rdict {
    pub(crate) fn cf(&self) -> PyResult<&CfRef> {
        self.cf.as_ref().ok_or_else(closed_err)
    }

    pub(crate) fn config(&self) -> PyResult<RocksDictConfig> {
        let map = self
            .slice_transforms
            .lock()
            .map_err(|_| PyException::new_err("rocksdict config lock poisoned"))?;
        Ok(RocksDictConfig { raw_mode: self.raw_mode, prefix_extractors: map.clone() })
    }

    /// `ro` limited to the memtables and the block cache, unless `statistics` are on.
    pub(crate) fn cache_tier(ro: &shale::ReadOptions, statistics: bool) -> Option<shale::ReadOptions> {
        if statistics {
            return None;
        }
        let mut o = ro.clone();
        o.set_read_tier(shale::ReadTier::BlockCache);
        Some(o)
    }

    /// A point read of `k` with `ro` (`cached`: `ro` limited to the block cache, when it
    /// reads all tiers). Most reads are answered from a memtable or a cached block in well
    /// under a microsecond, less than releasing and taking back the GIL costs (and much less
    /// than a thread switch when other threads wait for it): they run holding the GIL. A
    /// read that needs a file (Incomplete at the cache tier) is done again with the GIL
    /// released, so other Python threads run while it waits on the disk.
    fn point_get(
        &self,
        py: Python<'_>,
        cf: &CfRef,
        k: &[u8],
        ro: &shale::ReadOptions,
        cached: Option<&shale::ReadOptions>,
    ) -> PyResult<Option<Vec<u8>>> {
        if let Some(c) = cached.filter(|_| self.probe.should_try()) {
            match cf.db.get_cf_opt(&cf.handle, k, c) {
                Err(e) if e.kind() == shale::ErrorKind::Incomplete => self.probe.miss(),
                r => {
                    self.probe.hit();
                    return r.map_err(db_err);
                }
            }
        }
        py.allow_threads(|| cf.db.get_cf_opt(&cf.handle, k, ro)).map_err(db_err)
    }

    fn read_opts(
        &self,
        read_opt: Option<&ReadOptionsPy>,
        py: Python<'_>,
    ) -> PyResult<Option<shale::ReadOptions>> {
        read_opt.map(|o| o.to_shale(self.raw_mode, py)).transpose()
    }

    /// A batch get (`get` of a list): the values in the keys' order, `default` for the
    /// keys not found.
    ///
    /// The keys are read in the family's key order, as RocksDB's MultiGet sorts them, so
    /// neighbouring keys share data blocks (sorted here, with the GIL released, and handed
    /// to the engine as sorted input). A batch of more than `BATCH_RUN` keys is read in runs
    /// of that many, each run's values made Python objects (holding the GIL) while other
    /// Python threads' reads go on: read in one call, every thread of a multi-threaded
    /// reader would finish its engine work at about the same time and then decode its whole
    /// batch waiting for the GIL, one thread after the other with the other cores idle. All
    /// runs read at one snapshot, so the batch is one view of the database as RocksDB's
    /// MultiGet (`ro` never carries a snapshot of its own: the Python API's `ReadOptions`
    /// has none). With statistics on, the batch is one engine call (RocksDB counts one
    /// MultiGet). Each run's buffers are freed in the next run's release of the GIL.
    fn get_batch<'py>(
        &self,
        py: Python<'py>,
        cf: &CfRef,
        keys: &Bound<'py, PyList>,
        default: Option<Bound<'py, PyAny>>,
        ro: &shale::ReadOptions,
    ) -> PyResult<Bound<'py, PyAny>> {
        // The key objects stay referenced here, so raw keys are read in place (bytes objects
        // are immutable) while the GIL is released.
        let objs: Vec<Bound<'py, PyAny>> = keys.iter().collect();
        let encoded = objs.iter().map(|k| encode_key(k, self.raw_mode)).collect::<PyResult<Vec<_>>>()?;
        let default = default.unwrap_or_else(|| py.None().into_bound(py));
        let n = encoded.len();
        let run = if self.statistics { n.max(1) } else { BATCH_RUN };
        let mut snapshot = (n > run).then(|| cf.db.snapshot());
        let ro_snap = match &snapshot {
            Some(s) => {
                let mut o = ro.clone();
                o.set_snapshot(s);
                Cow::Owned(o)
            }
            None => Cow::Borrowed(ro),
        };
        let raw_mode = self.raw_mode;
        let mut order: Vec<usize> = Vec::new();
        // The Python objects are made straight from the engine's buffers (no second copy
        // into a gathering buffer), and the list is made at its final length in one go.
        let mut out: Vec<Option<Bound<'py, PyAny>>> = (0..n).map(|_| None).collect();
        let mut previous = None;
        for start in (0..n).step_by(run) {
            let end = (start + run).min(n);
            let values = py.allow_threads(|| {
                drop(previous.take());
                if start == 0 {
                    order = key_order(&encoded, raw_mode);
                }
                let values = cf.db.batched_multi_get_cf_opt(
                    &cf.handle,
                    order[start..end].iter().map(|&i| encoded[i].as_ref()),
                    true,
                    &ro_snap,
                );
                if end == n {
                    drop(snapshot.take());
                }
                values
            });
            for (&i, v) in order[start..end].iter().zip(&values) {
                out[i] = Some(match v {
                    Ok(Some(v)) => decode_value(py, v, &self.loads, self.raw_mode)?,
                    Ok(None) => default.clone(),
                    Err(e) => return Err(db_err(e.clone())),
                });
            }
            previous = Some(values);
        }
        match previous {
            // Freeing a large batch holding the GIL would stall every other Python thread
            // for as long (with statistics on, a batch is one run).
            Some(values) if values.len() > BATCH_RUN => py.allow_threads(move || drop(values)),
            // A few thousand frees take less time than giving the GIL up and waiting for it
            // again behind the other Python threads.
            values => drop(values),
        }
        let out = out
            .into_iter()
            .map(|v| v.ok_or_else(|| PyException::new_err("batch get: a key got no value")))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, out)?.into_any())
    }

    fn new_iter(&self, read_opt: Option<&ReadOptionsPy>, py: Python<'_>) -> PyResult<RdictIter> {
        let cf = self.cf()?;
        let ro = match read_opt {
            Some(o) => o.to_shale(self.raw_mode, py)?,
            None => ReadOptionsPy::default().to_shale(self.raw_mode, py)?,
        };
        Ok(RdictIter::new(cf, ro, None, self.loads.clone_ref(py), self.raw_mode))
    }

    /// Flushes (unless read-only or secondary) and lets go of this object's database share.
    fn close_inner(&mut self, py: Python<'_>) -> PyResult<()> {
        let Some(cf) = self.cf.take() else {
            return Ok(());
        };
        if matches!(self.access, Access::ReadOnly { .. } | Access::Secondary { .. }) {
            py.allow_threads(move || drop(cf));
            return Ok(());
        }
        let mut fo = shale::FlushOptions::new();
        fo.set_wait(self.flush_opt.wait);
        let (wal, flush) = py.allow_threads(move || {
            let wal = cf.db.flush_wal(true);
            let flush = cf.db.flush_cf_opt(&cf.handle, &fo);
            drop(cf);
            (wal, flush)
        });
        match (flush, wal) {
            (Ok(()), Ok(())) => Ok(()),
            (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(db_err(e)),
            (Err(e), Err(w)) => Err(PyException::new_err(format!("{e}; {w}"))),
        }
    }
}

/// The indexes of `keys` in the family's key order: bytewise in raw mode (by the first 8
/// bytes as one big-endian integer, zero-padded, then the whole keys where those tie: the
/// same order, with one integer comparison for most pairs of keys), else by the `rocksdict`
/// comparator.
fn key_order(keys: &[Cow<'_, [u8]>], raw_mode: bool) -> Vec<usize> {
    if !raw_mode {
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_unstable_by(|&a, &b| rocksdict_compare(&keys[a], &keys[b]));
        return order;
    }
    let prefix = |k: &[u8]| {
        let mut b = [0u8; 8];
        let m = k.len().min(8);
        b[..m].copy_from_slice(&k[..m]);
        u64::from_be_bytes(b)
    };
    let mut keyed: Vec<(u64, usize)> = keys.iter().enumerate().map(|(i, k)| (prefix(k), i)).collect();
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| keys[a.1].as_ref().cmp(keys[b.1].as_ref())));
    keyed.into_iter().map(|(_, i)| i).collect()
}

impl Drop for Rdict {
    /// As rocksdict: an `Rdict` dropped while open flushes its family (errors are lost, as
    /// in any destructor) and lets go of its share of the database.
    fn drop(&mut self) {
        if let Some(cf) = self.cf.take() {
            let flush = !matches!(self.access, Access::ReadOnly { .. } | Access::Secondary { .. });
            let wait = self.flush_opt.wait;
            Python::with_gil(|py| {
                py.allow_threads(move || {
                    if flush {
                        let mut fo = shale::FlushOptions::new();
                        fo.set_wait(wait);
                        let _ = cf.db.flush_cf_opt(&cf.handle, &fo);
                    }
                    drop(cf);
                })
            });
        }
    }
}

fn open_db(
    path: &str,
    opts: &shale::Options,
    cfs: Vec<ColumnFamilyDescriptor>,
    access: &Access,
) -> shale::Result<Db> {
    match access {
        Access::ReadWrite => Db::open_cf_descriptors(opts, path, cfs),
        Access::ReadOnly { error_if_log_file_exist } => {
            Db::open_cf_descriptors_read_only(opts, path, cfs, *error_if_log_file_exist)
        }
        Access::Secondary { secondary_path } => {
            Db::open_cf_descriptors_as_secondary(opts, path, secondary_path, cfs)
        }
        Access::WithTtl { ttl } => Db::open_cf_descriptors_with_ttl(opts, path, cfs, *ttl),
    }
}

#[pymethods]
impl Rdict {
    #[new]
    #[pyo3(signature = (path, options = None, column_families = None, access_type = None))]
    fn new(
        py: Python<'_>,
        path: &str,
        options: Option<OptionsPy>,
        column_families: Option<HashMap<String, OptionsPy>>,
        access_type: Option<AccessType>,
    ) -> PyResult<Self> {
        let access = access_type.map(|a| a.0).unwrap_or(Access::ReadWrite);
        let pickle = PyModule::import(py, "pickle")?;
        std::fs::create_dir_all(path).map_err(|e| PyException::new_err(e.to_string()))?;
        let loaded = py.allow_threads(|| {
            let env = shale::Env::new().map_err(db_err)?;
            OptionsPy::load_latest_inner(
                path,
                env,
                false,
                shale::Cache::new_lru_cache(DEFAULT_LRU_CACHE_SIZE),
            )
        });
        // Options passed win over the ones loaded, as rocksdict.
        let (options, column_families): (OptionsPy, Option<Vec<(String, OptionsPy)>>) =
            match (loaded, options, column_families) {
                (Ok((_, _)), Some(opt), Some(cols)) => (opt, Some(cols.into_iter().collect())),
                (Ok((_, loaded_cols)), Some(opt), None) => (opt, Some(loaded_cols)),
                (Ok((loaded_opt, _)), None, Some(cols)) => (loaded_opt, Some(cols.into_iter().collect())),
                (Ok((loaded_opt, loaded_cols)), None, None) => (loaded_opt, Some(loaded_cols)),
                (Err(_), Some(opt), cols) => (opt, cols.map(|c| c.into_iter().collect())),
                (Err(_), None, cols) => (OptionsPy::create(false), cols.map(|c| c.into_iter().collect())),
            };
        let raw_mode = options.raw_mode;
        let mut prefix_extractors = HashMap::new();
        if let Some(p) = &options.prefix_extractor {
            prefix_extractors.insert(DEFAULT_COLUMN_FAMILY_NAME.to_string(), p.clone());
        }
        if let Some(cols) = &column_families {
            for (name, o) in cols {
                if let Some(p) = &o.prefix_extractor {
                    prefix_extractors.insert(name.clone(), p.clone());
                }
            }
        }
        RocksDictConfig { raw_mode, prefix_extractors: prefix_extractors.clone() }.save_to_dir(path)?;
        let mut descriptors = Vec::new();
        let mut has_default = false;
        for (name, o) in column_families.unwrap_or_default() {
            has_default |= name == DEFAULT_COLUMN_FAMILY_NAME;
            descriptors.push(ColumnFamilyDescriptor::new(name, o.inner));
        }
        if !has_default {
            descriptors.push(ColumnFamilyDescriptor::new(DEFAULT_COLUMN_FAMILY_NAME, options.inner.clone()));
        }
        let db = py.allow_threads(|| open_db(path, &options.inner, descriptors, &access)).map_err(db_err)?;
        let db = Arc::new(db);
        let cf = CfRef::bind(&db, DEFAULT_COLUMN_FAMILY_NAME)
            .ok_or_else(|| PyException::new_err("the default column family is missing"))?;
        let read_opt_py = ReadOptionsPy::default();
        let write_opt_py = WriteOptionsPy::default();
        let read_opt = read_opt_py.to_shale(raw_mode, py)?;
        let statistics = options.inner.get_statistics().is_some();
        Ok(Rdict {
            cf: Some(cf),
            raw_mode,
            loads: pickle.getattr("loads")?.unbind(),
            dumps: pickle.getattr("dumps")?.unbind(),
            cached_read_opt: Rdict::cache_tier(&read_opt, statistics),
            probe: CacheProbe::default(),
            statistics,
            read_opt,
            read_opt_py,
            write_opt: write_opt_py.to_shale(),
            write_opt_py,
            flush_opt: FlushOptionsPy { wait: true },
            opt_py: options,
            access,
            slice_transforms: Arc::new(Mutex::new(prefix_extractors)),
            path: path.to_string(),
        })
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (exc_type = None, exc_val = None, exc_tb = None))]
    fn __exit__(
        &mut self,
        py: Python<'_>,
        exc_type: Option<PyObject>,
        exc_val: Option<PyObject>,
        exc_tb: Option<PyObject>,
    ) -> PyResult<()> {
        let _ = (exc_type, exc_val, exc_tb);
        self.close_inner(py)
    }

    fn set_dumps(&mut self, dumps: PyObject) {
        self.dumps = dumps
    }

    fn set_loads(&mut self, loads: PyObject) {
        self.loads = loads
    }

    fn set_read_options(&mut self, py: Python<'_>, read_opt: &ReadOptionsPy) -> PyResult<()> {
        self.read_opt = read_opt.to_shale(self.raw_mode, py)?;
        if self.cached_read_opt.is_some() {
            self.cached_read_opt = Rdict::cache_tier(&self.read_opt, false);
        }
        self.read_opt_py = read_opt.clone_ref(py);
        Ok(())
    }

    fn set_write_options(&mut self, write_opt: &WriteOptionsPy) {
        self.write_opt = write_opt.to_shale();
        self.write_opt_py = write_opt.clone();
    }

    fn __getitem__<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let v = self.get(py, key, None, None)?;
        if v.is_none() {
            return Err(PyKeyError::new_err(format!("key {key} not found")));
        }
        Ok(v)
    }

    #[pyo3(signature = (key, default = None, read_opt = None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
        read_opt: Option<&ReadOptionsPy>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let cf = self.cf()?;
        let custom = self.read_opts(read_opt, py)?;
        let ro = custom.as_ref().unwrap_or(&self.read_opt);
        if let Ok(keys) = key.downcast::<PyList>() {
            return self.get_batch(py, cf, keys, default, ro);
        }
        let k = encode_key(key, self.raw_mode)?;
        let found = match &custom {
            Some(c) => {
                let cached = Rdict::cache_tier(c, self.cached_read_opt.is_none());
                self.point_get(py, cf, &k, ro, cached.as_ref())?
            }
            None => self.point_get(py, cf, &k, ro, self.cached_read_opt.as_ref())?,
        };
        match found {
            Some(v) => decode_value(py, &v, &self.loads, self.raw_mode),
            None => Ok(default.unwrap_or_else(|| py.None().into_bound(py))),
        }
    }

    #[pyo3(signature = (key, default = None, read_opt = None))]
    fn get_entity<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
        read_opt: Option<&ReadOptionsPy>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let cf = self.cf()?;
        let custom = self.read_opts(read_opt, py)?;
        let ro = custom.as_ref().unwrap_or(&self.read_opt);
        let k = encode_key(key, self.raw_mode)?;
        let found = py.allow_threads(|| cf.db.get_entity_cf_opt(&cf.handle, &k, ro)).map_err(db_err)?;
        match found {
            Some(cols) => Ok(columns_to_py(py, &cols, &self.loads, self.raw_mode)?.into_any()),
            None => Ok(default.unwrap_or_else(|| py.None().into_bound(py))),
        }
    }

    fn __setitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.put(py, key, value, None)
    }

    #[pyo3(signature = (key, value, write_opt = None))]
    fn put(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        write_opt: Option<&WriteOptionsPy>,
    ) -> PyResult<()> {
        let cf = self.cf()?;
        let k = encode_key(key, self.raw_mode)?;
        let v = encode_value(value, &self.dumps, self.raw_mode)?;
        let custom = write_opt.map(|w| w.to_shale());
        let wo = custom.as_ref().unwrap_or(&self.write_opt);
        py.allow_threads(|| cf.db.put_cf_opt(&cf.handle, &k, &v, wo)).map_err(db_err)
    }

    #[pyo3(signature = (key, names, values, write_opt = None))]
    fn put_entity(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        names: Vec<Bound<'_, PyAny>>,
        values: Vec<Bound<'_, PyAny>>,
        write_opt: Option<&WriteOptionsPy>,
    ) -> PyResult<()> {
        let cf = self.cf()?;
        let k = encode_key(key, self.raw_mode)?;
        let columns = encode_columns(&names, &values, &self.dumps, self.raw_mode)?;
        let custom = write_opt.map(|w| w.to_shale());
        let wo = custom.as_ref().unwrap_or(&self.write_opt);
        let refs: Vec<(&[u8], &[u8])> = columns.iter().map(|(n, v)| (n.as_slice(), v.as_slice())).collect();
        py.allow_threads(|| cf.db.put_entity_cf(&cf.handle, &k, &refs, wo)).map_err(db_err)
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let cf = self.cf()?;
        let k = encode_key(key, self.raw_mode)?;
        let found = py
            .allow_threads(|| cf.db.get_pinned_cf_opt(&cf.handle, &k, &self.read_opt).map(|v| v.is_some()))
            .map_err(db_err)?;
        Ok(found)
    }

    #[pyo3(signature = (key, fetch = false, read_opt = None))]
    fn key_may_exist<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        fetch: bool,
        read_opt: Option<&ReadOptionsPy>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let cf = self.cf()?;
        let k = encode_key(key, self.raw_mode)?;
        let custom = self.read_opts(read_opt, py)?;
        let ro = custom.as_ref().unwrap_or(&self.read_opt);
        if !fetch {
            let may = py.allow_threads(|| cf.db.key_may_exist_cf_opt(&cf.handle, &k, ro));
            return Ok(pyo3::types::PyBool::new(py, may).to_owned().into_any());
        }
        let (may, value) = py.allow_threads(|| {
            let (may, v) = cf.db.key_may_exist_cf_opt_value(&cf.handle, &k, ro);
            (may, v.map(|s| s.as_ref().to_vec()))
        });
        let value = match value {
            Some(v) => decode_value(py, &v, &self.loads, self.raw_mode)?,
            None => py.None().into_bound(py),
        };
        Ok(PyTuple::new(py, [pyo3::types::PyBool::new(py, may).to_owned().into_any(), value])?.into_any())
    }

    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.delete(py, key, None)
    }

    #[pyo3(signature = (key, write_opt = None))]
    fn delete(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        write_opt: Option<&WriteOptionsPy>,
    ) -> PyResult<()> {
        let cf = self.cf()?;
        let k = encode_key(key, self.raw_mode)?;
        let custom = write_opt.map(|w| w.to_shale());
        let wo = custom.as_ref().unwrap_or(&self.write_opt);
        py.allow_threads(|| cf.db.delete_cf_opt(&cf.handle, &k, wo)).map_err(db_err)
    }

    #[pyo3(signature = (read_opt = None))]
    fn iter(&self, py: Python<'_>, read_opt: Option<&ReadOptionsPy>) -> PyResult<RdictIter> {
        self.new_iter(read_opt, py)
    }

    #[pyo3(signature = (backwards = false, from_key = None, read_opt = None))]
    fn items(
        &self,
        py: Python<'_>,
        backwards: bool,
        from_key: Option<&Bound<'_, PyAny>>,
        read_opt: Option<&ReadOptionsPy>,
    ) -> PyResult<RdictItems> {
        RdictItems::new(py, self.new_iter(read_opt, py)?, backwards, from_key)
    }

    #[pyo3(signature = (backwards = false, from_key = None, read_opt = None))]
    fn keys(
        &self,
        py: Python<'_>,
        backwards: bool,
        from_key: Option<&Bound<'_, PyAny>>,
        read_opt: Option<&ReadOptionsPy>,
    ) -> PyResult<RdictKeys> {
        RdictKeys::new(py, self.new_iter(read_opt, py)?, backwards, from_key)
    }

    #[pyo3(signature = (backwards = false, from_key = None, read_opt = None))]
    fn values(
        &self,
        py: Python<'_>,
        backwards: bool,
        from_key: Option<&Bound<'_, PyAny>>,
        read_opt: Option<&ReadOptionsPy>,
    ) -> PyResult<RdictValues> {
        RdictValues::new(py, self.new_iter(read_opt, py)?, backwards, from_key)
    }

    #[pyo3(signature = (backwards = false, from_key = None, read_opt = None))]
    fn columns(
        &self,
        py: Python<'_>,
        backwards: bool,
        from_key: Option<&Bound<'_, PyAny>>,
        read_opt: Option<&ReadOptionsPy>,
    ) -> PyResult<RdictColumns> {
        RdictColumns::new(py, self.new_iter(read_opt, py)?, backwards, from_key)
    }

    #[pyo3(signature = (backwards = false, from_key = None, read_opt = None))]
    fn entities(
        &self,
        py: Python<'_>,
        backwards: bool,
        from_key: Option<&Bound<'_, PyAny>>,
        read_opt: Option<&ReadOptionsPy>,
    ) -> PyResult<RdictEntities> {
        RdictEntities::new(py, self.new_iter(read_opt, py)?, backwards, from_key)
    }

    #[pyo3(signature = (paths, opts = None))]
    fn ingest_external_file(
        &self,
        py: Python<'_>,
        paths: Vec<String>,
        opts: Option<&IngestExternalFileOptionsPy>,
    ) -> PyResult<()> {
        let cf = self.cf()?;
        let o = opts.cloned().unwrap_or_else(IngestExternalFileOptionsPy::new).to_shale();
        py.allow_threads(|| cf.db.ingest_external_file_cf_opts(&cf.handle, &o, paths)).map_err(db_err)
    }

    fn get_column_family(&self, py: Python<'_>, name: &str) -> PyResult<Rdict> {
        let cf = self.cf()?;
        let Some(handle) = CfRef::bind(&cf.db, name) else {
            return Err(PyException::new_err(format!(
                "column name `{name}` does not exist, use `create_cf` to creat it"
            )));
        };
        Ok(Rdict {
            cf: Some(handle),
            raw_mode: self.raw_mode,
            loads: self.loads.clone_ref(py),
            dumps: self.dumps.clone_ref(py),
            read_opt: self.read_opt_py.to_shale(self.raw_mode, py)?,
            cached_read_opt: self.cached_read_opt.clone(),
            probe: CacheProbe::default(),
            statistics: self.statistics,
            read_opt_py: self.read_opt_py.clone_ref(py),
            write_opt: self.write_opt_py.to_shale(),
            write_opt_py: self.write_opt_py.clone(),
            flush_opt: self.flush_opt,
            opt_py: self.opt_py.clone(),
            access: self.access.clone(),
            slice_transforms: self.slice_transforms.clone(),
            path: self.path.clone(),
        })
    }

    fn get_column_family_handle(&self, name: &str) -> PyResult<ColumnFamilyPy> {
        let cf = self.cf()?;
        match CfRef::bind(&cf.db, name) {
            Some(h) => Ok(ColumnFamilyPy(h)),
            None => Err(PyException::new_err(format!(
                "column name `{name}` does not exist, use `create_cf` to creat it"
            ))),
        }
    }

    fn drop_column_family(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        let cf = self.cf()?;
        py.allow_threads(|| cf.db.drop_cf(name)).map_err(db_err)
    }

    #[pyo3(signature = (name, options = None))]
    fn create_column_family(
        &self,
        py: Python<'_>,
        name: &str,
        options: Option<OptionsPy>,
    ) -> PyResult<Rdict> {
        let cf = self.cf()?;
        let options = options.unwrap_or_else(|| OptionsPy::create(false));
        if options.raw_mode != self.raw_mode {
            return Err(PyException::new_err(format!(
                "Options should have raw_mode={}",
                py_bool(self.raw_mode)
            )));
        }
        if let Some(p) = &options.prefix_extractor {
            self.slice_transforms
                .lock()
                .map_err(|_| PyException::new_err("rocksdict config lock poisoned"))?
                .insert(name.to_string(), p.clone());
        }
        self.config()?.save_to_dir(&self.path)?;
        py.allow_threads(|| cf.db.create_cf(name, &options.inner)).map_err(db_err)?;
        self.get_column_family(py, name)
    }

    #[pyo3(signature = (write_batch, write_opt = None))]
    fn write(
        &self,
        py: Python<'_>,
        write_batch: &mut WriteBatchPy,
        write_opt: Option<&WriteOptionsPy>,
    ) -> PyResult<()> {
        let cf = self.cf()?;
        if self.raw_mode != write_batch.raw_mode {
            return Err(PyException::new_err(format!(
                "must set raw_mode={} for WriteBatch",
                py_bool(self.raw_mode)
            )));
        }
        let batch = write_batch.consume()?;
        let custom = write_opt.map(|w| w.to_shale());
        let wo = custom.as_ref().unwrap_or(&self.write_opt);
        py.allow_threads(|| cf.db.write_opt(batch, wo)).map_err(db_err)
    }

    #[pyo3(signature = (begin, end, write_opt = None))]
    fn delete_range(
        &self,
        py: Python<'_>,
        begin: &Bound<'_, PyAny>,
        end: &Bound<'_, PyAny>,
        write_opt: Option<&WriteOptionsPy>,
    ) -> PyResult<()> {
        let cf = self.cf()?;
        let from = encode_key(begin, self.raw_mode)?;
        let to = encode_key(end, self.raw_mode)?;
        let custom = write_opt.map(|w| w.to_shale());
        let wo = custom.as_ref().unwrap_or(&self.write_opt);
        py.allow_threads(|| cf.db.delete_range_cf_opt(&cf.handle, &from, &to, wo)).map_err(db_err)
    }

    fn snapshot(slf: &Bound<'_, Self>) -> PyResult<Snapshot> {
        Snapshot::new(slf)
    }

    fn path(&self) -> PyResult<String> {
        Ok(self.cf()?.db.path().to_string_lossy().into_owned())
    }

    #[pyo3(signature = (begin, end, compact_opt = None))]
    fn compact_range(
        &self,
        py: Python<'_>,
        begin: &Bound<'_, PyAny>,
        end: &Bound<'_, PyAny>,
        compact_opt: Option<&CompactOptionsPy>,
    ) -> PyResult<()> {
        let cf = self.cf()?;
        let from = if begin.is_none() { None } else { Some(encode_key(begin, self.raw_mode)?) };
        let to = if end.is_none() { None } else { Some(encode_key(end, self.raw_mode)?) };
        let o = compact_opt.cloned().unwrap_or_else(CompactOptionsPy::new).to_shale();
        py.allow_threads(|| cf.db.try_compact_range_cf_opt(&cf.handle, from, to, &o)).map_err(db_err)
    }

    fn set_options(&self, py: Python<'_>, options: HashMap<String, String>) -> PyResult<()> {
        let cf = self.cf()?;
        let pairs: Vec<(&str, &str)> = options.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        py.allow_threads(|| cf.db.set_options_cf(&cf.handle, &pairs)).map_err(db_err)
    }

    fn property_value(&self, py: Python<'_>, name: &str) -> PyResult<Option<String>> {
        let cf = self.cf()?;
        py.allow_threads(|| cf.db.property_value_cf(&cf.handle, name)).map_err(db_err)
    }

    fn property_int_value(&self, py: Python<'_>, name: &str) -> PyResult<Option<u64>> {
        let cf = self.cf()?;
        py.allow_threads(|| cf.db.property_int_value_cf(&cf.handle, name)).map_err(db_err)
    }

    fn latest_sequence_number(&self) -> PyResult<u64> {
        Ok(self.cf()?.db.latest_sequence_number())
    }

    fn live_files<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let cf = self.cf()?;
        let files = py.allow_threads(|| cf.db.live_files()).map_err(db_err)?;
        let out = PyList::empty(py);
        for f in files {
            let d = PyDict::new(py);
            let key = |k: &Option<Vec<u8>>| -> PyResult<Bound<'py, PyAny>> {
                match k {
                    Some(k) => decode_value(py, k, &self.loads, self.raw_mode),
                    None => Ok(py.None().into_bound(py)),
                }
            };
            d.set_item("name", &f.name)?;
            d.set_item("size", f.size)?;
            d.set_item("level", f.level)?;
            d.set_item("start_key", key(&f.start_key)?)?;
            d.set_item("end_key", key(&f.end_key)?)?;
            d.set_item("num_entries", f.num_entries)?;
            d.set_item("num_deletions", f.num_deletions)?;
            out.append(d)?;
        }
        Ok(out)
    }

    fn try_catch_up_with_primary(&self, py: Python<'_>) -> PyResult<()> {
        let cf = self.cf()?;
        py.allow_threads(|| cf.db.try_catch_up_with_primary()).map_err(db_err)
    }

    fn cancel_all_background(&self, py: Python<'_>, wait: bool) -> PyResult<()> {
        let cf = self.cf()?;
        py.allow_threads(|| cf.db.cancel_all_background_work(wait));
        Ok(())
    }

    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        self.close_inner(py)
    }

    #[pyo3(signature = (wait = true))]
    fn flush(&self, py: Python<'_>, wait: bool) -> PyResult<()> {
        let cf = self.cf()?;
        let mut fo = shale::FlushOptions::new();
        fo.set_wait(wait);
        py.allow_threads(|| cf.db.flush_cf_opt(&cf.handle, &fo)).map_err(db_err)
    }

    #[pyo3(signature = (sync = true))]
    fn flush_wal(&self, py: Python<'_>, sync: bool) -> PyResult<()> {
        let cf = self.cf()?;
        py.allow_threads(|| cf.db.flush_wal(sync)).map_err(db_err)
    }

    #[staticmethod]
    #[pyo3(signature = (path, options = None))]
    fn destroy(py: Python<'_>, path: &str, options: Option<OptionsPy>) -> PyResult<()> {
        let options = options.unwrap_or_else(|| OptionsPy::create(false));
        py.allow_threads(|| {
            let _ = std::fs::remove_file(PathBuf::from(path).join(CONFIG_FILE));
            Db::destroy(&options.inner, path)
        })
        .map_err(db_err)
    }

    #[staticmethod]
    #[pyo3(signature = (path, options = None))]
    fn repair(py: Python<'_>, path: &str, options: Option<OptionsPy>) -> PyResult<()> {
        let options = options.unwrap_or_else(|| OptionsPy::create(false));
        py.allow_threads(|| Db::repair(&options.inner, path)).map_err(db_err)
    }

    #[staticmethod]
    #[pyo3(signature = (path, options = None))]
    fn list_cf(py: Python<'_>, path: &str, options: Option<OptionsPy>) -> PyResult<Vec<String>> {
        let options = options.unwrap_or_else(|| OptionsPy::create(false));
        py.allow_threads(|| Db::list_cf(&options.inner, path)).map_err(db_err)
    }
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// Encodes an entity's names and values (same length, as rocksdict checks).
pub(crate) fn encode_columns(
    names: &[Bound<'_, PyAny>],
    values: &[Bound<'_, PyAny>],
    dumps: &PyObject,
    raw_mode: bool,
) -> PyResult<Vec<(Vec<u8>, Vec<u8>)>> {
    if names.len() != values.len() {
        return Err(PyException::new_err("names and values must have the same length"));
    }
    let mut out = Vec::with_capacity(names.len());
    for (n, v) in names.iter().zip(values) {
        out.push((
            encode_value(n, dumps, raw_mode)?.into_owned(),
            encode_value(v, dumps, raw_mode)?.into_owned(),
        ));
    }
    Ok(out)
}

/// An entity's columns as rocksdict returns them: a list of `(name, value)` tuples.
pub(crate) fn columns_to_py<'py>(
    py: Python<'py>,
    cols: &[(Vec<u8>, Vec<u8>)],
    loads: &PyObject,
    raw_mode: bool,
) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for (n, v) in cols {
        let n = decode_value(py, n, loads, raw_mode)?;
        let v = decode_value(py, v, loads, raw_mode)?;
        out.append(PyTuple::new(py, [n, v])?)?;
    }
    Ok(out)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Rdict>()?;
    m.add_class::<AccessType>()?;
    m.add_class::<ColumnFamilyPy>()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_is_the_comparators() {
        let raw: Vec<&[u8]> = vec![
            b"b",
            b"",
            b"ab",
            b"ab\0",
            b"abcdefgh",
            b"abcdefgh\0",
            b"abcdefghi",
            b"abcdefgg\xff",
            b"\xff",
            b"a",
            b"ab",
            b"abcdefga",
        ];
        let keys: Vec<Cow<'_, [u8]>> = raw.iter().map(|k| Cow::Borrowed(*k)).collect();
        let order = key_order(&keys, true);
        let got: Vec<&[u8]> = order.iter().map(|&i| raw[i]).collect();
        let mut want = raw.clone();
        want.sort();
        assert_eq!(got, want);
        let mut seen = order.clone();
        seen.sort();
        assert_eq!(seen, (0..raw.len()).collect::<Vec<_>>());

        // Default mode: int keys (type 3) by value, the rest bytewise.
        let typed: Vec<Vec<u8>> = vec![
            vec![3, 0x00, 0x80],
            vec![3, 0xff],
            vec![2, b'x'],
            vec![3, 0x05],
            vec![1, b'a'],
            vec![3, 0x80],
        ];
        let keys: Vec<Cow<'_, [u8]>> = typed.iter().map(|k| Cow::Borrowed(k.as_slice())).collect();
        let order = key_order(&keys, false);
        let got: Vec<&[u8]> = order.iter().map(|&i| typed[i].as_slice()).collect();
        let mut want: Vec<&[u8]> = typed.iter().map(|k| k.as_slice()).collect();
        want.sort_by(|a, b| rocksdict_compare(a, b));
        assert_eq!(got, want);
        assert_eq!(got[2], &[3, 0x80][..], "-128 before -1, 5 and 128");
    }
}
