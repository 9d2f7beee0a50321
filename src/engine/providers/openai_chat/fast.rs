//! The typed fast path of the openai-chat adapter: the hot shape of a chat chunk (choices
//! whose delta carries only role / content / reasoning / refusal / arguments fragments of
//! known calls, a finish_reason, `logprobs`, and the usual top-level scalars) read with a
//! borrowed serde parse straight from the event's bytes, to the leaves [`Adapter::event`]
//! builds from the parsed tree. Only what a leaf keeps is copied: its texts, and the logprobs,
//! kept as the text of their entries (events::KeptItems). Anything else (another key, another
//! type, a null where the generic path would error, a duplicate key, an escape it cannot
//! borrow around, a state the generic path would flag) makes [`fast_event`] answer None and
//! the caller reads the event the generic way: the exact-shape check is what keeps both paths
//! byte-identical (tests/engine/fastpath.rs runs both on the corpus).
//!
//! Most chunks of a stream are alike but for their delta's text and padding: a chunk read as
//! one bare delta is kept as a [`Template`], and a later chunk whose other bytes are the same
//! is read by comparing them ([`template_event`]) instead of being parsed.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::{delta, Adapter, REASONING_FIELD, TOP_KEYS};
use crate::engine::events::{kept_items_at, KeptItems};
use crate::engine::providers::common::{
    arguments_part, list_value, str_value, FastLeaf, FastLeaves, Obj, Object,
};
use crate::engine::text::is_absent_text;
use crate::engine::value::{Map, Value};

/// A field that may only be missing or null (`Option<OnlyNull>`): any other value fails the
/// typed parse, so the event takes the generic path.
struct OnlyNull;

impl<'de> Deserialize<'de> for OnlyNull {
    fn deserialize<D: Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        Err(serde::de::Error::custom("not the fast shape"))
    }
}

/// A str of the event, borrowed from its bytes unless it holds an escape. (serde reads an
/// `Option<Cow<str>>` field as an owned copy, whatever `borrow` says; a newtype of a borrowed
/// `Cow` inside the `Option` is read in place.)
#[derive(Deserialize)]
struct Str<'a>(#[serde(borrow)] Cow<'a, str>);

impl std::ops::Deref for Str<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

type Text<'a> = Option<Str<'a>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    id: Text<'a>,
    #[serde(borrow, default)]
    model: Text<'a>,
    #[serde(default)]
    created: Option<i64>,
    #[serde(borrow, default)]
    object: Text<'a>,
    #[serde(borrow, default)]
    system_fingerprint: Text<'a>,
    #[serde(borrow, default)]
    service_tier: Text<'a>,
    #[serde(borrow)]
    choices: Vec<Object<ChunkChoice<'a>>>,
    #[serde(default)]
    usage: Option<OnlyNull>,
    /// read and not kept, as the generic path (a known top-level key)
    #[serde(borrow, default)]
    obfuscation: Text<'a>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChunkChoice<'a> {
    /// missing: 0; null fails (the generic path's error)
    #[serde(default)]
    index: i64,
    #[serde(borrow, default)]
    delta: Option<Object<Delta<'a>>>,
    #[serde(borrow, default)]
    finish_reason: Text<'a>,
    /// kept whole (the leaf's `logprobs`), level 4 of the event: read by [`logprobs`] (a
    /// template keeps where it lies)
    #[serde(borrow, default)]
    logprobs: Option<&'a RawValue>,
    /// vLLM's `"token_ids": null` on every chunk
    #[serde(default)]
    #[allow(dead_code)]
    token_ids: Option<OnlyNull>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Delta<'a> {
    #[serde(borrow, default)]
    role: Text<'a>,
    #[serde(borrow, default)]
    content: Text<'a>,
    #[serde(borrow, default)]
    reasoning_content: Text<'a>,
    #[serde(borrow, default)]
    reasoning: Text<'a>,
    #[serde(borrow, default)]
    refusal: Text<'a>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<Object<Call<'a>>>>,
}

