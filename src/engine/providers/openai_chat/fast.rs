//! The typed fast path of the openai-chat adapter: the hot shape of a chat chunk (choices
//! whose delta carries only role / content / reasoning / refusal / arguments fragments of
//! known calls, a finish_reason, `logprobs`, the usual top-level scalars, and keys no step
//! reads, kept as the generic path keeps them; or no choice, with its usage) read with a
//! borrowed serde parse straight from the event's bytes, to the leaves [`Adapter::event`]
//! builds from the parsed tree. Only what a leaf keeps is copied: its texts, and the logprobs,
//! kept as the text of their entries (events::KeptItems). Anything else (a key the generic
//! path reads its own way, another type, a null where the generic path would error, a
//! duplicate key, an escape it cannot borrow around, a state the generic path would flag)
//! makes [`fast_event`] answer None and the caller reads the event the generic way: the
//! exact-shape check is what keeps both paths byte-identical (tests/engine/fastpath.rs runs
//! both on the corpus and on generated chunks).
//!
//! Most chunks of a stream are alike but for their delta's text and padding: a chunk read as
//! one bare delta is kept as a template, and a later chunk whose other bytes are the same
//! is read by comparing them ([`templates`]) instead of being parsed.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::{delta, Adapter, Choice, REASONING_FIELD, TOP_KEYS};
use crate::engine::events::{kept_items_at, parse_member, KeptItems};
use crate::engine::providers::common::{
    arguments_part, list_value, str_value, FastLeaf, FastLeaves, Obj, Object, Str,
};
use crate::engine::text::is_absent_text;
use crate::engine::value::{Map, Value};

mod choice;
mod chunk;
mod templates;
use choice::{ChunkChoice, Delta};
use chunk::{Chunk, Extra};
use templates::template_event;
pub(super) use templates::Templates;

/// A field that may only be missing or null (`Option<OnlyNull>`): any other value fails the
/// typed parse, so the event takes the generic path.
struct OnlyNull;

impl<'de> Deserialize<'de> for OnlyNull {
    fn deserialize<D: Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        Err(serde::de::Error::custom("not the fast shape"))
    }
}

type Text<'a> = Option<Str<'a>>;

/// An arguments fragment of a call already started at this index (no id or name; a type
/// only where the call has one, checked in [`calls_are_known`]).
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
    let Chunk {
        id: chunk_id,
        model,
        created,
        object,
        system_fingerprint,
        service_tier,
        choices,
        usage,
        obfuscation,
        extra,
    } = chunk;
    let response = response(&extra)?;
    let id = chunk_id.as_deref();
    if let (Some(finished), Some(id)) = (adapter.finished_id.finished(), id) {
        if !is_absent_text(id) && id != finished {
            return None; // another response: the generic path reports it
        }
    }
    let top = Scalars {
        id,
        model: model.as_deref(),
        created,
        meta: [
            (3, object.as_deref()),
            (4, system_fingerprint.as_deref()),
            (5, service_tier.as_deref()),
        ],
    };
    if choices.is_empty() {
        let leaves = no_choices(adapter, &top, usage, response)?;
        return Some((leaves, None, None, None));
    }
    if usage.is_some() {
        return None; // usage beside choices (DeepSeek's last chunk): the generic path
    }
    if !calls_are_known(adapter, &choices) {
        return None;
    }
    let ignored = match &obfuscation {
        Some(Str(Cow::Borrowed(obfuscation))) => Some(*obfuscation),
        _ => None,
    };
    let (kept, logprobs_text) = choices_logprobs(&choices)?;
    let extras = choices_extras(&choices)?;
    let mut leaves = FastLeaves::with_capacity(choices.len());
    for ((Object(choice), kept_logprobs), extra) in choices.into_iter().zip(kept).zip(extras) {
        let state = adapter.choices.entry(choice.index).or_default();
        let read = read_delta(state, choice.delta.as_ref());
        let finish = choice.finish_reason.as_deref();
        let complete = finish.is_some_and(|f| !is_absent_text(f));
        if complete {
            state.finished = true;
        }
        let (fields, meta) = fresh_top(state, &top, response.as_ref(), read.reasoning_field, extra);
        let leaf = choice_leaf(read, finish, complete, fields, meta, kept_logprobs);
        leaves.push((choice.index, leaf));
    }
    let finished = adapter.choices.values().any(|c| c.finished);
    adapter.finished_id.track_str(id, finished);
    let id = chunk_id.as_ref().map(|id| keep(&id.0));
    Some((leaves, id, ignored, logprobs_text))
}

