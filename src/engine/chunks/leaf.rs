//! A leaf dict read once (at a chunk's construction) into typed records: [`fold`] then does
//! no key lookups, no truthiness tests and no hashing of the leaf's own values.
//!
//! What the twin would raise while folding the leaf is kept as an error at the same point of
//! the fold ([`Field::Fail`], [`PartOp::Fail`], a part's `late` error), so a leaf whose data is
//! bad raises the twin's exception each time it is folded, and only then.
//!
//! [`fold`]: super::fold

use crate::engine::host::{Host, Kind};
use crate::engine::text::is_absent_text;

use super::Family;

/// A hashable host value with its hash (a part index, a provider index, a call id).
pub(crate) struct Key<O> {
    pub(crate) obj: O,
    pub(crate) hash: i64,
}

/// One leaf: the dict as given (for `_leaves()`) and its fields, in the dict's order.
pub struct Leaf<O, E> {
    pub obj: O,
    pub(crate) fields: Vec<Field<O, E>>,
    /// `leaf.get("described") is True`: the leaf a `to_dict()` describes (`from_dict`), whose
    /// parts are rebuilt as they are when it is folded first [E91].
    pub(crate) described: bool,
    /// `leaf.get("settled") is True`: its refusal is a done event's, which replaces the
    /// streamed one (spec §6.1).
    pub(crate) settled: bool,
}

impl<O, E> Leaf<O, E> {
    /// The text of an assistant leaf that is nothing but one bare text or reasoning delta (a
    /// role, str content, one text or reasoning part with only its text), and whether it is
    /// reasoning: [`append_bare_text`] may append it without walking the leaf. The twin's
    /// `_bare_text`.
    ///
    /// [`append_bare_text`]: super::append::append_bare_text
    pub fn bare_text(&self, family: Family) -> Option<(&O, bool)> {
        if family != Family::Assistant {
            return None;
        }
        let mut text = None;
        for field in &self.fields {
            match field {
                Field::Role(_) => {}
                Field::Content(content) if content.is_str => {}
                Field::Parts(ops) if ops.len() == 1 => match &ops[0] {
                    PartOp::Text(part)
                        if part.index.is_none()
                            && !part.has_attributes
                            && part.extras.is_none() =>
                    {
                        text = part.text.as_ref().map(|t| (t, part.reasoning));
                    }
                    _ => return None,
                },
                _ => return None,
            }
        }
        text
    }
}

pub(crate) enum Field<O, E> {
    /// `parts` of an assistant leaf (other families never fold parts).
    Parts(Vec<PartOp<O, E>>),
    Content(Content<O, E>),
    /// `content_list`, when truthy.
    ContentList,
    /// A non-absent `role`.
    Role(O),
    /// `name` and whether it is absent.
    Name(O, bool),
    /// A truthy `metadata`.
    Metadata(O),
    /// A truthy `provider_metadata`.
    ProviderMetadata(O),
    /// A non-absent `tool_call_id`.
    ToolCallId(O),
    /// A dict `usage`, or `final_usage` (true: its counts replace, zeros included).
    Usage(O, bool),
    /// A non-absent `finish_reason`.
    FinishReason(O),
    /// A `str` `finish_reason_normalized` (where the provider sends no raw reason).
    FinishReasonNormalized(String),
    /// A non-None `parser_content`.
    ParserContent(O),
    /// A non-None `provider_content`.
    ProviderContent(O),
    /// `prompt_token_ids` and its truthiness.
    PromptTokenIds(O, Result<bool, E>),
    /// Truthy `completion_token_ids`, with its items when it is a list.
    CompletionTokenIds(O, Option<Vec<O>>),
    /// A non-None `logprobs`.
    Logprobs(O),
    /// `response_id` and whether it is absent.
    ResponseId(O, bool),
    /// A non-absent `response_model`.
    ResponseModel(O),
    /// A non-empty `str` `refusal`.
    Refusal(O),
    /// A non-absent `status`.
    Status(O),
    /// `anomalies`: `dict(a)` of each.
    Anomalies(Vec<O>),
    /// A non-None `choice_index`.
    ChoiceIndex(O),
    /// The twin raises here.
    Fail(E),
}

