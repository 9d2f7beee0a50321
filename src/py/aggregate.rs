//! The aggregator's binding: Python events in as engine values, messages out as Python data.
//! Every rule is in `crate::engine::aggregate` and the adapters; this converts and maps errors.

use std::sync::Arc;

use crate::engine::json_text::{self, Build};
use crate::engine::value::Map;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMemoryView, PySet, PyString,
    PyTuple, PyType,
};
use smallvec::SmallVec;

use crate::engine::aggregate::{AggError, AggregatorCore as Core};
use crate::engine::events::{EventDataError, MAX_JSON_DEPTH};
use crate::engine::providers::PROVIDERS;
use crate::engine::value::Value;
use crate::py::args::Arg;
use crate::py::chunks::parse_options;
use crate::py::errors::{build, invalid_option, wrong_type};

/// Why a Python object is not a JSON value: a data error, or an exception Python raised.
enum ConvError {
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

const LONE_SURROGATE: &str = "a string with a lone surrogate is not JSON text";

/// The twin's `json_value`: `obj` as an engine value, in the same order and with the same
/// errors.
fn to_value(obj: &Bound<'_, PyAny>, depth: usize) -> Result<Value, ConvError> {
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

/// The twin's `kind_name` of a Python object.
fn kind_name(obj: &Bound<'_, PyAny>) -> PyResult<String> {
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

/// A [`Shared`] object, the [`Print`] of its text, and the text itself when the print does
/// not hold all of it (longer than 16 bytes).
type Slot<'py, T> = (Print, Option<SmallVec<[u8; 24]>>, Bound<'py, T>);

/// A short text's length and two words of it: its first and last eight bytes (four for a text
/// of 4 to 7 bytes, the bytes themselves below 4). Up to 16 bytes the print is the text: two
/// texts with the same print are equal, with no comparison of bytes (keys and tokens are that
/// short); it also gives the slot.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Print {
    len: usize,
    head: u64,
    tail: u64,
}

impl Print {
    /// Texts longer than this are compared byte by byte after their prints.
    const WHOLE: usize = 16;

    fn of(text: &[u8]) -> Print {
        let len = text.len();
        let word = |at: usize, width: usize| -> u64 {
            let mut bytes = [0u8; 8];
            if let (Some(to), Some(from)) = (bytes.get_mut(..width), text.get(at..at + width)) {
                to.copy_from_slice(from);
            }
            u64::from_le_bytes(bytes)
        };
        let (head, tail) = match len {
            8.. => (word(0, 8), word(len - 8, 8)),
            4..=7 => (word(0, 4), word(len - 4, 4)),
            1..=3 => (
                word(0, 1) | word(len / 2, 1) << 8 | word(len - 1, 1) << 16,
                0,
            ),
            0 => (0, 0),
        };
        Print { len, head, tail }
    }

    fn slot(&self, bits: u32) -> usize {
        let mixed = (self.head ^ self.tail.rotate_left(29) ^ self.len as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> (64 - bits)) as usize
    }
}

/// Python objects made from short texts, found again by their text: a direct-mapped table
/// (one slot per text's [`Print`]; a newer text takes the slot), so a lookup is a print and
/// one comparison of it, and the table never grows. Allocated at its first use.
struct Shared<'py, T> {
    slots: Vec<Option<Slot<'py, T>>>,
    bits: u32,
}

impl<'py, T> Shared<'py, T> {
    fn new(bits: u32) -> Self {
        Shared {
            slots: Vec::new(),
            bits,
        }
    }

    fn get(&self, text: &[u8]) -> Option<Bound<'py, T>> {
        let print = Print::of(text);
        match self.slots.get(print.slot(self.bits)) {
            Some(Some((known, whole, obj)))
                if *known == print
                    && whole.as_ref().is_none_or(|whole| whole.as_slice() == text) =>
            {
                Some(obj.clone())
            }
            _ => None,
        }
    }

    /// Keeps `obj` as the object of `text` (a short one: see [`SHARED_LEN`]).
    fn put(&mut self, text: &[u8], obj: &Bound<'py, T>) {
        if text.len() > SHARED_LEN {
            return;
        }
        if self.slots.is_empty() {
            self.slots.resize_with(1 << self.bits, || None);
        }
        let print = Print::of(text);
        let whole = (text.len() > Print::WHOLE).then(|| SmallVec::from_slice(text));
        if let Some(slot) = self.slots.get_mut(print.slot(self.bits)) {
            *slot = Some((print, whole, obj.clone()));
        }
    }
}

