//! The typed fast path of the openai-chat adapter: the hot shape of a chat chunk (choices
//! whose delta carries only role / content / reasoning / refusal / arguments fragments of
//! known calls, a finish_reason, `logprobs`, and the usual top-level scalars) read with a
//! borrowed serde parse straight from the event's bytes, to the leaves [`Adapter::event`]
//! builds from the parsed tree. Only what a leaf keeps is copied: its texts, and the logprobs,
//! read into values where they lie (events::Nested). Anything else (another key, another
//! type, a null where the generic path would error, a duplicate key, an escape it cannot
//! borrow around, a state the generic path would flag) makes [`fast_event`] answer None and
//! the caller reads the event the generic way: the exact-shape check is what keeps both paths
//! byte-identical (tests/engine_fastpath.rs runs both on the corpus).

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};

use super::{delta, Adapter, TOP_KEYS};
use crate::engine::events::Nested;
use crate::engine::providers::common::{arguments_part, list, s, FastLeaf, FastLeaves, Obj};
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
    choices: Vec<ChunkChoice<'a>>,
    #[serde(default)]
    usage: Option<OnlyNull>,
    /// read and not kept, as the generic path (a known top-level key)
    #[serde(borrow, default)]
    #[allow(dead_code)]
    obfuscation: Text<'a>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChunkChoice<'a> {
    /// missing: 0; null fails (the generic path's error)
    #[serde(default)]
    index: i64,
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Text<'a>,
    /// kept whole (the leaf's `logprobs`), read into values in place: level 4 of the event
    #[serde(default)]
    logprobs: Option<Nested<4>>,
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
    tool_calls: Option<Vec<Call<'a>>>,
}

/// An arguments fragment of a call already started at this index (no id, type or name).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Call<'a> {
    index: i64,
    #[serde(default)]
    #[allow(dead_code)]
    id: Option<OnlyNull>,
    #[serde(default, rename = "type")]
    #[allow(dead_code)]
    kind: Option<OnlyNull>,
    #[serde(borrow)]
    function: Function<'a>,
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
    // one UTF-8 check of the whole event, not one per string (invalid text: the generic path)
    let text = std::str::from_utf8(raw).ok()?;
    let chunk: Chunk<'a> = serde_json::from_str(text).ok()?;
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
        }
    }
    let _ = chunk.usage;
    let mut leaves = FastLeaves::with_capacity(chunk.choices.len());
    for choice in chunk.choices {
        let state = adapter.choices.entry(choice.index).or_default();
        // the leaf's entries, in the generic path's order of work (state changes included);
        // built at the end, so that a bare text delta is never built as a leaf
        let mut role = None;
        let mut reasoning = None;
        let mut content = None;
        let mut calls: Vec<(i64, &Cow<'a, str>)> = Vec::new();
        let mut refusal = None;
        if let Some(d) = &choice.delta {
            role = d.role.as_deref();
            reasoning = [&d.reasoning_content, &d.reasoning]
                .into_iter()
                .flatten()
                .find(|text| !text.is_empty());
            if reasoning.is_some() {
                state.open_call = None;
            }
            content = d.content.as_ref().filter(|t| !t.is_empty());
            if content.is_some() {
                state.open_call = None;
            }
            for call in d.tool_calls.as_deref().unwrap_or(&[]) {
                calls.push((call.index, &call.function.arguments));
                // a known call, no new id or name: its identity stays (checked above)
                state.open_call = state.calls.get(&call.index).cloned();
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
        let alone = role.is_none()
            && refusal.is_none()
            && choice.logprobs.is_none()
            && finish.is_none()
            && fields.is_empty()
            && meta.is_empty();
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
            leaf.put("role", s(role));
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
            leaf.put("parts", list(parts));
        }
        if let Some(text) = refusal {
            leaf.put("refusal", s(text));
        }
        if let Some(Nested(logprobs)) = choice.logprobs {
            leaf.put("logprobs", logprobs);
        }
        if let Some(finish) = finish {
            leaf.put("finish_reason", s(finish));
            if complete {
                leaf.put("status", s("complete"));
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
    Some(leaves)
}