/// A non-None `content`.
pub(crate) struct Content<O, E> {
    pub(crate) obj: O,
    pub(crate) is_str: bool,
    /// `list(value)` when it is a list.
    pub(crate) list: Option<Vec<O>>,
    pub(crate) truthy: Result<bool, E>,
}

pub(crate) enum PartOp<O, E> {
    Text(TextPart<O, E>),
    Call(Box<Fragment<O, E>>),
    Other(Box<OtherPart<O>>),
    Fail(E),
}

/// A text or reasoning part (not a vacuous one: those are dropped when read [E22]).
pub(crate) struct TextPart<O, E> {
    pub(crate) reasoning: bool,
    /// `part["part"]` as given.
    pub(crate) kind: O,
    pub(crate) index: Option<Key<O>>,
    /// The text, when truthy.
    pub(crate) text: Option<O>,
    /// `bool(part.get("attributes"))`.
    pub(crate) has_attributes: bool,
    /// A truthy `settled`: a done event's text (and summary), which replace the streamed ones.
    pub(crate) settled: bool,
    /// Citations, summary, payload, redacted, attributes: rare, boxed.
    pub(crate) extras: Option<Box<TextExtras<O, E>>>,
}

pub(crate) struct TextExtras<O, E> {
    /// The items `_own(citations)` extends with, when truthy.
    pub(crate) citations: Option<Vec<O>>,
    pub(crate) summary: Option<O>,
    pub(crate) payload: Option<Payload<O>>,
    pub(crate) redacted: bool,
    /// The items of truthy attributes, with the keys' hashes.
    pub(crate) attributes: Option<Vec<(O, i64, O)>>,
    /// What `_fill_text_fields` raises.
    pub(crate) late: Option<E>,
}

/// An opaque payload (a non-None `payload`): the dict and what `_merge_payload` reads of it.
pub(crate) struct Payload<O> {
    pub(crate) obj: O,
    /// `data`, when not absent.
    pub(crate) data: Option<O>,
    pub(crate) provider: Option<O>,
    pub(crate) kind: Option<O>,
}

pub(crate) enum Args<O> {
    /// None or "": no arguments.
    Absent,
    /// A non-empty `str`.
    Text(O),
    /// A dict [E39].
    Dict(O),
    /// Anything else: counts as arguments, merges nothing.
    Other,
}

/// A tool-call fragment (spec §4): what the resolver reads of it.
pub(crate) struct Fragment<O, E> {
    pub(crate) id: Option<Key<O>>,
    pub(crate) name: Option<O>,
    pub(crate) index: Option<Key<O>>,
    pub(crate) args: Args<O>,
    pub(crate) has_meta: bool,
    /// A non-absent `type`.
    pub(crate) type_: Option<O>,
    pub(crate) payload: Option<Payload<O>>,
    /// A non-absent `response_item_id`.
    pub(crate) item_id: Option<O>,
    /// A truthy `extra`.
    pub(crate) extra: Option<O>,
    /// A non-None `extra` (a described call keeps it as it is, `{}` included).
    pub(crate) given_extra: Option<O>,
    /// A non-None `call_index`.
    pub(crate) call_index: Option<O>,
    /// A truthy `settled`: a done event's arguments, which replace the streamed ones.
    pub(crate) settled: bool,
    /// What `_merge_into` raises reading the payload.
    pub(crate) late: Option<E>,
}

/// A tool_result / media / unknown part.
pub(crate) struct OtherPart<O> {
    pub(crate) kind: O,
    pub(crate) index: Option<Key<O>>,
    /// `(key, hash, value, key == "part", key == "index")` of every item.
    pub(crate) items: Vec<(O, i64, O, bool, bool)>,
}

/// A record read from a leaf, none (the field or part folds to nothing), or the error the
/// twin raises reading it.
type Parsed<T, E> = Result<Option<T>, E>;

/// The twin's `absent()`.
pub(crate) fn absent<H: Host>(host: &H, value: &H::Obj) -> bool {
    match host.class(value).kind {
        Kind::Null => true,
        Kind::Str => host
            .str_text(value)
            .is_some_and(|text| is_absent_text(&text)),
        _ => false,
    }
}

/// `value` unless it is None.
fn some<H: Host>(host: &H, value: H::Obj) -> Option<H::Obj> {
    if host.class(&value).is(Kind::Null) {
        None
    } else {
        Some(value)
    }
}

