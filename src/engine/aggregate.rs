//! The aggregator (spec §6, §7): provider events in, one folded message per choice out. The
//! twin's `_pure/aggregate.py`, method for method; its docstrings explain each step.
//!
//! Everything here works on the engine's own [`Value`]s: an event read from bytes is parsed
//! into values ([`events::parse`]), mapped to leaves by its adapter, and folded with the chunk
//! rules over [`NativeHost`]. Python objects are made only for the messages that come out.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::engine::chunks::{
    append_bare_str, append_bare_str_logprobs, append_bare_text, append_indexed_arguments,
    append_indexed_arguments_str, append_indexed_str, append_indexed_text, fold, materialize,
    Family, Leaf, Options, State,
};
use crate::engine::error::EngineError;
use crate::engine::events::{self, EventDataError};
use crate::engine::providers::{self, common, Adapter, Leaves, PROVIDERS};
use crate::engine::transport::{Sink, Transport, TransportKind};
use crate::engine::value::{py_repr, NativeError, NativeHost, Value};

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

    /// One event payload from bytes.
    fn read(&mut self, payload: &[u8]) -> Result<(), AggError> {
        match self.read_fast(payload) {
            Some(result) => result,
            None => self.read_generic(payload),
        }
    }

    /// The adapter's typed reading of an event's bytes, when the event is of its hot shape:
    /// the same leaves as `event`, without building the event's tree. None, with nothing
    /// done, for any other event.
    fn read_fast(&mut self, payload: &[u8]) -> Option<Result<(), AggError>> {
        if !self.fast_events || self.new_response_at.is_some() {
            return None;
        }
        let leaves = self.adapter.as_mut()?.fast_event(payload)?;
        self.count += 1;
        self.recognized += 1;
        self.read += 1;
        Some(self.fold_fast(leaves))
    }

    /// An event payload parsed into values first.
    fn read_generic(&mut self, payload: &[u8]) -> Result<(), AggError> {
        self.count += 1;
        match events::parse(payload) {
            Ok(event) => self.event(&event),
            Err(err) => self.unreadable(err.0),
        }
    }

    /// A transport's sink: reads `payload` unless an earlier payload of the same call failed
    /// (the call's error, in `result`; the payloads after it are not read).
    fn read_into(&mut self, result: &mut Result<(), AggError>, payload: &[u8]) {
        if result.is_ok() {
            *result = self.read(payload);
        }
    }

    fn event(&mut self, event: &Value) -> Result<(), AggError> {
        if self.adapter.is_none() {
            let Some(name) = providers::detect(event) else {
                let names: Vec<String> = PROVIDERS
                    .iter()
                    .map(|p| py_repr(&Value::Str((*p).to_owned())))
                    .collect();
                let what = wrapper_hint(event)
                    .unwrap_or_else(|| format!("pass provider= one of {}", names.join(", ")));
                return self.unreadable(format!(
                    "cannot tell the provider from this event (keys: {}); {what}",
                    keys_of(event)
                ));
            };
            self.provider = Some(name);
            self.adapter = providers::adapter(name);
        }
        // fast-path events never end a stream (their shape has choices and no usage)
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

    /// An event with no key the adapter knows: an anomaly, and not read (spec §8).
    fn unrecognized(&mut self, event: &Value) -> Result<(), AggError> {
        let keys = keys_of(event);
        if self.foreign.is_none() {
            let looks = providers::detect(event).filter(|p| Some(*p) != self.provider);
            self.foreign = Some((keys.clone(), looks));
        }
        let detail = format!(
            "event {} has no key the {} adapter reads (keys: {keys}); it was not read",
            self.count,
            self.provider.unwrap_or("")
        );
        self.anomaly_everywhere("unrecognized_event", detail)
    }

    /// The detail of the error for a stream of which no event was recognized (`keys` of the
    /// first, and the provider it looks like).
    fn foreign_stream(&self, keys: &str, looks: Option<&str>) -> String {
        let provider = py_repr(&common::str_value(self.provider.unwrap_or("")));
        let detail = format!(
            "none of the stream's {} events is an event of {provider}",
            self.count
        );
        match looks {
            None => format!("{detail} (keys of the first: {keys})"),
            Some(looks) => {
                let looks = py_repr(&common::str_value(looks));
                format!("{detail}; they look like events of {looks}: pass provider={looks}")
            }
        }
    }

    /// One anomaly for every choice seen so far (choice 0 if none).
    fn anomaly_everywhere(&mut self, code: &str, detail: String) -> Result<(), AggError> {
        self.ensure_choice();
        let mut leaf = common::Obj::new();
        leaf.put(
            "anomalies",
            common::list_value(vec![common::anomaly(code, detail)]),
        );
        let leaf = leaf.build();
        let choices: Vec<i64> = self.states.keys().copied().collect();
        self.fold_all(choices.into_iter().map(|c| (c, leaf.clone())).collect())
    }

    fn fold_all(&mut self, leaves: Leaves) -> Result<(), AggError> {
        for (choice, leaf) in leaves {
            if !self.states.contains_key(&choice) {
                self.new_state(choice)?;
            }
            if self.options.strict {
                if let Some(first) = common::items(common::get(&leaf, "anomalies")).first() {
                    self.closed = Some(format!("event {} raised an anomaly", self.count));
                    return Err(AggError::Anomaly {
                        code: common::get_str(first, "code").unwrap_or("").to_owned(),
                        detail: common::get_str(first, "detail").unwrap_or("").to_owned(),
                    });
                }
            }
            let Some(state) = self.states.get_mut(&choice) else {
                continue; // inserted above
            };
            if let Some((text, reasoning, index)) = bare_text(&leaf) {
                let appended = match index {
                    None => append_bare_text(state, text, reasoning),
                    Some(index) => append_indexed_text(state, text, reasoning, index),
                };
                if appended {
                    continue; // what fold does with this leaf, without parsing it
                }
            } else if let Some((arguments, index)) = bare_arguments(&leaf) {
                match append_indexed_arguments(&NativeHost, state, arguments, index) {
                    Ok(true) => continue,
                    Ok(false) => {}
                    Err(err) => return Err(native_error(err, self.count)),
                }
            }
            let parsed = Leaf::parse(&NativeHost, Family::Assistant, leaf);
            if let Err(err) = fold(&NativeHost, state, &parsed) {
                self.closed = Some(format!("event {} raised while folding", self.count));
                return Err(native_error(err, self.count));
            }
        }
        Ok(())
    }

    /// `fold_all` of a fast path's leaves: a bare delta is appended to its part without being
    /// built as a leaf, when that is what `fold_all` would do with it.
    fn fold_fast(&mut self, leaves: common::FastLeaves) -> Result<(), AggError> {
        if leaves.iter().any(|(choice, _)| self.finished(*choice)) {
            // a delta for a choice that finished (spec §6.1): read as any other event
            let leaves = leaves.into_iter().map(|(c, l)| (c, l.build())).collect();
            let leaves = self.after_finish(leaves);
            return self.fold_all(leaves);
        }
        for (choice, leaf) in leaves {
            if let Some(state) = self.states.get_mut(&choice) {
                // the checks of `bare_text` / `bare_arguments`: an empty text is folded
                let appended = match &leaf {
                    common::FastLeaf::Text {
                        text,
                        reasoning,
                        index,
                    } if !text.is_empty() => match index {
                        None => append_bare_str(state, text, *reasoning),
                        Some(index) => append_indexed_str(state, text, *reasoning, *index),
                    },
                    common::FastLeaf::TextLogprobs {
                        text,
                        reasoning,
                        logprobs,
                    } if !text.is_empty() => {
                        append_bare_str_logprobs(state, text, *reasoning, logprobs)
                            .map_err(|err| native_error(err, self.count))?
                    }
                    common::FastLeaf::Arguments { arguments, index } if !arguments.is_empty() => {
                        append_indexed_arguments_str(state, arguments, *index)
                            .map_err(|err| native_error(err, self.count))?
                    }
                    _ => false,
                };
                if appended {
                    continue;
                }
            }
            self.fold_all(vec![(choice, leaf.build())])?;
        }
        Ok(())
    }

    /// Whether choice `choice` has finished (spec §6.1): its finish reason came, or its
    /// terminal status (`message_stop`, `response.completed`, `done`, `messageStop`).
    fn finished(&self, choice: i64) -> bool {
        self.states.get(&choice).is_some_and(|state| {
            state.finish_reason.is_some()
                || matches!(&state.status, Some(Value::Str(status)) if status == "complete")
        })
    }

    /// An event's leaves without the content it carries for a choice that had finished
    /// before it (spec §6.1: a stream logged twice, events out of order). Such a choice gets
    /// one `delta_after_finish` anomaly and the event's metadata (usage, ids, status: merged
    /// after the finish as always), not its content, nor the anomalies its content raised:
    /// the finished message's content stays as it was.
    fn after_finish(&self, leaves: Leaves) -> Leaves {
        let mut refused: Vec<i64> = Vec::new();
        for (choice, leaf) in &leaves {
            if !refused.contains(choice) && carries_content(leaf) && self.finished(*choice) {
                refused.push(*choice);
            }
        }
        if refused.is_empty() {
            return leaves;
        }
        let mut out: Leaves = Vec::with_capacity(leaves.len() + refused.len());
        let mut told: Vec<i64> = Vec::new();
        for (choice, leaf) in leaves {
            if !refused.contains(&choice) {
                out.push((choice, leaf));
                continue;
            }
            if !told.contains(&choice) {
                told.push(choice);
                let detail = format!(
                    "event {} carries content for choice {choice}, which had finished: its \
                     content was not merged",
                    self.count
                );
                let mut anomaly = common::Obj::new();
                anomaly.put(
                    "anomalies",
                    common::list_value(vec![common::anomaly("delta_after_finish", detail)]),
                );
                out.push((choice, anomaly.build()));
            }
            let mut rest = common::Obj::new();
            if let Value::Dict(map) = &leaf {
                for (key, value) in map.iter() {
                    if !CONTENT_KEYS.contains(&key.as_str()) && key != "anomalies" {
                        rest.put(key, value.clone());
                    }
                }
            }
            if !rest.is_empty() {
                out.push((choice, rest.build()));
            }
        }
        out
    }

    fn new_state(&mut self, choice: i64) -> Result<(), AggError> {
        let mut state = State::new(
            &NativeHost,
            Family::Assistant,
            common::str_value("assistant"),
            self.options,
        );
        let mut first = common::Obj::new();
        first.put("choice_index", Value::Int(choice));
        if let Some(provider) = self.provider {
            let mut meta = common::Obj::new();
            meta.put("provider", common::str_value(provider));
            first.put("provider_metadata", meta.build());
        }
        let leaf = Leaf::parse(&NativeHost, Family::Assistant, first.build());
        fold(&NativeHost, &mut state, &leaf).map_err(|e| native_error(e, self.count))?;
        if !self.pending.is_empty() {
            // the unreadable events before the first choice, in their order
            let mut anomalies = common::Obj::new();
            anomalies.put(
                "anomalies",
                common::list_value(std::mem::take(&mut self.pending)),
            );
            let leaf = Leaf::parse(&NativeHost, Family::Assistant, anomalies.build());
            fold(&NativeHost, &mut state, &leaf).map_err(|e| native_error(e, self.count))?;
        }
        self.states.insert(choice, state);
        Ok(())
    }

    fn ensure_choice(&mut self) {
        if self.states.is_empty() {
            // no event at all: one empty, incomplete message (cannot fail: a fixed leaf)
            let _ = self.new_state(0);
        }
    }
}

