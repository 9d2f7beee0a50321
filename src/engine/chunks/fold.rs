//! One leaf folded into a state (the twin's `_fold`): each of the leaf's fields in its order,
//! handed to its rule (`parts`, `calls`, `usage`, `rebuild`, `merge`); the message-level fields
//! with no file of their own (content, completion_token_ids) are folded here.

use crate::engine::host::Host;

use super::calls::resolve_call;
use super::leaf::{Content, Field, Leaf, PartOp};
use super::map::Val;
use super::merge::{deep_merge, fold_logprobs};
use super::parts::{fold_other, fold_text};
use super::rebuild::rebuild_part;
use super::state::{Anomaly, ContentKind, State};
use super::usage::fold_usage;
use super::Family;

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
            Field::FinishReasonNormalized(text) => {
                state.finish_reason_normalized = Some(text.clone())
            }
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
            Field::Refusal(value) => {
                let refusal = state.refusal.get_or_insert_with(Vec::new);
                if leaf.settled {
                    refusal.clear(); // a done refusal replaces the streamed one (spec §6.1)
                }
                refusal.push(value.clone()); // [E71]
            }
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
