//! Python objects <-> engine values: the one place the bindings convert data. `to_value` reads
//! a Python object as a JSON value (typed errors for what is not JSON); `ToPy` builds Python
//! data from engine values and kept JSON text, read-only where a message's logprobs need it
//! (`Frozen`); `GcPause` keeps the cyclic GC out of a large build.

use std::sync::Arc;

use crate::engine::json_text::{self, Build};
use crate::engine::value::Map;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};

use crate::engine::events::{EventDataError, MAX_JSON_DEPTH};
use crate::engine::value::Value;
use crate::py::intern::{self, Shared};

/// Why a Python object is not a JSON value: a data error, or an exception Python raised.
pub(crate) enum ConvError {
    Data(EventDataError),
    Py(PyErr),
}

impl From<PyErr> for ConvError {
    fn from(err: PyErr) -> Self {
        ConvError::Py(err)
    }
}

fn data_error(text: String) -> ConvError {
    ConvError::Data(EventDataError(text))
}

pub(crate) const LONE_SURROGATE: &str = "a string with a lone surrogate is not JSON text";

/// The twin's `json_value`: `obj` as an engine value, in the same order and with the same
/// errors (`bytes`, a blob as boto3 yields it, as its base64 text).
pub(crate) fn to_value(obj: &Bound<'_, PyAny>, depth: usize) -> Result<Value, ConvError> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(flag) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if let Ok(text) = obj.cast::<PyString>() {
        return match text.to_str() {
            Ok(text) => Ok(Value::Str(text.to_owned())),
            Err(_) => Err(data_error(LONE_SURROGATE.to_owned())),
        };
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(number) = obj.extract::<i64>() {
            return Ok(Value::Int(number));
        }
        // outside 64 bits: the nearest float, as the twin's float(int)
        let int = obj.py().get_type::<PyInt>().call1((obj,))?;
        return match int.extract::<f64>() {
            Ok(number) => Ok(Value::Float(number)),
            Err(_) => Err(data_error(
                "an integer too large for a float is not a JSON number".to_owned(),
            )),
        };
    }
    if let Ok(number) = obj.cast::<PyFloat>() {
        return Ok(Value::Float(number.value()));
    }
    if let Ok(blob) = obj.cast::<PyBytes>() {
        // a blob as an SDK yields it (boto3's redactedContent, image bytes): the base64 text
        // the HTTP API carries [E103]
        return Ok(Value::Str(base64(blob.as_bytes())));
    }
    let is_dict = obj.is_instance_of::<PyDict>();
    if is_dict || obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        if depth > MAX_JSON_DEPTH {
            return Err(data_error(format!(
                "nested deeper than {MAX_JSON_DEPTH} levels"
            )));
        }
        if is_dict {
            let mut out = Map::default();
            let pairs: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)> =
                if obj.get_type().is(obj.py().get_type::<PyDict>()) {
                    obj.cast::<PyDict>().map_err(PyErr::from)?.iter().collect()
                } else {
                    obj.call_method0("items")?
                        .try_iter()?
                        .map(|item| item.and_then(|pair| pair.extract()))
                        .collect::<PyResult<_>>()?
                };
            for (key, item) in pairs {
                let Ok(key) = key.cast::<PyString>() else {
                    return Err(data_error(format!(
                        "object keys must be strings, not {}",
                        key.get_type().name()?
                    )));
                };
                // the twin's `out[json_value(key)] = json_value(item)`: the item first
                let value = to_value(&item, depth + 1)?;
                let Ok(key) = key.to_str() else {
                    return Err(data_error(LONE_SURROGATE.to_owned()));
                };
                out.insert(key.to_owned(), value);
            }
            return Ok(Value::Dict(Arc::new(out)));
        }
        let mut items = Vec::new();
        for item in obj.try_iter()? {
            items.push(to_value(&item?, depth + 1)?);
        }
        return Ok(Value::List(Arc::new(items)));
    }
    Err(data_error(format!(
        "{} is not a JSON value",
        obj.get_type().name()?
    )))
}

/// Standard base64 with padding (RFC 4648 §4), the text of a blob in a JSON API.
pub(crate) fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The twin's `kind_name` of a Python object.
pub(crate) fn kind_name(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(if obj.is_none() {
        "null".to_owned()
    } else if obj.is_instance_of::<PyBool>() {
        "boolean".to_owned()
    } else if obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyFloat>() {
        "number".to_owned()
    } else if obj.is_instance_of::<PyString>() {
        "string".to_owned()
    } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        "array".to_owned()
    } else if obj.is_instance_of::<PyDict>() {
        "object".to_owned()
    } else {
        obj.get_type().name()?.to_string()
    })
}

