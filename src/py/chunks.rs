//! `ChunkCore` and `fold_chunks`: the binding of `crate::engine::chunks` (the rules live
//! there). The twin is `python/fastmerge/_pure/chunks.py`: a chunk is a leaf, or a view
//! `(accumulator, n)` on the leaves folded so far; `acc + chunk` on the newest view folds in
//! place, anything else starts a new accumulator (see the twin's module docstring).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use smallvec::{smallvec, SmallVec};

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::impl_::pymethods::tp_new_impl;
use pyo3::prelude::*;
use pyo3::pyclass_init::PyClassInitializer;
use pyo3::sync::MutexExt;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PyString, PyTuple, PyType};

use crate::engine::chunks::{self, Family, Leaf, Options, State, FAMILIES};
use crate::engine::error::OptionError;
use crate::py::args::Arg;
use crate::py::errors::{cannot_add, invalid_option, wrong_type};
use crate::py::host::{PyObj, PyStoreHost};

type PyLeaf = Leaf<PyObj, PyErr>;

/// A leaf chunk, as an accumulator keeps it: the chunk object itself, whose parsed leaf it
/// reads (keeping the object, not an `Arc` of its leaf, spares `+` a read of memory the chunk
/// does not hold: the objects of a long stream do not all fit in the CPU caches).
struct LeafRef(Py<ChunkCore>);

impl LeafRef {
    fn leaf(&self) -> PyResult<&Arc<PyLeaf>> {
        self.0
            .get()
            .inner
            .get()
            .and_then(Inner::leaf)
            .ok_or_else(|| {
                PyRuntimeError::new_err("an accumulator holds a chunk that is not a leaf")
            })
    }

    fn clone_ref(&self, py: Python<'_>) -> LeafRef {
        LeafRef(self.0.clone_ref(py))
    }
}

fn clone_refs(py: Python<'_>, leaves: &[LeafRef]) -> Vec<LeafRef> {
    leaves.iter().map(|leaf| leaf.clone_ref(py)).collect()
}

/// The state after the first `folded` leaves of an accumulator (`None` after a failed fold).
struct AccData {
    folded: usize,
    state: Option<State<PyObj>>,
}

/// An accumulator shared by the views on it.
struct Shared {
    options: Options,
    acc: Mutex<AccData>,
    /// The leaves, apart from the state: a `+` or a read re-entered from the Python code that
    /// a fold runs (a key's `__hash__`) copies them while the fold holds `acc`.
    leaves: Mutex<Vec<LeafRef>>,
    /// The thread ([`thread_token`]) that holds `acc` while running Python code (a fold, a
    /// read), 0 if none: that thread coming back must not wait for itself.
    holder: AtomicU64,
}

impl Shared {
    fn new(options: Options, leaves: Vec<LeafRef>, state: State<PyObj>) -> Shared {
        Shared {
            options,
            acc: Mutex::new(AccData {
                folded: leaves.len(),
                state: Some(state),
            }),
            leaves: Mutex::new(leaves),
            holder: AtomicU64::new(0),
        }
    }

    /// Whether this thread holds `acc` further up its stack (the twin's `acc.busy`): a
    /// re-entrant `+` or read then works on a copy, as the twin's does.
    fn reentered(&self) -> bool {
        self.holder.load(Ordering::Acquire) == thread_token()
    }

    /// `run` with `acc` marked as held by this thread.
    fn holding<T>(&self, run: impl FnOnce() -> T) -> T {
        self.holder.store(thread_token(), Ordering::Release);
        let result = run();
        self.holder.store(0, Ordering::Release);
        result
    }
}

/// A number unique to the calling thread (never 0).
fn thread_token() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static TOKEN: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    TOKEN.with(|token| *token)
}

enum View {
    Leaf(Arc<PyLeaf>),
    /// The first `n` leaves of an accumulator.
    Acc(Arc<Shared>, usize),
}

