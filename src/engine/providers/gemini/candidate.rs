//! What the adapter remembers of one candidate: the part indexes it handed out and the kind of
//! the last part (where a signature without content goes), a streamed call still open; and
//! the parts a chunk's citations and lone signatures give.

use super::*;

/// The kind of the part a candidate was last given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Last {
    Text,
    Reasoning,
    Call,
    Other,
}

/// One candidate's state across the chunks.
#[derive(Debug, Default)]
pub(super) struct Candidate {
    pub(super) next_index: i64,
    pub(super) last_kind: Option<Last>,
    pub(super) last_index: i64,
    pub(super) last_signed: bool,
    pub(super) calls: i64,
    pub(super) streamed: Option<Streamed>,
    /// its finishReason came
    pub(super) finished: bool,
}

impl Candidate {
    /// A chunk's `citationMetadata` goes to the candidate's text part, verbatim (the twin's
    /// `_citations`).
    pub(super) fn citations(&mut self, citations: &Value, out: &mut Vec<Value>) {
        let index = if self.last_kind == Some(Last::Text) {
            self.last_index
        } else if self.streamed.is_some() {
            let index = self.next_index;
            self.next_index += 1;
            index
        } else {
            self.new_index(Last::Text, false)
        };
        let mut f = Obj::new();
        f.put("part", str_value("text"))
            .put("text", str_value(""))
            .put("index", Value::Int(index))
            .put("citations", list_value(vec![citations.clone()]));
        out.push(f.build());
    }

    pub(super) fn new_index(&mut self, kind: Last, signed: bool) -> i64 {
        let index = self.next_index;
        self.next_index += 1;
        self.last_kind = Some(kind);
        self.last_index = index;
        self.last_signed = signed;
        index
    }

    /// Another part after a streamed call whose end never came: its arguments end here.
    pub(super) fn close_streamed(&mut self, out: &mut Vec<Value>) {
        let Some(mut streamed) = self.streamed.take() else {
            return;
        };
        let text = streamed.close();
        if !text.is_empty() {
            let mut f = Obj::new();
            f.put("part", str_value("tool_call"))
                .put("provider_index", Value::Int(streamed.number))
                .put("arguments", Value::Str(text));
            out.push(f.build());
        }
    }

    /// A signature without content: on the part before it if that can hold it, else on an
    /// empty text part of its own.
    pub(super) fn signature(&mut self, signature: &Value, out: &mut Vec<Value>) {
        let p = payload(signature);
        if let Some(kind) = self.last_kind {
            if !self.last_signed {
                let mut f = Obj::new();
                match kind {
                    Last::Text => {
                        let mut attributes = Obj::new();
                        attributes.put("payload", p);
                        f.put("part", str_value("text"))
                            .put("text", str_value(""))
                            .put("index", Value::Int(self.last_index))
                            .put("attributes", attributes.build());
                    }
                    Last::Reasoning => {
                        f.put("part", str_value("reasoning"))
                            .put("text", str_value(""))
                            .put("index", Value::Int(self.last_index))
                            .put("payload", p);
                    }
                    Last::Call => {
                        f.put("part", str_value("tool_call"))
                            .put("provider_index", Value::Int(self.last_index))
                            .put("payload", p);
                    }
                    Last::Other => {
                        self.own_signature(p, out);
                        return;
                    }
                }
                out.push(f.build());
                self.last_signed = true;
                return;
            }
        }
        self.own_signature(p, out);
    }

    pub(super) fn own_signature(&mut self, p: Value, out: &mut Vec<Value>) {
        let index = self.new_index(Last::Text, true);
        let mut attributes = Obj::new();
        attributes.put("payload", p);
        let mut f = Obj::new();
        f.put("part", str_value("text"))
            .put("text", str_value(""))
            .put("index", Value::Int(index))
            .put("attributes", attributes.build());
        out.push(f.build());
    }
}