/// An arguments fragment of a call already started at this index (no id or name; a type
/// only where the call has one, checked in [`typed_event`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Call<'a> {
    index: i64,
    #[serde(default)]
    #[allow(dead_code)]
    id: Option<OnlyNull>,
    /// LiteLLM's stream objects (and some providers) repeat `"type": "function"` on every
    /// fragment
    #[serde(borrow, default, rename = "type")]
    kind: Text<'a>,
    #[serde(borrow)]
    function: Object<Function<'a>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Function<'a> {
    #[serde(borrow)]
    arguments: Cow<'a, str>,
    #[serde(default)]
    #[allow(dead_code)]
    name: Option<OnlyNull>,
}

/// A choice's `logprobs` (level 4 of the event) at `pos` in `raw`: its `content` entries kept
/// as their text, the rest read into values (the usual shape by [`kept_items_at`], any other
/// by serde, [`KeptItems`]), and where they end; None where the typed path declines (a
/// negative zero outside the entries, too deep, not JSON).
fn logprobs_at(raw: &[u8], pos: usize) -> Option<(Value, usize)> {
    // null members read as absent, as the generic path reads them
    if let Some((value, end)) = kept_items_at(raw, pos, 4) {
        return Some((super::without_null_members(&value), end));
    }
    let mut values = serde_json::Deserializer::from_slice(raw.get(pos..)?).into_iter();
    let KeptItems::<4>(value) = values.next()?.ok()?;
    Some((
        super::without_null_members(&value),
        pos + values.byte_offset(),
    ))
}

/// A text of the event, borrowed from its bytes where it lies there (no escape in it).
fn keep<'a>(text: &Cow<'a, str>) -> Cow<'a, str> {
    match text {
        Cow::Borrowed(text) => Cow::Borrowed(text),
        Cow::Owned(text) => Cow::Owned(text.clone()),
    }
}

/// The leaves of `raw` when it is the hot shape (see the module docs), else None with the
/// adapter untouched.
pub(super) fn fast_event<'a>(adapter: &mut Adapter, raw: &'a [u8]) -> Option<FastLeaves<'a>> {
    if let Some(leaves) = template_event(adapter, raw) {
        return Some(leaves);
    }
    let (leaves, id, ignored, logprobs) = typed_event(adapter, raw)?;
    adapter.templates.after(raw, &leaves, id, ignored, logprobs);
    Some(leaves)
}

/// What [`typed_event`] read: the leaves, the chunk's id, its `obfuscation` when it is read
/// in place (a string whose value is not kept), and the text of its one choice's `logprobs`.
type Typed<'a> = (
    FastLeaves<'a>,
    Option<Cow<'a, str>>,
    Option<&'a str>,
    Option<&'a str>,
);

