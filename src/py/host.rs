//! The engine's [`Host`] for Python objects: each method is the one CPython operation the
//! twin performs at that point (`+`, `dict.copy()`, `key in d`, `hash`, `==`, ...), so both
//! backends run the same operations on the same objects. No merge rule lives here.

use std::borrow::Cow;

use pyo3::exceptions::{PyException, PyNotImplementedError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use pyo3::{ffi, intern};

use crate::engine::error::EngineError;
use crate::engine::host::{Class, Host, Kind, Pairs};
use crate::py::errors::engine_error;

/// `key, value = item` as a Python function: the unpacking of the twin's
/// `for key, value in d.items()`, with its errors and their messages (which vary by version).
fn unpack_pair(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static UNPACK: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let function = UNPACK.get_or_try_init(py, || {
        let code = c"def unpack_pair(item):\n    key, value = item\n    return key, value\n";
        let module = PyModule::from_code(py, code, c"<fastmerge>", c"fastmerge._unpack")?;
        Ok::<_, PyErr>(module.getattr("unpack_pair")?.unbind())
    })?;
    Ok(function.bind(py))
}

/// The items of an exact dict, in order: `PyDict_Next` directly (the iterator's per-item
/// size check guards against a dict changed while it runs, and nothing runs here).
fn exact_dict_items<'py>(dict: &Bound<'py, PyAny>) -> Pairs<Bound<'py, PyAny>> {
    let py = dict.py();
    let ptr = dict.as_ptr();
    // SAFETY: `ptr` is a live exact dict, held by `dict` for the whole loop; no Python code
    // runs between the calls (the GIL is held, nothing is called back), so the position
    // stays valid, and each borrowed key and value is owned (`from_borrowed_ptr`) at once.
    unsafe {
        let mut pairs = Vec::with_capacity(ffi::PyDict_Size(ptr).max(0) as usize);
        let (mut pos, mut key, mut value) = (0, std::ptr::null_mut(), std::ptr::null_mut());
        while ffi::PyDict_Next(ptr, &mut pos, &mut key, &mut value) != 0 {
            pairs.push((
                Bound::from_borrowed_ptr(py, key),
                Bound::from_borrowed_ptr(py, value),
            ));
        }
        pairs
    }
}

pub struct PyHost<'py> {
    pub py: Python<'py>,
}

impl<'py> Host for PyHost<'py> {
    type Obj = Bound<'py, PyAny>;
    type Err = PyErr;

    fn error(&self, err: EngineError<Self::Obj>) -> PyErr {
        engine_error(self.py, err)
    }

    fn model_rule_swallows(&self, err: &PyErr) -> bool {
        let py = self.py;
        if !err.is_instance_of::<PyException>(py) {
            return false;
        }
        // The same test as the twin's `except (DepthLimitError, CycleError): raise`.
        let Ok(errors) = py.import("fastmerge.errors") else {
            return true;
        };
        let value = err.value(py);
        !["DepthLimitError", "CycleError"].iter().any(|name| {
            errors
                .getattr(*name)
                .is_ok_and(|cls| value.is_instance(&cls).unwrap_or(false))
        })
    }

    fn class(&self, obj: &Self::Obj) -> Class {
        // Exact checks first: they are pointer compares, and cover nearly every value.
        let (kind, exact) = if obj.is_none() {
            (Kind::Null, true)
        } else if obj.is_exact_instance_of::<PyString>() {
            (Kind::Str, true)
        } else if obj.is_exact_instance_of::<PyDict>() {
            (Kind::Dict, true)
        } else if obj.is_exact_instance_of::<PyList>() {
            (Kind::List, true)
        } else if obj.is_instance_of::<PyBool>() {
            (Kind::Bool, true)
        } else if obj.is_instance_of::<PyInt>() {
            (Kind::Int, obj.is_exact_instance_of::<PyInt>())
        } else if obj.is_instance_of::<PyFloat>() {
            (Kind::Float, obj.is_exact_instance_of::<PyFloat>())
        } else if obj.is_instance_of::<PyString>() {
            (Kind::Str, false)
        } else if obj.is_instance_of::<PyDict>() {
            (Kind::Dict, false)
        } else if obj.is_instance_of::<PyList>() {
            (Kind::List, false)
        } else {
            (Kind::Other, false)
        };
        Class { kind, exact }
    }

