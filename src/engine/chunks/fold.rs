//! The state of a fold and the rules that change it (the twin's `_State`, `_fold`,
//! `_fold_part`, `_resolve_call`, `_merge_into`, `_fold_usage`, ...).

use crate::engine::error::EngineError;
use crate::engine::host::{Host, Kind};
use crate::engine::value::{NativeError, NativeHost, Value};

use super::leaf::{
    Args, Content, Field, Fragment, Key, Leaf, OtherPart, PartOp, Payload, TextPart,
};
use super::map::{HMap, Val};
use super::{Family, Options, UsageMode};

/// base/tool content (`_State.content_kind`).
pub(crate) enum ContentKind {
    None,
    Str,
    List,
    Other,
}

/// A part's kind: text and reasoning keep the object given (a `str` subclass stays one).
pub(crate) enum PartKind<O> {
    Text(O),
    Reasoning(O),
    Call,
    Other(O),
}

/// A payload as folded: the dict, or a concatenation of string payloads' data.
pub(crate) struct PayloadState<O> {
    pub(crate) base: O,
    /// `{**base, "data": data}` (signature_merge="concat").
    pub(crate) data: Option<O>,
}

/// The fields of a text / reasoning / tool-call part beside its pieces.
pub(crate) struct PartFields<O> {
    pub(crate) citations: Option<Vec<O>>,
    pub(crate) attributes: Option<HMap<O, O>>,
    pub(crate) payload: Option<PayloadState<O>>,
    pub(crate) redacted: bool,
    pub(crate) response_item_id: Option<O>,
    pub(crate) extra: Option<Val<O>>,
    /// The index a tool call was given (openJiuwen's `ToolCall.index`), set once.
    pub(crate) call_index: Option<O>,
}

pub(crate) struct Part<O> {
    pub(crate) kind: PartKind<O>,
    pub(crate) index: Option<O>,
    /// Appended text or arguments.
    pub(crate) pieces: Vec<O>,
    pub(crate) summary: Option<Vec<O>>,
    /// Text, reasoning and call fields (rare: boxed).
    pub(crate) fields: Option<Box<PartFields<O>>>,
    /// A tool_result / media / unknown part's fields.
    pub(crate) other: HMap<O, O>,
    pub(crate) call: Option<usize>,
}

impl<O> Default for PartFields<O> {
    fn default() -> Self {
        PartFields {
            citations: None,
            attributes: None,
            payload: None,
            redacted: false,
            response_item_id: None,
            extra: None,
            call_index: None,
        }
    }
}

impl<O> Part<O> {
    fn fields(&mut self) -> &mut PartFields<O> {
        self.fields.get_or_insert_with(Default::default)
    }
}

/// A tool call's identity, for the resolver (spec §4).
pub(crate) struct Call<O> {
    pub(crate) id: Option<O>,
    pub(crate) name: Option<O>,
    pub(crate) type_: Option<O>,
    pub(crate) provider_index: Option<O>,
    pub(crate) args_dict: Option<Val<O>>,
    pub(crate) part: usize,
}

pub(crate) enum Anomaly<O> {
    /// `dict(a)` of a leaf's anomaly.
    Given(O),
    /// One the fold recorded.
    Own(&'static str, O),
}

/// The fold of some leaves (the twin's `_State`).
pub struct State<O> {
    pub(crate) family: Family,
    pub(crate) family_obj: O,
    pub(crate) options: Options,
    pub(crate) role: Option<O>,
    pub(crate) name: O,
    pub(crate) name_absent: bool,
    pub(crate) content_kind: ContentKind,
    pub(crate) content_pieces: Vec<O>,
    pub(crate) content: Option<O>,
    pub(crate) content_list: bool,
    pub(crate) metadata: Option<Val<O>>,
    pub(crate) tool_call_id: Option<O>,
    pub(crate) parts: Vec<Part<O>>,
    pub(crate) by_index: HMap<O, usize>,
    pub(crate) calls: Vec<Call<O>>,
    pub(crate) calls_by_index: HMap<O, usize>,
    pub(crate) calls_by_id: HMap<O, usize>,
    pub(crate) usage: Option<HMap<O, Val<O>>>,
    /// The kept total agreed with its own chunk's counts: recomputed at the finish (spec §5).
    pub(crate) per_chunk_total: bool,
    pub(crate) finish_reason: Option<O>,
    pub(crate) parser_content: Option<O>,
    /// The value and its truthiness (None: testing it raises).
    pub(crate) prompt_token_ids: Option<(O, Option<bool>)>,
    pub(crate) completion_token_ids: Option<Val<O>>,
    pub(crate) logprobs: Option<Val<O>>,
    pub(crate) response_id: O,
    pub(crate) response_id_absent: bool,
    pub(crate) response_model: Option<O>,
    pub(crate) provider_metadata: Option<Val<O>>,
    pub(crate) provider_content: Option<O>,
    pub(crate) refusal: Option<Vec<O>>,
    pub(crate) status: Option<O>,
    pub(crate) anomalies: Vec<Anomaly<O>>,
    pub(crate) choice_index: Option<O>,
    /// How many leaves were folded: a chunk's given call indexes show only in one no `+`
    /// merged (a merged stream numbers its calls by position, spec §4).
    pub(crate) leaves: usize,
}

impl<O: Clone> State<O> {
    /// An empty state; `family_obj` is the family as the first chunk gave it.
    pub fn new<H: Host<Obj = O>>(
        host: &H,
        family: Family,
        family_obj: O,
        options: Options,
    ) -> Self {
        let none = host.none();
        State {
            family,
            family_obj,
            options,
            role: None,
            name: none.clone(),
            name_absent: true,
            content_kind: ContentKind::None,
            content_pieces: Vec::new(),
            content: None,
            content_list: false,
            metadata: None,
            tool_call_id: None,
            parts: Vec::new(),
            by_index: HMap::default(),
            calls: Vec::new(),
            calls_by_index: HMap::default(),
            calls_by_id: HMap::default(),
            usage: None,
            per_chunk_total: false,
            finish_reason: None,
            parser_content: None,
            prompt_token_ids: None,
            completion_token_ids: None,
            logprobs: None,
            response_id: none.clone(),
            response_id_absent: true,
            response_model: None,
            provider_metadata: None,
            provider_content: None,
            refusal: None,
            status: None,
            anomalies: Vec::new(),
            choice_index: None,
            leaves: 0,
        }
    }