struct Inner {
    family: Family,
    /// The family as given to `_init` (what `_data()["family"]` is).
    family_obj: PyObj,
    view: View,
    /// A leaf's [`Leaf::bare_text`], kept here so `acc + chunk` reads it from the chunk itself.
    bare_text: Option<(PyObj, bool)>,
}

/// Base of the chunk classes: a leaf or a view on an accumulator; `+` folds.
///
/// Subclasses call `_init(family, leaf)` once from their constructor; `+` makes instances of
/// the left operand's class without running its `__init__`.
#[pyclass(subclass, frozen, module = "fastmerge._fastmerge")]
pub struct ChunkCore {
    inner: OnceLock<Inner>,
    cache: OnceLock<Py<PyAny>>,
    finished: OnceLock<Py<PyAny>>,
}

fn lock<'a, T>(py: Python<'_>, mutex: &'a Mutex<T>) -> PyResult<MutexGuard<'a, T>> {
    // Waits with the GIL released, so a thread holding the lock can finish.
    mutex
        .lock_py_attached(py)
        .map_err(|_| PyRuntimeError::new_err("chunk accumulator poisoned by an earlier panic"))
}

fn not_initialised() -> PyErr {
    PyTypeError::new_err("chunk not initialised")
}

impl Inner {
    /// The leaves of a leaf chunk without a copy (the common right operand of `+`).
    fn leaf(&self) -> Option<&Arc<PyLeaf>> {
        match &self.view {
            View::Leaf(leaf) => Some(leaf),
            View::Acc(..) => None,
        }
    }

    /// The twin's `_leaves()`; `chunk` is the chunk whose `Inner` this is.
    fn leaves(&self, chunk: &Bound<'_, ChunkCore>) -> PyResult<Vec<LeafRef>> {
        match &self.view {
            View::Leaf(_) => Ok(vec![LeafRef(chunk.clone().unbind())]),
            View::Acc(shared, n) => {
                let py = chunk.py();
                let leaves = lock(py, &shared.leaves)?;
                Ok(clone_refs(py, &leaves[..(*n).min(leaves.len())]))
            }
        }
    }

    fn options(&self) -> Options {
        match &self.view {
            View::Leaf(_) => Options::DEFAULT,
            View::Acc(shared, _) => shared.options,
        }
    }
}

/// Fold `leaves` into the state of `shared` (`data`, its locked `acc`); a failed fold leaves
/// no state to read or extend.
fn fold_leaves(
    host: &PyStoreHost<'_>,
    shared: &Shared,
    data: &mut AccData,
    leaves: &[LeafRef],
) -> PyResult<()> {
    let Some(state) = data.state.as_mut() else {
        return Err(PyRuntimeError::new_err("chunk accumulator has no state"));
    };
    if let Err(err) = shared.holding(|| fold_into(host, state, leaves)) {
        data.state = None;
        return Err(err);
    }
    append(host.py, shared, data, leaves)
}

fn fold_into(host: &PyStoreHost<'_>, state: &mut State<PyObj>, leaves: &[LeafRef]) -> PyResult<()> {
    for leaf in leaves {
        chunks::fold(host, state, leaf.leaf()?)?;
    }
    Ok(())
}

/// Record `leaves` as folded into `data`, the locked `acc` of `shared`.
fn append(py: Python<'_>, shared: &Shared, data: &mut AccData, leaves: &[LeafRef]) -> PyResult<()> {
    let mut all = lock(py, &shared.leaves)?;
    all.extend(leaves.iter().map(|leaf| leaf.clone_ref(py)));
    data.folded = all.len();
    Ok(())
}

fn replay(
    host: &PyStoreHost<'_>,
    inner: &Inner,
    leaves: &[LeafRef],
    options: Options,
) -> PyResult<State<PyObj>> {
    let mut state = State::new(host, inner.family, inner.family_obj.clone(), options);
    for leaf in leaves {
        chunks::fold(host, &mut state, leaf.leaf()?)?;
    }
    Ok(state)
}

