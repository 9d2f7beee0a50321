//! The state of a fold (the twin's `_State`, `_Part`, `_Call`): what a chunk holds between
//! leaves, and the anomaly record every rule writes to. Separate from the rules that change it
//! (`fold`, `parts`, `calls`, `usage`, `rebuild`, `append`) and from its reading (`read`),
//! which all share it.

use crate::engine::error::EngineError;
use crate::engine::host::Host;

use super::map::{HMap, Val};
use super::{Family, Options};

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
    pub(super) fn fields(&mut self) -> &mut PartFields<O> {
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
    /// A normalized finish reason the adapter gave (a Responses status, spec §10.7).
    pub(crate) finish_reason_normalized: Option<String>,
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
            finish_reason_normalized: None,
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
    pub(super) fn anomaly<H: Host<Obj = O>>(
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