    /// Record an anomaly, or raise it with `strict=True`. `detail` is built only here.
    fn anomaly<H: Host<Obj = O>>(
        &mut self,
        host: &H,
        code: &'static str,
        detail: impl FnOnce() -> Result<O, H::Err>,
    ) -> Result<(), H::Err> {
        let detail = detail()?;
        if self.options.strict {
            return Err(host.error(EngineError::Anomaly { code, detail }));
        }
        self.anomalies.push(Anomaly::Own(code, detail));
        Ok(())
    }
}

/// `"".join` of literal text and host strings, for anomaly details.
pub(crate) enum Piece<'a, O> {
    Lit(&'a str),
    Obj(O),
}

pub(crate) fn detail<H: Host>(host: &H, pieces: Vec<Piece<'_, H::Obj>>) -> Result<H::Obj, H::Err> {
    let objs: Vec<H::Obj> = pieces
        .into_iter()
        .map(|p| match p {
            Piece::Lit(text) => host.str_obj(text),
            Piece::Obj(obj) => obj,
        })
        .collect();
    host.join(&objs)
}

/// Fold one leaf into `state` (the twin's `_fold`). A described leaf (`from_dict`) folded
/// first is the state: its parts are rebuilt as they are ([`rebuild_part`]) [E91].
pub fn fold<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    leaf: &Leaf<H::Obj, H::Err>,
) -> Result<(), H::Err> {
    let family = state.family;
    let rebuild = state.leaves == 0 && leaf.described;
    state.leaves += 1;
    for field in &leaf.fields {
        match field {
            Field::Parts(ops) => {
                if family == Family::Assistant {
                    for op in ops {
                        if rebuild {
                            rebuild_part(host, state, op)?;
                        } else {
                            fold_part(host, state, op)?;
                        }
                    }
                }
            }
            Field::Content(content) => {
                if family != Family::Assistant {
                    fold_content(host, state, content)?;
                } else if content.list.is_some() {
                    state.content_list = true;
                }
            }
            Field::ContentList => state.content_list = true,
            Field::Role(value) => {
                if state.role.is_none() {
                    state.role = Some(value.clone());
                }
            }
            Field::Name(value, is_absent) => {
                if state.name_absent {
                    state.name = value.clone();
                    state.name_absent = *is_absent;
                }
            }
            Field::Metadata(value) => {
                state.metadata = Some(deep_merge(host, state.metadata.take(), value, 0)?);
            }
            Field::ProviderMetadata(value) => {
                state.provider_metadata =
                    Some(deep_merge(host, state.provider_metadata.take(), value, 0)?);
            }
            Field::ToolCallId(value) => state.tool_call_id = Some(value.clone()),
            Field::Usage(value, is_final) => fold_usage(host, state, value, *is_final)?,
            Field::FinishReason(value) => state.finish_reason = Some(value.clone()),
            Field::ParserContent(value) => state.parser_content = Some(value.clone()),
            Field::ProviderContent(value) => state.provider_content = Some(value.clone()),
            Field::PromptTokenIds(value, truthy) => {
                let current = match &state.prompt_token_ids {
                    None => false,
                    Some((_, Some(t))) => *t,
                    Some((v, None)) => host.truthy(v)?,
                };
                if !current {
                    // first non-empty [E63]
                    let truthy = truthy.as_ref().ok().copied();
                    state.prompt_token_ids = Some((value.clone(), truthy));
                }
            }
            Field::CompletionTokenIds(value, items) => {
                concat_ids(host, state, value, items)?;
            }
            Field::Logprobs(value) => {
                state.logprobs = Some(fold_logprobs(host, state.logprobs.take(), value)?);
            }
            Field::ResponseId(value, is_absent) => {
                if state.response_id_absent {
                    state.response_id = value.clone();
                    state.response_id_absent = *is_absent;
                }
            }
            Field::ResponseModel(value) => state.response_model = Some(value.clone()), // [E73]
            Field::Refusal(value) => state
                .refusal
                .get_or_insert_with(Vec::new)
                .push(value.clone()), // [E71]
            Field::Status(value) => state.status = Some(value.clone()),
            Field::Anomalies(copies) => state
                .anomalies
                .extend(copies.iter().map(|a| Anomaly::Given(a.clone()))),
            Field::ChoiceIndex(value) => {
                if state.choice_index.is_none() {
                    state.choice_index = Some(value.clone());
                }
            }
            Field::Fail(err) => return Err(host.clone_err(err)),
        }
    }
    Ok(())
}

/// base/tool content (spec §3.1): str+str and list+list concatenate, otherwise the right
/// value; the tool family counts an empty right side as absent.
fn fold_content<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    content: &Content<H::Obj, H::Err>,
) -> Result<(), H::Err> {
    match (&state.content_kind, content.is_str, &content.list) {
        (ContentKind::Str, true, _) => {
            state.content_pieces.push(content.obj.clone());
            return Ok(());
        }
        (ContentKind::List, _, Some(items)) => {
            state.content_pieces.extend(items.iter().cloned());
            return Ok(());
        }
        _ => {}
    }
    if !matches!(state.content_kind, ContentKind::None) && state.family == Family::Tool {
        let truthy = match &content.truthy {
            Ok(t) => *t,
            Err(err) => return Err(host.clone_err(err)),
        };
        if !truthy {
            return Ok(());
        }
    }
    if content.is_str {
        state.content_kind = ContentKind::Str;
        state.content_pieces = vec![content.obj.clone()];
    } else if let Some(items) = &content.list {
        state.content_kind = ContentKind::List;
        state.content_pieces = items.clone();
    } else {
        state.content_kind = ContentKind::Other;
        state.content_pieces = Vec::new();
        state.content = Some(content.obj.clone());
    }
    Ok(())
}

/// completion_token_ids: an empty side gives the other, lists concatenate, else right.
fn concat_ids<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    value: &H::Obj,
    items: &Option<Vec<H::Obj>>,
) -> Result<(), H::Err> {
    // `value` is truthy (the leaf kept only such); a state value is always truthy.
    match (&mut state.completion_token_ids, items) {
        (Some(left), Some(items)) if left.is_list(host) => {
            left.open_list(host)?.extend(items.iter().cloned());
        }
        _ => state.completion_token_ids = Some(Val::Obj(value.clone())),
    }
    Ok(())
}

