//! After the finish (spec §6.1): a choice that finished takes no more content; an event's
//! content for it is refused with one `delta_after_finish` anomaly, its metadata merged.

use super::AggregatorCore;
use crate::engine::providers::{common, Leaves};
use crate::engine::value::Value;

impl AggregatorCore {
    /// Whether choice `choice` has finished (spec §6.1): its finish reason came, or its
    /// terminal status (`message_stop`, `response.completed`, `done`, `messageStop`).
    pub(super) fn finished(&self, choice: i64) -> bool {
        self.states.get(&choice).is_some_and(|state| {
            state.finish_reason.is_some()
                || matches!(&state.status, Some(Value::Str(status)) if status == "complete")
        })
    }

    /// An event's leaves without the content it carries for a choice that had finished
    /// before it (spec §6.1: a stream logged twice, events out of order). Such a choice gets
    /// one `delta_after_finish` anomaly and the event's metadata (usage, ids, status: merged
    /// after the finish as always), not its content, nor the anomalies its content raised:
    /// the finished message's content stays as it was.
    pub(super) fn after_finish(&self, leaves: Leaves) -> Leaves {
        let mut refused: Vec<i64> = Vec::new();
        for (choice, leaf) in &leaves {
            if !refused.contains(choice) && carries_content(leaf) && self.finished(*choice) {
                refused.push(*choice);
            }
        }
        if refused.is_empty() {
            return leaves;
        }
        let mut out: Leaves = Vec::with_capacity(leaves.len() + refused.len());
        let mut told: Vec<i64> = Vec::new();
        for (choice, leaf) in leaves {
            if !refused.contains(&choice) {
                out.push((choice, leaf));
                continue;
            }
            if !told.contains(&choice) {
                told.push(choice);
                let detail = format!(
                    "event {} carries content for choice {choice}, which had finished: its \
                     content was not merged",
                    self.count
                );
                let mut anomaly = common::Obj::new();
                anomaly.put(
                    "anomalies",
                    common::list_value(vec![common::anomaly("delta_after_finish", detail)]),
                );
                out.push((choice, anomaly.build()));
            }
            let mut rest = common::Obj::new();
            if let Value::Dict(map) = &leaf {
                for (key, value) in map.iter() {
                    if !CONTENT_KEYS.contains(&key.as_str()) && key != "anomalies" {
                        rest.put(key, value.clone());
                    }
                }
            }
            if !rest.is_empty() {
                out.push((choice, rest.build()));
            }
        }
        out
    }
}

/// The anomalies an adapter raises reading an event's content (a block started at an index
/// in use, a delta before its start, a done text other than the deltas): after the finish
/// they are part of the content that is not merged (a stream logged twice raises them).
const CONTENT_ANOMALIES: &[&str] = &["index_collision", "delta_before_start", "mismatched_delta"];

/// The keys of a leaf that hold content (spec §6.1); [`carries_content`] reads their values.
const CONTENT_KEYS: &[&str] = &[
    "parts",
    "content",
    "completion_token_ids",
    "refusal",
    "logprobs",
];

/// Whether a leaf carries content (spec §6.1): text, reasoning, a refusal, tool-call
/// fragments, logprobs, token ids, or an anomaly of reading them; an empty text part is
/// none. Everything else of a leaf (usage, ids, finish reason, status, metadata, other
/// anomalies) is metadata.
fn carries_content(leaf: &Value) -> bool {
    let Value::Dict(map) = leaf else {
        return false;
    };
    map.iter().any(|(key, value)| match key.as_str() {
        "parts" => common::items(Some(value)).iter().any(content_part),
        "content" | "completion_token_ids" => match value {
            Value::Null => false,
            Value::Str(text) => !text.is_empty(),
            Value::List(items) => !items.is_empty(),
            _ => true,
        },
        "refusal" => matches!(value, Value::Str(text) if !text.is_empty()),
        "logprobs" => !matches!(value, Value::Null),
        "anomalies" => common::items(Some(value)).iter().any(|anomaly| {
            common::get_str(anomaly, "code").is_some_and(|code| CONTENT_ANOMALIES.contains(&code))
        }),
        _ => false,
    })
}

/// Whether a part of a leaf is content: any part but a text or reasoning part with nothing
/// but an empty text and no index (the empty delta of a chunk that carries only metadata; an
/// index is a block opened).
fn content_part(part: &Value) -> bool {
    let Value::Dict(map) = part else {
        return true;
    };
    let empty = matches!(map.get("part"), Some(Value::Str(kind)) if kind == "text" || kind == "reasoning")
        && matches!(map.get("text"), Some(Value::Str(text)) if text.is_empty())
        && map
            .keys()
            .all(|key| matches!(key.as_str(), "part" | "text"));
    !empty
}