/// Engine values as Python data. Object keys repeat across a stream (every logprobs entry has
/// `token`, `logprob`, `bytes`, ...), so each distinct key is made into a `str` once and
/// shared, as orjson does (a `str` caches its hash: dict inserts do not hash it again).
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
            keys: Shared::new(8),
            strs: Shared::new(10),
            int_lists: Shared::new(10),
            frozen: None,
        }
    }

    fn key(&mut self, key: &str) -> Bound<'py, PyString> {
        if let Some(known) = self.keys.get(key.as_bytes()) {
            return known;
        }
        let made = PyString::new(self.py, key);
        self.keys.put(key.as_bytes(), &made);
        made
    }

    /// `value` as Python data (see [`ToPy::tree`]).
    pub(crate) fn value(&mut self, value: &Value) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.tree(value)?.0)
    }

    /// A message's data: its `logprobs` read-only ([`Frozen`]), built so here once instead of
    /// at its first read.
    pub(crate) fn message(&mut self, value: &Value) -> PyResult<Bound<'py, PyAny>> {
        let Value::Dict(map) = value else {
            return self.value(value);
        };
        let py = self.py;
        let dict = PyDict::new(py);
        let mut tracked = false;
        for (key, item) in map.iter() {
            let key = self.key(key);
            let (item, item_tracked) = if key.to_str()? == "logprobs" {
                self.frozen = Some(Frozen::get(py)?);
                let made = self.tree(item);
                self.frozen = None;
                made?
            } else {
                self.tree(item)?
            };
            tracked |= item_tracked;
            dict.set_item(key, item)?;
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

/// How long a text may be for [`Shared`] to keep its object.
const SHARED_LEN: usize = 64;

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

pub(crate) fn agg_error(py: Python<'_>, err: AggError) -> PyErr {
    match err {
        AggError::Event { event, detail } => {
            build(py, "event_error", (event, detail).into_pyobject(py))
        }
        AggError::Anomaly { code, detail } => {
            build(py, "anomaly", (code, detail).into_pyobject(py))
        }
        AggError::NoEvents(detail) => build(py, "no_events", (detail,).into_pyobject(py)),
        AggError::EmptyInput => build(py, "empty_input", Ok(PyTuple::empty(py))),
        AggError::TooLargeSum { event } => build(py, "too_large_sum", (event,).into_pyobject(py)),
        AggError::Closed(reason) => build(py, "closed", (reason,).into_pyobject(py)),
        AggError::Engine(text) => {
            pyo3::exceptions::PyRuntimeError::new_err(format!("fastmerge engine error: {text}"))
        }
    }
}

/// Provider events -> folded message data, one per choice (`fastmerge.Aggregator`'s engine).
#[pyclass(module = "fastmerge._fastmerge")]
pub struct AggregatorCore {
    core: Core,
    /// the JSON text of the event object being read ([`Writer`]), kept between events
    text: Vec<u8>,
    /// the SDK model classes met ([`ModelClass`])
    classes: ClassCache,
}

impl AggregatorCore {
    /// The bytes of `data`, borrowed, not copied: a `bytes` object (and a `str`'s UTF-8
    /// form, which the `str` keeps) is immutable and lives as long as the call's argument, so
    /// the engine may read it with the GIL released.
    fn text_bytes<'a>(
        py: Python<'_>,
        core: &Core,
        data: &'a Bound<'_, PyAny>,
    ) -> PyResult<&'a [u8]> {
        if let Ok(bytes) = data.cast::<PyBytes>() {
            return Ok(bytes.as_bytes());
        }
        if let Ok(text) = data.cast::<PyString>() {
            return match text.to_str() {
                Ok(text) => Ok(text.as_bytes()),
                Err(_) => Err(agg_error(
                    py,
                    AggError::Event {
                        event: core.count() + 1,
                        detail: LONE_SURROGATE.to_owned(),
                    },
                )),
            };
        }
        Err(wrong_type(py, "data", "str or bytes", data))
    }

    fn messages<'py>(
        py: Python<'py>,
        result: Result<Vec<Value>, AggError>,
    ) -> PyResult<Bound<'py, PyList>> {
        let values = result.map_err(|e| agg_error(py, e))?;
        let _pause = GcPause::new(py);
        let mut convert = ToPy::new(py);
        let list = PyList::empty(py);
        for value in &values {
            list.append(convert.message(value)?)?;
        }
        Ok(list)
    }
}

impl AggregatorCore {
    /// One event of [`AggregatorCore::add_events`].
    fn add_event(
        &mut self,
        py: Python<'_>,
        event: &Bound<'_, PyAny>,
        plain: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let exact_dict = event.is_exact_instance_of::<PyDict>();
        if !exact_dict {
            if event.is_instance_of::<PyString>() || event.is_instance_of::<PyBytes>() {
                return self.add_text(py, event);
            }
            if event.is_instance_of::<PyByteArray>() || event.is_instance_of::<PyMemoryView>() {
                let data = py.get_type::<PyBytes>().call1((event,))?;
                return self.add_text(py, &data);
            }
        }
        if exact_dict {
            // SAFETY: `event` is an exact dict held by the caller; the GIL is held.
            if let Some(result) = unsafe { self.add_delta_dict(event.as_ptr()) } {
                return result.map_err(|e| agg_error(py, e));
            }
        }
        if !exact_dict && !event.is_instance_of::<PyDict>() {
            if let Some(class) = self.classes.of(event)? {
                if let Some(result) = self.add_delta_model(&class, event)? {
                    return result.map_err(|e| agg_error(py, e));
                }
            }
        }
        let is_dict = exact_dict || event.is_instance_of::<PyDict>();
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        let written = if exact_dict {
            self.write(&mut text, event, false)?
        } else if is_dict {
            false
        } else {
            self.write(&mut text, event, true)?
        };
        let result = if written {
            self.add_json(py, &text)
        } else if is_dict {
            self.add(py, event)
        } else {
            let value = plain.call1((event,))?;
            text.clear();
            if value.is_exact_instance_of::<PyDict>() && self.write(&mut text, &value, false)? {
                self.add_json(py, &text)
            } else {
                self.add(py, &value)
            }
        };
        self.text = text;
        result
    }