/// The sink of [`AggregatorCore::feed`]: reads each payload unless an earlier one of the same
/// call failed (the call's error, in `result`; the payloads after it are not read).
struct Reader<'a> {
    core: &'a mut AggregatorCore,
    result: Result<(), AggError>,
    /// the line the fast path just declined (where it lies): when the scan hands over that
    /// very payload, it is not offered to the fast path again
    declined: Option<(*const u8, usize)>,
}

impl Sink for Reader<'_> {
    fn payload(&mut self, payload: &[u8]) {
        if self.result.is_err() {
            return;
        }
        let declined = self.declined.take() == Some((payload.as_ptr(), payload.len()));
        self.result = match declined {
            true => self.core.read_generic(payload),
            false => self.core.read(payload),
        };
    }

    fn whole_line(&mut self, line: &[u8]) -> bool {
        if self.result.is_err() {
            return false; // scanned as always, and not read
        }
        match self.core.read_fast(line) {
            Some(result) => {
                self.result = result;
                true
            }
            None => {
                self.declined = Some((line.as_ptr(), line.len()));
                false
            }
        }
    }
}

/// The text of a leaf that is nothing but one text or reasoning delta, whether it is
/// reasoning, and its part index if it has one (`{"parts": [{"part": "text" | "reasoning",
/// "text": "...", "index"?: i}]}`): most events of a long stream. [`append_bare_text`] and
/// [`append_indexed_text`] append it as `fold` would.
fn bare_text(leaf: &Value) -> Option<(&Value, bool, Option<&Value>)> {
    let Value::Dict(map) = leaf else { return None };
    if map.len() != 1 {
        return None;
    }
    let Some(Value::List(parts)) = map.get("parts") else {
        return None;
    };
    let [Value::Dict(part)] = parts.as_slice() else {
        return None;
    };
    let index = part.get("index");
    if part.len() != 2 + usize::from(index.is_some()) {
        return None;
    }
    let reasoning = match part.get("part") {
        Some(Value::Str(kind)) if kind == "text" => false,
        Some(Value::Str(kind)) if kind == "reasoning" => true,
        _ => return None,
    };
    match (part.get("text"), index) {
        (_, Some(Value::Null)) => None,
        (Some(text @ Value::Str(t)), index) if !t.is_empty() => Some((text, reasoning, index)),
        _ => None,
    }
}