/// Every list-valued key concatenates; a None never resets [E60–E62].
fn fold_logprobs<H: Host>(
    host: &H,
    left: Option<Val<H::Obj>>,
    right: &H::Obj,
) -> Result<Val<H::Obj>, H::Err> {
    let Some(mut left) = left else {
        return Ok(Val::Obj(right.clone()));
    };
    let right_kind = host.class(right).kind;
    if right_kind == Kind::Dict && left.is_dict(host) {
        let map = left.open_dict(host)?;
        for (key, value) in host.dict_items(right)? {
            if host.class(&value).is(Kind::Null) {
                continue;
            }
            let hash = host.key_hash(&key)?;
            let value_is_list = host.class(&value).is(Kind::List);
            match map.get_mut(host, &key, hash)? {
                Some(current) if value_is_list && current.is_list(host) => {
                    let items = host.list_items(&value)?;
                    current.open_list(host)?.extend(items);
                }
                Some(current) => *current = Val::Obj(value),
                None => map.push(key, hash, Val::Obj(value)),
            }
        }
        return Ok(left);
    }
    if right_kind == Kind::List && left.is_list(host) {
        let items = host.list_items(right)?;
        left.open_list(host)?.extend(items);
        return Ok(left);
    }
    Ok(Val::Obj(right.clone()))
}

/// metadata, provider_metadata, a call's extra fields [E72]: dicts merge per key, the last
/// non-None leaf wins, strings never concatenate.
pub(crate) fn deep_merge<H: Host>(
    host: &H,
    left: Option<Val<H::Obj>>,
    right: &H::Obj,
    depth: usize,
) -> Result<Val<H::Obj>, H::Err> {
    let right_is_dict = host.class(right).is(Kind::Dict);
    match left {
        Some(mut left) if right_is_dict && left.is_dict(host) => {
            super::map::depth_limit(host, depth)?;
            let map = left.open_dict(host)?;
            for (key, value) in host.dict_items(right)? {
                if host.class(&value).is(Kind::Null) {
                    continue;
                }
                let hash = host.key_hash(&key)?;
                match map.find(host, &key, hash)? {
                    Some(i) => {
                        let slot = map.values_mut().nth(i);
                        if let Some(slot) = slot {
                            let current = std::mem::replace(slot, Val::List(Vec::new()));
                            let merged = stacker::maybe_grow(128 * 1024, 2 * 1024 * 1024, || {
                                deep_merge(host, Some(current), &value, depth + 1)
                            })?;
                            *slot = merged;
                        }
                    }
                    None => {
                        super::map::check_depth(host, &value, 0)?;
                        map.push(key, hash, Val::Obj(value))
                    }
                }
            }
            Ok(left)
        }
        left => {
            if host.class(right).is(Kind::Null) {
                Ok(left.unwrap_or(Val::Obj(right.clone())))
            } else {
                super::map::check_depth(host, right, 0)?;
                Ok(Val::Obj(right.clone()))
            }
        }
    }
}

fn is_number<H: Host>(host: &H, value: &H::Obj) -> bool {
    matches!(host.class(value).kind, Kind::Int | Kind::Float)
}

/// `usage`, or `final_usage`: counts the provider calls final (Anthropic's cumulative
/// `message_delta`), which replace zeros included (spec §5).
fn fold_usage<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    right: &H::Obj,
    is_final: bool,
) -> Result<(), H::Err> {
    let mut mode = state.options.usage;
    if is_final && mode == UsageMode::Merge {
        mode = UsageMode::Last;
    }
    let usage = state.usage.get_or_insert_with(HMap::default);
    note_total(host, usage, &mut state.per_chunk_total, right, mode)?;
    merge_usage(host, usage, right, mode, 0)
}

/// Whether the total `right` brings (when it is kept) is a per-chunk one: equal to its own
/// chunk's counts. A summed total stays per-chunk only while every summand was.
fn note_total<H: Host>(
    host: &H,
    usage: &HMap<H::Obj, Val<H::Obj>>,
    per_chunk_total: &mut bool,
    right: &H::Obj,
    mode: UsageMode,
) -> Result<(), H::Err> {
    let total = match host.dict_get_str(right, "total_tokens")? {
        Some(total) if !host.class(&total).is(Kind::Null) => total,
        _ => return Ok(()),
    };
    let key = host.str_obj("total_tokens");
    let hash = host.key_hash(&key)?;
    let current_number = match usage.get(host, &key, hash)? {
        Some(current) => {
            let number = current.obj().is_some_and(|c| is_number(host, c));
            if keeps(host, mode, number, &total)? {
                return Ok(());
            }
            number
        }
        None => false,
    };
    let agrees = match counts_total(host, right)? {
        Some(Ok(own)) if is_number(host, &total) => host.eq(&total, &own)?,
        _ => false,
    };
    let summed = mode == UsageMode::Sum && current_number && is_number(host, &total);
    *per_chunk_total = agrees && (*per_chunk_total || !summed);
    Ok(())
}

/// Usage (spec §5), per key.
fn merge_usage<H: Host>(
    host: &H,
    left: &mut HMap<H::Obj, Val<H::Obj>>,
    right: &H::Obj,
    mode: UsageMode,
    depth: usize,
) -> Result<(), H::Err> {
    if depth > super::map::MAX_COPY_DEPTH {
        return Err(host.error(EngineError::Recursion));
    }
    for (key, value) in host.dict_items(right)? {
        let value_class = host.class(&value);
        if value_class.is(Kind::Null) {
            continue; // [E58]
        }
        let hash = host.key_hash(&key)?;
        let Some(current) = left.get_mut(host, &key, hash)? else {
            left.push(key, hash, Val::Obj(value));
            continue;
        };
        if value_class.is(Kind::Dict) && current.is_dict(host) {
            let inner = current.open_dict(host)?;
            stacker::maybe_grow(128 * 1024, 2 * 1024 * 1024, || {
                merge_usage(host, inner, &value, mode, depth + 1)
            })?; // *_details per key [E59]
            continue;
        }
        let current_number = current.obj().filter(|c| is_number(host, c)).cloned();
        let value_number = is_number(host, &value);
        if mode == UsageMode::Sum && value_number {
            if let Some(c) = current_number {
                *current = Val::Obj(host.add(&c, &value)?);
                continue;
            }
        }
        if keeps(host, mode, current_number.is_some(), &value)? {
            continue;
        }
        *current = Val::Obj(value);
    }
    Ok(())
}

/// A zero never overwrites an earlier count [E54], nor does an empty string (`merge`).
fn keeps<H: Host>(
    host: &H,
    mode: UsageMode,
    current_number: bool,
    value: &H::Obj,
) -> Result<bool, H::Err> {
    if mode != UsageMode::Merge {
        return Ok(false);
    }
    if is_number(host, value) && current_number && host.eq(value, &host.int_obj(0))? {
        return Ok(true);
    }
    Ok(host.class(value).is(Kind::Str) && !host.truthy(value)?)
}

