//! The aggregator (spec §6, §7): provider events in, one folded message per choice out. The
//! twin's `_pure/aggregate.py`, method for method; its docstrings explain each step.
//!
//! Everything here works on the engine's own [`Value`]s: an event read from bytes is parsed
//! into values ([`events::parse`]), mapped to leaves by its adapter, and folded with the chunk
//! rules over [`NativeHost`]. Python objects are made only for the messages that come out.
//!
//! This file holds the aggregator's calls (input, output) and the reading of one event; its
//! steps are in `aggregate/`: `input` (payloads from bytes, the transport's sink), `detect`
//! (which provider, events its adapter does not know), `fold` (leaves into the choices'
//! states) and `after_finish` (content for a finished choice, spec §6.1).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::engine::chunks::{materialize, Options, State};
use crate::engine::error::EngineError;
use crate::engine::events::{self, EventDataError};
use crate::engine::providers::{self, common, Adapter, PROVIDERS};
use crate::engine::transport::{Transport, TransportKind};
use crate::engine::value::{py_repr, NativeError, NativeHost, Value};

mod after_finish;
mod detect;
mod fold;
mod input;
use input::Reader;

/// Why an aggregator call failed (the binding raises the twin's exceptions from these).
#[derive(Debug, Clone, PartialEq)]
pub enum AggError {
    /// `fastmerge.errors.EventError(event, detail)`.
    Event { event: usize, detail: String },
    /// `fastmerge.errors.no_events(detail)`: a stream with no event read from it (spec §6).
    NoEvents(String),
    /// `fastmerge.errors.empty_input()`: a stream with nothing in it, no event and no byte
    /// but blanks (one wording, from `fastmerge.errors`, whatever the input was).
    EmptyInput,
    /// `fastmerge.errors.too_large_sum(event)`: usage counts that add up beyond 64 bits.
    TooLargeSum { event: usize },
    /// `strict=True`: `fastmerge.errors.AnomalyError(code, detail)`.
    Anomaly { code: String, detail: String },
    /// `fastmerge.errors.AggregatorClosedError(reason)`.
    Closed(String),
    /// An engine error no adapter leaf should cause (a bug if seen).
    Engine(String),
}

pub struct AggregatorCore {
    provider: Option<&'static str>,
    options: Options,
    adapter: Option<Box<dyn Adapter>>,
    states: BTreeMap<i64, State<Value>>,
    count: usize,
    /// Events an adapter read (a stream ending with none is an error).
    read: usize,
    /// The first unreadable event's anomaly detail (what a stream with none read says).
    first_bad: Option<String>,
    /// `unreadable_event` anomalies met before the first choice existed; its state gets them.
    pending: Vec<Value>,
    transport: Option<Transport>,
    closed: Option<String>,
    /// events the adapter knew (spec §8)
    recognized: usize,
    /// the first event the adapter did not know: its keys, and the provider it looks like
    foreign: Option<(String, Option<&'static str>)>,
    /// the number of the event that started another response (spec §6): it and the events
    /// after it are not merged; the batch engine splits the stream there
    new_response_at: Option<usize>,
    /// whether events from bytes may take their adapter's typed fast path (off: every event
    /// is parsed into values first; the differential tests compare both)
    fast_events: bool,
    /// whether an event that ends the stream was read ([`Adapter::ends_stream`]): the batch
    /// engine then emits the stream without waiting for the end of input
    ended: bool,
}

impl AggregatorCore {
    /// `provider`: a name of [`PROVIDERS`], or None for "auto" (the caller checks the name).
    pub fn new(provider: Option<&str>, options: Options) -> Self {
        let provider = provider.and_then(|p| PROVIDERS.iter().copied().find(|name| *name == p));
        AggregatorCore {
            provider,
            options,
            adapter: provider.and_then(providers::adapter),
            states: BTreeMap::new(),
            count: 0,
            read: 0,
            first_bad: None,
            pending: Vec::new(),
            transport: None,
            closed: None,
            recognized: 0,
            foreign: None,
            new_response_at: None,
            fast_events: true,
            ended: false,
        }
    }

    /// Let events from bytes take their adapter's typed fast path (the default), or not:
    /// the differential tests run both.
    pub fn set_fast_events(&mut self, on: bool) {
        self.fast_events = on;
    }

    pub fn provider(&self) -> Option<&'static str> {
        self.provider
    }

    /// Events read so far.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Whether the stream's definitive last event was read (the batch engine's early end).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The number of the event that started another response, if one did (spec §6).
    pub fn new_response_at(&self) -> Option<usize> {
        self.new_response_at
    }

    /// Whether the event `raw` (one event's JSON text) would start another response if it
    /// were read next (spec §6): the batch engine starts a new stream there instead. The
    /// aggregator's own rule, without reading the event: no earlier event started another
    /// response, and its adapter knows the event and says `new_response`; or, when the
    /// stream's end event was read (`ended`), the adapter does not know the event (another
    /// wire format's: it is no part of the response that ended).
    pub fn starts_response(&self, raw: &[u8], ended: bool) -> bool {
        let Some(adapter) = self.adapter.as_ref() else {
            return false;
        };
        if self.new_response_at.is_some() || !(ended || adapter.may_start_response(raw)) {
            return false;
        }
        events::parse(raw).is_ok_and(|event| match adapter.knows(&event) {
            true => adapter.new_response(&event).is_some(),
            false => ended,
        })
    }