/// The arguments and provider index of a leaf that is nothing but one tool-call arguments
/// fragment at an index (`{"parts": [{"part": "tool_call", "provider_index": i, "arguments":
/// "..."}]}`): the deltas of a streamed call. [`append_indexed_arguments`] appends them as
/// `fold` would.
fn bare_arguments(leaf: &Value) -> Option<(&Value, &Value)> {
    let Value::Dict(map) = leaf else { return None };
    if map.len() != 1 {
        return None;
    }
    let Some(Value::List(parts)) = map.get("parts") else {
        return None;
    };
    let [Value::Dict(part)] = parts.as_slice() else {
        return None;
    };
    if part.len() != 3 || !matches!(part.get("part"), Some(Value::Str(k)) if k == "tool_call") {
        return None;
    }
    match (part.get("arguments"), part.get("provider_index")) {
        (Some(arguments @ Value::Str(a)), Some(index))
            if !a.is_empty() && !matches!(index, Value::Null) =>
        {
            Some((arguments, index))
        }
        _ => None,
    }
}

/// The anomalies an adapter raises reading an event's content (a block started at an index
/// in use, a delta before its start, a done text other than the deltas): after the finish
/// they are part of the content that is not merged (a stream logged twice raises them).
const CONTENT_ANOMALIES: &[&str] = &["index_collision", "delta_before_start", "mismatched_delta"];