    /// A delta event held as an exact dict of exactly the keys `type`, `index`, `delta` (an
    /// exact str, an exact int of 64 bits, an exact dict of exactly `type` and one more key,
    /// both exact strs with UTF-8 forms), read by the engine's typed reading of its fields
    /// ([`Core::add_fast_delta`]), without writing its JSON text: the result that text would
    /// give. None, with nothing done, for anything else (then the caller writes the text).
    ///
    /// # Safety
    /// `event` is a live exact dict held by the caller, and the GIL is held. Keys and items are
    /// borrowed from the dicts, and no Python code runs while they are read and used.
    unsafe fn add_delta_dict(&mut self, event: *mut ffi::PyObject) -> Option<Result<(), AggError>> {
        if ffi::PyDict_Size(event) != 3 {
            return None;
        }
        let (mut event_type, mut index, mut delta) = (None, None, None);
        let mut pos: ffi::Py_ssize_t = 0;
        let mut key = std::ptr::null_mut();
        let mut item = std::ptr::null_mut();
        while ffi::PyDict_Next(event, &mut pos, &mut key, &mut item) != 0 {
            match utf8(key)? {
                "type" => event_type = Some(utf8(item)?),
                "index" => {
                    if ffi::PyLong_CheckExact(item) == 0 {
                        return None;
                    }
                    let mut overflow = 0;
                    // an exact int: the only failure is the overflow it reports
                    let number = ffi::PyLong_AsLongLongAndOverflow(item, &mut overflow);
                    if overflow != 0 {
                        return None;
                    }
                    index = Some(number);
                }
                "delta" => {
                    if ffi::PyDict_CheckExact(item) == 0 || ffi::PyDict_Size(item) != 2 {
                        return None;
                    }
                    delta = Some(item);
                }
                _ => return None,
            }
        }
        let (event_type, index, delta) = (event_type?, index?, delta?);
        let (mut delta_type, mut field) = (None, None);
        pos = 0;
        while ffi::PyDict_Next(delta, &mut pos, &mut key, &mut item) != 0 {
            let name = utf8(key)?;
            let value = utf8(item)?;
            if name == "type" {
                delta_type = Some(value);
            } else {
                field = Some((name, value));
            }
        }
        let (delta_type, (field, text)) = (delta_type?, field?);
        self.core
            .add_fast_delta(event_type, index, delta_type, field, text)
    }

