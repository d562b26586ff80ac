//! `WriteBatch`, `SstFileWriter`, `Snapshot` and `Checkpoint`.

use crate::encoder::{decode_value, encode_key, encode_value};
use crate::iter::{RdictItems, RdictIter, RdictKeys, RdictValues};
use crate::options::{OptionsPy, ReadOptionsPy};
use crate::rdict::{encode_columns, CfRef, ColumnFamilyPy, Rdict, RocksDictConfig};
use crate::{db_err, Db};
use pyo3::exceptions::{PyException, PyKeyError};
use pyo3::prelude::*;
use std::sync::{Mutex, MutexGuard};

fn consumed() -> PyErr {
    PyException::new_err("this batch is already consumed, create a new one by calling `WriteBatch()`")
}

/// A batch of writes applied atomically by `Rdict.write`.
#[pyclass(name = "WriteBatch", module = "rocksdict")]
pub(crate) struct WriteBatchPy {
    inner: Option<shale::WriteBatch>,
    default_cf: Option<CfRef>,
    dumps: PyObject,
    pub(crate) raw_mode: bool,
}

impl WriteBatchPy {
    fn batch(&mut self) -> PyResult<&mut shale::WriteBatch> {
        self.inner.as_mut().ok_or_else(consumed)
    }

    fn batch_ref(&self) -> PyResult<&shale::WriteBatch> {
        self.inner.as_ref().ok_or_else(consumed)
    }

    /// Takes the batch out for writing; the object is spent afterwards.
    pub(crate) fn consume(&mut self) -> PyResult<shale::WriteBatch> {
        self.default_cf = None;
        self.inner.take().ok_or_else(consumed)
    }
}

#[pymethods]
impl WriteBatchPy {
    #[new]
    #[pyo3(signature = (raw_mode = false))]
    fn new(py: Python<'_>, raw_mode: bool) -> PyResult<Self> {
        let dumps = PyModule::import(py, "pickle")?.getattr("dumps")?.unbind();
        Ok(WriteBatchPy { inner: Some(shale::WriteBatch::default()), default_cf: None, dumps, raw_mode })
    }

    fn set_dumps(&mut self, dumps: PyObject) {
        self.dumps = dumps
    }

    fn __len__(&self) -> PyResult<usize> {
        self.len()
    }

    fn __setitem__(&mut self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.put(key, value, None)
    }

    fn __delitem__(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.delete(key, None)
    }

    #[pyo3(signature = (column_family = None))]
    fn set_default_column_family(&mut self, column_family: Option<ColumnFamilyPy>) {
        self.default_cf = column_family.map(|c| c.0);
    }

    fn len(&self) -> PyResult<usize> {
        Ok(self.batch_ref()?.len())
    }

    fn size_in_bytes(&self) -> PyResult<usize> {
        Ok(self.batch_ref()?.size_in_bytes())
    }

    fn is_empty(&self) -> PyResult<bool> {
        Ok(self.batch_ref()?.is_empty())
    }

    #[pyo3(signature = (key, value, column_family = None))]
    fn put(
        &mut self,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        column_family: Option<ColumnFamilyPy>,
    ) -> PyResult<()> {
        let k = encode_key(key, self.raw_mode)?;
        let v = encode_value(value, &self.dumps, self.raw_mode)?;
        let cf = column_family.map(|c| c.0).or_else(|| self.default_cf.clone());
        let b = self.batch()?;
        match cf {
            Some(cf) => b.put_cf(&cf.handle, k, v),
            None => b.put(k, v),
        }
        Ok(())
    }

    fn put_entity(
        &mut self,
        key: &Bound<'_, PyAny>,
        names: Vec<Bound<'_, PyAny>>,
        values: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let k = encode_key(key, self.raw_mode)?;
        let Some(cf) = self.default_cf.clone() else {
            return Err(PyException::new_err(
                "Cannot call this method without first WriteBatch.set_default_column_family()",
            ));
        };
        let columns = encode_columns(&names, &values, &self.dumps, self.raw_mode)?;
        let refs: Vec<(&[u8], &[u8])> = columns.iter().map(|(n, v)| (n.as_slice(), v.as_slice())).collect();
        self.batch()?.put_entity_cf(&cf.handle, k, &refs).map_err(db_err)
    }

