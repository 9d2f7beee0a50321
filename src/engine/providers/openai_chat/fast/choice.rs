//! A choice of a chat chunk and its delta as the typed path reads them: their known keys into
//! fields, and every key no step of the generic path reads (vLLM's `stop_reason`,
//! OpenRouter's `native_finish_reason`, Azure's `content_filter_results`, a proxy's own) kept
//! as its JSON text, for the generic path's `provider_metadata["choice"]` and `["message"]`.
//! A key the generic path reads in its own way and this one does not (a choice's `text`, a
//! delta's `audio`, `annotations`, `images`, ...), a key twice, or a field of another type
//! fail the parse: the generic path.

use serde::de::{Error as _, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::chunk::{keep_extra, Extra};
use super::{Call, OnlyNull, Str, Text};
use crate::engine::providers::common::{once, Object};
use crate::engine::providers::openai_chat::{CHOICE_KNOWN, DELTA_KNOWN, LISTED};

pub(super) struct ChunkChoice<'a> {
    /// missing: 0; null fails (the generic path's error)
    pub(super) index: i64,
    pub(super) delta: Option<Object<Delta<'a>>>,
    pub(super) finish_reason: Text<'a>,
    /// kept whole (the leaf's `logprobs`), level 4 of the event: read by `logprobs_at` (a
    /// template keeps where it lies)
    pub(super) logprobs: Option<&'a RawValue>,
    /// the keys of no step, in order (level 4 of the event)
    pub(super) extra: Vec<Extra<'a>>,
}

pub(super) struct Delta<'a> {
    pub(super) role: Text<'a>,
    pub(super) content: Text<'a>,
    pub(super) reasoning_content: Text<'a>,
    pub(super) reasoning: Text<'a>,
    pub(super) refusal: Text<'a>,
    pub(super) tool_calls: Option<Vec<Object<Call<'a>>>>,
    /// the keys of no step, in order (level 5 of the event)
    pub(super) extra: Vec<Extra<'a>>,
}

impl<'a> Deserialize<'a> for ChunkChoice<'a> {
    fn deserialize<D: Deserializer<'a>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ChoiceVisitor)
    }
}

struct ChoiceVisitor;

impl<'a> Visitor<'a> for ChoiceVisitor {
    type Value = ChunkChoice<'a>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a chat choice")
    }

    fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> Result<ChunkChoice<'a>, M::Error> {
        let (mut index, mut delta, mut finish, mut logprobs, mut token_ids) =
            (None, None, None, None, None);
        let mut extra: Vec<Extra<'a>> = Vec::new();
        while let Some(Str(key)) = map.next_key::<Str<'a>>()? {
            match key.as_ref() {
                "index" => once(&mut index, map.next_value::<i64>()?)?,
                "delta" => once(&mut delta, map.next_value::<Option<Object<Delta<'a>>>>()?)?,
                "finish_reason" => once(&mut finish, map.next_value::<Text<'a>>()?)?,
                "logprobs" => once(&mut logprobs, map.next_value::<Option<&'a RawValue>>()?)?,
                // vLLM's `"token_ids": null` on every chunk
                "token_ids" => once(&mut token_ids, map.next_value::<Option<OnlyNull>>()?)?,
                // a key the generic path reads and this one does not (`text`)
                known if CHOICE_KNOWN.contains(&known) => {
                    return Err(M::Error::custom("not the fast shape"))
                }
                _ => {
                    let raw = map.next_value::<&'a RawValue>()?;
                    keep_extra(&mut extra, key, raw)?;
                }
            }
        }
        Ok(ChunkChoice {
            index: index.unwrap_or(0),
            delta: delta.flatten(),
            finish_reason: finish.flatten(),
            logprobs: logprobs.flatten(),
            extra,
        })
    }
}

impl<'a> Deserialize<'a> for Delta<'a> {
    fn deserialize<D: Deserializer<'a>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(DeltaVisitor)
    }
}

struct DeltaVisitor;

impl<'a> Visitor<'a> for DeltaVisitor {
    type Value = Delta<'a>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a chat delta")
    }

    fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> Result<Delta<'a>, M::Error> {
        let (mut role, mut content, mut reasoning_content, mut reasoning, mut refusal) =
            (None, None, None, None, None);
        let mut tool_calls = None;
        let mut extra: Vec<Extra<'a>> = Vec::new();
        while let Some(Str(key)) = map.next_key::<Str<'a>>()? {
            match key.as_ref() {
                "role" => once(&mut role, map.next_value::<Text<'a>>()?)?,
                "content" => once(&mut content, map.next_value::<Text<'a>>()?)?,
                "reasoning_content" => once(&mut reasoning_content, map.next_value::<Text<'a>>()?)?,
                "reasoning" => once(&mut reasoning, map.next_value::<Text<'a>>()?)?,
                "refusal" => once(&mut refusal, map.next_value::<Text<'a>>()?)?,
                "tool_calls" => once(
                    &mut tool_calls,
                    map.next_value::<Option<Vec<Object<Call<'a>>>>>()?,
                )?,
                // a key the generic path reads and this one does not (`audio`, `images`, ...)
                known if DELTA_KNOWN.contains(&known) || LISTED.contains(&known) => {
                    return Err(M::Error::custom("not the fast shape"))
                }
                _ => {
                    let raw = map.next_value::<&'a RawValue>()?;
                    keep_extra(&mut extra, key, raw)?;
                }
            }
        }
        Ok(Delta {
            role: role.flatten(),
            content: content.flatten(),
            reasoning_content: reasoning_content.flatten(),
            reasoning: reasoning.flatten(),
            refusal: refusal.flatten(),
            tool_calls: tool_calls.flatten(),
            extra,
        })
    }
}
