//! Events held as Python objects, read as the JSON text they stand for: plain dicts, lists and
//! scalars, and the provider SDKs' models (read from their stored fields), written as JSON
//! text so that the event takes the path of an event from bytes (fast paths included).

use std::sync::Arc;

use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PySet, PyString, PyType};

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
pub(crate) struct Writer<'a, 'py> {
    pub(crate) py: Python<'py>,
    pub(crate) out: &'a mut Vec<u8>,
    pub(crate) classes: &'a mut ClassCache,
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
    pub(crate) unsafe fn dict(
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
    pub(crate) fn model(
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
pub(crate) fn model_values<'py>(
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
pub(crate) unsafe fn utf8<'a>(ptr: *mut ffi::PyObject) -> Option<&'a str> {
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
pub(crate) struct ModelClass {
    /// each field's attribute name, and its key as JSON text (`"name":`)
    fields: Vec<(Py<PyString>, Vec<u8>)>,
    /// each field's key
    pub(crate) keys: Vec<String>,
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
pub(crate) struct ClassCache(Vec<(usize, Option<Arc<ModelClass>>)>);

impl ClassCache {
    /// The class of `obj` if it qualifies (worked out once per class).
    pub(crate) fn of(&mut self, obj: &Bound<'_, PyAny>) -> PyResult<Option<Arc<ModelClass>>> {
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
    pub(crate) fn of(kind: &Bound<'_, PyType>) -> PyResult<(Option<Arc<ModelClass>>, bool)> {
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