    #[pyo3(signature = (key, column_family = None))]
    fn delete(&mut self, key: &Bound<'_, PyAny>, column_family: Option<ColumnFamilyPy>) -> PyResult<()> {
        let k = encode_key(key, self.raw_mode)?;
        let cf = column_family.map(|c| c.0).or_else(|| self.default_cf.clone());
        let b = self.batch()?;
        match cf {
            Some(cf) => b.delete_cf(&cf.handle, k),
            None => b.delete(k),
        }
        Ok(())
    }

    #[pyo3(signature = (begin, end, column_family = None))]
    fn delete_range(
        &mut self,
        begin: &Bound<'_, PyAny>,
        end: &Bound<'_, PyAny>,
        column_family: Option<ColumnFamilyPy>,
    ) -> PyResult<()> {
        let from = encode_key(begin, self.raw_mode)?;
        let to = encode_key(end, self.raw_mode)?;
        let cf = column_family.map(|c| c.0).or_else(|| self.default_cf.clone());
        let b = self.batch()?;
        match cf {
            Some(cf) => b.delete_range_cf(&cf.handle, from, to),
            None => b.delete_range(from, to),
        }
        Ok(())
    }

    fn clear(&mut self) -> PyResult<()> {
        self.batch()?.clear();
        Ok(())
    }
}

/// Writes an external SST file for `Rdict.ingest_external_file`.
#[pyclass(name = "SstFileWriter", module = "rocksdict")]
pub(crate) struct SstFileWriterPy {
    // Declared first: dropped before the options it borrows.
    writer: Mutex<shale::SstFileWriter<'static>>,
    _opts: Box<shale::Options>,
    dumps: PyObject,
    raw_mode: bool,
}

impl SstFileWriterPy {
    fn lock(&self, py: Python<'_>) -> PyResult<MutexGuard<'_, shale::SstFileWriter<'static>>> {
        crate::lock_released(py, &self.writer, "SstFileWriter")
    }
}

#[pymethods]
impl SstFileWriterPy {
    #[new]
    #[pyo3(signature = (options = None))]
    fn new(py: Python<'_>, options: Option<OptionsPy>) -> PyResult<Self> {
        let options = options.unwrap_or_else(|| OptionsPy::create(false));
        let raw_mode = options.raw_mode;
        let opts = Box::new(options.inner);
        let writer = shale::SstFileWriter::create(&opts);
        // SAFETY: the writer borrows the options in the `Box`, whose heap address does not
        // change when the box moves; `writer` is declared before `_opts`, so it is dropped
        // first, and `_opts` is never replaced.
        let writer: shale::SstFileWriter<'static> = unsafe { std::mem::transmute(writer) };
        let dumps = PyModule::import(py, "pickle")?.getattr("dumps")?.unbind();
        Ok(SstFileWriterPy { writer: Mutex::new(writer), _opts: opts, dumps, raw_mode })
    }

    fn set_dumps(&mut self, dumps: PyObject) {
        self.dumps = dumps
    }

    fn open(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        let w = self.lock(py)?;
        let w: &shale::SstFileWriter<'_> = &w;
        py.allow_threads(|| w.open(path)).map_err(db_err)
    }

    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        let mut w = self.lock(py)?;
        let w: &mut shale::SstFileWriter<'static> = &mut w;
        py.allow_threads(|| w.finish()).map_err(db_err)
    }

    fn file_size(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.lock(py)?.file_size())
    }

    fn __setitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = encode_key(key, self.raw_mode)?;
        let v = encode_value(value, &self.dumps, self.raw_mode)?;
        let mut w = self.lock(py)?;
        let w: &mut shale::SstFileWriter<'static> = &mut w;
        py.allow_threads(|| w.put(&k, &v)).map_err(db_err)
    }

    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = encode_key(key, self.raw_mode)?;
        let mut w = self.lock(py)?;
        let w: &mut shale::SstFileWriter<'static> = &mut w;
        py.allow_threads(|| w.delete(&k)).map_err(db_err)
    }
}

/// A consistent view of the database at the time `Rdict.snapshot()` was called.
#[pyclass(name = "Snapshot", module = "rocksdict")]
pub(crate) struct Snapshot {
    // Declared first: released before the database share below.
    snap: shale::SnapshotWithThreadMode<'static, Db>,
    cf: CfRef,
    loads: PyObject,
    read_opt_py: ReadOptionsPy,
    raw_mode: bool,
}