/// `obj.get(key)` (None for a missing key or a None value).
fn get<H: Host>(host: &H, obj: &H::Obj, key: &str) -> Result<Option<H::Obj>, H::Err> {
    if host.class(obj).is(Kind::Dict) {
        return Ok(host.dict_get_str(obj, key)?.and_then(|v| some(host, v)));
    }
    let key = host.str_obj(key);
    Ok(some(host, host.call_method(obj, "get", vec![key])?))
}

fn truthy_opt<H: Host>(host: &H, value: &Option<H::Obj>) -> Result<bool, H::Err> {
    match value {
        None => Ok(false),
        Some(v) => host.truthy(v),
    }
}

fn key<H: Host>(host: &H, obj: H::Obj) -> Result<Key<H::Obj>, H::Err> {
    let hash = host.key_hash(&obj)?;
    Ok(Key { obj, hash })
}

impl<O: Clone, E> Leaf<O, E> {
    /// Read the leaf dict `obj` of a chunk of `family`. Never fails: what the twin raises
    /// while folding is kept for the fold.
    pub fn parse<H: Host<Obj = O, Err = E>>(host: &H, family: Family, obj: O) -> Self {
        // read apart from the fields: a field that fails stops their reading, not this one
        let flag = |name: &str| {
            host.class(&obj).is(Kind::Dict)
                && match host.dict_get_str(&obj, name) {
                    Ok(Some(value)) => {
                        host.class(&value).is(Kind::Bool) && host.truthy(&value).unwrap_or(false)
                    }
                    _ => false,
                }
        };
        let described = flag("described");
        let settled = flag("settled");
        let mut fields = Vec::new();
        match host.dict_items(&obj) {
            Ok(items) => {
                for (name, value) in items {
                    let Some(name) = host.str_text(&name).map(|n| n.into_owned()) else {
                        continue;
                    };
                    match parse_field(host, family, &name, value) {
                        Ok(Some(field)) => fields.push(field),
                        Ok(None) => {}
                        Err(err) => {
                            fields.push(Field::Fail(err));
                            break;
                        }
                    }
                }
            }
            Err(err) => fields.push(Field::Fail(err)),
        }
        Leaf {
            obj,
            fields,
            described,
            settled,
        }
    }
}

fn parse_field<H: Host>(
    host: &H,
    family: Family,
    name: &str,
    value: H::Obj,
) -> Parsed<Field<H::Obj, H::Err>, H::Err> {
    let class = host.class(&value);
    let is_none = class.is(Kind::Null);
    Ok(match name {
        "parts" => {
            if family != Family::Assistant {
                return Ok(None);
            }
            let mut ops = Vec::new();
            match host.iterate(&value) {
                Ok(parts) => {
                    for part in parts {
                        match parse_part(host, &part) {
                            Ok(Some(op)) => ops.push(op),
                            Ok(None) => {}
                            Err(err) => {
                                ops.push(PartOp::Fail(err));
                                break;
                            }
                        }
                    }
                }
                Err(err) => ops.push(PartOp::Fail(err)),
            }
            Some(Field::Parts(ops))
        }
        "content" => {
            if is_none {
                return Ok(None);
            }
            let list = if class.is(Kind::List) {
                Some(host.iterate(&value)?)
            } else {
                None
            };
            let truthy = host.truthy(&value);
            Some(Field::Content(Content {
                is_str: class.is(Kind::Str),
                list,
                truthy,
                obj: value,
            }))
        }
        "content_list" => host.truthy(&value)?.then_some(Field::ContentList),
        "role" => (!absent(host, &value)).then_some(Field::Role(value)),
        "name" => Some(Field::Name(value.clone(), absent(host, &value))),
        "metadata" => host.truthy(&value)?.then_some(Field::Metadata(value)),
        "provider_metadata" => host
            .truthy(&value)?
            .then_some(Field::ProviderMetadata(value)),
        "tool_call_id" => (!absent(host, &value)).then_some(Field::ToolCallId(value)),
        "usage" => class.is(Kind::Dict).then_some(Field::Usage(value, false)),
        "final_usage" => class.is(Kind::Dict).then_some(Field::Usage(value, true)),
        "finish_reason" => (!absent(host, &value)).then_some(Field::FinishReason(value)),
        "finish_reason_normalized" => match host.class(&value).kind {
            Kind::Str => host
                .str_text(&value)
                .map(|text| Field::FinishReasonNormalized(text.to_string())),
            _ => None,
        },
        "parser_content" => (!is_none).then_some(Field::ParserContent(value)),
        "provider_content" => (!is_none).then_some(Field::ProviderContent(value)),
        "prompt_token_ids" => {
            let truthy = host.truthy(&value);
            Some(Field::PromptTokenIds(value, truthy))
        }
        "completion_token_ids" => {
            if !host.truthy(&value)? {
                return Ok(None);
            }
            let items = if class.is(Kind::List) {
                Some(host.iterate(&value)?)
            } else {
                None
            };
            Some(Field::CompletionTokenIds(value, items))
        }
        "logprobs" => (!is_none).then_some(Field::Logprobs(value)),
        "response_id" => Some(Field::ResponseId(value.clone(), absent(host, &value))),
        "response_model" => (!absent(host, &value)).then_some(Field::ResponseModel(value)),
        "refusal" => (class.is(Kind::Str) && host.truthy(&value)?).then_some(Field::Refusal(value)),
        "status" => (!absent(host, &value)).then_some(Field::Status(value)),
        "anomalies" => {
            let mut copies = Vec::new();
            for item in host.iterate(&value)? {
                copies.push(host.dict_of(&item)?);
            }
            Some(Field::Anomalies(copies))
        }
        "choice_index" => (!is_none).then_some(Field::ChoiceIndex(value)),
        _ => None, // per-chunk noise is not accumulated [E74]
    })
}