/// A chunk of class `cls` (a subclass maybe) reading `shared` as it is now, made without
/// running `cls.__init__`.
fn view<'py>(
    py: Python<'py>,
    cls: &Bound<'py, PyType>,
    inner: &Inner,
    shared: Arc<Shared>,
    n: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let core = ChunkCore {
        inner: OnceLock::from(Inner {
            family: inner.family,
            family_obj: inner.family_obj.clone(),
            view: View::Acc(shared, n),
            bare_text: None,
        }),
        cache: OnceLock::new(),
        finished: OnceLock::new(),
    };
    // SAFETY: `cls` is the type of a live ChunkCore instance: ChunkCore or a subclass.
    let ptr = unsafe { tp_new_impl(py, PyClassInitializer::from(core), cls.as_type_ptr())? };
    // SAFETY: tp_new_impl returned a new reference to a live object.
    Ok(unsafe { Bound::from_owned_ptr(py, ptr) })
}

/// `slf + other` with fold options (None: `slf`'s own, else the defaults).
fn add<'py>(
    slf: &Bound<'py, ChunkCore>,
    other: &Bound<'py, PyAny>,
    options: Option<Options>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let inner = slf.get().inner.get().ok_or_else(not_initialised)?;
    let cls = slf.get_type();
    let other_core = other.cast::<ChunkCore>().ok().filter(|o| {
        o.get()
            .inner
            .get()
            .is_some_and(|o| inner.family.accepts(o.family))
    });
    let Some((other_core, other_inner)) = other_core.and_then(|o| Some((o, o.get().inner.get()?)))
    else {
        return Err(cannot_add(py, &cls.name()?.into_any(), other));
    };
    let new_leaves: SmallVec<[LeafRef; 1]> = match &other_inner.view {
        View::Leaf(_) => smallvec![LeafRef(other_core.clone().unbind())],
        View::Acc(..) => other_inner.leaves(other_core)?.into(),
    };
    let host = PyStoreHost { py };
    let options = options.unwrap_or_else(|| inner.options());
    if let View::Acc(shared, n) = &inner.view {
        if shared.options == options && !shared.reentered() {
            let mut data = lock(py, &shared.acc)?;
            if data.state.is_some() && data.folded == *n {
                // the newest view: extend in place
                let appended = match (&other_inner.bare_text, data.state.as_mut()) {
                    (Some((text, reasoning)), Some(state)) => {
                        chunks::append_bare_text(state, text, *reasoning)
                    }
                    _ => false,
                };
                if appended {
                    append(py, shared, &mut data, &new_leaves)?;
                } else {
                    fold_leaves(&host, shared, &mut data, &new_leaves)?;
                }
                let n = data.folded;
                drop(data);
                return view(py, &cls, inner, shared.clone(), n);
            }
        }
    }
    // a leaf, an older view, other options, or a `+` re-entered from the fold of this
    // accumulator: a new accumulator from this chunk's leaves
    let (mut leaves, mut state) = start(slf, inner, options)?;
    fold_into(&host, &mut state, &new_leaves)?;
    leaves.extend(new_leaves.iter().map(|leaf| leaf.clone_ref(py)));
    share(py, &cls, inner, options, leaves, state)
}

/// A view of `chunk`'s leaves folded with `options` (strict raises here).
fn restart<'py>(chunk: &Bound<'py, ChunkCore>, options: Options) -> PyResult<Bound<'py, PyAny>> {
    let inner = chunk.get().inner.get().ok_or_else(not_initialised)?;
    let (leaves, state) = start(chunk, inner, options)?;
    share(chunk.py(), &chunk.get_type(), inner, options, leaves, state)
}

/// The leaves of `chunk` (whose `Inner` is `inner`) folded anew with `options`.
fn start(
    chunk: &Bound<'_, ChunkCore>,
    inner: &Inner,
    options: Options,
) -> PyResult<(Vec<LeafRef>, State<PyObj>)> {
    let leaves = inner.leaves(chunk)?;
    let state = replay(&PyStoreHost { py: chunk.py() }, inner, &leaves, options)?;
    Ok((leaves, state))
}