impl Snapshot {
    pub(crate) fn new(rdict: &Bound<'_, Rdict>) -> PyResult<Snapshot> {
        let py = rdict.py();
        let r = rdict.borrow();
        let cf = r.cf()?.clone();
        let snap = cf.db.snapshot();
        // SAFETY: the snapshot borrows the database, which lives in the `Arc` held by `cf`;
        // `snap` is declared before `cf`, so it is released first.
        let snap: shale::SnapshotWithThreadMode<'static, Db> = unsafe { std::mem::transmute(snap) };
        Ok(Snapshot {
            snap,
            cf,
            loads: r.loads.clone_ref(py),
            read_opt_py: r.read_opt_py.clone_ref(py),
            raw_mode: r.raw_mode,
        })
    }

    fn new_iter(slf: &Bound<'_, Self>, read_opt: Option<&ReadOptionsPy>) -> PyResult<RdictIter> {
        let py = slf.py();
        let s = slf.borrow();
        let mut ro = match read_opt {
            Some(o) => o.to_shale(s.raw_mode, py)?,
            None => s.read_opt_py.to_shale(s.raw_mode, py)?,
        };
        ro.set_snapshot(&s.snap);
        Ok(RdictIter::new(
            &s.cf,
            ro,
            Some(slf.clone().into_any().unbind()),
            s.loads.clone_ref(py),
            s.raw_mode,
        ))
    }
}

#[pymethods]
impl Snapshot {
    fn __getitem__<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let k = encode_key(key, self.raw_mode)?;
        let ro = self.read_opt_py.to_shale(self.raw_mode, py)?;
        let found = py.allow_threads(|| self.snap.get_cf_opt(&self.cf.handle, &k, ro)).map_err(db_err)?;
        match found {
            Some(v) => decode_value(py, &v, &self.loads, self.raw_mode),
            None => Err(PyKeyError::new_err(format!("key {key} not found"))),
        }
    }

    #[pyo3(signature = (read_opt = None))]
    fn iter(slf: &Bound<'_, Self>, read_opt: Option<&ReadOptionsPy>) -> PyResult<RdictIter> {
        Snapshot::new_iter(slf, read_opt)
    }

    #[pyo3(signature = (backwards = false, from_key = None, read_opt = None))]
    fn items(
        slf: &Bound<'_, Self>,
        backwards: bool,
        from_key: Option<&Bound<'_, PyAny>>,
        read_opt: Option<&ReadOptionsPy>,
    ) -> PyResult<RdictItems> {
        RdictItems::new(slf.py(), Snapshot::new_iter(slf, read_opt)?, backwards, from_key)
    }

    #[pyo3(signature = (backwards = false, from_key = None, read_opt = None))]
    fn keys(
        slf: &Bound<'_, Self>,
        backwards: bool,
        from_key: Option<&Bound<'_, PyAny>>,
        read_opt: Option<&ReadOptionsPy>,
    ) -> PyResult<RdictKeys> {
        RdictKeys::new(slf.py(), Snapshot::new_iter(slf, read_opt)?, backwards, from_key)
    }

    #[pyo3(signature = (backwards = false, from_key = None, read_opt = None))]
    fn values(
        slf: &Bound<'_, Self>,
        backwards: bool,
        from_key: Option<&Bound<'_, PyAny>>,
        read_opt: Option<&ReadOptionsPy>,
    ) -> PyResult<RdictValues> {
        RdictValues::new(slf.py(), Snapshot::new_iter(slf, read_opt)?, backwards, from_key)
    }
}

/// Makes openable copies of the database (hard links where possible), with the
/// `rocksdict-config.json` of the database it was made from.
#[pyclass(name = "Checkpoint", module = "rocksdict")]
pub(crate) struct CheckpointPy {
    cf: CfRef,
    config: RocksDictConfig,
}

#[pymethods]
impl CheckpointPy {
    #[new]
    fn new(db: &Rdict) -> PyResult<Self> {
        Ok(CheckpointPy { cf: db.cf()?.clone(), config: db.config()? })
    }

    fn create_checkpoint(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        let db: &Db = &self.cf.db;
        py.allow_threads(|| shale::checkpoint::Checkpoint::new(db)?.create_checkpoint(path))
            .map_err(db_err)?;
        self.config.save_to_dir(path)
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<WriteBatchPy>()?;
    m.add_class::<SstFileWriterPy>()?;
    m.add_class::<Snapshot>()?;
    m.add_class::<CheckpointPy>()?;
    Ok(())
}