/// [`fast_event`] by the typed parse.
fn typed_event<'a>(adapter: &mut Adapter, raw: &'a [u8]) -> Option<Typed<'a>> {
    // one UTF-8 check of the whole event, not one per string (invalid text: the generic path)
    let text = simdutf8::basic::from_utf8(raw).ok()?;
    let Object(chunk) = serde_json::from_str::<Object<Chunk<'a>>>(text).ok()?;
    if chunk.choices.is_empty() {
        return None; // a chunk for every choice: the generic path
    }
    let id = chunk.id.as_deref();
    if let (Some(finished), Some(id)) = (adapter.finished_id.finished(), id) {
        if !is_absent_text(id) && id != finished {
            return None; // another response: the generic path reports it
        }
    }
    // a fragment of a call not seen yet is an anomaly (delta_before_start): the generic path
    for choice in &chunk.choices {
        let calls = choice.delta.as_ref().and_then(|d| d.tool_calls.as_deref());
        for call in calls.unwrap_or(&[]) {
            let known = adapter.choices.get(&choice.index);
            if !known.is_some_and(|state| state.calls.contains_key(&call.index)) {
                return None;
            }
            // a type changes nothing only where the fold's call at this index has one (set
            // once), and only with arguments: without them a type alone is metadata that
            // the fold attaches to the call, where the bare fragment is ignored
            if call.kind.is_some()
                && (call.kind.as_deref().is_some_and(is_absent_text)
                    || call.function.arguments.is_empty()
                    || !known.is_some_and(|state| state.typed_calls.contains(&call.index)))
            {
                return None;
            }
        }
    }
    let _ = chunk.usage;
    let ignored = match &chunk.obfuscation {
        Some(Str(Cow::Borrowed(obfuscation))) => Some(*obfuscation),
        _ => None,
    };
    // every choice's logprobs read before any state changes (a decline leaves it untouched)
    let mut kept = Vec::with_capacity(chunk.choices.len());
    let mut logprobs_text = None;
    for choice in &chunk.choices {
        kept.push(match choice.logprobs {
            Some(raw) => {
                let text = raw.get();
                logprobs_text = Some(text);
                let (value, end) = logprobs_at(text.as_bytes(), 0)?;
                if end != text.len() {
                    return None;
                }
                Some(value)
            }
            None => None,
        });
    }
    let mut leaves = FastLeaves::with_capacity(chunk.choices.len());
    for (Object(choice), mut kept_logprobs) in chunk.choices.into_iter().zip(kept) {
        let state = adapter.choices.entry(choice.index).or_default();
        // the leaf's entries, in the generic path's order of work (state changes included);
        // built at the end, so that a bare text delta is never built as a leaf
        let mut role = None;
        let mut reasoning = None;
        let mut reasoning_field = None;
        let mut content = None;
        let mut calls: Vec<(i64, &Cow<'a, str>)> = Vec::new();
        let mut refusal = None;
        if let Some(d) = &choice.delta {
            role = d.role.as_deref();
            reasoning = [
                ("reasoning_content", &d.reasoning_content),
                ("reasoning", &d.reasoning),
            ]
            .into_iter()
            .find_map(|(key, text)| text.as_ref().filter(|t| !t.is_empty()).map(|t| (key, t)))
            .map(|(key, text)| {
                reasoning_field = Some(key);
                text
            });
            if reasoning.is_some() {
                state.open_call = None;
            }
            content = d.content.as_ref().filter(|t| !t.is_empty());
            if content.is_some() {
                state.open_call = None;
            }
            for call in d.tool_calls.as_deref().unwrap_or(&[]) {
                calls.push((call.index, &call.function.arguments));
                // a known call, no new id or name: its identity stays (checked above); copied
                // only when another call was open
                let identity = state.calls.get(&call.index);
                if state.open_call.as_ref() != identity {
                    state.open_call = identity.cloned();
                }
            }
            refusal = d.refusal.as_deref().filter(|t| !t.is_empty());
        }
        let finish = choice.finish_reason.as_deref();
        let complete = finish.is_some_and(|f| !is_absent_text(f));
        if complete {
            state.finished = true;
        }
        // put_top: only what changed since it was last sent to this choice
        let mut fields: Vec<(&str, Value)> = Vec::new();
        // (TOP_KEYS by position)
        for (slot, value) in [(0, id), (1, chunk.model.as_deref())] {
            if let Some(value) = value.and_then(|v| state.fresh_top_str(slot, v)) {
                fields.push((TOP_KEYS[slot], value));
            }
        }
        let mut meta = Map::default();
        if let Some(created) = chunk.created {
            let value = Value::Int(created);
            if state.fresh_top(2, &value) {
                meta.insert("created".to_owned(), value);
            }
        }
        for (slot, value) in [
            (3, &chunk.object),
            (4, &chunk.system_fingerprint),
            (5, &chunk.service_tier),
        ] {
            let Some(text) = value.as_deref().filter(|t| !t.is_empty()) else {
                continue;
            };
            if let Some(value) = state.fresh_top_str(slot, text) {
                meta.insert(TOP_KEYS[slot].to_owned(), value);
            }
        }
        // the reasoning field's name (the first one sent), after the chunk's metadata as in
        // the generic path
        if state.top[REASONING_FIELD].is_none() {
            if let Some(value) =
                reasoning_field.and_then(|key| state.fresh_top_str(REASONING_FIELD, key))
            {
                meta.insert(TOP_KEYS[REASONING_FIELD].to_owned(), value);
            }
        }
        // nothing but one delta (and its logprobs)
        let alone = role.is_none()
            && refusal.is_none()
            && finish.is_none()
            && fields.is_empty()
            && meta.is_empty();
        if let Some(text) = reasoning.xor(content).filter(|_| alone && calls.is_empty()) {
            if let Some(logprobs) = kept_logprobs.take() {
                leaves.push((
                    choice.index,
                    FastLeaf::TextLogprobs {
                        text: keep(&text.0),
                        reasoning: reasoning.is_some(),
                        logprobs,
                    },
                ));
                continue;
            }
        }
        let alone = alone && kept_logprobs.is_none();
        let bare = match (reasoning, content, calls.as_slice()) {
            (Some(text), None, []) if alone => Some(FastLeaf::Text {
                text: keep(&text.0),
                reasoning: true,
                index: None,
            }),
            (None, Some(text), []) if alone => Some(FastLeaf::Text {
                text: keep(&text.0),
                reasoning: false,
                index: None,
            }),
            (None, None, [(index, arguments)]) if alone => Some(FastLeaf::Arguments {
                arguments: keep(arguments),
                index: *index,
            }),
            _ => None,
        };
        if let Some(leaf) = bare {
            leaves.push((choice.index, leaf));
            continue;
        }
        let mut leaf = Obj::new();
        if let Some(role) = role {
            leaf.put("role", str_value(role));
        }
        let mut parts: Vec<Value> = Vec::new();
        if let Some(text) = reasoning {
            parts.push(delta("reasoning", text));
        }
        if let Some(text) = content {
            parts.push(delta("text", text));
        }
        parts.extend(
            calls
                .into_iter()
                .map(|(index, arguments)| arguments_part(arguments, index)),
        );
        if !parts.is_empty() {
            leaf.put("parts", list_value(parts));
        }
        if let Some(text) = refusal {
            leaf.put("refusal", str_value(text));
        }
        if let Some(logprobs) = kept_logprobs {
            leaf.put("logprobs", logprobs);
        }
        if let Some(finish) = finish {
            leaf.put("finish_reason", str_value(finish));
            if complete {
                leaf.put("status", str_value("complete"));
            }
        }
        for (key, value) in fields {
            leaf.put(key, value);
        }
        if !meta.is_empty() {
            leaf.put("provider_metadata", Value::Dict(std::sync::Arc::new(meta)));
        }
        leaves.push((choice.index, FastLeaf::Leaf(leaf.build())));
    }
    let finished = adapter.choices.values().any(|c| c.finished);
    adapter.finished_id.track_str(id, finished);
    let id = chunk.id.as_ref().map(|id| keep(&id.0));
    Some((leaves, id, ignored, logprobs_text))
}