/// Pauses CPython's cyclic garbage collector while a large acyclic result is built: every
/// container it makes is new and cycle-free, yet each allocation would count toward a
/// collection that walks them all again (quadratic over a long stream's logprobs). Restores
/// the collector's state when dropped.
pub(crate) struct GcPause(bool);

impl GcPause {
    pub(crate) fn new(_py: Python<'_>) -> Self {
        // SAFETY: the GIL is held (the `Python` token); these calls only flip the flag.
        GcPause(unsafe { pyo3::ffi::PyGC_Disable() } == 1)
    }
}

impl Drop for GcPause {
    fn drop(&mut self) {
        if self.0 {
            // SAFETY: dropped where it was made, with the GIL held.
            unsafe { pyo3::ffi::PyGC_Enable() };
        }
    }
}

/// `fastmerge._frozen.FrozenDict` and `FrozenList`: what a message's logprobs are made of (a
/// read-only `dict` / `list`; the message hands out the same object on every read).
pub(crate) struct Frozen {
    dict: Py<PyType>,
    list: Py<PyType>,
}

static FROZEN: PyOnceLock<Frozen> = PyOnceLock::new();

impl Frozen {
    pub(crate) fn get(py: Python<'_>) -> PyResult<&'static Frozen> {
        FROZEN.get_or_try_init(py, || {
            let parts = py.import("fastmerge._frozen")?;
            let class = |name: &str| -> PyResult<Py<PyType>> {
                Ok(parts.getattr(name)?.cast_into::<PyType>()?.unbind())
            };
            Ok(Frozen {
                dict: class("FrozenDict")?,
                list: class("FrozenList")?,
            })
        })
    }

    /// Whether `obj` is exactly one of the two classes (a tree already frozen).
    pub(crate) fn is_frozen(&self, obj: &Bound<'_, PyAny>) -> bool {
        let kind = obj.get_type();
        kind.is(self.dict.bind(obj.py())) || kind.is(self.list.bind(obj.py()))
    }

    /// A new, empty instance of `kind` by its `tp_new` alone, as `dict.__new__(FrozenDict)`:
    /// no `__init__` (it would find nothing to do); `PyDict_SetItem` / `PyList_Append` fill it
    /// below the class's read-only methods, as CPython's own C code fills a subclass.
    fn empty<'py>(py: Python<'py>, kind: &Py<PyType>) -> PyResult<Bound<'py, PyAny>> {
        let kind = kind.bind(py);
        let args = PyTuple::empty(py);
        // SAFETY: the GIL is held; `tp_new` of a class deriving from dict or list (inherited
        // from the builtin) takes the class, an args tuple and NULL kwargs, and returns a new
        // reference or NULL with an exception set.
        unsafe {
            let slot = ffi::PyType_GetSlot(kind.as_ptr().cast(), ffi::Py_tp_new);
            if slot.is_null() {
                return Err(pyo3::exceptions::PyTypeError::new_err(
                    "a class without tp_new",
                ));
            }
            let new: ffi::newfunc = std::mem::transmute(slot);
            let made = new(kind.as_ptr().cast(), args.as_ptr(), std::ptr::null_mut());
            Bound::from_owned_ptr_or_err(py, made)
        }
    }

    pub(crate) fn new_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Self::empty(py, &self.dict)
    }

    pub(crate) fn new_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Self::empty(py, &self.list)
    }
}

/// Untracks `made` (a fresh list or dict only the caller holds) from the cyclic GC.
fn untrack(made: &Bound<'_, PyAny>) {
    // SAFETY: the GIL is held and `made` is a live list or dict (or an instance of a subclass
    // of one) that only the caller holds; untracking an untracked object does nothing.
    unsafe { ffi::PyObject_GC_UnTrack(made.as_ptr().cast()) };
}

/// Engine values as Python data. Object keys repeat across a stream (every logprobs entry has
/// `token`, `logprob`, `bytes`, ...), so each distinct key is made into a `str` once and
/// shared, as orjson does (a `str` caches its hash: dict inserts do not hash it again); keys
/// are kept between calls too ([`intern::key`]).
pub(crate) struct ToPy<'py> {
    py: Python<'py>,
    keys: Shared<'py, PyString>,
    /// Short strings of kept JSON text ([`Value::Json`]), made once: a logprobs entry's token
    /// comes again in its `top_logprobs` and in later entries (a `str` is immutable: sharing
    /// one is invisible but to `is`).
    strs: Shared<'py, PyString>,
    /// The read-only lists of integers of kept text by their text (a token's `bytes`).
    int_lists: Shared<'py, PyAny>,
    /// Set for the trees built read-only (a message's `logprobs`).
    frozen: Option<&'static Frozen>,
}