/// A chunk of class `cls` reading all of `leaves` folded into `state`, a new accumulator.
fn share<'py>(
    py: Python<'py>,
    cls: &Bound<'py, PyType>,
    inner: &Inner,
    options: Options,
    leaves: Vec<LeafRef>,
    state: State<PyObj>,
) -> PyResult<Bound<'py, PyAny>> {
    let n = leaves.len();
    view(
        py,
        cls,
        inner,
        Arc::new(Shared::new(options, leaves, state)),
        n,
    )
}

#[pymethods]
impl ChunkCore {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> Self {
        ChunkCore {
            inner: OnceLock::new(),
            cache: OnceLock::new(),
            finished: OnceLock::new(),
        }
    }

    /// Make this chunk the leaf `leaf` of `family` (once).
    fn _init(&self, family: &Bound<'_, PyAny>, leaf: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = family.py();
        if self.inner.get().is_some() {
            return Err(PyTypeError::new_err(
                "a chunk is immutable: _init may be called only once",
            ));
        }
        let parsed_family = family
            .cast::<PyString>()
            .ok()
            .and_then(|text| text.to_str().ok())
            .and_then(Family::parse);
        let Some(parsed_family) = parsed_family else {
            return Err(invalid_option(py, "family", family, FAMILIES));
        };
        if !leaf.is_exact_instance_of::<PyDict>() {
            return Err(wrong_type(py, "leaf", "a dict", leaf));
        }
        let host = PyStoreHost { py };
        let parsed = Leaf::parse(&host, parsed_family, PyObj::from(leaf.clone()));
        let bare_text = parsed
            .bare_text(parsed_family)
            .map(|(text, reasoning)| (text.clone(), reasoning));
        let inner = Inner {
            family: parsed_family,
            family_obj: PyObj::from(family.clone()),
            view: View::Leaf(Arc::new(parsed)),
            bare_text,
        };
        self.inner.set(inner).map_err(|_| {
            PyTypeError::new_err("a chunk is immutable: _init may be called only once")
        })
    }

    /// The leaf dicts this chunk is the fold of.
    fn _leaves<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let py = slf.py();
        let inner = slf.get().inner.get().ok_or_else(not_initialised)?;
        let mut dicts = Vec::new();
        for leaf in inner.leaves(slf)? {
            dicts.push(leaf.leaf()?.obj.bind(py).clone());
        }
        PyList::new(py, dicts)
    }

    fn __add__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        add(slf, other, None)
    }

    /// `0 + chunk` is the chunk, so `sum(chunks)` works without a start value.
    fn __radd__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        if other.is_exact_instance_of::<PyInt>() && other.extract::<i64>().is_ok_and(|v| v == 0) {
            return Ok(slf.clone().into_any());
        }
        Ok(py.NotImplemented().into_bound(py))
    }

    /// The chunk's fields as plain data (cached); `finish` applies end-of-stream rules.
    #[pyo3(signature = (finish = Arg::Default), text_signature = "($self, finish=False)")]
    fn _data<'py>(slf: &Bound<'py, Self>, finish: Arg<'py>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let this = slf.get();
        let finish = match finish {
            Arg::Default => false,
            Arg::Given(obj) => obj.is_truthy()?,
        };
        let cell = if finish { &this.finished } else { &this.cache };
        if let Some(data) = cell.get() {
            return Ok(data.clone_ref(py));
        }
        let inner = this.inner.get().ok_or_else(not_initialised)?;
        let host = PyStoreHost { py };
        let mut data = None;
        if let View::Acc(shared, n) = &inner.view {
            if !shared.reentered() {
                let guard = lock(py, &shared.acc)?;
                if let Some(state) = &guard.state {
                    if guard.folded == *n {
                        let read = shared.holding(|| chunks::materialize(&host, state, finish));
                        data = Some(read?);
                    }
                }
            }
        }
        let data = match data {
            Some(data) => data,
            None => {
                let leaves = inner.leaves(slf)?;
                let state = replay(&host, inner, &leaves, inner.options())?;
                chunks::materialize(&host, &state, finish)?
            }
        };
        let _ = cell.set(data.0);
        match cell.get() {
            Some(data) => Ok(data.clone_ref(py)),
            None => Err(PyRuntimeError::new_err("chunk data cache unset")),
        }
    }
}