// ---------------------------------------------------------------------------------------------
// Templates: a chunk read as the bytes of an earlier one

/// What a [`Template`] chunk comes out as: one bare delta of one choice.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Bare {
    Text { reasoning: bool },
    Arguments { index: i64 },
}

/// A chunk the typed path read as one bare delta, cut around the strings that change from
/// chunk to chunk: the delta's text and the `obfuscation` padding. Every other byte of a
/// chunk that matches it is the same, so the typed parse would read the same fields (the
/// holes are JSON strings, whatever they hold): the same id, model, choice, keys and nulls.
/// Reading the chunk would also change nothing the leaf depends on (a bare delta's chunk sends
/// no field: every top-level value was the one last sent to its choice, and that stays so), so
/// it comes out as the same bare delta with the hole's text, and changes the adapter's state
/// as the typed path would (`open_call`, the last id: [`template_event`] does it). Any other
/// chunk, or an event read the generic way, may change what is sent: it drops every template
/// ([`Templates::after`], [`Templates::clear`]).
#[derive(Debug)]
struct Template {
    /// the chunk's bytes without what its holes held (the quotes around each hole are kept)
    fixed: Vec<u8>,
    /// where each hole is in `fixed` (a string's after its opening quote), and what it holds
    holes: Vec<(usize, Hole)>,
    choice: i64,
    bare: Bare,
    id: Option<String>,
}