impl<'py> ToPy<'py> {
    pub(crate) fn new(py: Python<'py>) -> Self {
        ToPy {
            py,
            keys: Shared::new(6),
            strs: Shared::new(10),
            int_lists: Shared::new(10),
            frozen: None,
        }
    }

    pub(crate) fn key(&mut self, key: &str) -> Bound<'py, PyString> {
        // this call's own table first (no lock: a logprobs tree asks for the same few keys
        // thousands of times), then the one kept between calls
        if let Some(known) = self.keys.get(key.as_bytes()) {
            return known;
        }
        let made = intern::key(self.py, key);
        self.keys.put(key.as_bytes(), &made);
        made
    }

    /// One field of a message's data: its `logprobs` read-only ([`Frozen`]), built so here
    /// once instead of at its first read; and whether the cyclic GC must track it.
    pub(crate) fn field(&mut self, key: &str, item: &Value) -> PyResult<(Bound<'py, PyAny>, bool)> {
        if key != "logprobs" {
            return self.tree(item);
        }
        self.frozen = Some(Frozen::get(self.py)?);
        let made = self.tree(item);
        self.frozen = None;
        made
    }

    /// A message's data as a dict, each field as [`ToPy::field`] makes it (a batch's items,
    /// which cross processes by marshal; `aggregate` hands out `MessageData`).
    pub(crate) fn message(&mut self, value: &Value) -> PyResult<Bound<'py, PyAny>> {
        let Value::Dict(map) = value else {
            return Ok(self.tree(value)?.0);
        };
        let dict = PyDict::new(self.py);
        let mut tracked = false;
        for (key, item) in map.iter() {
            let (item, item_tracked) = self.field(key, item)?;
            tracked |= item_tracked;
            dict.set_item(self.key(key), item)?;
        }
        let dict = dict.into_any();
        if !tracked {
            untrack(&dict);
        }
        Ok(dict)
    }

    /// `value` as Python data, and whether the cyclic GC must track it. A fresh list or dict
    /// that holds only atomic values and untracked containers cannot be part of a cycle, and
    /// nobody else holds it (readers get copies, `copy_tree`, or read-only trees), so it is
    /// untracked, as CPython untracks such tuples and dicts itself: 20,000 logprobs entries
    /// are ~180,000 containers every later collection would walk otherwise (the GC pause only
    /// delays that walk).
    fn tree(&mut self, value: &Value) -> PyResult<(Bound<'py, PyAny>, bool)> {
        let py = self.py;
        let (made, tracked) = match value {
            Value::Null => return Ok((py.None().into_bound(py), false)),
            Value::Bool(flag) => return Ok((PyBool::new(py, *flag).to_owned().into_any(), false)),
            Value::Int(number) => return Ok((number.into_pyobject(py)?.into_any(), false)),
            Value::Float(number) => return Ok((PyFloat::new(py, *number).into_any(), false)),
            Value::Str(text) => return Ok((PyString::new(py, text).into_any(), false)),
            // every container read from text is new and holds no tracked one
            Value::Json(text) => return Ok((json_text::read(text.text(), self)?, false)),
            Value::List(items) => {
                let mut tracked = false;
                let list = if let Some(frozen) = self.frozen {
                    let list = frozen.new_list(py)?;
                    for item in items.iter() {
                        let (item, item_tracked) = self.tree(item)?;
                        tracked |= item_tracked;
                        // SAFETY: `list` is a list (a FrozenList); the item is borrowed.
                        if unsafe { ffi::PyList_Append(list.as_ptr(), item.as_ptr()) } != 0 {
                            return Err(PyErr::fetch(py));
                        }
                    }
                    list
                } else {
                    let len = ffi::Py_ssize_t::try_from(items.len())
                        .map_err(|_| pyo3::exceptions::PyOverflowError::new_err("list"))?;
                    // SAFETY: a new list of `len` empty slots, each set once below (a list
                    // dropped before then holds NULLs, which its dealloc skips).
                    let list = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(len))? };
                    for (index, item) in items.iter().enumerate() {
                        let (item, item_tracked) = self.tree(item)?;
                        tracked |= item_tracked;
                        // SAFETY: `index` < `len`; PyList_SetItem steals the new reference.
                        unsafe { ffi::PyList_SetItem(list.as_ptr(), index as _, item.into_ptr()) };
                    }
                    list
                };
                (list, tracked)
            }
            Value::Dict(map) => {
                let dict = match self.frozen {
                    Some(frozen) => frozen.new_dict(py)?,
                    None => PyDict::new(py).into_any(),
                };
                let mut tracked = false;
                for (key, item) in map.iter() {
                    let key = self.key(key);
                    let (item, item_tracked) = self.tree(item)?;
                    tracked |= item_tracked;
                    // SAFETY: `dict` is a dict (or a FrozenDict); key and item are borrowed.
                    let set =
                        unsafe { ffi::PyDict_SetItem(dict.as_ptr(), key.as_ptr(), item.as_ptr()) };
                    if set != 0 {
                        return Err(PyErr::fetch(py));
                    }
                }
                (dict, tracked)
            }
        };
        if !tracked {
            untrack(&made);
        }
        Ok((made, tracked))
    }
}

