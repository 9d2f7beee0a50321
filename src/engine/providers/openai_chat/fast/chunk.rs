//! The top level of a chat chunk as the typed path reads it: the chunk's known keys into
//! their fields, and every other key (a gateway's or proxy's own fields: `provider`,
//! `x_request_id`, ...) kept as its JSON text, read into a value only where the chunk sends
//! it. The keys the generic path reads in its own ways (`error`, `prompt_token_ids`,
//! `x_groq`), a key twice, or a field of another type fail the parse: the generic path.

use std::borrow::Cow;

use serde::de::{Error as _, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::{ChunkChoice, Str, Text};
use crate::engine::providers::common::{once, Object};

/// A top-level entry none of the chunk's fields: its key and its JSON text.
pub(super) type Extra<'a> = (Cow<'a, str>, &'a RawValue);

pub(super) struct Chunk<'a> {
    pub(super) id: Text<'a>,
    pub(super) model: Text<'a>,
    pub(super) created: Option<i64>,
    pub(super) object: Text<'a>,
    pub(super) system_fingerprint: Text<'a>,
    pub(super) service_tier: Text<'a>,
    pub(super) choices: Vec<Object<ChunkChoice<'a>>>,
    /// kept as its JSON text (null: None), read only by a chunk without choices
    pub(super) usage: Option<&'a RawValue>,
    /// read and not kept, as the generic path (a known top-level key)
    pub(super) obfuscation: Text<'a>,
    /// the other keys, in order (the generic path's `provider_metadata["response"]`)
    pub(super) extra: Vec<Extra<'a>>,
}

impl<'a> Deserialize<'a> for Chunk<'a> {
    fn deserialize<D: Deserializer<'a>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ChunkVisitor)
    }
}

/// `(key, raw)` into `extra` unless the key is there already (a key twice fails the parse).
pub(super) fn keep_extra<'a, E: serde::de::Error>(
    extra: &mut Vec<Extra<'a>>,
    key: std::borrow::Cow<'a, str>,
    raw: &'a RawValue,
) -> Result<(), E> {
    if extra.iter().any(|(known, _)| *known == key) {
        return Err(E::custom("a key twice"));
    }
    extra.push((key, raw));
    Ok(())
}

struct ChunkVisitor;

impl<'a> Visitor<'a> for ChunkVisitor {
    type Value = Chunk<'a>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a chat chunk")
    }

    fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> Result<Chunk<'a>, M::Error> {
        // each known key: None until read (its value may be null: Some(None))
        let (mut id, mut model, mut object, mut fingerprint, mut tier, mut obfuscation) =
            (None, None, None, None, None, None);
        let (mut created, mut choices, mut usage) = (None, None, None);
        let mut extra: Vec<Extra<'a>> = Vec::new();
        while let Some(Str(key)) = map.next_key::<Str<'a>>()? {
            match key.as_ref() {
                "id" => once(&mut id, map.next_value::<Text<'a>>()?)?,
                "model" => once(&mut model, map.next_value::<Text<'a>>()?)?,
                "object" => once(&mut object, map.next_value::<Text<'a>>()?)?,
                "system_fingerprint" => once(&mut fingerprint, map.next_value::<Text<'a>>()?)?,
                "service_tier" => once(&mut tier, map.next_value::<Text<'a>>()?)?,
                "obfuscation" => once(&mut obfuscation, map.next_value::<Text<'a>>()?)?,
                "created" => once(&mut created, map.next_value::<Option<i64>>()?)?,
                "choices" => once(
                    &mut choices,
                    map.next_value::<Vec<Object<ChunkChoice<'a>>>>()?,
                )?,
                "usage" => once(&mut usage, map.next_value::<Option<&'a RawValue>>()?)?,
                "error" | "prompt_token_ids" | "x_groq" => {
                    return Err(M::Error::custom("not the fast shape"))
                }
                _ => {
                    let raw = map.next_value::<&'a RawValue>()?;
                    keep_extra(&mut extra, key, raw)?;
                }
            }
        }
        Ok(Chunk {
            id: id.flatten(),
            model: model.flatten(),
            created: created.flatten(),
            object: object.flatten(),
            system_fingerprint: fingerprint.flatten(),
            service_tier: tier.flatten(),
            choices: choices.ok_or_else(|| M::Error::missing_field("choices"))?,
            usage: usage.flatten(),
            obfuscation: obfuscation.flatten(),
            extra,
        })
    }
}
