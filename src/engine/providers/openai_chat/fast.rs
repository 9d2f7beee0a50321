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
//!
//! Most chunks of a stream are alike but for their delta's text and padding: a chunk read as
//! one bare delta is kept as a [`Template`], and a later chunk whose other bytes are the same
//! is read by comparing them ([`template_event`]) instead of being parsed.

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
    if let Some(leaves) = template_event(adapter, raw) {
        return Some(leaves);
    }
    let (leaves, id, ignored) = typed_event(adapter, raw)?;
    adapter.templates.after(raw, &leaves, id, ignored);
    Some(leaves)
}

/// What [`typed_event`] read: the leaves, the chunk's id and its `obfuscation` when it is read
/// in place (a string whose value is not kept).
type Typed<'a> = (FastLeaves<'a>, Option<Cow<'a, str>>, Option<&'a str>);

/// [`fast_event`] by the typed parse.
fn typed_event<'a>(adapter: &mut Adapter, raw: &'a [u8]) -> Option<Typed<'a>> {
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
    let ignored = match &chunk.obfuscation {
        Some(Str(Cow::Borrowed(obfuscation))) => Some(*obfuscation),
        _ => None,
    };
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
    let id = chunk.id.as_ref().map(|id| keep(&id.0));
    Some((leaves, id, ignored))
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
    /// where each hole is in `fixed` (after its opening quote), and whether it is the text
    holes: Vec<(usize, bool)>,
    choice: i64,
    bare: Bare,
    id: Option<String>,
}

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
    /// delta whose text lies in `raw` (`ignored`: its `obfuscation`, if it lies there); drop
    /// every template if it is not bare.
    fn after(
        &mut self,
        raw: &[u8],
        leaves: &FastLeaves<'_>,
        id: Option<Cow<'_, str>>,
        ignored: Option<&str>,
    ) {
        if !leaves.iter().all(|(_, leaf)| {
            matches!(
                leaf,
                FastLeaf::Text { index: None, .. } | FastLeaf::Arguments { .. }
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
        let mut holes: Vec<(usize, usize, bool)> = Vec::with_capacity(2);
        for (hole, is_text) in [(Some(text), true), (ignored, false)] {
            let Some(hole) = hole else { continue };
            // a str the parse borrowed lies in `raw`, between the quotes of its token
            let start = (hole.as_ptr() as usize).wrapping_sub(raw.as_ptr() as usize);
            let end = start.wrapping_add(hole.len());
            if start == 0 || end >= raw.len() || raw[start - 1] != b'"' || raw[end] != b'"' {
                return;
            }
            holes.push((start, end, is_text));
        }
        holes.sort_unstable();
        let mut fixed = Vec::with_capacity(raw.len());
        let mut cuts = Vec::with_capacity(holes.len());
        let mut from = 0;
        for (start, end, is_text) in holes {
            if start < from {
                return;
            }
            fixed.extend_from_slice(&raw[from..start]);
            cuts.push((fixed.len(), is_text));
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
    /// The text of `raw` if it is this template's chunk with other strings in its holes.
    fn read<'a>(&self, raw: &'a [u8]) -> Option<Cow<'a, str>> {
        let mut pos = 0;
        let mut from = 0;
        let mut text = None;
        for &(at, is_text) in &self.holes {
            let run = &self.fixed[from..at];
            if raw.get(pos..pos + run.len())? != run {
                return None;
            }
            pos += run.len();
            from = at;
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
            if is_text {
                if read.is_empty() {
                    return None; // no delta: the typed path builds its leaf
                }
                text = Some(read);
            }
        }
        (raw.get(pos..)? == &self.fixed[from..]).then_some(())?;
        text
    }
}

/// [`fast_event`] of a chunk that matches a template: its bare delta, with the state changes
/// the typed path would make; None, with nothing done, if none matches.
fn template_event<'a>(adapter: &mut Adapter, raw: &'a [u8]) -> Option<FastLeaves<'a>> {
    let (template, text) = adapter
        .templates
        .kept
        .iter()
        .find_map(|t| t.read(raw).map(|text| (t, text)))?;
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
            FastLeaf::Text {
                text,
                reasoning,
                index: None,
            }
        }
        Bare::Arguments { index } => {
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