    fn type_name(&self, obj: &Self::Obj) -> String {
        obj.get_type()
            .getattr("__name__")
            .and_then(|name| name.extract::<String>())
            .unwrap_or_else(|_| String::from("object"))
    }

    fn identity(&self, obj: &Self::Obj) -> Option<usize> {
        Some(obj.as_ptr() as usize)
    }

    fn none(&self) -> Self::Obj {
        self.py.None().into_bound(self.py)
    }

    fn str_obj(&self, text: &str) -> Self::Obj {
        PyString::new(self.py, text).into_any()
    }

    fn str_text<'a>(&self, obj: &'a Self::Obj) -> Option<Cow<'a, str>> {
        let text = obj.cast::<PyString>().ok()?;
        // `to_str` fails on a lone surrogate; such text is neither blank nor a keyword.
        text.to_str().ok().map(Cow::Borrowed)
    }

    fn int_i64(&self, obj: &Self::Obj) -> Option<i64> {
        if obj.is_exact_instance_of::<PyInt>() {
            obj.extract::<i64>().ok()
        } else {
            None
        }
    }

    fn add(&self, a: &Self::Obj, b: &Self::Obj) -> PyResult<Self::Obj> {
        a.add(b)
    }

    fn try_add(&self, a: &Self::Obj, b: &Self::Obj) -> PyResult<Option<Self::Obj>> {
        match a.add(b) {
            Ok(sum) => Ok(Some(sum)),
            Err(err)
                if err.is_instance_of::<PyTypeError>(self.py)
                    || err.is_instance_of::<PyNotImplementedError>(self.py) =>
            {
                Ok(None)
            }
            Err(err) => Err(err),
        }
    }

    fn eq(&self, a: &Self::Obj, b: &Self::Obj) -> PyResult<bool> {
        if a.is(b) {
            return Ok(true);
        }
        if a.is_exact_instance_of::<PyString>() && b.is_exact_instance_of::<PyString>() {
            // What `str.__eq__` computes, without the rich comparison's dispatch (equal map
            // keys from separate json.loads calls are distinct objects): the equality test
            // (length, kind, bytes), cheaper than `PyUnicode_Compare`'s ordering.
            // SAFETY: both are exact, live str objects, so the comparison cannot fail; the
            // result is a new reference to True or False, released at once.
            return Ok(unsafe {
                let result = ffi::PyUnicode_RichCompare(a.as_ptr(), b.as_ptr(), ffi::Py_EQ);
                let equal = result == ffi::Py_True();
                ffi::Py_DECREF(result);
                equal
            });
        }
        // `PyObject_RichCompareBool`: identity first, then `==`, as dict lookups compare.
        // SAFETY: both pointers are live objects held by `a` and `b`.
        match unsafe { ffi::PyObject_RichCompareBool(a.as_ptr(), b.as_ptr(), ffi::Py_EQ) } {
            -1 => Err(PyErr::fetch(self.py)),
            rc => Ok(rc == 1),
        }
    }

    fn truthy(&self, obj: &Self::Obj) -> PyResult<bool> {
        obj.is_truthy()
    }

    fn has_attr(&self, obj: &Self::Obj, name: &str) -> PyResult<bool> {
        let py = self.py;
        let name = match name {
            "__add__" => intern!(py, "__add__").clone(),
            "model_fields" => intern!(py, "model_fields").clone(),
            "model_dump" => intern!(py, "model_dump").clone(),
            other => PyString::new(py, other),
        };
        // Python's `hasattr`: the limited API (abi3) has no lookup that skips the AttributeError
        // of a miss before 3.13, and only the rules for values that are not str, list or dict
        // (merge_objects) ask.
        obj.hasattr(name)
    }

    fn same_type(&self, a: &Self::Obj, b: &Self::Obj) -> bool {
        a.get_type().is(b.get_type())
    }

    fn repr(&self, obj: &Self::Obj) -> PyResult<Self::Obj> {
        Ok(obj.repr()?.into_any())
    }

    fn format(&self, obj: &Self::Obj) -> PyResult<Self::Obj> {
        let spec = PyString::new(self.py, "");
        // SAFETY: both are live objects; the result is a new reference or NULL with an
        // exception set.
        unsafe {
            Bound::from_owned_ptr_or_err(self.py, ffi::PyObject_Format(obj.as_ptr(), spec.as_ptr()))
        }
    }

    fn bool_obj(&self, value: bool) -> Self::Obj {
        PyBool::new(self.py, value).to_owned().into_any()
    }

    fn int_obj(&self, value: i64) -> Self::Obj {
        PyInt::new(self.py, value).into_any()
    }

    fn clone_err(&self, err: &PyErr) -> PyErr {
        err.clone_ref(self.py)
    }

    fn iterate(&self, obj: &Self::Obj) -> PyResult<Vec<Self::Obj>> {
        if let Ok(list) = obj.cast_exact::<PyList>() {
            return Ok(list.iter().collect());
        }
        obj.try_iter()?.collect()
    }

    fn call_method(
        &self,
        obj: &Self::Obj,
        name: &str,
        args: Vec<Self::Obj>,
    ) -> PyResult<Self::Obj> {
        obj.call_method1(name, PyTuple::new(self.py, args)?)
    }

    fn get_item_str(&self, obj: &Self::Obj, key: &str) -> PyResult<Self::Obj> {
        obj.get_item(key)
    }

    fn join(&self, pieces: &[Self::Obj]) -> PyResult<Self::Obj> {
        match pieces {
            [] => return Ok(PyString::new(self.py, "").into_any()),
            [first, second]
                if first.is_exact_instance_of::<PyString>()
                    && second.is_exact_instance_of::<PyString>() =>
            {
                return first.add(second);
            }
            _ => {}
        }
        let list = PyList::new(self.py, pieces)?;
        let empty = PyString::new(self.py, "");
        // SAFETY: both arguments are live str / list objects; the result is a new reference
        // or NULL with an exception set, which `from_owned_ptr_or_err` turns into a PyErr.
        unsafe {
            Bound::from_owned_ptr_or_err(
                self.py,
                pyo3::ffi::PyUnicode_Join(empty.as_ptr(), list.as_ptr()),
            )
        }
    }

    fn list_items(&self, list: &Self::Obj) -> PyResult<Vec<Self::Obj>> {
        Ok(list.cast::<PyList>()?.iter().collect())
    }

    fn new_list(&self, items: Vec<Self::Obj>) -> PyResult<Self::Obj> {
        Ok(PyList::new(self.py, items)?.into_any())
    }

    fn dict_items(&self, dict: &Self::Obj) -> PyResult<Pairs<Self::Obj>> {
        if dict.is_exact_instance_of::<PyDict>() {
            return Ok(exact_dict_items(dict));
        }
        // A subclass: iterate what its own `items()` gives, as `for k, v in d.items()` does.
        let mut pairs = Vec::new();
        for item in dict.call_method0("items")?.try_iter()? {
            let item = item?;
            if let Ok(pair) = item.cast_exact::<PyTuple>() {
                if pair.len() == 2 {
                    pairs.push((pair.get_item(0)?, pair.get_item(1)?));
                    continue;
                }
            }
            // Anything else (a list, a 3-tuple, an int) is unpacked by Python itself, so that
            // it works or fails exactly as the twin's `key, value` unpacking does.
            let pair = unpack_pair(self.py)?.call1((item,))?;
            let pair = pair.cast_into::<PyTuple>()?;
            pairs.push((pair.get_item(0)?, pair.get_item(1)?));
        }
        Ok(pairs)
    }

    fn dict_get_str(&self, dict: &Self::Obj, key: &str) -> PyResult<Option<Self::Obj>> {
        dict.cast::<PyDict>()?.get_item(key)
    }

    fn new_dict(&self, pairs: Vec<(Self::Obj, Self::Obj)>) -> PyResult<Self::Obj> {
        let dict = PyDict::new(self.py);
        for (key, value) in pairs {
            dict.set_item(key, value)?;
        }
        Ok(dict.into_any())
    }

    fn dict_of(&self, dict: &Self::Obj) -> PyResult<Self::Obj> {
        self.py.get_type::<PyDict>().call1((dict,))
    }

    fn key_hash(&self, key: &Self::Obj) -> PyResult<i64> {
        Ok(key.hash()? as i64)
    }

    fn call_copy(&self, mapping: &Self::Obj) -> PyResult<Self::Obj> {
        if mapping.is_exact_instance_of::<PyDict>() {
            return Ok(mapping.cast::<PyDict>()?.copy()?.into_any());
        }
        mapping.call_method0("copy")
    }

    fn lookup(&self, mapping: &Self::Obj, key: &Self::Obj) -> PyResult<Option<Self::Obj>> {
        if mapping.is_exact_instance_of::<PyDict>() {
            return mapping.cast::<PyDict>()?.get_item(key);
        }
        // Whatever `copy()` returned: `key in m`, then `m[key]`, as openJiuwen does.
        if mapping.contains(key)? {
            Ok(Some(mapping.get_item(key)?))
        } else {
            Ok(None)
        }
    }

    fn get_or_none(&self, mapping: &Self::Obj, key: &Self::Obj) -> PyResult<Self::Obj> {
        mapping.call_method1("get", (key,))
    }

    fn set_item(&self, mapping: &mut Self::Obj, key: Self::Obj, value: Self::Obj) -> PyResult<()> {
        mapping.set_item(key, value)
    }

    fn model_dump(&self, obj: &Self::Obj) -> PyResult<Self::Obj> {
        if obj.hasattr("model_dump")? {
            obj.call_method0("model_dump")
        } else {
            obj.call_method0("dict")
        }
    }

    fn keys_union(&self, a: &Self::Obj, b: &Self::Obj) -> PyResult<Vec<Self::Obj>> {
        let union = a.call_method0("keys")?.bitor(b.call_method0("keys")?)?;
        union.try_iter()?.collect()
    }

    fn construct_like(
        &self,
        like: &Self::Obj,
        fields: Vec<(Self::Obj, Self::Obj)>,
    ) -> PyResult<Self::Obj> {
        let kwargs = PyDict::new(self.py);
        for (name, value) in fields {
            kwargs.set_item(name, value)?;
        }
        like.get_type().call((), Some(&kwargs))
    }
}