    /// [`Self::add_delta_dict`] for an SDK model of the same fields: a model whose `to_dict()`
    /// is such a dict with a model for its delta, read from their attributes as [`Writer::model`]
    /// reads them (all fields set, in the class's order, and no extra field: else None).
    fn add_delta_model(
        &mut self,
        class: &ModelClass,
        event: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Result<(), AggError>>> {
        let Some(values) = model_values(class, event)? else {
            return Ok(None);
        };
        if values.len() != 3 {
            return Ok(None);
        }
        let (mut event_type, mut index, mut delta) = (None, None, None);
        // SAFETY: `values` is an exact dict held here; keys and items are borrowed from it
        // and no Python code runs while they are read (the delta is held by `delta`).
        unsafe {
            let mut pos: ffi::Py_ssize_t = 0;
            let mut key = std::ptr::null_mut();
            let mut item = std::ptr::null_mut();
            let mut at = 0;
            while ffi::PyDict_Next(values.as_ptr(), &mut pos, &mut key, &mut item) != 0 {
                match class.keys[at].as_str() {
                    "type" => event_type = Some(item),
                    "index" => {
                        if ffi::PyLong_CheckExact(item) == 0 {
                            return Ok(None);
                        }
                        let mut overflow = 0;
                        let number = ffi::PyLong_AsLongLongAndOverflow(item, &mut overflow);
                        if overflow != 0 {
                            return Ok(None);
                        }
                        index = Some(number);
                    }
                    "delta" => delta = Some(Bound::from_borrowed_ptr(event.py(), item)),
                    _ => return Ok(None),
                }
                at += 1;
            }
        }
        let (Some(event_type), Some(index), Some(delta)) = (event_type, index, delta) else {
            return Ok(None);
        };
        let Some(delta_class) = self.classes.of(&delta)? else {
            return Ok(None);
        };
        let Some(delta_values) = model_values(&delta_class, &delta)? else {
            return Ok(None);
        };
        if delta_values.len() != 2 {
            return Ok(None);
        }
        // SAFETY: `values` and `delta_values` are exact dicts held here; their items are
        // borrowed and no Python code runs until the engine has read them.
        unsafe {
            let Some(event_type) = utf8(event_type) else {
                return Ok(None);
            };
            let (mut delta_type, mut field) = (None, None);
            let mut pos: ffi::Py_ssize_t = 0;
            let mut key = std::ptr::null_mut();
            let mut item = std::ptr::null_mut();
            let mut at = 0;
            while ffi::PyDict_Next(delta_values.as_ptr(), &mut pos, &mut key, &mut item) != 0 {
                let name = delta_class.keys[at].as_str();
                let Some(value) = utf8(item) else {
                    return Ok(None);
                };
                if name == "type" {
                    delta_type = Some(value);
                } else {
                    field = Some((name, value));
                }
                at += 1;
            }
            let (Some(delta_type), Some((field, text))) = (delta_type, field) else {
                return Ok(None);
            };
            Ok(self
                .core
                .add_fast_delta(event_type, index, delta_type, field, text))
        }
    }

    /// The JSON text of `event` (an exact dict, or an SDK model with `models`) into `text`;
    /// false where [`Writer`] declines.
    fn write(
        &mut self,
        text: &mut Vec<u8>,
        event: &Bound<'_, PyAny>,
        models: bool,
    ) -> PyResult<bool> {
        let mut writer = Writer {
            py: event.py(),
            out: text,
            classes: &mut self.classes,
        };
        if models {
            return match writer.classes.of(event)? {
                Some(class) => writer.model(&class, event, 1),
                None => Ok(false),
            };
        }
        // SAFETY: `event` is held by the caller; the GIL is held.
        unsafe { writer.dict(event.as_ptr(), 1, false) }
    }

    /// The JSON text of one event object, as [`Writer`] wrote it.
    fn add_json(&mut self, py: Python<'_>, text: &[u8]) -> PyResult<()> {
        self.core.check_open().map_err(|e| agg_error(py, e))?;
        self.core.add_text(text).map_err(|e| agg_error(py, e))
    }
}

#[pymethods]
impl AggregatorCore {
    #[new]
    #[pyo3(
        signature = (provider = Arg::Default, strict = Arg::Default, signature_merge = Arg::Default, usage = Arg::Default),
        text_signature = "(provider='auto', strict=False, signature_merge='replace', usage='merge')"
    )]
    pub(crate) fn new<'py>(
        py: Python<'py>,
        provider: Arg<'py>,
        strict: Arg<'py>,
        signature_merge: Arg<'py>,
        usage: Arg<'py>,
    ) -> PyResult<Self> {
        let name = match &provider {
            Arg::Default => "auto".to_owned(),
            Arg::Given(obj) => match obj.cast::<PyString>() {
                Ok(text) if obj.get_type().is(py.get_type::<PyString>()) => {
                    text.to_str()?.to_owned()
                }
                _ => return Err(wrong_type(py, "provider", "a str", obj)),
            },
        };
        if name != "auto" && !PROVIDERS.contains(&name.as_str()) {
            let mut valid = vec!["auto"];
            valid.extend_from_slice(PROVIDERS);
            let given = match &provider {
                Arg::Given(obj) => obj.clone(),
                Arg::Default => PyString::new(py, "auto").into_any(),
            };
            return Err(invalid_option(py, "provider", &given, &valid));
        }
        let options = parse_options(py, &strict, &signature_merge, &usage)?;
        let provider = (name != "auto").then_some(name.as_str());
        let mut core = Core::new(provider, options);
        // a hidden switch for the differential tests from Python (tests/test_fastpath.py): the
        // fast and the generic path must agree
        core.set_fast_events(std::env::var_os("FASTMERGE_GENERIC_EVENTS").is_none());
        Ok(AggregatorCore {
            core,
            text: Vec::new(),
            classes: ClassCache::default(),
        })
    }

    /// The wire format being read (None until "auto" has seen an event).
    #[getter]
    fn provider(&self) -> Option<&'static str> {
        self.core.provider()
    }

    /// One event: a JSON object (a dict), checked and copied.
    fn add(&mut self, py: Python<'_>, event: &Bound<'_, PyAny>) -> PyResult<()> {
        self.core.check_open().map_err(|e| agg_error(py, e))?;
        let value = if event.is_instance_of::<PyDict>() {
            match to_value(event, 1) {
                Ok(value) => Ok(value),
                Err(ConvError::Data(err)) => Err(err),
                Err(ConvError::Py(err)) => return Err(err),
            }
        } else {
            Err(EventDataError(format!(
                "an event must be a JSON object, not {}",
                kind_name(event)?
            )))
        };
        self.core.add(value).map_err(|e| agg_error(py, e))
    }

    /// Events as `Aggregator.add` takes them (a list or a tuple of them), in order: a dict,
    /// an SDK object (`plain(event)` gives its dict: `to_dict()` or `model_dump()`), the text
    /// of one event or of whole SSE lines (str, bytes, bytearray, memoryview). A dict of plain
    /// JSON data, and an SDK model of plain data, is read as its JSON text would be (the
    /// fast paths of events from bytes, with their result); anything else as before, by
    /// `plain` and [`AggregatorCore::add`].
    fn add_events(
        &mut self,
        py: Python<'_>,
        events: &Bound<'_, PyAny>,
        plain: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        if let Ok(list) = events.cast_exact::<PyList>() {
            // by index: a list an SDK's dump could change is read as it is then
            let mut at = 0;
            while let Ok(event) = list.get_item(at) {
                self.add_event(py, &event, plain)?;
                at += 1;
            }
            return Ok(());
        }
        for event in events.try_iter()? {
            self.add_event(py, &event?, plain)?;
        }
        Ok(())
    }

    /// One item of text: the JSON of one event, a JSON array of events, or whole SSE lines.
    fn add_text(&mut self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        self.core.check_open().map_err(|e| agg_error(py, e))?;
        let raw = Self::text_bytes(py, &self.core, data)?;
        self.core.add_text(raw).map_err(|e| agg_error(py, e))
    }

    /// Raw transport bytes (SSE, JSON lines or a JSON array), split anywhere.
    fn feed(&mut self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        self.core.check_open().map_err(|e| agg_error(py, e))?;
        let raw = Self::text_bytes(py, &self.core, data)?;
        let core = &mut self.core;
        let result = py.detach(|| core.feed(raw));
        result.map_err(|e| agg_error(py, e))
    }

    /// The messages so far, one per choice in choice order.
    fn snapshot<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        Self::messages(py, self.core.snapshot())
    }

    /// The end of the stream: the complete messages, one per choice in choice order.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let core = &mut self.core;
        let result = py.detach(|| core.finish());
        Self::messages(py, result)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<AggregatorCore>()
}