    pub fn check_open(&self) -> Result<(), AggError> {
        match &self.closed {
            Some(reason) => Err(AggError::Closed(reason.clone())),
            None => Ok(()),
        }
    }

    // -- input

    /// One event, already converted to a value by the caller (or the conversion's error).
    pub fn add(&mut self, event: Result<Value, EventDataError>) -> Result<(), AggError> {
        self.check_open()?;
        self.count += 1;
        match event {
            Ok(event) => self.event(&event),
            Err(err) => self.unreadable(err.0),
        }
    }

    /// One item of text: one event's JSON, a JSON array of events, or whole SSE lines.
    pub fn add_text(&mut self, raw: &[u8]) -> Result<(), AggError> {
        self.check_open()?;
        let head = raw
            .iter()
            .position(|c| !matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0xef | 0xbb | 0xbf))
            .map(|i| raw[i]);
        let sse = matches!(&self.transport, Some(t) if t.kind == Some(TransportKind::Sse));
        if head == Some(b'{') {
            self.read(raw)
        } else if head == Some(b'[') && !sse {
            let mut transport = Transport::new();
            let mut result = Ok(());
            transport.feed(raw, &mut |payload| self.read_into(&mut result, payload));
            // an item is given whole: an array not closed is one more unreadable event
            if let Some(tail) =
                transport.finish(&mut |payload| self.read_into(&mut result, payload))
            {
                self.read_into(&mut result, &tail);
            }
            result
        } else if raw.ends_with(b"\n") {
            self.feed(raw)
        } else {
            let mut line = raw.to_vec();
            line.push(b'\n');
            self.feed(&line)
        }
    }

    /// One event's JSON object text (from its `{`), if the adapter's typed reading takes it:
    /// that reading accepts only valid JSON, so the caller learns the text is JSON without
    /// checking it first. None, with nothing done, for any other event (then the caller checks
    /// the text and calls [`Self::add_text`]).
    pub fn add_fast(&mut self, raw: &[u8]) -> Option<Result<(), AggError>> {
        if let Err(err) = self.check_open() {
            return Some(Err(err));
        }
        self.read_fast(raw)
    }

    /// One delta event held as objects, by its fields (see
    /// [`Adapter::fast_delta`]), if the adapter's typed reading takes it: the result
    /// of [`Self::add_text`] on the event's JSON text. None, with nothing done, for any other
    /// event or a closed aggregator (then the caller reads the event as before).
    pub fn add_fast_delta(
        &mut self,
        event_type: &str,
        index: i64,
        delta_type: &str,
        field: &str,
        text: &str,
    ) -> Option<Result<(), AggError>> {
        if self.check_open().is_err() || !self.fast_events || self.new_response_at.is_some() {
            return None;
        }
        let leaves = self
            .adapter
            .as_mut()?
            .fast_delta(event_type, index, delta_type, field, text)?;
        self.count += 1;
        self.recognized += 1;
        self.read += 1;
        Some(self.fold_fast(leaves))
    }

    /// Raw transport bytes, split anywhere.
    pub fn feed(&mut self, data: &[u8]) -> Result<(), AggError> {
        self.check_open()?;
        // out of `self` while it hands over payloads, which are read as they are found
        let mut transport = self.transport.take().unwrap_or_default();
        let mut reader = Reader {
            core: self,
            result: Ok(()),
            declined: None,
        };
        transport.feed_to(data, &mut reader);
        let result = reader.result;
        self.transport = Some(transport);
        result
    }

    // -- output

    /// The messages so far, one per choice in choice order (before any event: one empty,
    /// incomplete message; only [`Self::finish`] calls a stream with no event an error).
    pub fn snapshot(&mut self) -> Result<Vec<Value>, AggError> {
        self.ensure_choice();
        let states: Vec<&State<Value>> = self.states.values().collect();
        states
            .into_iter()
            .map(|s| data(s, false, self.count))
            .collect()
    }

    /// The end of the stream: the complete messages, one per choice in choice order.
    pub fn finish(&mut self) -> Result<Vec<Value>, AggError> {
        self.check_open()?;
        let mut cut = None;
        if let Some(mut transport) = self.transport.take() {
            let mut result = Ok(());
            let tail = transport.finish(&mut |payload| self.read_into(&mut result, payload));
            self.transport = Some(transport);
            result?;
            if let Some(tail) = tail {
                // the stream ended inside its last event: read it if it is whole, else flag it
                self.count += 1;
                match events::parse(&tail) {
                    Ok(event) => self.event(&event)?,
                    Err(_) => {
                        cut = Some(format!(
                            "the stream ended inside event {}: its {} bytes are not a whole \
                             event and were not read",
                            self.count,
                            tail.len()
                        ));
                    }
                }
            }
        }
        if let (Some((keys, looks)), 0) = (&self.foreign, self.recognized) {
            let detail = self.foreign_stream(keys, *looks);
            self.closed = Some("finish() was called".to_owned());
            return Err(AggError::Event {
                event: self.count,
                detail,
            });
        }
        if self.read == 0 {
            // nothing to merge is an error, not an empty message (spec §6)
            self.closed = Some("no event could be read".to_owned());
            let detail = match (self.first_bad.take(), cut) {
                (Some(bad), _) => Some(bad),
                (None, Some(cut)) => Some(cut),
                (None, None) => self.transport.as_ref().and_then(Transport::diagnosis),
            };
            return Err(detail.map_or(AggError::EmptyInput, AggError::NoEvents));
        }
        if let Some(adapter) = self.adapter.as_mut() {
            let leaves = adapter.end();
            self.fold_all(leaves)?;
        }
        if let Some(detail) = cut {
            self.ensure_choice();
            let anomaly = common::list_value(vec![common::anomaly("truncated", detail)]);
            let mut leaf = common::Obj::new();
            leaf.put("anomalies", anomaly);
            let leaf = leaf.build();
            let choices: Vec<i64> = self.states.keys().copied().collect();
            self.fold_all(choices.into_iter().map(|c| (c, leaf.clone())).collect())?;
        }
        self.closed = Some("finish() was called".to_owned());
        self.ensure_choice();
        let states: Vec<&State<Value>> = self.states.values().collect();
        states
            .into_iter()
            .map(|s| data(s, true, self.count))
            .collect()
    }

    // -- internals

    /// The event being read cannot be: `strict=True` raises and closes; otherwise it is
    /// skipped with an `unreadable_event` anomaly and reading goes on (spec §8).
    fn unreadable(&mut self, detail: String) -> Result<(), AggError> {
        if self.options.strict {
            self.closed = Some(format!("event {} could not be read", self.count));
            return Err(AggError::Event {
                event: self.count,
                detail,
            });
        }
        let detail = format!("event {}: {detail}", self.count);
        self.first_bad.get_or_insert_with(|| detail.clone());
        let anomaly = common::anomaly("unreadable_event", detail);
        if self.states.is_empty() {
            self.pending.push(anomaly);
            return Ok(());
        }
        let mut leaf = common::Obj::new();
        leaf.put("anomalies", common::list_value(vec![anomaly]));
        let leaf = leaf.build();
        let choices: Vec<i64> = self.states.keys().copied().collect();
        self.fold_all(choices.into_iter().map(|c| (c, leaf.clone())).collect())
    }

    fn event(&mut self, event: &Value) -> Result<(), AggError> {
        if let Some(unread) = self.choose_adapter(event) {
            return unread;
        }
        if self.adapter.as_ref().is_some_and(|a| a.ends_stream(event)) {
            self.ended = true;
        }
        if self.new_response_at.is_some() {
            return Ok(()); // another response's event: not merged (its start is an anomaly)
        }
        let provider = self.provider.unwrap_or("");
        let Some(adapter) = self.adapter.as_mut() else {
            return Ok(());
        };
        if !adapter.knows(event) {
            return self.unrecognized(event);
        }
        self.recognized += 1;
        if let Some(reason) = adapter.new_response(event) {
            self.new_response_at = Some(self.count);
            let detail = format!(
                "event {} starts another response ({reason}): it and the events after it are \
                 not merged into this message",
                self.count
            );
            return self.anomaly_everywhere("new_response", detail);
        }
        let result = adapter.event(event);
        match result {
            Ok(leaves) => {
                // the parts of the event that could not be read, before what was
                let unread = adapter.unread();
                for detail in unread {
                    self.unreadable(format!("{provider}: {detail}"))?;
                }
                self.read += 1;
                let leaves = self.after_finish(leaves);
                self.fold_all(leaves)
            }
            Err(detail) => self.unreadable(format!("{provider}: {detail}")),
        }
    }
}

/// An engine error met while folding or finishing event `event`.
fn native_error(err: NativeError, event: usize) -> AggError {
    match err {
        NativeError::IntOverflow => AggError::TooLargeSum { event },
        NativeError::Engine(EngineError::Anomaly { code, detail }) => AggError::Anomaly {
            code: code.to_owned(),
            detail: match detail {
                Value::Str(text) => text,
                other => py_repr(&other),
            },
        },
        other => AggError::Engine(format!("{other:?}")),
    }
}

/// A state's message data; a stream without its terminal signal is `incomplete`.
fn data(state: &State<Value>, finish: bool, event: usize) -> Result<Value, AggError> {
    let mut value = materialize(&NativeHost, state, finish).map_err(|e| native_error(e, event))?;
    if let Value::Dict(map) = &mut value {
        if matches!(map.get("status"), None | Some(Value::Null)) {
            Arc::make_mut(map).insert("status".to_owned(), common::str_value("incomplete"));
        }
    }
    Ok(value)
}