/// A sum of ints that may not fit (see [`counts_total`]).
pub(crate) type Sum<H> = Result<<H as Host>::Obj, <H as Host>::Err>;

/// input + output (absent or not a number counts 0); None when neither is given. The sum is a
/// result of its own: it fails only where ints overflow (the native host), which is an error
/// only where the sum is kept, as the twin's Python int is (a reported total, within 64 bits,
/// differs from it).
pub(crate) fn counts_total<H: Host>(host: &H, usage: &H::Obj) -> Result<Option<Sum<H>>, H::Err> {
    let given = |key: &str| -> Result<Option<H::Obj>, H::Err> {
        let value = host.dict_get_str(usage, key)?;
        Ok(value.filter(|v| !host.class(v).is(Kind::Null)))
    };
    let (inputs, outputs) = (given("input_tokens")?, given("output_tokens")?);
    if inputs.is_none() && outputs.is_none() {
        return Ok(None);
    }
    let term = |v: Option<H::Obj>| match v {
        Some(v) if is_number(host, &v) => v,
        _ => host.int_obj(0),
    };
    Ok(Some(host.add(&term(inputs), &term(outputs))))
}

// ---------------------------------------------------------------------------------------------
// Parts (spec §3)

fn kind_name<O: Clone, H: Host<Obj = O>>(host: &H, kind: &PartKind<O>) -> Result<O, H::Err> {
    match kind {
        PartKind::Text(obj) | PartKind::Reasoning(obj) | PartKind::Other(obj) => host.format(obj),
        PartKind::Call => Ok(host.str_obj("tool_call")),
    }
}

/// `last.kind == kind`.
fn same_kind<H: Host>(
    host: &H,
    a: &PartKind<H::Obj>,
    b: &PartKind<H::Obj>,
) -> Result<bool, H::Err> {
    Ok(match (a, b) {
        (PartKind::Text(_), PartKind::Text(_))
        | (PartKind::Reasoning(_), PartKind::Reasoning(_))
        | (PartKind::Call, PartKind::Call) => true,
        (PartKind::Other(x), PartKind::Other(y)) => host.eq(x, y)?,
        _ => false,
    })
}

fn kind_change<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    index: &H::Obj,
    kind: &PartKind<H::Obj>,
    last: usize,
) -> Result<(), H::Err> {
    let last_kind = kind_name(host, &state.parts[last].kind)?;
    state.anomaly(host, "kind_change", || {
        detail(
            host,
            vec![
                Piece::Lit("part index "),
                Piece::Obj(host.repr(index)?),
                Piece::Lit(": "),
                Piece::Obj(kind_name(host, kind)?),
                Piece::Lit(" after "),
                Piece::Obj(last_kind),
            ],
        )
    })
}

/// `fold` of a bare text or reasoning delta ([`Leaf::bare_text`]) when the state already has
/// its role and ends with a plain part of that kind: the text is appended without walking the
/// leaf. False (and nothing done) otherwise: then fold the leaf. The twin's shortcut in
/// `ChunkCore.__add__`.
pub fn append_bare_text<O: Clone>(state: &mut State<O>, text: &O, reasoning: bool) -> bool {
    push_to(bare_text_part(state, reasoning), state, |pieces| {
        pieces.push(text.clone())
    })
}

/// The part [`append_bare_text`] appends to, if any.
fn bare_text_part<O>(state: &State<O>, reasoning: bool) -> Option<usize> {
    if state.family != Family::Assistant || state.role.is_none() {
        return None;
    }
    let last = state.parts.last()?;
    (last.index.is_none() && is_kind(&last.kind, reasoning)).then(|| state.parts.len() - 1)
}

/// Whether a part kind is text (or reasoning, if `reasoning`).
fn is_kind<O>(kind: &PartKind<O>, reasoning: bool) -> bool {
    matches!(
        (kind, reasoning),
        (PartKind::Text(_), false) | (PartKind::Reasoning(_), true)
    )
}

/// Appends to the pieces of part `part` (if any) and counts the leaf: whether it did.
fn push_to<O>(part: Option<usize>, state: &mut State<O>, push: impl FnOnce(&mut Vec<O>)) -> bool {
    match part.and_then(|p| state.parts.get_mut(p)) {
        Some(part) => {
            push(&mut part.pieces);
            state.leaves += 1;
            true
        }
        None => false,
    }
}

/// A text the engine read itself, appended to the last piece when that is a str (else a
/// piece of its own): a run of deltas grows one string, so each delta is copied once and
/// allocates nothing of its own. The pieces join to the same text.
fn push_str(pieces: &mut Vec<Value>, text: &str) {
    match pieces.last_mut() {
        Some(Value::Str(last)) => last.push_str(text),
        _ => pieces.push(Value::Str(text.to_owned())),
    }
}

/// [`append_bare_text`] of a text borrowed from an event's bytes (a typed fast path's).
pub fn append_bare_str(state: &mut State<Value>, text: &str, reasoning: bool) -> bool {
    push_to(bare_text_part(state, reasoning), state, |pieces| {
        push_str(pieces, text)
    })
}

/// `fold` of a leaf that is one text or reasoning delta with a part index (`{"parts":
/// [{"part", "text", "index"}]}`, what adapters emit for a provider's block deltas) when the
/// state's last part is of that kind and holds that index: the text is appended without
/// walking the leaf. That part is the one `by_index` maps the index to (a part takes its index
/// when it is created, and a later part with the same index would be later in `parts`), so
/// this is what `fold` does. False (and nothing done) otherwise: then fold the leaf.
pub fn append_indexed_text<O: Clone + PartialEq>(
    state: &mut State<O>,
    text: &O,
    reasoning: bool,
    index: &O,
) -> bool {
    push_to(
        indexed_text_part(state, reasoning, index),
        state,
        |pieces| pieces.push(text.clone()),
    )
}

/// The part [`append_indexed_text`] appends to, if any.
fn indexed_text_part<O: PartialEq>(state: &State<O>, reasoning: bool, index: &O) -> Option<usize> {
    if state.family != Family::Assistant {
        return None;
    }
    let last = state.parts.last()?;
    (last.index.as_ref() == Some(index) && is_kind(&last.kind, reasoning))
        .then(|| state.parts.len() - 1)
}

