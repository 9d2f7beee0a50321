//! The aggregator's binding: Python events in as engine values, messages out as Python data.
//! Every rule is in `crate::engine::aggregate` and the adapters; this converts and maps errors.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyMemoryView, PyString};

use crate::engine::aggregate::{AggError, AggregatorCore as Core};
use crate::engine::events::EventDataError;
use crate::engine::providers::PROVIDERS;
use crate::engine::value::Value;
use crate::py::args::Arg;
use crate::py::chunks::parse_options;
use crate::py::convert::{kind_name, to_value, ConvError, LONE_SURROGATE};
use crate::py::errors::{agg_error, invalid_option, wrong_type};
use crate::py::message_data;
use crate::py::writer::{model_values, utf8, ClassCache, ModelClass, Writer};

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
        message_data::messages(py, values)
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
        // a hidden switch for the differential tests from Python (tests/providers/test_fast_paths.py): the
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
        let result = detached(py, raw.len() >= DETACH_BYTES, || core.feed(raw));
        result.map_err(|e| agg_error(py, e))
    }

    /// A whole recorded stream in one call: `AggregatorCore(provider, ...)`, `feed(data)`,
    /// `finish()`, with their errors, without three calls' entry and exit (what
    /// `fastmerge.aggregate` of str or bytes costs on a short stream is mostly those).
    #[staticmethod]
    #[pyo3(
        signature = (data, provider = Arg::Default, strict = Arg::Default, signature_merge = Arg::Default, usage = Arg::Default),
        text_signature = "(data, provider='auto', strict=False, signature_merge='replace', usage='merge')"
    )]
    fn aggregate<'py>(
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        provider: Arg<'py>,
        strict: Arg<'py>,
        signature_merge: Arg<'py>,
        usage: Arg<'py>,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut this = Self::new(py, provider, strict, signature_merge, usage)?;
        this.feed(py, data)?;
        this.finish(py)
    }

    /// The messages so far, one per choice in choice order.
    fn snapshot<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        Self::messages(py, self.core.snapshot())
    }

    /// The end of the stream: the complete messages, one per choice in choice order.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let core = &mut self.core;
        let result = detached(py, core.count() >= DETACH_EVENTS, || core.finish());
        Self::messages(py, result)
    }
}

/// Inputs shorter than this (bytes fed, events finished) are read with the GIL held:
/// releasing and taking it again costs more than a short stream's reading, and another
/// thread would gain little in that time.
const DETACH_BYTES: usize = 64 * 1024;
const DETACH_EVENTS: usize = 256;

/// `work()`, with the GIL released when the work is `long` enough to be worth it.
fn detached<T: Send>(py: Python<'_>, long: bool, work: impl Send + FnOnce() -> T) -> T {
    if long {
        py.detach(work)
    } else {
        work()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<AggregatorCore>()
}