/// What a hole of a [`Template`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Hole {
    /// the delta's text (a JSON string)
    Text,
    /// the `obfuscation` padding (a JSON string, not kept)
    Ignored,
    /// the choice's `logprobs` (any JSON value: a chunk whose logprobs are null is a bare
    /// delta, as the typed path reads it)
    Logprobs,
}

/// What [`Template::read`] finds in a chunk's holes: the text, and the logprobs if the
/// template has that hole and they are not null.
type Holes<'a> = (Cow<'a, str>, Option<Value>);

/// The templates of the chunks read since the last chunk that was not one bare delta (a few:
/// one per kind of delta, per tool call, per choice).
#[derive(Debug, Default)]
pub(super) struct Templates {
    kept: Vec<Template>,
    /// templates made since one was last matched: a stream whose chunks differ elsewhere too
    /// (an id or a timestamp per chunk) makes one per chunk for nothing, so after
    /// [`MISSES`] of them only every [`RETRY`]th bare chunk is kept
    misses: u32,
}

const TEMPLATES: usize = 4;
const MISSES: u32 = 8;
const RETRY: u32 = 64;

impl Templates {
    /// An event read the generic way: what it sent is not known here.
    pub(super) fn clear(&mut self) {
        self.kept.clear();
    }

    /// After the typed path read `raw` into `leaves`: keep it as a template if it is one bare
    /// delta (with its logprobs, their text `logprobs`) whose text lies in `raw` (`ignored`:
    /// its `obfuscation`, if it lies there); drop every template if it is not bare.
    fn after(
        &mut self,
        raw: &[u8],
        leaves: &FastLeaves<'_>,
        id: Option<Cow<'_, str>>,
        ignored: Option<&str>,
        logprobs: Option<&str>,
    ) {
        if !leaves.iter().all(|(_, leaf)| {
            matches!(
                leaf,
                FastLeaf::Text { index: None, .. }
                    | FastLeaf::TextLogprobs { .. }
                    | FastLeaf::Arguments { .. }
            )
        }) {
            self.kept.clear();
            return;
        }
        let [(choice, leaf)] = leaves.as_slice() else {
            return;
        };
        let (text, bare) = match leaf {
            FastLeaf::Text {
                text: Cow::Borrowed(text),
                reasoning,
                index: None,
            } => (
                *text,
                Bare::Text {
                    reasoning: *reasoning,
                },
            ),
            FastLeaf::TextLogprobs {
                text: Cow::Borrowed(text),
                reasoning,
                ..
            } => (
                *text,
                Bare::Text {
                    reasoning: *reasoning,
                },
            ),
            FastLeaf::Arguments {
                arguments: Cow::Borrowed(arguments),
                index,
            } => (*arguments, Bare::Arguments { index: *index }),
            _ => return,
        };
        if text.is_empty() {
            return;
        }
        self.misses = self.misses.saturating_add(1);
        if self.misses > MISSES && self.misses % RETRY != 0 {
            return;
        }
        let mut holes: Vec<(usize, usize, Hole)> = Vec::with_capacity(3);
        let logprobs = match leaf {
            FastLeaf::TextLogprobs { .. } if logprobs.is_none() => return,
            FastLeaf::TextLogprobs { .. } => logprobs,
            _ => None,
        };
        for (hole, kind) in [
            (Some(text), Hole::Text),
            (ignored, Hole::Ignored),
            (logprobs, Hole::Logprobs),
        ] {
            let Some(hole) = hole else { continue };
            // a str the parse borrowed lies in `raw`: a string between the quotes of its
            // token, the logprobs as their whole JSON text
            let start = (hole.as_ptr() as usize).wrapping_sub(raw.as_ptr() as usize);
            let end = start.wrapping_add(hole.len());
            if start == 0 || end >= raw.len() {
                return;
            }
            if kind != Hole::Logprobs && (raw[start - 1] != b'"' || raw[end] != b'"') {
                return;
            }
            holes.push((start, end, kind));
        }
        holes.sort_unstable();
        let mut fixed = Vec::with_capacity(raw.len());
        let mut cuts = Vec::with_capacity(holes.len());
        let mut from = 0;
        for (start, end, kind) in holes {
            if start < from {
                return;
            }
            fixed.extend_from_slice(&raw[from..start]);
            cuts.push((fixed.len(), kind));
            from = end;
        }
        fixed.extend_from_slice(&raw[from..]);
        if self.kept.len() == TEMPLATES {
            self.kept.remove(0);
        }
        self.kept.push(Template {
            fixed,
            holes: cuts,
            choice: *choice,
            bare,
            id: id.map(Cow::into_owned),
        });
    }
}