// ---------------------------------------------------------------------------------------------
// Events held as Python objects, read as the JSON text they stand for

/// Deepest nesting [`Writer`] writes; deeper data takes [`to_value`] (which checks
/// [`MAX_JSON_DEPTH`] and says so).
const WRITE_DEPTH: usize = 64;

/// Writes the JSON text of an event held as Python objects, when it is plain JSON data:
/// exact `dict`s with exact `str` keys, exact `list`s and `tuple`s, exact `str`s (no lone
/// surrogate), `int`s of 64 bits, finite `float`s, `bool`s and `None` (and, with `models`,
/// the SDK models of [`ModelClass`], as their `to_dict()`). The text is what
/// `events::parse` reads back into exactly the value [`to_value`] makes of the object, so the
/// event takes the path of an event from bytes, fast paths included, with the same result by
/// construction. False (`out` partly written) for anything else: a subclass, a non-str key, a
/// big int, NaN, ..., which the caller reads with [`to_value`] as before (its value or its
/// error).
///
/// Containers and models are held (a reference each) while they are read; scalars are read
/// borrowed, and no Python code runs between their lookup and their use. Python code runs only
/// to work out a class the first time ([`ModelClass::read`]).
struct Writer<'a, 'py> {
    py: Python<'py>,
    out: &'a mut Vec<u8>,
    classes: &'a mut ClassCache,
}

impl Writer<'_, '_> {
    /// The object at `ptr`, alive for the call (held by the caller or a container it holds).
    ///
    /// # Safety
    /// `ptr` is a live object and the GIL is held.
    unsafe fn value(
        &mut self,
        ptr: *mut ffi::PyObject,
        depth: usize,
        models: bool,
    ) -> PyResult<bool> {
        let out = &mut *self.out;
        if ptr == ffi::Py_None() {
            out.extend_from_slice(b"null");
            return Ok(true);
        }
        if ffi::PyUnicode_CheckExact(ptr) != 0 {
            return Ok(write_str(out, ptr));
        }
        if ffi::PyLong_CheckExact(ptr) != 0 {
            let mut overflow = 0;
            // an exact int: the only failure is the overflow it reports
            let number = ffi::PyLong_AsLongLongAndOverflow(ptr, &mut overflow);
            if overflow != 0 {
                return Ok(false);
            }
            return Ok(serde_json::to_writer(&mut *out, &number).is_ok());
        }
        if ptr == ffi::Py_True() {
            out.extend_from_slice(b"true");
            return Ok(true);
        }
        if ptr == ffi::Py_False() {
            out.extend_from_slice(b"false");
            return Ok(true);
        }
        if ffi::PyFloat_CheckExact(ptr) != 0 {
            let number = ffi::PyFloat_AsDouble(ptr);
            if !number.is_finite() {
                return Ok(false);
            }
            // the shortest text that reads back as this float, with a '.' or an exponent
            // (never read as an int)
            return Ok(serde_json::to_writer(&mut *out, &number).is_ok());
        }
        if depth > WRITE_DEPTH {
            return Ok(false);
        }
        let held = Bound::from_borrowed_ptr(self.py, ptr);
        if ffi::PyDict_CheckExact(ptr) != 0 {
            return self.dict(ptr, depth, models);
        }
        if ffi::PyList_CheckExact(ptr) != 0 || ffi::PyTuple_CheckExact(ptr) != 0 {
            let list = ffi::PyList_CheckExact(ptr) != 0;
            self.out.push(b'[');
            let mut at: ffi::Py_ssize_t = 0;
            loop {
                // the length read again at each item: a list changed meanwhile is read safely
                let len = if list {
                    ffi::PyList_Size(ptr)
                } else {
                    ffi::PyTuple_Size(ptr)
                };
                if at >= len {
                    break;
                }
                let item = if list {
                    ffi::PyList_GetItem(ptr, at)
                } else {
                    ffi::PyTuple_GetItem(ptr, at)
                };
                if item.is_null() {
                    return Err(PyErr::fetch(self.py));
                }
                if at > 0 {
                    self.out.push(b',');
                }
                if !self.value(item, depth + 1, models)? {
                    return Ok(false);
                }
                at += 1;
            }
            self.out.push(b']');
            return Ok(true);
        }
        if models {
            if let Some(class) = self.classes.of(&held)? {
                return self.model(&class, &held, depth);
            }
        }
        Ok(false)
    }