/// The keys of a leaf that hold content (spec §6.1); [`carries_content`] reads their values.
const CONTENT_KEYS: &[&str] = &[
    "parts",
    "content",
    "completion_token_ids",
    "refusal",
    "logprobs",
];

/// Whether a leaf carries content (spec §6.1): text, reasoning, a refusal, tool-call
/// fragments, logprobs, token ids, or an anomaly of reading them; an empty text part is
/// none. Everything else of a leaf (usage, ids, finish reason, status, metadata, other
/// anomalies) is metadata.
fn carries_content(leaf: &Value) -> bool {
    let Value::Dict(map) = leaf else {
        return false;
    };
    map.iter().any(|(key, value)| match key.as_str() {
        "parts" => common::items(Some(value)).iter().any(content_part),
        "content" | "completion_token_ids" => match value {
            Value::Null => false,
            Value::Str(text) => !text.is_empty(),
            Value::List(items) => !items.is_empty(),
            _ => true,
        },
        "refusal" => matches!(value, Value::Str(text) if !text.is_empty()),
        "logprobs" => !matches!(value, Value::Null),
        "anomalies" => common::items(Some(value)).iter().any(|anomaly| {
            common::get_str(anomaly, "code").is_some_and(|code| CONTENT_ANOMALIES.contains(&code))
        }),
        _ => false,
    })
}

/// Whether a part of a leaf is content: any part but a text or reasoning part with nothing
/// but an empty text and no index (the empty delta of a chunk that carries only metadata; an
/// index is a block opened).
fn content_part(part: &Value) -> bool {
    let Value::Dict(map) = part else {
        return true;
    };
    let empty = matches!(map.get("part"), Some(Value::Str(kind)) if kind == "text" || kind == "reasoning")
        && matches!(map.get("text"), Some(Value::Str(text)) if text.is_empty())
        && map
            .keys()
            .all(|key| matches!(key.as_str(), "part" | "text"));
    !empty
}

/// The first keys of an event, as error and anomaly details name them.
/// What to do when an event no provider knows holds one in a field: it is a log's wrapper
/// record (`{"ts": ..., "stream_id": ..., "event": {...}}`), read by `fastmerge batch`.
fn wrapper_hint(event: &Value) -> Option<String> {
    let Value::Dict(map) = event else {
        return None;
    };
    map.iter().find_map(|(key, value)| {
        let name = match value {
            Value::Dict(_) => providers::detect(value)?,
            _ => return None,
        };
        Some(format!(
            "its {} is an event of {name}: read a log of such records with \
             fastmerge batch --group-by KEY --event {key}",
            py_repr(&Value::Str(key.clone()))
        ))
    })
}

fn keys_of(event: &Value) -> String {
    let keys: Vec<String> = match event {
        Value::Dict(map) => map
            .keys()
            .take(8)
            .map(|k| py_repr(&Value::Str(k.clone())))
            .collect(),
        _ => Vec::new(),
    };
    keys.join(", ")
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
