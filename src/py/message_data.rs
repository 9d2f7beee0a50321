//! A message's folded data as the Rust backend hands it to `AssistantMessage`: a read-only
//! mapping whose fields become Python objects when first read, each once. A short stream's
//! message has some twenty fields; building all of them was a fifth of an `aggregate` call,
//! and most readers ask for two or three (`content`, `usage_metadata`, `tool_calls`).
//! `to_dict()` reads every field, and then costs what building them all did.

use std::sync::Arc;

use pyo3::exceptions::{PyKeyError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple};

use crate::engine::value::{Map, Value};
use crate::py::convert::{GcPause, ToPy};

/// The fields of one message (the engine's materialized data, shared, never changed), and
/// each field's Python object once it was read (the same object at every read, as a dict's
/// item is: the message's `logprobs` are read-only and compared by identity).
///
/// No `__traverse__`: what it holds are fresh data trees built from the engine's values, which
/// hold no reference back to it, so it cannot be part of a cycle.
#[pyclass(frozen, module = "fastmerge._fastmerge")]
pub(crate) struct MessageData {
    map: Arc<Map>,
    made: Box<[PyOnceLock<Py<PyAny>>]>,
}

impl MessageData {
    /// The data of a message: the engine's materialized dict (None for any other value, which
    /// the engine never gives).
    pub(crate) fn new(value: Value) -> Option<Self> {
        let Value::Dict(map) = value else {
            return None;
        };
        let made = (0..map.len()).map(|_| PyOnceLock::new()).collect();
        Some(MessageData { map, made })
    }

    /// The field at `index`, made at its first read.
    fn field<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyAny>> {
        let (Some((key, value)), Some(slot)) = (self.map.get_index(index), self.made.get(index))
        else {
            return Err(PyKeyError::new_err(index));
        };
        let made = slot.get_or_try_init(py, || {
            // a long stream's logprobs are thousands of containers: no collection mid-build
            let _pause = GcPause::new(py);
            ToPy::new(py)
                .field(key, value)
                .map(|(made, _)| made.unbind())
        })?;
        Ok(made.bind(py).clone())
    }

    /// The index of the field `key` names (a str), if the message has one.
    fn index_of(&self, key: &Bound<'_, PyAny>) -> Option<usize> {
        let key = key.cast::<PyString>().ok()?.to_str().ok()?;
        self.map.get_index_of(key)
    }

    /// Every field, as a dict.
    fn dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (index, key) in self.keys_tuple(py)?.iter().enumerate() {
            dict.set_item(key, self.field(py, index)?)?;
        }
        Ok(dict)
    }

    fn keys_tuple<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let mut convert = ToPy::new(py);
        PyTuple::new(py, self.map.keys().map(|key| convert.key(key)))
    }
}

#[pymethods]
impl MessageData {
    fn __getitem__<'py>(&self, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        match self.index_of(key) {
            Some(index) => self.field(key.py(), index),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    #[pyo3(signature = (key, default = None))]
    fn get<'py>(
        &self,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = key.py();
        match self.index_of(key) {
            Some(index) => self.field(py, index),
            None => Ok(default.unwrap_or_else(|| py.None().into_bound(py))),
        }
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> bool {
        self.index_of(key).is_some()
    }

    fn __len__(&self) -> usize {
        self.map.len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.keys_tuple(py)?.try_iter().map(Bound::into_any)
    }

    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        Ok(self.keys_tuple(py)?.to_list())
    }

    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let values = (0..self.map.len())
            .map(|index| self.field(py, index))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, values)
    }

    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let keys = self.keys_tuple(py)?;
        let items = keys
            .iter()
            .enumerate()
            .map(|(index, key)| Ok((key, self.field(py, index)?)))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// Equal to a mapping of the same items, as a dict is (`Mapping`'s own rule).
    fn __eq__<'py>(&self, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = other.py();
        let mapping = py.import("collections.abc")?.getattr("Mapping")?;
        if !other.is_instance(&mapping)? {
            return Ok(py.NotImplemented().into_bound(py));
        }
        let mine = self.dict(py)?;
        let theirs = PyDict::from_sequence(&other.call_method0("items")?.try_iter()?.into_any())?;
        Ok(PyBool::new(py, mine.eq(theirs)?).to_owned().into_any())
    }

    /// Pickled as the dict it reads as.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        (py.get_type::<PyDict>(), (self.dict(py)?,)).into_pyobject(py)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("MessageData({})", self.dict(py)?.repr()?))
    }
}

/// Messages' data as a Python list of [`MessageData`].
pub(crate) fn messages<'py>(py: Python<'py>, values: Vec<Value>) -> PyResult<Bound<'py, PyList>> {
    let made = values
        .into_iter()
        .map(|value| match MessageData::new(value) {
            Some(data) => Bound::new(py, data),
            None => Err(PyRuntimeError::new_err("a message's data is not an object")),
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, made)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<MessageData>()?;
    // a Mapping for `isinstance` and typing, as a dict is (it has the whole read API)
    let mapping = m.py().import("collections.abc")?.getattr("Mapping")?;
    mapping.call_method1("register", (m.py().get_type::<MessageData>(),))?;
    Ok(())
}
