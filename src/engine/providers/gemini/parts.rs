//! One part of a candidate's content read into leaf parts: text and thoughts, inline data and
//! code, a function call (whole, or streamed as `partialArgs`), anything else kept verbatim.

use super::candidate::Last;
use super::*;

impl Candidate {
    pub(super) fn part(
        &mut self,
        part: &Value,
        at: At,
        out: &mut Vec<Value>,
        anomalies: &mut Vec<Value>,
    ) -> R<()> {
        let stripped = without_nulls(part);
        let part = stripped.as_ref().unwrap_or(part);
        let signature = field(part, "thoughtSignature");
        if let Some(call) = field(part, "functionCall") {
            expect(Some(call), "object", || at.call())?;
            // the part's own fields beside the call (partMetadata, ...), kept with it
            let beside: Option<Value> = match part {
                Value::Dict(map) => {
                    let mut rest = Obj::new();
                    for (k, v) in map.iter() {
                        if k != "functionCall" && k != "thoughtSignature" {
                            rest.put(k, v.clone());
                        }
                    }
                    (!rest.is_empty()).then(|| rest.build())
                }
                _ => None,
            };
            return self.call(call, signature, beside, at, out, anomalies);
        }
        let Value::Dict(map) = part else {
            return Ok(());
        };
        let Some(text) = field(part, "text") else {
            let first = map.keys().find(|k| k.as_str() != "thoughtSignature");
            self.close_streamed(out);
            let Some(first) = first else {
                if let Some(sig) = signature {
                    self.signature(sig, out);
                }
                return Ok(());
            };
            let index = self.new_index(Last::Other, signature.is_some());
            let mut f = Obj::new();
            f.put("part", str_value("unknown"))
                .put("provider", str_value(NAME))
                .put("kind", str_value(first))
                .put("raw", part.clone())
                .put("index", Value::Int(index));
            out.push(f.build());
            return Ok(());
        };
        expect(Some(text), "string", || format!("{}.text", at.part()))?;
        let text_str = match text {
            Value::Str(t) => t.as_str(),
            _ => "",
        };
        let reasoning = is_true(get(part, "thought"));
        let kind = if reasoning {
            Last::Reasoning
        } else {
            Last::Text
        };
        let mut attributes: Map = Map::default();
        for (k, v) in map.iter() {
            if k != "text" && k != "thought" && k != "thoughtSignature" {
                attributes.insert(k.clone(), v.clone());
            }
        }
        if reasoning && !attributes.is_empty() {
            // a reasoning part has no place for fields beside its text: kept whole
            self.close_streamed(out);
            let index = self.new_index(Last::Other, signature.is_some());
            let mut f = Obj::new();
            f.put("part", str_value("unknown"))
                .put("provider", str_value(NAME))
                .put("kind", str_value("thought"))
                .put("raw", part.clone())
                .put("index", Value::Int(index));
            out.push(f.build());
            return Ok(());
        }
        if text_str.is_empty() && attributes.is_empty() {
            if let Some(sig) = signature {
                self.close_streamed(out);
                self.signature(sig, out);
            }
            return Ok(());
        }
        self.close_streamed(out);
        let index = if self.last_kind == Some(kind) && (signature.is_none() || !self.last_signed) {
            if signature.is_some() {
                self.last_signed = true;
            }
            self.last_index
        } else {
            self.new_index(kind, signature.is_some())
        };
        let mut piece = Obj::new();
        piece
            .put(
                "part",
                str_value(if reasoning { "reasoning" } else { "text" }),
            )
            .put("text", text.clone())
            .put("index", Value::Int(index));
        if !reasoning {
            if let Some(sig) = signature {
                let mut with =
                    Map::with_capacity_and_hasher(attributes.len() + 1, Default::default());
                with.insert("payload".to_owned(), payload(sig));
                for (k, v) in attributes {
                    with.insert(k, v);
                }
                attributes = with;
            }
            if !attributes.is_empty() {
                piece.put("attributes", dict(attributes));
            }
        } else if let Some(sig) = signature {
            piece.put("payload", payload(sig));
        }
        out.push(piece.build());
        Ok(())
    }