impl Template {
    /// What the holes of `raw` hold, if it is this template's chunk with other strings (and
    /// logprobs) in its holes.
    fn read<'a>(&self, raw: &'a [u8]) -> Option<Holes<'a>> {
        let mut pos = 0;
        let mut from = 0;
        let mut text = None;
        let mut kept = None;
        for &(at, kind) in &self.holes {
            let run = &self.fixed[from..at];
            if raw.get(pos..pos + run.len())? != run {
                return None;
            }
            pos += run.len();
            from = at;
            if kind == Hole::Logprobs {
                // the value to its end, read as the typed path reads it (a decline declines)
                let (value, end) = logprobs_at(raw, pos)?;
                pos = end;
                kept = Some(value).filter(|value| !matches!(value, Value::Null));
                continue;
            }
            // the string to its closing quote (a control character is not JSON: the typed
            // path's error, so it reads the chunk)
            let start = pos;
            let mut escaped = false;
            loop {
                match *raw.get(pos)? {
                    b'"' => break,
                    b'\\' => {
                        escaped = true;
                        pos += 2;
                    }
                    0..=0x1f => return None,
                    _ => pos += 1,
                }
            }
            let body = raw.get(start..pos)?;
            let read: Cow<'a, str> = if escaped {
                // the escapes read as the typed parse reads them (an invalid one declines)
                Cow::Owned(serde_json::from_slice::<String>(raw.get(start - 1..=pos)?).ok()?)
            } else {
                Cow::Borrowed(std::str::from_utf8(body).ok()?)
            };
            if kind == Hole::Text {
                if read.is_empty() {
                    return None; // no delta: the typed path builds its leaf
                }
                text = Some(read);
            }
        }
        (raw.get(pos..)? == &self.fixed[from..]).then_some(())?;
        Some((text?, kept))
    }
}

/// [`fast_event`] of a chunk that matches a template: its bare delta, with the state changes
/// the typed path would make; None, with nothing done, if none matches.
fn template_event<'a>(adapter: &mut Adapter, raw: &'a [u8]) -> Option<FastLeaves<'a>> {
    let (template, (text, logprobs)) = adapter
        .templates
        .kept
        .iter()
        .find_map(|t| t.read(raw).map(|holes| (t, holes)))?;
    let id = template.id.as_deref();
    // the typed path's checks, which the adapter's state decides
    if let (Some(finished), Some(id)) = (adapter.finished_id.finished(), id) {
        if !is_absent_text(id) && id != finished {
            return None;
        }
    }
    let state = adapter.choices.get_mut(&template.choice)?;
    let leaf = match template.bare {
        Bare::Text { reasoning } => {
            state.open_call = None;
            match logprobs {
                Some(logprobs) => FastLeaf::TextLogprobs {
                    text,
                    reasoning,
                    logprobs,
                },
                None => FastLeaf::Text {
                    text,
                    reasoning,
                    index: None,
                },
            }
        }
        Bare::Arguments { index } => {
            // (a template's `type`, if any, was read where the call had one: only the generic
            // path changes that, and it drops every template)
            let call = state.calls.get(&index)?;
            if state.open_call.as_ref() != Some(call) {
                state.open_call = Some(call.clone());
            }
            FastLeaf::Arguments {
                arguments: text,
                index,
            }
        }
    };
    let choice = template.choice;
    let finished = adapter.choices.values().any(|c| c.finished);
    adapter.finished_id.track_str(id, finished);
    adapter.templates.misses = 0;
    Some(vec![(choice, leaf)])
}