/// The text of an exact `str` option, or the twin's `TypeError`.
fn option_text<'a, 'py>(
    py: Python<'py>,
    name: &str,
    arg: &'a Arg<'py>,
    default: &'static str,
) -> PyResult<std::borrow::Cow<'a, str>> {
    match arg {
        Arg::Default => Ok(std::borrow::Cow::Borrowed(default)),
        Arg::Given(obj) => match obj.cast_exact::<PyString>() {
            Ok(text) => Ok(text.to_cow().unwrap_or(std::borrow::Cow::Borrowed("\u{0}"))),
            Err(_) => Err(wrong_type(py, name, "a str", obj)),
        },
    }
}

pub(crate) fn parse_options<'py>(
    py: Python<'py>,
    strict: &Arg<'py>,
    signature_merge: &Arg<'py>,
    usage: &Arg<'py>,
) -> PyResult<Options> {
    let strict = match strict {
        Arg::Default => false,
        Arg::Given(obj) => match obj.cast::<PyBool>() {
            Ok(flag) => flag.is_true(),
            Err(_) => return Err(wrong_type(py, "strict", "a bool", obj)),
        },
    };
    // The twin checks each option's type then its value, signature_merge first.
    let given = |arg: &Arg<'py>, default: &str| match arg {
        Arg::Given(obj) => obj.clone(),
        Arg::Default => PyString::new(py, default).into_any(),
    };
    let signature_text = option_text(py, "signature_merge", signature_merge, "replace")?;
    if let Err(OptionError::Invalid { name, valid }) =
        Options::parse(strict, &signature_text, "merge")
    {
        return Err(invalid_option(
            py,
            name,
            &given(signature_merge, "replace"),
            valid,
        ));
    }
    let usage_text = option_text(py, "usage", usage, "merge")?;
    Options::parse(strict, &signature_text, &usage_text).map_err(|err| match err {
        OptionError::Invalid { name, valid } => {
            invalid_option(py, name, &given(usage, "merge"), valid)
        }
        OptionError::RequiresDelta { name } => {
            invalid_option(py, name, &given(usage, "merge"), &[])
        }
    })
}

/// Fold message chunks left to right: `strict` raises the anomalies, `signature_merge` and
/// `usage` choose those rules; None if `chunks` is empty. The result keeps the options for
/// later `+`.
#[pyfunction]
#[pyo3(
    signature = (chunks, *, strict = Arg::Default, signature_merge = Arg::Default, usage = Arg::Default),
    text_signature = "(chunks, *, strict=False, signature_merge='replace', usage='merge')"
)]
fn fold_chunks<'py>(
    py: Python<'py>,
    chunks: &Bound<'py, PyAny>,
    strict: Arg<'py>,
    signature_merge: Arg<'py>,
    usage: Arg<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    let options = parse_options(py, &strict, &signature_merge, &usage)?;
    let mut result: Option<Bound<'py, PyAny>> = None;
    for chunk in chunks.try_iter()? {
        let chunk = chunk?;
        result = Some(match result {
            None => {
                let core = chunk
                    .cast::<ChunkCore>()
                    .ok()
                    .filter(|c| c.get().inner.get().is_some());
                let Some(core) = core else {
                    return Err(wrong_type(
                        py,
                        "chunks",
                        "an iterable of message chunks",
                        &chunk,
                    ));
                };
                if options != Options::DEFAULT {
                    restart(core, options)?
                } else {
                    chunk
                }
            }
            Some(acc) => add(acc.cast::<ChunkCore>()?, &chunk, Some(options))?,
        });
    }
    Ok(result.unwrap_or_else(|| py.None().into_bound(py)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ChunkCore>()?;
    m.add_function(wrap_pyfunction!(fold_chunks, m)?)?;
    Ok(())
}