/// Kept JSON text ([`Value::Json`]) read straight into Python objects: what
/// [`ToPy::tree`] makes of its value, without the tree (read-only when [`ToPy::frozen`]).
impl<'py> Build for ToPy<'py> {
    type Out = Bound<'py, PyAny>;
    type List = Bound<'py, PyAny>;
    type Dict = Bound<'py, PyAny>;
    type Err = PyErr;

    fn null(&mut self) -> PyResult<Self::Out> {
        Ok(self.py.None().into_bound(self.py))
    }
    fn bool(&mut self, value: bool) -> PyResult<Self::Out> {
        Ok(PyBool::new(self.py, value).to_owned().into_any())
    }
    fn int(&mut self, value: i64) -> PyResult<Self::Out> {
        Ok(value.into_pyobject(self.py)?.into_any())
    }
    fn float(&mut self, value: f64) -> PyResult<Self::Out> {
        Ok(PyFloat::new(self.py, value).into_any())
    }
    fn str(&mut self, value: &str) -> PyResult<Self::Out> {
        if let Some(known) = self.strs.get(value.as_bytes()) {
            return Ok(known.into_any());
        }
        let made = PyString::new(self.py, value);
        self.strs.put(value.as_bytes(), &made);
        Ok(made.into_any())
    }
    fn list(&mut self) -> PyResult<Self::List> {
        match self.frozen {
            Some(frozen) => frozen.new_list(self.py),
            None => Ok(PyList::empty(self.py).into_any()),
        }
    }
    fn push(&mut self, list: &mut Self::List, item: Self::Out) -> PyResult<()> {
        // SAFETY: `list` is a list (or a FrozenList) only this reading holds; item borrowed.
        if unsafe { ffi::PyList_Append(list.as_ptr(), item.as_ptr()) } != 0 {
            return Err(PyErr::fetch(self.py));
        }
        Ok(())
    }
    fn end_list(&mut self, list: Self::List) -> PyResult<Self::Out> {
        untrack(&list);
        Ok(list)
    }
    fn dict(&mut self) -> PyResult<Self::Dict> {
        match self.frozen {
            Some(frozen) => frozen.new_dict(self.py),
            None => Ok(PyDict::new(self.py).into_any()),
        }
    }
    fn set(&mut self, dict: &mut Self::Dict, key: &str, item: Self::Out) -> PyResult<()> {
        let key = self.key(key);
        // SAFETY: `dict` is a dict (or a FrozenDict) only this reading holds; key and item are
        // borrowed.
        if unsafe { ffi::PyDict_SetItem(dict.as_ptr(), key.as_ptr(), item.as_ptr()) } != 0 {
            return Err(PyErr::fetch(self.py));
        }
        Ok(())
    }
    fn end_dict(&mut self, dict: Self::Dict) -> PyResult<Self::Out> {
        untrack(&dict);
        Ok(dict)
    }
    fn shared_ints(&mut self, text: &str) -> Option<Self::Out> {
        // only a read-only list may be handed out twice
        self.frozen?;
        self.int_lists.get(text.as_bytes())
    }
    fn ints(&mut self, text: &str, items: &[i64]) -> PyResult<Self::Out> {
        let list = json_text::int_list(self, items)?;
        if self.frozen.is_some() {
            self.int_lists.put(text.as_bytes(), &list);
        }
        Ok(list)
    }
    fn broken(&mut self, detail: &'static str) -> PyErr {
        pyo3::exceptions::PyRuntimeError::new_err(format!(
            "fastmerge engine error: kept JSON text: {detail}"
        ))
    }
}