/// A Python object held by the chunk engine's state between calls (a `Py<PyAny>`): the
/// state outlives one GIL scope, so it cannot hold `Bound<'py, _>` values.
pub struct PyObj(pub Py<PyAny>);

impl Clone for PyObj {
    #[inline]
    fn clone(&self) -> Self {
        // SAFETY: a PyObj lives in a chunk's leaf or state, which only the chunk engine reads,
        // and the engine runs only inside methods of the extension, attached to the
        // interpreter (it never detaches while it holds state).
        let py = unsafe { Python::assume_attached() };
        PyObj(self.0.clone_ref(py))
    }
}

impl PyObj {
    #[inline]
    pub fn bind<'a, 'py>(&'a self, py: Python<'py>) -> &'a Bound<'py, PyAny> {
        self.0.bind(py)
    }
}

impl From<Bound<'_, PyAny>> for PyObj {
    fn from(obj: Bound<'_, PyAny>) -> Self {
        PyObj(obj.unbind())
    }
}

/// The [`Host`] of the chunk engine: [`PyHost`]'s operations on [`PyObj`]s (the conversions
/// are free: the same pointer, bound or not).
pub struct PyStoreHost<'py> {
    pub py: Python<'py>,
}

impl<'py> PyStoreHost<'py> {
    #[inline]
    fn inner(&self) -> PyHost<'py> {
        PyHost { py: self.py }
    }
    #[inline]
    fn b<'a>(&self, obj: &'a PyObj) -> &'a Bound<'py, PyAny> {
        obj.0.bind(self.py)
    }
}