    pub(super) fn call(
        &mut self,
        call: &Value,
        signature: Option<&Value>,
        beside: Option<Value>,
        at: At,
        out: &mut Vec<Value>,
        anomalies: &mut Vec<Value>,
    ) -> R<()> {
        let name_value = field(call, "name");
        if let Some(name) = name_value {
            expect(Some(name), "string", || format!("{}.name", at.call()))?;
        }
        let name: Option<&str> = match name_value {
            Some(Value::Str(text)) => Some(text.as_str()),
            _ => None,
        };
        if let Some(id) = field(call, "id") {
            expect(Some(id), "string", || format!("{}.id", at.call()))?;
        }
        let args = field(call, "args");
        if let Some(a) = args {
            expect(Some(a), "object", || format!("{}.args", at.call()))?;
        }
        let partial = field(call, "partialArgs");
        if let Some(p) = partial {
            expect(Some(p), "array", || format!("{}.partialArgs", at.call()))?;
        }
        let partial_items: &[Value] = match partial {
            Some(Value::List(items)) => items,
            _ => &[],
        };
        let more = is_true(get(call, "willContinue"));
        let name_absent = absent(name_value);
        let mut fragment = Obj::new();
        let mut size = 0usize;
        let mut stream_number: Option<i64> = None;
        if !name_absent || self.streamed.is_none() {
            // a call starts here
            if name_absent && args.is_none() && partial_items.is_empty() && !more {
                if let Some(sig) = signature {
                    self.signature(sig, out);
                }
                return Ok(());
            }
            self.close_streamed(out);
            if name_absent {
                anomalies.push(anomaly(
                    "delta_before_start",
                    format!(
                        "{}: arguments without a call; kept on a call without a name",
                        at.call()
                    ),
                ));
            }
            let number = self.calls;
            self.calls += 1;
            self.last_kind = Some(Last::Call);
            self.last_index = number;
            self.last_signed = signature.is_some();
            fragment.put("part", str_value("tool_call"));
            size += 1;
            if let Some(id) = field(call, "id") {
                fragment.put("id", id.clone());
                size += 1;
            }
            if let Some(n) = name_value {
                fragment.put("name", n.clone());
                size += 1;
            }
            fragment.put("provider_index", Value::Int(number));
            size += 1;
            if let Some(a) = args {
                fragment.put("arguments", a.clone());
                size += 1;
            }
            if more || !partial_items.is_empty() {
                self.streamed = Some(Streamed::new(number, name));
                stream_number = Some(number);
            }
        } else if let Some(streamed) = &self.streamed {
            // the streamed call goes on (it is the candidate's last part)
            fragment
                .put("part", str_value("tool_call"))
                .put("provider_index", Value::Int(streamed.number));
            size += 2;
            stream_number = Some(streamed.number);
            if let Some(id) = field(call, "id") {
                fragment.put("id", id.clone());
                size += 1;
            }
            if signature.is_some() {
                self.last_signed = true;
            }
        }
        if stream_number.is_some() {
            let mut text = String::new();
            if let Some(streamed) = self.streamed.as_mut() {
                for (number, arg) in partial_items.iter().enumerate() {
                    expect(Some(arg), "object", || at.arg(number))?;
                    text.push_str(&streamed.write(arg, at, number, anomalies)?);
                }
                if !more {
                    text.push_str(&streamed.close());
                }
            }
            if !more {
                self.streamed = None;
            }
            if !text.is_empty() {
                if !fragment.contains("arguments") {
                    size += 1;
                }
                fragment.put("arguments", Value::Str(text));
            }
        }
        if let Some(sig) = signature {
            fragment.put("payload", payload(sig));
            size += 1;
        }
        if let Value::Dict(map) = call {
            let mut extra = Obj::new();
            for (k, v) in map.iter() {
                if !CALL_FIELDS.contains(&k.as_str()) && !matches!(v, Value::Null) {
                    extra.put(k, v.clone());
                }
            }
            if let Some(beside) = beside {
                extra.put(PART_FIELDS, beside);
            }
            if !extra.is_empty() {
                fragment.put("extra", extra.build());
                size += 1;
            }
        }
        if size > 2 {
            out.push(fragment.build());
        }
        Ok(())
    }
}