    /// An exact dict.
    ///
    /// # Safety
    /// `ptr` is a live exact dict, held by the caller, and the GIL is held.
    unsafe fn dict(
        &mut self,
        ptr: *mut ffi::PyObject,
        depth: usize,
        models: bool,
    ) -> PyResult<bool> {
        self.out.push(b'{');
        let mut pos: ffi::Py_ssize_t = 0;
        let mut key = std::ptr::null_mut();
        let mut item = std::ptr::null_mut();
        let mut first = true;
        // key and item borrowed: the key is written before anything else runs, the item is
        // held by its own reading if it is a container
        while ffi::PyDict_Next(ptr, &mut pos, &mut key, &mut item) != 0 {
            if ffi::PyUnicode_CheckExact(key) == 0 {
                return Ok(false);
            }
            if !first {
                self.out.push(b',');
            }
            first = false;
            if !write_str(self.out, key) {
                return Ok(false);
            }
            self.out.push(b':');
            if !self.value(item, depth + 1, models)? {
                return Ok(false);
            }
        }
        self.out.push(b'}');
        Ok(true)
    }

    /// An instance of an SDK model class: what its `to_dict()` gives (see [`ModelClass`]).
    fn model(
        &mut self,
        class: &ModelClass,
        obj: &Bound<'_, PyAny>,
        depth: usize,
    ) -> PyResult<bool> {
        let py = self.py;
        let Some((values, set, extra)) = model_state(obj)? else {
            return Ok(false);
        };
        let extras = extra.as_ref().map_or(0, |e| e.len());
        self.out.push(b'{');
        let mark = self.out.len();
        let mut first = true;
        // every field set (the usual event: the API sent them all) and the values in the
        // class's order, as pydantic stores them: read in one pass over the values
        let all_set = values.len() == class.fields.len() && set.len() == values.len() + extras;
        // SAFETY (both branches): `values` is an exact dict held here; keys and items are
        // borrowed from it and read before anything else runs (an item that is a container
        // or a model is held by its own reading).
        let mut whole = all_set;
        if all_set {
            let mut pos: ffi::Py_ssize_t = 0;
            let mut key = std::ptr::null_mut();
            let mut item = std::ptr::null_mut();
            let mut fields = class.fields.iter();
            while unsafe { ffi::PyDict_Next(values.as_ptr(), &mut pos, &mut key, &mut item) } != 0 {
                let Some((name, text)) = fields.next() else {
                    whole = false;
                    break;
                };
                if key != name.as_ptr() {
                    whole = false; // not the class's own name object: the lookups below
                    break;
                }
                if !first {
                    self.out.push(b',');
                }
                first = false;
                self.out.extend_from_slice(text);
                if !unsafe { self.value(item, depth + 1, true) }? {
                    return Ok(false);
                }
            }
            if !whole {
                self.out.truncate(mark);
                first = true;
            }
        }
        if !whole {
            for (name, text) in &class.fields {
                // SAFETY: live set and name; -1 sets an exception.
                match unsafe { ffi::PySet_Contains(set.as_ptr(), name.as_ptr()) } {
                    0 => continue,
                    -1 => return Err(PyErr::fetch(py)),
                    _ => {}
                }
                let Some(item) = values.get_item(name.bind(py))? else {
                    return Ok(false);
                };
                if !first {
                    self.out.push(b',');
                }
                first = false;
                self.out.extend_from_slice(text);
                if !unsafe { self.value(item.as_ptr(), depth + 1, true) }? {
                    return Ok(false);
                }
            }
        }
        if let Some(extra) = extra {
            for (key, item) in extra.iter() {
                let Ok(key) = key.cast_exact::<PyString>() else {
                    return Ok(false);
                };
                let Ok(text) = key.to_str() else {
                    return Ok(false);
                };
                // a key the fields have too: a dict keeps one, JSON text would hold two
                if class.keys.iter().any(|k| k == text) {
                    return Ok(false);
                }
                if !first {
                    self.out.push(b',');
                }
                first = false;
                write_escaped(self.out, text.as_bytes());
                self.out.push(b':');
                if !unsafe { self.value(item.as_ptr(), depth + 1, true) }? {
                    return Ok(false);
                }
            }
        }
        self.out.push(b'}');
        Ok(true)
    }
}

/// A pydantic model's stored state: its values (`__dict__`), the names of the fields set and
/// its extra fields, as `object.__getattribute__` finds them (the SDKs' classes define no
/// `__getattribute__`; pydantic's `__getattr__` serves only what is not found). None when one
/// is not of the exact type pydantic keeps there.
#[allow(clippy::type_complexity)]
fn model_state<'py>(
    obj: &Bound<'py, PyAny>,
) -> PyResult<
    Option<(
        Bound<'py, PyDict>,
        Bound<'py, PySet>,
        Option<Bound<'py, PyDict>>,
    )>,