/// One part of `parts`; `None` for a part that folds to nothing (empty text [E22]).
fn parse_part<H: Host>(host: &H, part: &H::Obj) -> Parsed<PartOp<H::Obj, H::Err>, H::Err> {
    let kind = host.get_item_str(part, "part")?;
    let kind_text = host.str_text(&kind).map(|t| t.into_owned());
    match kind_text.as_deref() {
        Some("tool_call") => Ok(Some(PartOp::Call(Box::new(parse_fragment(host, part)?)))),
        Some(name @ ("text" | "reasoning")) => {
            let index = get(host, part, "index")?;
            let text = get(host, part, "text")?;
            let text = match text {
                Some(t) if host.truthy(&t)? => Some(t),
                _ => None,
            };
            let payload = get(host, part, "payload")?;
            let citations = get(host, part, "citations")?;
            let summary = get(host, part, "summary")?;
            let redacted = get(host, part, "redacted")?;
            let attributes = get(host, part, "attributes")?;
            let opened = get(host, part, "opened")?; // a block the provider opened [E79]
            let settled = truthy_opt(host, &get(host, part, "settled")?)?;
            let has_extras = truthy_opt(host, &opened)?
                || settled
                || truthy_opt(host, &payload)?
                || truthy_opt(host, &citations)?
                || truthy_opt(host, &summary)?
                || truthy_opt(host, &redacted)?
                || truthy_opt(host, &attributes)?;
            if text.is_none() && !has_extras {
                return Ok(None); // empty text creates no part [E22]
            }
            let index = match index {
                Some(i) => Some(key(host, i)?),
                None => None,
            };
            let has_attributes = truthy_opt(host, &attributes)?;
            // an empty list of citations is kept as sent [E102] (it alone makes no part)
            let listed = citations
                .as_ref()
                .is_some_and(|c| host.class(c).is(Kind::List));
            let extras = if has_extras || payload.is_some() || listed {
                let mut extras = TextExtras {
                    citations: None,
                    summary: None,
                    payload: None,
                    redacted: truthy_opt(host, &redacted)?,
                    attributes: None,
                    late: None,
                };
                if let Err(err) =
                    fill_extras(host, &mut extras, citations, summary, payload, attributes)
                {
                    extras.late = Some(err);
                }
                Some(Box::new(extras))
            } else {
                None
            };
            Ok(Some(PartOp::Text(TextPart {
                reasoning: name == "reasoning",
                kind,
                index,
                text,
                has_attributes,
                settled,
                extras,
            })))
        }
        _ => {
            let index = match get(host, part, "index")? {
                Some(i) => Some(key(host, i)?),
                None => None,
            };
            let mut items = Vec::new();
            for (name, value) in host.dict_items(part)? {
                let hash = host.key_hash(&name)?;
                let text = host.str_text(&name).map(|t| t.into_owned());
                let is_part = text.as_deref() == Some("part");
                let is_index = text.as_deref() == Some("index");
                items.push((name, hash, value, is_part, is_index));
            }
            Ok(Some(PartOp::Other(Box::new(OtherPart {
                kind,
                index,
                items,
            }))))
        }
    }
}