/// [`append_bare_str`] of a leaf that carries its `logprobs` too (`{"parts": [text part],
/// "logprobs": logprobs}`, a token delta with its logprobs): the text appended as there,
/// then the logprobs folded as `fold` folds that leaf's (the leaf counted once). False, with
/// nothing done, where the text cannot be appended: then fold the leaf.
pub fn append_bare_str_logprobs(
    state: &mut State<Value>,
    text: &str,
    reasoning: bool,
    logprobs: &Value,
) -> Result<bool, NativeError> {
    let part = bare_text_part(state, reasoning);
    if !push_to(part, state, |pieces| push_str(pieces, text)) {
        return Ok(false);
    }
    if !matches!(logprobs, Value::Null) {
        state.logprobs = Some(fold_logprobs(&NativeHost, state.logprobs.take(), logprobs)?);
    }
    Ok(true)
}

/// [`append_indexed_text`] of a text borrowed from an event's bytes (a typed fast path's).
pub fn append_indexed_str(
    state: &mut State<Value>,
    text: &str,
    reasoning: bool,
    index: i64,
) -> bool {
    let part = indexed_text_part(state, reasoning, &Value::Int(index));
    push_to(part, state, |pieces| push_str(pieces, text))
}

/// `fold` of a leaf that is one tool-call fragment holding only a provider index and text
/// arguments (`{"parts": [{"part": "tool_call", "provider_index": i, "arguments": "..."}]}`,
/// resolver rule 7) when a call holds that index and has text arguments: the text is appended
/// to that call, as `_merge_into` does, without walking the leaf. False (and nothing done)
/// otherwise: then fold the leaf.
pub fn append_indexed_arguments<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    arguments: &H::Obj,
    index: &H::Obj,
) -> Result<bool, H::Err> {
    let part = arguments_part(host, state, index)?;
    Ok(push_to(part, state, |pieces| {
        pieces.push(arguments.clone())
    }))
}

/// The part [`append_indexed_arguments`] appends to, if any.
fn arguments_part<H: Host>(
    host: &H,
    state: &State<H::Obj>,
    index: &H::Obj,
) -> Result<Option<usize>, H::Err> {
    if state.family != Family::Assistant {
        return Ok(None);
    }
    let hash = host.key_hash(index)?;
    let Some(&call) = state.calls_by_index.get(host, index, hash)? else {
        return Ok(None);
    };
    Ok(state
        .calls
        .get(call)
        .filter(|c| c.args_dict.is_none())
        .map(|c| c.part))
}

/// [`append_indexed_arguments`] of arguments borrowed from an event's bytes (a typed fast
/// path's).
pub fn append_indexed_arguments_str(
    state: &mut State<Value>,
    arguments: &str,
    index: i64,
) -> Result<bool, NativeError> {
    let part = arguments_part(&NativeHost, state, &Value::Int(index))?;
    Ok(push_to(part, state, |pieces| push_str(pieces, arguments)))
}

/// The `mismatched_delta` anomaly of a call whose arguments change from text to an object or
/// back [E39]; `what` ends the detail.
fn mismatched_arguments<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    call: usize,
    what: &'static str,
) -> Result<(), H::Err> {
    let id = state.calls[call].id.clone();
    state.anomaly(host, "mismatched_delta", || {
        detail(
            host,
            vec![
                Piece::Lit("call "),
                Piece::Obj(repr_opt(host, &id)?),
                Piece::Lit(what),
            ],
        )
    })
}

fn fold_part<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    op: &PartOp<H::Obj, H::Err>,
) -> Result<(), H::Err> {
    match op {
        PartOp::Text(part) => fold_text(host, state, part),
        PartOp::Call(fragment) => resolve_call(host, state, fragment),
        PartOp::Other(part) => fold_other(host, state, part),
        PartOp::Fail(err) => Err(host.clone_err(err)),
    }
}

/// One part of a described leaf folded first (the twin's `_rebuild_part`): a new part with
/// the fields the leaf gives, registered by its index (a call by its provider index and id)
/// so that later leaves continue it; no part joins another, no anomaly is recorded.
fn rebuild_part<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    op: &PartOp<H::Obj, H::Err>,
) -> Result<(), H::Err> {
    match op {
        PartOp::Text(part) => {
            let i = new_part(host, state, text_kind(part), part.index.as_ref())?;
            if let Some(text) = &part.text {
                state.parts[i].pieces.push(text.clone());
            }
            if let Some(extras) = &part.extras {
                fill_text_fields(host, state, i, extras)?;
            }
            Ok(())
        }
        PartOp::Call(fragment) => rebuild_call(host, state, fragment),
        PartOp::Other(part) => new_other_part(host, state, part),
        PartOp::Fail(err) => Err(host.clone_err(err)),
    }
}

/// A tool-call part of a described leaf folded first (the twin's `_rebuild_call`): a call of
/// its own, its fields set in [`merge_into`]'s order; `arguments` and `extra` kept as they
/// are (an empty `extra` included).
fn rebuild_call<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    fragment: &Fragment<H::Obj, H::Err>,
) -> Result<(), H::Err> {
    let c = new_call(host, state, fragment.index.as_ref())?;
    if let Some(id) = &fragment.id {
        state.calls[c].id = Some(id.obj.clone());
        if state.calls_by_id.find(host, &id.obj, id.hash)?.is_none() {
            state.calls_by_id.push(id.obj.clone(), id.hash, c);
        }
    }
    state.calls[c].name = fragment.name.clone();
    state.calls[c].type_ = fragment.type_.clone();
    let part = state.calls[c].part;
    match &fragment.args {
        Args::Text(text) => state.parts[part].pieces.push(text.clone()),
        Args::Dict(dict) => {
            super::map::check_depth(host, dict, 0)?;
            state.calls[c].args_dict = Some(Val::Obj(dict.clone()));
        }
        Args::Absent | Args::Other => {}
    }
    if let Some(err) = &fragment.late {
        return Err(host.clone_err(err));
    }
    let signature_concat = state.options.signature_concat;
    let fields = state.parts[part].fields();
    if let Some(payload) = &fragment.payload {
        fields.payload = Some(merge_payload(host, signature_concat, None, payload)?);
    }
    fields.response_item_id = fragment.item_id.clone();
    fields.call_index = fragment.call_index.clone();
    if let Some(extra) = &fragment.given_extra {
        super::map::check_depth(host, extra, 0)?;
        fields.extra = Some(Val::Obj(extra.clone()));
    }
    Ok(())
}