/// A chunk without choices (the `stream_options.include_usage` chunk, a gateway's chunk of
/// metadata): one leaf of its usage and top-level fields for every choice seen, sent whole
/// and remembered, as the generic path's `event` does, through the same `Top`. The usage
/// chunk ends the stream ([`Adapter::fast_ended`]). None where its usage is not read as the
/// generic path reads it (not an object).
fn no_choices<'a>(
    adapter: &mut Adapter,
    scalars: &Scalars<'_>,
    usage: Option<&RawValue>,
    response: Option<Value>,
) -> Option<FastLeaves<'a>> {
    let usage = match usage.map(|raw| parse_member(raw.get().as_bytes(), 2)) {
        None => None,
        Some(Ok(Value::Dict(raw))) => Some(super::usage(&raw)),
        Some(_) => return None,
    };
    let (id, model) = (scalars.id.map(str_value), scalars.model.map(str_value));
    let fields: Vec<(&'static str, &Value)> = [("response_id", &id), ("response_model", &model)]
        .into_iter()
        .filter_map(|(key, value)| value.as_ref().map(|value| (key, value)))
        .collect();
    let created = scalars.created.map(Value::Int);
    let texts: Vec<(&'static str, Value)> = scalars
        .meta
        .iter()
        .filter_map(|(slot, text)| {
            Some((TOP_KEYS[*slot], str_value(text.filter(|t| !t.is_empty())?)))
        })
        .collect();
    let meta = created
        .as_ref()
        .map(|value| ("created", value))
        .into_iter()
        .chain(texts.iter().map(|(key, value)| (*key, value)))
        .collect();
    adapter.templates.clear();
    adapter.ended = usage.is_some();
    let top = super::Top {
        usage,
        fields,
        meta,
        response,
    };
    let finished = adapter.choices.values().any(|c| c.finished);
    adapter.finished_id.track_str(scalars.id, finished);
    let mut leaf = Obj::new();
    Adapter::put_top(&mut leaf, &top, Map::default(), None);
    let mut leaves = FastLeaves::new();
    if !leaf.is_empty() {
        let leaf = leaf.build();
        for index in adapter.targets() {
            if let Some(state) = adapter.choices.get_mut(&index) {
                state.remember(&top);
            }
            leaves.push((index, FastLeaf::Leaf(leaf.clone())));
        }
    }
    Some(leaves)
}

/// Whether every call fragment of the chunk continues a call the adapter knows, as the fast
/// path can read it. A fragment of a call not seen yet is an anomaly (delta_before_start):
/// the generic path.
#[inline]
fn calls_are_known(adapter: &Adapter, choices: &[Object<ChunkChoice<'_>>]) -> bool {
    for choice in choices {
        let calls = choice.delta.as_ref().and_then(|d| d.tool_calls.as_deref());
        for call in calls.unwrap_or(&[]) {
            let known = adapter.choices.get(&choice.index);
            if !known.is_some_and(|state| state.calls.contains_key(&call.index)) {
                return false;
            }
            // a type changes nothing only where the fold's call at this index has one (set
            // once), and only with arguments: without them a type alone is metadata that
            // the fold attaches to the call, where the bare fragment is ignored
            if call.kind.is_some()
                && (call.kind.as_deref().is_some_and(is_absent_text)
                    || call.function.arguments.is_empty()
                    || !known.is_some_and(|state| state.typed_calls.contains(&call.index)))
            {
                return false;
            }
        }
    }
    true
}

/// The chunk's other top-level entries as the generic path sends them
/// (`provider_metadata["response"]`): those not null, read as values, in order; None (the
/// generic path) where one is not read as the generic path reads it.
fn response(extra: &[Extra<'_>]) -> Option<Option<Value>> {
    let mut map = Map::default();
    for (key, raw) in extra {
        let text = raw.get();
        if text == "null" {
            continue;
        }
        let value = parse_member(text.as_bytes(), 2).ok()?;
        map.insert(key.clone().into_owned(), value);
    }
    Some((!map.is_empty()).then(|| Value::Dict(std::sync::Arc::new(map))))
}

/// The entries of `extra` not null, read as values at level `depth` of the event, in order
/// (the generic path's `others`); None where one is not read as the generic path reads it.
fn extra_map(extra: &[Extra<'_>], depth: usize) -> Option<Map> {
    let mut map = Map::default();
    for (key, raw) in extra {
        let text = raw.get();
        if text != "null" {
            map.insert(
                key.clone().into_owned(),
                parse_member(text.as_bytes(), depth).ok()?,
            );
        }
    }
    Some(map)
}

/// Every choice's keys of no step as the generic path keeps them (`unknown_fields`): the
/// choice's under `provider_metadata["choice"]`, its delta's under `["message"]`; read before
/// any state changes (a decline leaves it untouched).
#[inline]
fn choices_extras(choices: &[Object<ChunkChoice<'_>>]) -> Option<Vec<Vec<(&'static str, Value)>>> {
    let mut all = Vec::with_capacity(choices.len());
    for Object(choice) in choices {
        let delta_extra = choice.delta.as_ref().map_or(&[][..], |d| &d.extra[..]);
        let mut entries = Vec::new();
        if choice.extra.is_empty() && delta_extra.is_empty() {
            all.push(entries);
            continue;
        }
        // (levels: the choice's members are level 4 of the event, its delta's level 5)
        for (key, extra, depth) in [
            ("choice", &choice.extra[..], 4),
            ("message", delta_extra, 5),
        ] {
            let map = extra_map(extra, depth)?;
            if !map.is_empty() {
                entries.push((key, Value::Dict(std::sync::Arc::new(map))));
            }
        }
        all.push(entries);
    }
    Some(all)
}

/// Every choice's logprobs, read before any state changes (a decline leaves it untouched),
/// and the text of the last one; None where one is not read whole.
#[inline]
fn choices_logprobs<'a>(
    choices: &[Object<ChunkChoice<'a>>],
) -> Option<(Vec<Option<Value>>, Option<&'a str>)> {
    let mut kept = Vec::with_capacity(choices.len());
    let mut logprobs_text = None;
    for choice in choices {
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
    Some((kept, logprobs_text))
}

/// The chunk's top-level scalars a leaf may carry: the id and model (slots 0 and 1 of
/// [`TOP_KEYS`]), `created` (slot 2), and the texts of slots 3 to 5.
struct Scalars<'c> {
    id: Option<&'c str>,
    model: Option<&'c str>,
    created: Option<i64>,
    meta: [(usize, Option<&'c str>); 3],
}

/// What one choice's delta holds, in the generic path's order of work (its state changes
/// made); the leaf is built from it at the end, so that a bare text delta is never built as
/// a leaf.
struct DeltaRead<'c, 'a> {
    role: Option<&'c str>,
    reasoning: Option<&'c Str<'a>>,
    /// the key the reasoning came under
    reasoning_field: Option<&'static str>,
    content: Option<&'c Str<'a>>,
    calls: Vec<(i64, &'c Cow<'a, str>)>,
    refusal: Option<&'c str>,
}

/// The delta's entries, closing the open call where a text comes (as the fold does).
#[inline]
fn read_delta<'c, 'a>(
    state: &mut Choice,
    delta: Option<&'c Object<Delta<'a>>>,
) -> DeltaRead<'c, 'a> {
    let mut read = DeltaRead {
        role: None,
        reasoning: None,
        reasoning_field: None,
        content: None,
        calls: Vec::new(),
        refusal: None,
    };
    let Some(Object(d)) = delta else {
        return read;
    };
    read.role = d.role.as_deref();
    read.reasoning = [
        ("reasoning_content", &d.reasoning_content),
        ("reasoning", &d.reasoning),
    ]
    .into_iter()
    .find_map(|(key, text)| text.as_ref().filter(|t| !t.is_empty()).map(|t| (key, t)))
    .map(|(key, text)| {
        read.reasoning_field = Some(key);
        text
    });
    if read.reasoning.is_some() {
        state.open_call = None;
    }
    read.content = d.content.as_ref().filter(|t| !t.is_empty());
    if read.content.is_some() {
        state.open_call = None;
    }
    for call in d.tool_calls.as_deref().unwrap_or(&[]) {
        read.calls.push((call.index, &call.function.arguments));
        // a known call, no new id or name: its identity stays (calls_are_known); copied
        // only when another call was open
        let identity = state.calls.get(&call.index);
        if state.open_call.as_ref() != identity {
            state.open_call = identity.cloned();
        }
    }
    read.refusal = d.refusal.as_deref().filter(|t| !t.is_empty());
    read
}

/// put_top: the top-level entries that changed since they were last sent to this choice, as
/// leaf fields (id, model) and provider metadata (the rest, then the reasoning field's name,
/// the first one sent, after the chunk's metadata as in the generic path).
#[inline]
fn fresh_top(
    state: &mut Choice,
    top: &Scalars<'_>,
    response: Option<&Value>,
    reasoning_field: Option<&'static str>,
    extra: Vec<(&'static str, Value)>,
) -> (Vec<(&'static str, Value)>, Map) {
    let mut fields: Vec<(&'static str, Value)> = Vec::new();
    // (TOP_KEYS by position)
    for (slot, value) in [(0, top.id), (1, top.model)] {
        if let Some(value) = value.and_then(|v| state.fresh_top_str(slot, v)) {
            fields.push((TOP_KEYS[slot], value));
        }
    }
    let mut meta = Map::default();
    if let Some(created) = top.created {
        let value = Value::Int(created);
        if state.fresh_top(2, &value) {
            meta.insert("created".to_owned(), value);
        }
    }
    for (slot, value) in top.meta {
        let Some(text) = value.filter(|t| !t.is_empty()) else {
            continue;
        };
        if let Some(value) = state.fresh_top_str(slot, text) {
            meta.insert(TOP_KEYS[slot].to_owned(), value);
        }
    }
    if let Some(response) = response.filter(|value| state.fresh("response", value)) {
        meta.insert("response".to_owned(), response.clone());
    }
    if state.top[REASONING_FIELD].is_none() {
        if let Some(value) =
            reasoning_field.and_then(|key| state.fresh_top_str(REASONING_FIELD, key))
        {
            meta.insert(TOP_KEYS[REASONING_FIELD].to_owned(), value);
        }
    }
    for (key, value) in extra {
        if state.fresh(key, &value) {
            meta.insert(key.to_owned(), value);
        }
    }
    (fields, meta)
}

/// One choice's leaf: a text delta with its logprobs, a bare delta, or a whole leaf.
#[inline]
fn choice_leaf<'a>(
    read: DeltaRead<'_, 'a>,
    finish: Option<&str>,
    complete: bool,
    fields: Vec<(&'static str, Value)>,
    meta: Map,
    mut kept_logprobs: Option<Value>,
) -> FastLeaf<'a> {
    // nothing but one delta (and its logprobs)
    let alone = read.role.is_none()
        && read.refusal.is_none()
        && finish.is_none()
        && fields.is_empty()
        && meta.is_empty();
    let only_text = read.reasoning.xor(read.content);
    if let Some(text) = only_text.filter(|_| alone && read.calls.is_empty()) {
        if let Some(logprobs) = kept_logprobs.take() {
            return FastLeaf::TextLogprobs {
                text: keep(&text.0),
                reasoning: read.reasoning.is_some(),
                logprobs,
            };
        }
    }
    let alone = alone && kept_logprobs.is_none();
    let bare = match (read.reasoning, read.content, read.calls.as_slice()) {
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
    match bare {
        Some(leaf) => leaf,
        None => FastLeaf::Leaf(whole_leaf(
            read,
            finish,
            complete,
            fields,
            meta,
            kept_logprobs,
        )),
    }
}

/// The leaf as the generic path builds it, key for key.
fn whole_leaf(
    read: DeltaRead<'_, '_>,
    finish: Option<&str>,
    complete: bool,
    fields: Vec<(&'static str, Value)>,
    meta: Map,
    kept_logprobs: Option<Value>,
) -> Value {
    let mut leaf = Obj::new();
    if let Some(role) = read.role {
        leaf.put("role", str_value(role));
    }
    let mut parts: Vec<Value> = Vec::new();
    if let Some(text) = read.reasoning {
        parts.push(delta("reasoning", text));
    }
    if let Some(text) = read.content {
        parts.push(delta("text", text));
    }
    parts.extend(
        read.calls
            .into_iter()
            .map(|(index, arguments)| arguments_part(arguments, index)),
    );
    if !parts.is_empty() {
        leaf.put("parts", list_value(parts));
    }
    if let Some(text) = read.refusal {
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
    leaf.build()
}
