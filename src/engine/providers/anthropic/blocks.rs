//! The content-block events of the Messages stream: `content_block_start`, `_delta` and
//! `_stop` on the blocks by index (a collision, a delta before its start or of another kind
//! kept apart with an anomaly), and the blocks left open at the end.

use super::parts::{apply, delta_part, start_part, strip_delta, unknown_part};
use super::*;

impl Adapter {
    pub(super) fn start(&mut self, event: &Value) -> Result<Obj, String> {
        let index = index_of(event, "content_block_start")?;
        let (raw, type_) = typed(
            get(event, "content_block"),
            "content_block_start",
            "content_block",
        )?;
        let mut anomalies = Vec::new();
        let known = self.blocks.get(&index).copied();
        let late = known.and_then(|p| self.order.get(p)).is_some_and(|k| {
            k.implicit && k.raw.is_none() && k.kind != Kind::Unknown && k.type_ == type_
        });
        let position = match known {
            Some(p) if late => {
                if let Some(block) = self.order.get_mut(p) {
                    block.implicit = false;
                }
                p
            }
            _ => {
                let mut part_index = index;
                if let Some(k) = known.and_then(|p| self.order.get(p)) {
                    let old = k.type_.clone();
                    part_index = self.spare();
                    anomalies.push(anomaly(
                        "index_collision",
                        format!(
                            "content_block_start of a {type_} block at index {index}, already \
                             used by a {old} block: kept apart as part index {part_index}"
                        ),
                    ));
                }
                self.push_block(Block::new(type_.to_owned(), index, part_index, false))
            }
        };
        let mut rest = Obj::new();
        if let Some(block) = self.order.get_mut(position) {
            if let Some(part) = start_part(block, raw)? {
                rest.put("parts", list_value(vec![part]));
            }
        }
        if type_ == "fallback" {
            // another model served the reply from here on: the message's model (the SDK's)
            if let Some(model) = get(raw, "to").and_then(|to| get_str(to, "model")) {
                if !model.is_empty() {
                    rest.put("response_model", str_value(model));
                }
            }
        }
        Ok(with_anomalies(anomalies, rest))
    }

    pub(super) fn delta(&mut self, event: &Value) -> Result<Obj, String> {
        let index = index_of(event, "content_block_delta")?;
        let (delta, type_) = typed(get(event, "delta"), "content_block_delta", "delta")?;
        let kind = delta_kind(type_);
        let mut anomalies = Vec::new();
        let position = match self.blocks.get(&index) {
            Some(p) => *p,
            None => {
                let opened = match kind {
                    Some((_, name)) => name,
                    None => strip_delta(type_),
                };
                let mut block = Block::new(opened.to_owned(), index, index, true);
                if block.kind == Kind::Unknown {
                    let mut raw = Map::default();
                    raw.insert("type".to_owned(), str_value(opened));
                    block.raw = Some(raw);
                }
                anomalies.push(anomaly(
                    "delta_before_start",
                    format!(
                        "{type_} at index {index} before any content_block_start: \
                         kept as a {opened} block"
                    ),
                ));
                self.push_block(block)
            }
        };
        let Some(block) = self.order.get_mut(position) else {
            return Ok(Obj::new());
        };
        let mut rest = Obj::new();
        if block.kind == Kind::Unknown {
            apply(block, delta, type_)?;
        } else if kind.map(|k| k.0) == Some(block.kind) {
            rest.put(
                "parts",
                list_value(vec![delta_part(delta, type_, block.part_index)?]),
            );
        } else {
            let detail = format!(
                "{type_} for the {} block at index {index}: kept as a part of its own",
                block.type_
            );
            match kind {
                None => {
                    anomalies.push(anomaly("mismatched_delta", detail));
                    let mut part = Obj::new();
                    part.put("part", str_value("unknown"))
                        .put("provider", str_value(NAME));
                    part.put("kind", str_value(type_)).put("raw", delta.clone());
                    rest.put("parts", list_value(vec![part.build()]));
                }
                Some((k, _)) => {
                    let key = (block.part_index, k);
                    let side = match self.side.get(&key) {
                        Some(side) => *side,
                        None => {
                            let side = self.spare();
                            self.side.insert(key, side);
                            anomalies.push(anomaly("mismatched_delta", detail));
                            side
                        }
                    };
                    rest.put("parts", list_value(vec![delta_part(delta, type_, side)?]));
                }
            }
        }
        Ok(with_anomalies(anomalies, rest))
    }

    pub(super) fn stop(&mut self, event: &Value) -> Result<Obj, String> {
        let index = index_of(event, "content_block_stop")?;
        let mut leaf = Obj::new();
        let Some(block) = self
            .blocks
            .get(&index)
            .copied()
            .and_then(|p| self.order.get_mut(p))
        else {
            return Ok(leaf);
        };
        if !block.open {
            return Ok(leaf);
        }
        block.open = false;
        if block.raw.is_some() {
            leaf.put("parts", list_value(vec![unknown_part(block)]));
        }
        Ok(leaf)
    }

    /// Close the blocks still open: a `truncated` anomaly each (when `reason`), and the
    /// unknown blocks emitted as far as they came.
    pub(super) fn close_open(&mut self, reason: Option<&str>) -> Obj {
        let mut anomalies = Vec::new();
        let mut parts = Vec::new();
        for block in self.order.iter_mut() {
            if !block.open {
                continue;
            }
            block.open = false;
            if let Some(reason) = reason {
                let mut what = format!("the {} block", block.type_);
                if block.kind == Kind::ToolUse {
                    what.push(' ');
                    what.push_str(&py_repr(&block.name));
                }
                let detail = format!(
                    "{what} at index {} had no content_block_stop ({reason})",
                    block.index
                );
                anomalies.push(if block.kind == Kind::ToolUse {
                    common::cut_call_anomaly(
                        detail,
                        None,
                        common::str_of(&block.name),
                        Some(block.index),
                    )
                } else {
                    anomaly("truncated", detail)
                });
            }
            if block.raw.is_some() {
                parts.push(unknown_part(block));
            }
        }
        let mut leaf = Obj::new();
        if !anomalies.is_empty() {
            leaf.put("anomalies", list_value(anomalies));
        }
        if !parts.is_empty() {
            leaf.put("parts", list_value(parts));
        }
        leaf
    }
}