fn fill_extras<H: Host>(
    host: &H,
    extras: &mut TextExtras<H::Obj, H::Err>,
    citations: Option<H::Obj>,
    summary: Option<H::Obj>,
    payload: Option<H::Obj>,
    attributes: Option<H::Obj>,
) -> Result<(), H::Err> {
    if let Some(citations) = citations {
        if host.truthy(&citations)? || host.class(&citations).is(Kind::List) {
            extras.citations = Some(host.iterate(&citations)?);
        }
    }
    if let Some(summary) = summary {
        if host.truthy(&summary)? {
            extras.summary = Some(summary);
        }
    }
    if let Some(payload) = payload {
        extras.payload = Some(parse_payload(host, payload)?);
    }
    if let Some(attributes) = attributes {
        if host.truthy(&attributes)? {
            let dict = if host.class(&attributes).is(Kind::Dict) {
                attributes
            } else {
                let items = host.call_method(&attributes, "items", Vec::new())?;
                host.dict_of(&items)?
            };
            let mut pairs = Vec::new();
            for (name, value) in host.dict_items(&dict)? {
                let hash = host.key_hash(&name)?;
                pairs.push((name, hash, value));
            }
            extras.attributes = Some(pairs);
        }
    }
    Ok(())
}

fn parse_payload<H: Host>(host: &H, obj: H::Obj) -> Result<Payload<H::Obj>, H::Err> {
    let data = get(host, &obj, "data")?;
    let obj = if host.class(&obj).is(Kind::Dict) {
        obj
    } else {
        host.dict_of(&obj)?
    };
    let data = data.filter(|d| !absent(host, d));
    Ok(Payload {
        provider: get(host, &obj, "provider")?,
        kind: get(host, &obj, "kind")?,
        data,
        obj,
    })
}

fn parse_fragment<H: Host>(host: &H, part: &H::Obj) -> Result<Fragment<H::Obj, H::Err>, H::Err> {
    let id = get(host, part, "id")?.filter(|v| !absent(host, v));
    let name = get(host, part, "name")?.filter(|v| !absent(host, v));
    let index = get(host, part, "provider_index")?;
    let arguments = get(host, part, "arguments")?;
    let args = match arguments {
        None => Args::Absent,
        Some(a) => match host.class(&a).kind {
            Kind::Str => {
                if host.truthy(&a)? {
                    Args::Text(a)
                } else {
                    Args::Absent
                }
            }
            Kind::Dict => Args::Dict(a),
            _ => Args::Other,
        },
    };
    let payload = get(host, part, "payload")?;
    let extra = get(host, part, "extra")?;
    let item_id = get(host, part, "response_item_id")?;
    let type_ = get(host, part, "type")?.filter(|v| !absent(host, v));
    let has_meta = truthy_opt(host, &payload)?
        || truthy_opt(host, &extra)?
        || truthy_opt(host, &item_id)?
        || type_.is_some();
    let index = match index {
        Some(i) => Some(key(host, i)?),
        None => None,
    };
    let id = match id {
        Some(i) => Some(key(host, i)?),
        None => None,
    };
    let given_extra = extra.clone();
    let extra = match extra {
        Some(e) if host.truthy(&e)? => Some(e),
        _ => None,
    };
    let mut fragment = Fragment {
        id,
        name,
        index,
        args,
        has_meta,
        type_,
        payload: None,
        item_id: item_id.filter(|v| !absent(host, v)),
        extra,
        given_extra,
        call_index: get(host, part, "call_index")?,
        settled: truthy_opt(host, &get(host, part, "settled")?)?,
        late: None,
    };
    if let Some(payload) = payload {
        match parse_payload(host, payload) {
            Ok(p) => fragment.payload = Some(p),
            Err(err) => fragment.late = Some(err),
        }
    }
    Ok(fragment)
}