fn fold_text<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    part: &TextPart<H::Obj, H::Err>,
) -> Result<(), H::Err> {
    let mut last = None;
    if let Some(index) = &part.index {
        last = state.by_index.get(host, &index.obj, index.hash)?.copied();
        if let Some(i) = last {
            let matches = matches!(
                (&state.parts[i].kind, part.reasoning),
                (PartKind::Text(_), false) | (PartKind::Reasoning(_), true)
            );
            if !matches {
                let kind = text_kind(part);
                kind_change(host, state, &index.obj, &kind, i)?;
                last = None;
            }
        }
    } else if !state.parts.is_empty() && !part.has_attributes {
        let i = state.parts.len() - 1;
        let p = &state.parts[i];
        let same = matches!(
            (&p.kind, part.reasoning),
            (PartKind::Text(_), false) | (PartKind::Reasoning(_), true)
        );
        if same && p.index.is_none() {
            last = Some(i);
        }
    }
    let i = match last {
        Some(i) => i,
        None => new_part(host, state, text_kind(part), part.index.as_ref())?,
    };
    let target = &mut state.parts[i];
    if let Some(text) = &part.text {
        target.pieces.push(text.clone());
    }
    if let Some(extras) = &part.extras {
        fill_text_fields(host, state, i, extras)?;
    }
    Ok(())
}

fn text_kind<O: Clone, E>(part: &TextPart<O, E>) -> PartKind<O> {
    if part.reasoning {
        PartKind::Reasoning(part.kind.clone())
    } else {
        PartKind::Text(part.kind.clone())
    }
}

fn new_part<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    kind: PartKind<H::Obj>,
    index: Option<&Key<H::Obj>>,
) -> Result<usize, H::Err> {
    let position = state.parts.len();
    if let Some(index) = index {
        state
            .by_index
            .set(host, index.obj.clone(), index.hash, position)?;
    }
    state.parts.push(Part {
        kind,
        index: index.map(|k| k.obj.clone()),
        pieces: Vec::new(),
        summary: None,
        fields: None,
        other: HMap::default(),
        call: None,
    });
    Ok(position)
}

/// Text and reasoning fields beside the text: citations append [E68], summary appends,
/// payload replaces (or concatenates) [E65], attributes fill if absent, redacted sticks.
fn fill_text_fields<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    i: usize,
    extras: &super::leaf::TextExtras<H::Obj, H::Err>,
) -> Result<(), H::Err> {
    if let Some(err) = &extras.late {
        return Err(host.clone_err(err));
    }
    let signature_concat = state.options.signature_concat;
    let part = &mut state.parts[i];
    if let Some(citations) = &extras.citations {
        part.fields()
            .citations
            .get_or_insert_with(Vec::new)
            .extend(citations.iter().cloned());
    }
    if let Some(summary) = &extras.summary {
        part.summary
            .get_or_insert_with(Vec::new)
            .push(summary.clone());
    }
    if let Some(payload) = &extras.payload {
        let fields = part.fields();
        let merged = merge_payload(host, signature_concat, fields.payload.take(), payload)?;
        fields.payload = Some(merged);
    }
    if extras.redacted {
        part.fields().redacted = true;
    }
    if let Some(attributes) = &extras.attributes {
        let current = part.fields().attributes.get_or_insert_with(HMap::default);
        for (key, hash, value) in attributes {
            if current.find(host, key, *hash)?.is_none() {
                current.push(key.clone(), *hash, value.clone());
            }
        }
    }
    Ok(())
}

/// Opaque payloads: the last non-empty replaces; `signature_merge="concat"` joins the data
/// of two string payloads of the same provider and kind.
fn merge_payload<H: Host>(
    host: &H,
    signature_concat: bool,
    left: Option<PayloadState<H::Obj>>,
    right: &Payload<H::Obj>,
) -> Result<PayloadState<H::Obj>, H::Err> {
    let Some(right_data) = &right.data else {
        return Ok(left.unwrap_or_else(|| PayloadState {
            base: right.obj.clone(),
            data: None,
        }));
    };
    if let (true, Some(left)) = (signature_concat, &left) {
        let left_data = match &left.data {
            Some(d) => Some(d.clone()),
            None => host.dict_get_str(&left.base, "data")?,
        };
        if let Some(left_data) = left_data {
            let none = host.none();
            let opt = |o: &Option<H::Obj>| o.clone().unwrap_or_else(|| none.clone());
            let left_provider = opt(&host.dict_get_str(&left.base, "provider")?);
            let left_kind = opt(&host.dict_get_str(&left.base, "kind")?);
            if host.class(&left_data).is(Kind::Str)
                && host.class(right_data).is(Kind::Str)
                && host.eq(&left_provider, &opt(&right.provider))?
                && host.eq(&left_kind, &opt(&right.kind))?
            {
                let data = host.add(&left_data, right_data)?;
                return Ok(PayloadState {
                    base: left.base.clone(),
                    data: Some(data),
                });
            }
        }
    }
    Ok(PayloadState {
        base: right.obj.clone(),
        data: None,
    })
}

/// tool_result, media, unknown: a part of its own; at a known index, fields fill if absent.
fn fold_other<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    part: &OtherPart<H::Obj>,
) -> Result<(), H::Err> {
    let kind = PartKind::Other(part.kind.clone());
    if let Some(index) = &part.index {
        if let Some(&i) = state.by_index.get(host, &index.obj, index.hash)? {
            if same_kind(host, &state.parts[i].kind, &kind)? {
                let fields = &mut state.parts[i].other;
                for (key, hash, value, is_part, is_index) in &part.items {
                    if *is_part || *is_index || host.class(value).is(Kind::Null) {
                        continue;
                    }
                    match fields.get_mut(host, key, *hash)? {
                        Some(current) if !host.class(current).is(Kind::Null) => {}
                        Some(current) => *current = value.clone(),
                        None => fields.push(key.clone(), *hash, value.clone()),
                    }
                }
                return Ok(());
            }
            kind_change(host, state, &index.obj, &kind, i)?;
        }
    }
    new_other_part(host, state, part)
}