fn store(obj: Bound<'_, PyAny>) -> PyObj {
    PyObj(obj.unbind())
}

fn store_all(objs: Vec<Bound<'_, PyAny>>) -> Vec<PyObj> {
    objs.into_iter().map(store).collect()
}

impl<'py> Host for PyStoreHost<'py> {
    type Obj = PyObj;
    type Err = PyErr;

    fn error(&self, err: EngineError<PyObj>) -> PyErr {
        let py = self.py;
        let err = match err {
            EngineError::DepthLimit { limit } => EngineError::DepthLimit { limit },
            EngineError::Cycle { depth } => EngineError::Cycle { depth },
            EngineError::MergeType {
                path,
                left_kind,
                right_kind,
            } => EngineError::MergeType {
                path: path
                    .into_iter()
                    .map(|item| match item {
                        crate::engine::error::PathItem::Key(k) => {
                            crate::engine::error::PathItem::Key(k.0.into_bound(py))
                        }
                        crate::engine::error::PathItem::Slot(s) => {
                            crate::engine::error::PathItem::Slot(s)
                        }
                    })
                    .collect(),
                left_kind,
                right_kind,
            },
            EngineError::WrongType {
                name,
                expected,
                value,
            } => EngineError::WrongType {
                name,
                expected,
                value: value.0.into_bound(py),
            },
            EngineError::Anomaly { code, detail } => EngineError::Anomaly {
                code,
                detail: detail.0.into_bound(py),
            },
            EngineError::Recursion => EngineError::Recursion,
            EngineError::Conflict { code, values } => EngineError::Conflict {
                code,
                values: values.into_iter().map(|v| v.0.into_bound(py)).collect(),
            },
        };
        engine_error(py, err)
    }
    fn model_rule_swallows(&self, err: &PyErr) -> bool {
        self.inner().model_rule_swallows(err)
    }
    #[inline]
    fn class(&self, obj: &PyObj) -> Class {
        self.inner().class(self.b(obj))
    }
    fn type_name(&self, obj: &PyObj) -> String {
        self.inner().type_name(self.b(obj))
    }
    fn identity(&self, obj: &PyObj) -> Option<usize> {
        Some(obj.0.as_ptr() as usize)
    }
    fn none(&self) -> PyObj {
        PyObj(self.py.None())
    }
    fn str_obj(&self, text: &str) -> PyObj {
        store(self.inner().str_obj(text))
    }
    fn str_text<'a>(&self, obj: &'a PyObj) -> Option<Cow<'a, str>> {
        let ptr = obj.0.as_ptr();
        if obj.0.bind(self.py).cast::<PyString>().is_err() {
            return None;
        }
        let mut size: ffi::Py_ssize_t = 0;
        // SAFETY: `ptr` is a live str; the UTF-8 buffer CPython returns is cached in the
        // object, which `obj` keeps alive for 'a. NULL (a lone surrogate) sets an exception,
        // cleared here: such text matches no key.
        unsafe {
            let data = ffi::PyUnicode_AsUTF8AndSize(ptr, &mut size);
            if data.is_null() {
                ffi::PyErr_Clear();
                return None;
            }
            let bytes = std::slice::from_raw_parts(data as *const u8, size as usize);
            Some(Cow::Borrowed(std::str::from_utf8_unchecked(bytes)))
        }
    }
    fn int_i64(&self, obj: &PyObj) -> Option<i64> {
        self.inner().int_i64(self.b(obj))
    }
    fn add(&self, a: &PyObj, b: &PyObj) -> PyResult<PyObj> {
        self.inner().add(self.b(a), self.b(b)).map(store)
    }
    fn try_add(&self, a: &PyObj, b: &PyObj) -> PyResult<Option<PyObj>> {
        Ok(self.inner().try_add(self.b(a), self.b(b))?.map(store))
    }
    #[inline]
    fn eq(&self, a: &PyObj, b: &PyObj) -> PyResult<bool> {
        self.inner().eq(self.b(a), self.b(b))
    }
    fn truthy(&self, obj: &PyObj) -> PyResult<bool> {
        self.inner().truthy(self.b(obj))
    }
    fn has_attr(&self, obj: &PyObj, name: &str) -> PyResult<bool> {
        self.inner().has_attr(self.b(obj), name)
    }
    fn same_type(&self, a: &PyObj, b: &PyObj) -> bool {
        self.inner().same_type(self.b(a), self.b(b))
    }
    fn repr(&self, obj: &PyObj) -> PyResult<PyObj> {
        self.inner().repr(self.b(obj)).map(store)
    }
    fn format(&self, obj: &PyObj) -> PyResult<PyObj> {
        self.inner().format(self.b(obj)).map(store)
    }
    fn bool_obj(&self, value: bool) -> PyObj {
        store(self.inner().bool_obj(value))
    }
    fn int_obj(&self, value: i64) -> PyObj {
        store(self.inner().int_obj(value))
    }
    fn clone_err(&self, err: &PyErr) -> PyErr {
        err.clone_ref(self.py)
    }
    fn iterate(&self, obj: &PyObj) -> PyResult<Vec<PyObj>> {
        self.inner().iterate(self.b(obj)).map(store_all)
    }
    fn call_method(&self, obj: &PyObj, name: &str, args: Vec<PyObj>) -> PyResult<PyObj> {
        let args = args.into_iter().map(|a| a.0.into_bound(self.py)).collect();
        self.inner().call_method(self.b(obj), name, args).map(store)
    }
    fn get_item_str(&self, obj: &PyObj, key: &str) -> PyResult<PyObj> {
        self.inner().get_item_str(self.b(obj), key).map(store)
    }
    fn join(&self, pieces: &[PyObj]) -> PyResult<PyObj> {
        let py = self.py;
        match pieces {
            [] => return Ok(self.str_obj("")),
            [one] if one.0.bind(py).is_exact_instance_of::<PyString>() => return Ok(one.clone()),
            _ => {}
        }
        let list = PyList::new(py, pieces.iter().map(|p| p.0.bind(py)))?;
        let empty = PyString::new(py, "");
        // SAFETY: live str / list objects; a new reference or NULL with an exception set.
        unsafe {
            Bound::from_owned_ptr_or_err(py, ffi::PyUnicode_Join(empty.as_ptr(), list.as_ptr()))
        }
        .map(store)
    }
    fn list_items(&self, list: &PyObj) -> PyResult<Vec<PyObj>> {
        self.inner().list_items(self.b(list)).map(store_all)
    }
    fn new_list(&self, items: Vec<PyObj>) -> PyResult<PyObj> {
        Ok(store(
            PyList::new(self.py, items.iter().map(|p| p.0.bind(self.py)))?.into_any(),
        ))
    }
    fn dict_items(&self, dict: &PyObj) -> PyResult<Pairs<PyObj>> {
        Ok(self
            .inner()
            .dict_items(self.b(dict))?
            .into_iter()
            .map(|(k, v)| (store(k), store(v)))
            .collect())
    }
    fn dict_get_str(&self, dict: &PyObj, key: &str) -> PyResult<Option<PyObj>> {
        Ok(self.inner().dict_get_str(self.b(dict), key)?.map(store))
    }
    fn new_dict(&self, pairs: Vec<(PyObj, PyObj)>) -> PyResult<PyObj> {
        let dict = PyDict::new(self.py);
        for (key, value) in pairs {
            dict.set_item(key.0.bind(self.py), value.0.bind(self.py))?;
        }
        Ok(store(dict.into_any()))
    }
    fn dict_of(&self, dict: &PyObj) -> PyResult<PyObj> {
        self.inner().dict_of(self.b(dict)).map(store)
    }
    #[inline]
    fn key_hash(&self, key: &PyObj) -> PyResult<i64> {
        self.inner().key_hash(self.b(key))
    }
    fn call_copy(&self, mapping: &PyObj) -> PyResult<PyObj> {
        self.inner().call_copy(self.b(mapping)).map(store)
    }
    fn lookup(&self, mapping: &PyObj, key: &PyObj) -> PyResult<Option<PyObj>> {
        Ok(self
            .inner()
            .lookup(self.b(mapping), self.b(key))?
            .map(store))
    }
    fn get_or_none(&self, mapping: &PyObj, key: &PyObj) -> PyResult<PyObj> {
        self.inner()
            .get_or_none(self.b(mapping), self.b(key))
            .map(store)
    }
    fn set_item(&self, mapping: &mut PyObj, key: PyObj, value: PyObj) -> PyResult<()> {
        self.b(mapping)
            .set_item(key.0.bind(self.py), value.0.bind(self.py))
    }
    fn model_dump(&self, obj: &PyObj) -> PyResult<PyObj> {
        self.inner().model_dump(self.b(obj)).map(store)
    }
    fn keys_union(&self, a: &PyObj, b: &PyObj) -> PyResult<Vec<PyObj>> {
        self.inner().keys_union(self.b(a), self.b(b)).map(store_all)
    }
    fn construct_like(&self, like: &PyObj, fields: Vec<(PyObj, PyObj)>) -> PyResult<PyObj> {
        let fields = fields
            .into_iter()
            .map(|(k, v)| (k.0.into_bound(self.py), v.0.into_bound(self.py)))
            .collect();
        self.inner().construct_like(self.b(like), fields).map(store)
    }
}