> {
    let py = obj.py();
    let attribute = |name: &Bound<'_, PyString>| -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: live objects; a new reference or NULL with an exception set.
        unsafe {
            Bound::from_owned_ptr_or_err(
                py,
                ffi::PyObject_GenericGetAttr(obj.as_ptr(), name.as_ptr()),
            )
        }
    };
    let values = attribute(intern!(py, "__dict__"))?;
    let set = attribute(intern!(py, "__pydantic_fields_set__"))?;
    let extra = attribute(intern!(py, "__pydantic_extra__"))?;
    let (Ok(values), Ok(set)) = (values.cast_exact::<PyDict>(), set.cast_exact::<PySet>()) else {
        return Ok(None);
    };
    let extra = match extra.cast_exact::<PyDict>() {
        Ok(extra) => Some(extra.clone()),
        Err(_) if extra.is_none() => None,
        Err(_) => return Ok(None),
    };
    Ok(Some((values.clone(), set.clone(), extra)))
}

/// The values of an instance of `class` (its `__dict__`, an exact dict) when its `to_dict()`
/// is exactly them, in order, under the class's keys: every field set, stored in the class's
/// order under the class's own name objects, and no extra field (the case [`Writer::model`]
/// reads in one pass). None for anything else.
fn model_values<'py>(
    class: &ModelClass,
    obj: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some((values, set, extra)) = model_state(obj)? else {
        return Ok(None);
    };
    let extras = extra.as_ref().map_or(0, |e| e.len());
    if extras != 0 || values.len() != class.fields.len() || set.len() != values.len() {
        return Ok(None);
    }
    let mut pos: ffi::Py_ssize_t = 0;
    let mut key = std::ptr::null_mut();
    let mut item = std::ptr::null_mut();
    let mut fields = class.fields.iter();
    // SAFETY: `values` is an exact dict held here; only the keys' addresses are compared.
    while unsafe { ffi::PyDict_Next(values.as_ptr(), &mut pos, &mut key, &mut item) } != 0 {
        match fields.next() {
            Some((name, _)) if key == name.as_ptr() => {}
            _ => return Ok(None),
        }
    }
    Ok(Some(values.clone()))
}

/// The UTF-8 form of an exact str, borrowed from it (CPython caches it in the str); None for
/// anything else or a lone surrogate (no UTF-8 form).
///
/// # Safety
/// `ptr` is a live object that outlives the returned text, and the GIL is held.
unsafe fn utf8<'a>(ptr: *mut ffi::PyObject) -> Option<&'a str> {
    if ffi::PyUnicode_CheckExact(ptr) == 0 {
        return None;
    }
    let mut size: ffi::Py_ssize_t = 0;
    let data = ffi::PyUnicode_AsUTF8AndSize(ptr, &mut size);
    if data.is_null() {
        ffi::PyErr_Clear();
        return None;
    }
    // CPython's UTF-8 form of a str is valid UTF-8
    Some(std::str::from_utf8_unchecked(std::slice::from_raw_parts(
        data.cast::<u8>(),
        size as usize,
    )))
}

/// A str as a JSON string; false for a lone surrogate (no UTF-8 form).
fn write_str(out: &mut Vec<u8>, ptr: *mut ffi::PyObject) -> bool {
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: `ptr` is a live str the caller holds; the UTF-8 form CPython returns is cached
    // in it and lives as long as it. NULL (a lone surrogate) sets an exception, cleared here.
    let text = unsafe {
        let data = ffi::PyUnicode_AsUTF8AndSize(ptr, &mut size);
        if data.is_null() {
            ffi::PyErr_Clear();
            return false;
        }
        std::slice::from_raw_parts(data.cast::<u8>(), size as usize)
    };
    write_escaped(out, text);
    true
}

/// `text` (UTF-8) as a JSON string: `"` and `\` escaped, control characters as `\u00XX`.
fn write_escaped(out: &mut Vec<u8>, text: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(text.len() + 2);
    out.push(b'"');
    let mut start = 0;
    for (at, &byte) in text.iter().enumerate() {
        if byte >= 0x20 && byte != b'"' && byte != b'\\' {
            continue;
        }
        out.extend_from_slice(&text[start..at]);
        match byte {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            _ => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ]),
        }
        start = at + 1;
    }
    out.extend_from_slice(&text[start..]);
    out.push(b'"');
}

/// A provider SDK's model class (openai's and anthropic's generated pydantic models), read
/// from its instances' attributes as its `to_dict()` (`model_dump(by_alias=True,
/// exclude_unset=True)`, what `fastmerge.aggregate._plain` calls) would give them: the fields
/// that were set, in the class's order, under their API names, then the extra fields the API
/// sent (`__pydantic_extra__`), which the dump always includes. Only classes whose dump is
/// that and nothing else qualify: defined in the SDK's own `types` package, neither
/// `to_dict` nor `model_dump` overridden, no serializer, computed or excluded field. A value
/// that is not plain data (a datetime, an enum, ...) makes the writer decline: `to_dict()`
/// reads the event then.
struct ModelClass {
    /// each field's attribute name, and its key as JSON text (`"name":`)
    fields: Vec<(Py<PyString>, Vec<u8>)>,
    /// each field's key
    keys: Vec<String>,
}