/// A tool_result / media / unknown part of its own, with the fields given.
fn new_other_part<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    part: &OtherPart<H::Obj>,
) -> Result<(), H::Err> {
    let kind = PartKind::Other(part.kind.clone());
    let i = new_part(host, state, kind, part.index.as_ref())?;
    let fields = &mut state.parts[i].other;
    for (key, hash, value, is_part, is_index) in &part.items {
        if !*is_part && !*is_index {
            fields.set(host, key.clone(), *hash, value.clone())?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Tool-call resolver (spec §4)

fn repr_opt<H: Host>(host: &H, value: &Option<H::Obj>) -> Result<H::Obj, H::Err> {
    match value {
        Some(v) => host.repr(v),
        None => Ok(host.str_obj("None")),
    }
}

/// `at_index.name in (None, name)`.
fn name_fits<H: Host>(host: &H, call: &Call<H::Obj>, name: &H::Obj) -> Result<bool, H::Err> {
    match &call.name {
        None => Ok(true),
        Some(current) => host.eq(name, current),
    }
}

fn resolve_call<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    fragment: &Fragment<H::Obj, H::Err>,
) -> Result<(), H::Err> {
    let has_args = !matches!(fragment.args, Args::Absent);
    let index = fragment.index.as_ref();
    let at_index = match index {
        Some(k) => state.calls_by_index.get(host, &k.obj, k.hash)?.copied(),
        None => None,
    };
    let call_id = fragment.id.as_ref();
    let name = fragment.name.as_ref();
    if call_id.is_none() && name.is_none() && !has_args {
        // 1. vacuous: ignored [E33]; metadata alone (a thought signature [E69]) attaches to
        // the call at its index, or the most recent call, and is never dropped
        if !fragment.has_meta {
            return Ok(());
        }
        let call = if index.is_some() {
            at_index
        } else {
            state.calls.len().checked_sub(1)
        };
        let call = match call {
            Some(c) => c,
            None => new_call(host, state, index)?,
        };
        return merge_into(host, state, call, fragment, None, None);
    }
    let known = match call_id {
        Some(k) => state.calls_by_id.get(host, &k.obj, k.hash)?.copied(),
        None => None,
    };
    let call: Option<usize> = if let Some(known) = known {
        // 2. a known id, unless a name comes with it and this index holds another call [E28]
        if name.is_some() && index.is_some() && at_index != Some(known) {
            None
        } else {
            Some(known)
        }
    } else if let (Some(_), Some(name)) = (call_id, name) {
        // 3. a new id with a name: a new call, unless it is the late id of this index's call
        match at_index {
            Some(c) if state.calls[c].id.is_none() && name_fits(host, &state.calls[c], name)? => {
                Some(c)
            }
            _ => None,
        }
    } else if call_id.is_some() {
        // 4. a new id without a name cannot start a call [E35]
        if index.is_some() {
            at_index
        } else {
            open_call(host, state)?
        }
    } else if let (Some(name), Some(_)) = (name, index) {
        // 5. late or repeated name at an index [E29]; another name is another call [E27]
        match at_index {
            Some(c) if name_fits(host, &state.calls[c], name)? => Some(c),
            _ => None,
        }
    } else if name.is_some() {
        // 6. a name without id or index: a new call unless the only call has no name yet
        if state.calls.len() == 1 && state.calls[0].name.is_none() {
            Some(0)
        } else {
            None
        }
    } else if index.is_some() {
        // 7. the call at this index, else a pending call that becomes real with its name
        at_index
    } else {
        // 8. arguments alone: the most recent call [E26], ambiguous among several [E34]
        let call = open_call(host, state)?;
        if call.is_none() {
            state.anomaly(host, "ambiguous_fragment", || {
                Ok(host.str_obj(
                    "arguments before any call: kept on a call without a name until one arrives",
                ))
            })?;
        }
        call
    };
    let call = match call {
        Some(c) => c,
        None => new_call(host, state, index)?,
    };
    merge_into(host, state, call, fragment, call_id, name)
}

/// A fragment with no index and no name: the single open call, else the most recent one
/// with an `ambiguous_fragment` anomaly [E34]; None when there is no call yet.
fn open_call<H: Host>(host: &H, state: &mut State<H::Obj>) -> Result<Option<usize>, H::Err> {
    let n = state.calls.len();
    if n > 1 {
        state.anomaly(host, "ambiguous_fragment", || {
            Ok(host.str_obj(&format!(
                "a fragment with no index and no name among {n} calls went to the most recent one"
            )))
        })?;
    }
    Ok(n.checked_sub(1))
}

fn new_call<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    index: Option<&Key<H::Obj>>,
) -> Result<usize, H::Err> {
    let part = new_part(host, state, PartKind::Call, None)?;
    let call = state.calls.len();
    state.parts[part].call = Some(call);
    state.calls.push(Call {
        id: None,
        name: None,
        type_: None,
        provider_index: index.map(|k| k.obj.clone()),
        args_dict: None,
        part,
    });
    if let Some(k) = index {
        state
            .calls_by_index
            .set(host, k.obj.clone(), k.hash, call)?;
    }
    Ok(call)
}

/// id, type and name are set once; arguments append; other fields deep-merge (spec §4).
fn merge_into<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    c: usize,
    fragment: &Fragment<H::Obj, H::Err>,
    call_id: Option<&Key<H::Obj>>,
    name: Option<&H::Obj>,
) -> Result<(), H::Err> {
    if let Some(id) = call_id {
        if state.calls[c].id.is_none() {
            state.calls[c].id = Some(id.obj.clone());
            if state.calls_by_id.find(host, &id.obj, id.hash)?.is_none() {
                state.calls_by_id.push(id.obj.clone(), id.hash, c);
            }
        }
    }
    if let Some(name) = name {
        match &state.calls[c].name {
            None => state.calls[c].name = Some(name.clone()),
            Some(current) => {
                // `call.name != name`
                if !host.eq(current, name)? {
                    let (id, current) = (state.calls[c].id.clone(), current.clone());
                    state.anomaly(host, "name_conflict", || {
                        detail(
                            host,
                            vec![
                                Piece::Lit("call "),
                                Piece::Obj(repr_opt(host, &id)?),
                                Piece::Lit(": name "),
                                Piece::Obj(host.repr(name)?),
                                Piece::Lit(" after "),
                                Piece::Obj(host.repr(&current)?),
                                Piece::Lit(" ignored"),
                            ],
                        )
                    })?;
                }
            }
        }
    }
    if state.calls[c].type_.is_none() {
        if let Some(kind) = &fragment.type_ {
            state.calls[c].type_ = Some(kind.clone());
        }
    }
    if state.calls[c].provider_index.is_none() {
        if let Some(index) = &fragment.index {
            state.calls[c].provider_index = Some(index.obj.clone());
            state
                .calls_by_index
                .set(host, index.obj.clone(), index.hash, c)?;
        }
    }
    let part = state.calls[c].part;
    match &fragment.args {
        Args::Text(text) => {
            if state.calls[c].args_dict.is_some() {
                mismatched_arguments(host, state, c, ": text arguments after object ones")?;
            } else {
                state.parts[part].pieces.push(text.clone());
            }
        }
        Args::Dict(dict) => {
            if !state.parts[part].pieces.is_empty() {
                mismatched_arguments(host, state, c, ": object arguments after text ones")?;
            } else {
                let left = state.calls[c]
                    .args_dict
                    .take()
                    .unwrap_or_else(|| Val::Dict(HMap::default()));
                state.calls[c].args_dict = Some(deep_merge(host, Some(left), dict, 0)?);
            }
        }
        Args::Absent | Args::Other => {}
    }
    if let Some(err) = &fragment.late {
        return Err(host.clone_err(err));
    }
    let signature_concat = state.options.signature_concat;
    let fields = state.parts[part].fields();
    if let Some(payload) = &fragment.payload {
        let merged = merge_payload(host, signature_concat, fields.payload.take(), payload)?;
        fields.payload = Some(merged);
    }
    if fields.response_item_id.is_none() {
        if let Some(item_id) = &fragment.item_id {
            fields.response_item_id = Some(item_id.clone());
        }
    }
    // set once: a later fragment of the call keeps the index the first one gave
    if fields.call_index.is_none() {
        if let Some(call_index) = &fragment.call_index {
            fields.call_index = Some(call_index.clone());
        }
    }
    if let Some(extra) = &fragment.extra {
        // `fields.get("extra") or {}`
        let left = match fields.extra.take() {
            Some(v) if v.truthy(host)? => v,
            _ => Val::Dict(HMap::default()),
        };
        fields.extra = Some(deep_merge(host, Some(left), extra, 0)?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The rebuild of a described leaf (`from_dict`, E91), on the engine's own values; what
    //! the twin gives for the same leaves.

    use std::sync::Arc;

    use serde_json::json;

    use super::super::{materialize, Family, Leaf, Options};
    use super::{fold, State};
    use crate::engine::value::{Map, NativeHost, Value};

    fn convert(json: serde_json::Value) -> Value {
        match json {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => Value::Int(n.as_i64().expect("an int")),
            serde_json::Value::String(s) => Value::Str(s),
            serde_json::Value::Array(items) => {
                Value::List(Arc::new(items.into_iter().map(convert).collect()))
            }
            serde_json::Value::Object(map) => Value::Dict(Arc::new(
                map.into_iter()
                    .map(|(k, v)| (k, convert(v)))
                    .collect::<Map>(),
            )),
        }
    }

    fn to_json(value: &Value) -> serde_json::Value {
        match value.resolved() {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => json!(b),
            Value::Int(i) => json!(i),
            Value::Str(s) => json!(s),
            Value::List(items) => serde_json::Value::Array(items.iter().map(to_json).collect()),
            Value::Dict(map) => serde_json::Value::Object(
                map.iter().map(|(k, v)| (k.clone(), to_json(v))).collect(),
            ),
            other => panic!("not in these tests: {other:?}"),
        }
    }

    /// `leaves` folded into a fresh assistant state, read (`finish=False`) as JSON.
    fn folded(leaves: &[serde_json::Value]) -> serde_json::Value {
        let host = NativeHost;
        let family = Value::from("assistant");
        let mut state = State::new(&host, Family::Assistant, family, Options::DEFAULT);
        for leaf in leaves {
            let parsed = Leaf::parse(&host, Family::Assistant, convert(leaf.clone()));
            fold(&host, &mut state, &parsed).expect("fold");
        }
        to_json(&materialize(&host, &state, false).expect("materialize"))
    }

    /// What `from_dict` makes of a message whose reasoning and text share block index 0.
    fn described(described: bool) -> serde_json::Value {
        json!({
            "role": "assistant",
            "parts": [
                {"part": "reasoning", "text": "think", "summary": null,
                 "payload": {"provider": "p", "kind": "signature", "data": "S"},
                 "redacted": false, "index": 0, "opened": true},
                {"part": "text", "text": "Hel", "citations": null, "attributes": null,
                 "index": 0, "opened": true},
                {"part": "tool_call", "id": "c1", "type": "function", "name": "f",
                 "arguments": "{", "provider_index": 3, "payload": null,
                 "response_item_id": null, "extra": {}, "call_index": null},
            ],
            "anomalies": [{"code": "kind_change", "detail": "part index 0: text after reasoning"}],
            "described": described,
        })
    }

    fn kinds(data: &serde_json::Value) -> Vec<String> {
        let parts = data["parts"].as_array().expect("parts");
        parts
            .iter()
            .map(|p| p["part"].as_str().expect("kind").to_owned())
            .collect()
    }

    #[test]
    fn a_described_leaf_folded_first_is_rebuilt_as_it_is() {
        let data = folded(&[described(true)]);
        assert_eq!(kinds(&data), ["reasoning", "text", "tool_call"]);
        assert_eq!(data["anomalies"].as_array().expect("anomalies").len(), 1);
        assert_eq!(data["parts"][0]["payload"]["data"], json!("S"));
        assert_eq!(data["parts"][2]["extra"], json!({}));
        // merged again instead, the kind change is recorded again and the empty extra is lost
        let merged = folded(&[described(false)]);
        assert_eq!(merged["anomalies"].as_array().expect("anomalies").len(), 2);
        assert_eq!(merged["parts"][2]["extra"], json!(null));
    }

    #[test]
    fn later_leaves_continue_a_rebuilt_leaf() {
        let delta = json!({
            "parts": [
                {"part": "text", "text": "lo", "index": 0},
                {"part": "tool_call", "provider_index": 3, "arguments": "}"},
            ],
        });
        let data = folded(&[described(true), delta]);
        assert_eq!(kinds(&data), ["reasoning", "text", "tool_call"]);
        assert_eq!(data["parts"][1]["text"], json!("Hello"));
        assert_eq!(data["parts"][2]["arguments"], json!("{}"));
        assert_eq!(data["anomalies"].as_array().expect("anomalies").len(), 1);
    }

    #[test]
    fn a_described_leaf_after_another_is_merged() {
        let head = json!({"role": "assistant", "parts": [{"part": "text", "text": "x"}]});
        let data = folded(&[head, described(true)]);
        // its text at index 0 meets its reasoning there: the fold's rules, anomaly included
        assert_eq!(kinds(&data), ["text", "reasoning", "text", "tool_call"]);
        assert_eq!(data["anomalies"].as_array().expect("anomalies").len(), 2);
    }
}