/// The classes seen, by type (the type kept alive, so its address is never reused): None
/// for a class that does not qualify. Never shrinks: an entry's type lives as long as the
/// process.
type ModelClasses = Vec<(Py<PyType>, Option<Arc<ModelClass>>)>;

static MODEL_CLASSES: std::sync::Mutex<ModelClasses> = std::sync::Mutex::new(Vec::new());

/// How many classes [`MODEL_CLASSES`] keeps (an SDK stream has a dozen or so).
const MODEL_CLASSES_MAX: usize = 1024;

/// An aggregator's classes of [`MODEL_CLASSES`] by the address of their type (those entries
/// keep their types alive: no address is reused).
#[derive(Default)]
struct ClassCache(Vec<(usize, Option<Arc<ModelClass>>)>);

impl ClassCache {
    /// The class of `obj` if it qualifies (worked out once per class).
    fn of(&mut self, obj: &Bound<'_, PyAny>) -> PyResult<Option<Arc<ModelClass>>> {
        let kind = obj.get_type();
        let address = kind.as_ptr() as usize;
        if let Some((_, class)) = self.0.iter().find(|(a, _)| *a == address) {
            return Ok(class.clone());
        }
        let (class, kept) = ModelClass::of(&kind)?;
        if kept {
            self.0.push((address, class.clone()));
        }
        Ok(class)
    }
}

impl ModelClass {
    /// The class `kind` if it qualifies, and whether [`MODEL_CLASSES`] keeps it.
    fn of(kind: &Bound<'_, PyType>) -> PyResult<(Option<Arc<ModelClass>>, bool)> {
        let py = kind.py();
        {
            // never held while Python code runs (another thread could then wait on it with
            // the GIL held)
            let known = MODEL_CLASSES.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((_, class)) = known.iter().find(|(k, _)| k.bind(py).is(kind)) {
                return Ok((class.clone(), true));
            }
        }
        let class = Self::read(kind)?.map(Arc::new);
        let mut known = MODEL_CLASSES.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, class)) = known.iter().find(|(k, _)| k.bind(py).is(kind)) {
            return Ok((class.clone(), true));
        }
        if known.len() >= MODEL_CLASSES_MAX {
            return Ok((class, false));
        }
        known.push((kind.clone().unbind(), class.clone()));
        Ok((class, true))
    }

    fn read(kind: &Bound<'_, PyType>) -> PyResult<Option<ModelClass>> {
        let py = kind.py();
        let module: String = match kind.getattr("__module__").and_then(|m| m.extract()) {
            Ok(module) => module,
            Err(_) => return Ok(None),
        };
        let Some(sdk) = ["openai", "anthropic"]
            .into_iter()
            .find(|sdk| module.starts_with(&format!("{sdk}.types.")))
        else {
            return Ok(None);
        };
        // the SDK is imported (its object is here); its base and pydantic's are looked up,
        // never imported
        let modules = py.import("sys")?.getattr("modules")?;
        let (Ok(base), Ok(pydantic)) = (
            modules.get_item(format!("{sdk}._models")),
            modules.get_item("pydantic"),
        ) else {
            return Ok(None);
        };
        let Ok(base) = base.getattr("BaseModel")?.cast_into::<PyType>() else {
            return Ok(None);
        };
        let pydantic = pydantic.getattr("BaseModel")?;
        let object = py.get_type::<pyo3::types::PyAny>();
        let own =
            |name: &str| -> PyResult<bool> { Ok(kind.getattr(name)?.is(&object.getattr(name)?)) };
        if !kind.is_subclass(&base)?
            || !kind.getattr("to_dict")?.is(&base.getattr("to_dict")?)
            || !kind
                .getattr("model_dump")?
                .is(&pydantic.getattr("model_dump")?)
            || !own("__getattribute__")?
        {
            return Ok(None);
        }
        let decorators = kind.getattr("__pydantic_decorators__")?;
        for name in ["field_serializers", "model_serializers", "computed_fields"] {
            if decorators.getattr(name)?.len()? != 0 {
                return Ok(None);
            }
        }
        if kind
            .getattr("__pydantic_computed_fields__")
            .is_ok_and(|c| c.len().is_ok_and(|n| n != 0))
        {
            return Ok(None);
        }
        let declared = kind.getattr("__pydantic_fields__")?;
        let Ok(declared) = declared.cast::<PyDict>() else {
            return Ok(None);
        };
        let mut fields = Vec::new();
        let mut keys = Vec::new();
        for (name, info) in declared.iter() {
            let Ok(name) = name.cast_into::<PyString>() else {
                return Ok(None);
            };
            if info.getattr("exclude")?.is_truthy()? {
                return Ok(None);
            }
            let mut key = name.clone().into_any();
            for alias in ["serialization_alias", "alias"] {
                let given = info.getattr(alias)?;
                if !given.is_none() {
                    key = given;
                    break;
                }
            }
            let Ok(key) = key.cast::<PyString>() else {
                return Ok(None);
            };
            let key = key.to_str()?.to_owned();
            let mut text = Vec::new();
            write_escaped(&mut text, key.as_bytes());
            text.push(b':');
            fields.push((name.unbind(), text));
            keys.push(key);
        }
        Ok(Some(ModelClass { fields, keys }))
    }
}
