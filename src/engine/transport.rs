//! Stream framing: raw stream bytes, split anywhere, cut into event payloads (the twin's
//! `Transport` and `diagnose`): server-sent events, JSON values one after another, or the
//! elements of a JSON array.
//!
//! Separate from [`crate::engine::events`], which reads one payload's JSON text into a value:
//! framing never parses a payload (except to word [`diagnose`]'s detail), so the two change
//! for different reasons.

use crate::engine::events::{parse, NOT_JSON};

/// A UTF-8 byte order mark, skipped at the start of a stream.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// Where a [`Transport`] hands its payloads ([`Transport::feed_to`]; [`Transport::feed`]
/// takes a closure).
pub trait Sink {
    /// One complete payload, in order.
    fn payload(&mut self, payload: &[u8]);
    /// A JSON line offered whole before it is scanned: the line of a JSON-values stream
    /// that starts with `{` and ends with `}` (trailing whitespace cut). True if the sink read
    /// it as one valid JSON object (then the scan would have found that very payload: in
    /// valid JSON its bracket count is exact) and the transport goes on after it; false,
    /// with nothing done, and the line is scanned as always. The default declines.
    fn whole_line(&mut self, _line: &[u8]) -> bool {
        false
    }
}

/// A closure as a [`Sink`] (it reads no line whole).
struct FnSink<'s>(&'s mut dyn FnMut(&[u8]));

impl Sink for FnSink<'_> {
    fn payload(&mut self, payload: &[u8]) {
        (self.0)(payload)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportKind {
    Sse,
    Json,
    Array,
}

/// How many of a stream's first bytes a transport keeps, to say what the input was when no
/// event could be read from it ([`diagnose`]).
const HEAD: usize = 512;

/// Raw stream bytes in, complete event payloads out (the twin's `Transport`). It never fails:
/// bytes that are not an event become a payload of their own, which [`parse`] rejects, so the
/// aggregator can skip it and read on.
///
/// Payloads are handed to a sink as slices of the bytes being read: a fed block is read where
/// it lies and only its unfinished last event is copied (into `buf`, which the next block is
/// appended to), so a whole stream given at once is never copied and no complete event is
/// copied out of it (an SSE event of several `data:` lines is joined, as it must be).
#[derive(Debug, Default)]
pub struct Transport {
    pub kind: Option<TransportKind>,
    /// The unfinished end of what was fed (the start of an event still arriving).
    buf: Vec<u8>,
    pos: usize,
    /// The SSE event being read, when it cannot be a slice of the bytes being read: its
    /// `data:` lines joined, once it has two of them or outlives the block it started in.
    data: Vec<u8>,
    has_data: bool,
    depth: i64,
    in_str: bool,
    esc: bool,
    junk: bool,
    start: Option<usize>,
    bom_checked: bool,
    head: Vec<u8>,
    total: usize,
}

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn trim_ws(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if is_ws(*first) {
            s = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = s {
        if is_ws(*last) {
            s = rest;
        } else {
            break;
        }
    }
    s
}

/// Whether a read event is a payload: not empty, not `[DONE]` (the twin's `_take`).
fn is_payload(payload: &[u8]) -> bool {
    let stripped = trim_ws(payload);
    !stripped.is_empty() && stripped != b"[DONE]"
}

impl Transport {
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes as they arrive; each complete payload goes to `sink`, in order.
    pub fn feed(&mut self, data: &[u8], sink: &mut dyn FnMut(&[u8])) {
        self.feed_to(data, &mut FnSink(sink));
    }

    /// [`Self::feed`] to a [`Sink`], which may read JSON lines whole.
    pub fn feed_to(&mut self, data: &[u8], sink: &mut dyn Sink) {
        if self.head.len() < HEAD {
            let room = HEAD - self.head.len();
            self.head.extend_from_slice(&data[..data.len().min(room)]);
        }
        self.total += data.len();
        if self.buf.is_empty() {
            // nothing left over: read the block where it lies, keep only its unfinished end
            let used = self.read(data, sink, false);
            self.buf.extend_from_slice(&data[used..]);
        } else {
            let mut buf = std::mem::take(&mut self.buf);
            buf.extend_from_slice(data);
            let used = self.read(&buf, sink, false);
            buf.drain(..used);
            self.buf = buf;
        }
    }

    /// The end of the stream: the events still in the buffer go to `sink`; the result is the
    /// *tail*, the last event when the stream ended inside it (an SSE event without its blank
    /// line, a JSON object not closed), or None (the twin's `finish`).
    pub fn finish(&mut self, sink: &mut dyn FnMut(&[u8])) -> Option<Vec<u8>> {
        let sink = &mut FnSink(sink);
        let buf = std::mem::take(&mut self.buf);
        let tail = match self.kind {
            Some(TransportKind::Sse) => {
                self.sse(&buf, sink, true);
                let payload = std::mem::take(&mut self.data);
                std::mem::replace(&mut self.has_data, false)
                    .then_some(payload)
                    .filter(|p| is_payload(p))
            }
            Some(_) => {
                let used = self.scan(&buf, sink, true);
                self.start.is_some().then(|| buf[used..].to_vec())
            }
            None => None,
        };
        self.pos = 0;
        tail
    }

    /// What the stream's first bytes were, for an input with no event in it; None for an
    /// input of nothing but blanks (the empty input, worded by `fastmerge.errors`).
    pub fn diagnosis(&self) -> Option<String> {
        diagnose(&self.head, self.total)
    }

    /// Reads the events of `buf` (what was left over, then the new block); the result is how
    /// many of its bytes are done with (the rest is kept for the next block).
    fn read(&mut self, buf: &[u8], sink: &mut dyn Sink, last: bool) -> usize {
        let mut skip = 0;
        if !self.bom_checked {
            if buf.len() < 3 && BOM.starts_with(buf) {
                return 0;
            }
            self.bom_checked = true;
            if buf.starts_with(BOM) {
                skip = BOM.len();
            }
        }
        let buf = &buf[skip..];
        if self.kind.is_none() {
            let Some(first) = buf.iter().copied().find(|c| !is_ws(*c)) else {
                return skip;
            };
            self.kind = Some(match first {
                // a JSON value that is not an object is still JSON (and an unreadable event),
                // never an SSE field name
                b'{' | b'"' | b'-' | b'0'..=b'9' => TransportKind::Json,
                b'[' => TransportKind::Array,
                _ => TransportKind::Sse,
            });
        }
        skip + if self.kind == Some(TransportKind::Sse) {
            self.sse(buf, sink, last)
        } else {
            self.scan(buf, sink, last)
        }
    }

    // -- server-sent events

    /// The whole lines of `buf`; the result is where the first unfinished line starts. `pos`
    /// is how far that line was already searched for its end, so a long line fed in pieces is
    /// searched once.
    fn sse(&mut self, buf: &[u8], sink: &mut dyn Sink, last: bool) -> usize {
        let n = buf.len();
        let mut start = 0;
        let mut from = self.pos;
        // the event being read while it is one `data:` line of `buf` (else it is in `data`)
        let mut event: Option<&[u8]> = None;
        loop {
            let Some(end) = memchr::memchr2(b'\n', b'\r', &buf[from..]).map(|i| from + i) else {
                if last && start < n {
                    self.line(&buf[start..n], &mut event, sink);
                    start = n;
                }
                from = n;
                break;
            };
            if buf[end] == b'\r' && end + 1 == n && !last {
                from = end; // a \r at the end: maybe the first half of \r\n
                break;
            }
            self.line(&buf[start..end], &mut event, sink);
            start = if buf[end] == b'\r' && end + 1 < n && buf[end + 1] == b'\n' {
                end + 2
            } else {
                end + 1
            };
            from = start;
        }
        if let Some(event) = event {
            self.data.extend_from_slice(event); // outlives this block: owned from here
        }
        self.pos = from - start;
        start
    }

    fn line<'b>(&mut self, line: &'b [u8], event: &mut Option<&'b [u8]>, sink: &mut dyn Sink) {
        if line.is_empty() {
            if self.has_data {
                self.has_data = false;
                let payload = event.take().unwrap_or(&self.data);
                if is_payload(payload) {
                    sink.payload(payload);
                }
                self.data.clear();
            }
            return;
        }
        if line[0] == b':' {
            return; // a comment
        }
        let (field, value) = match line.iter().position(|c| *c == b':') {
            None => (line, &b""[..]),
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
        };
        if field == b"data" {
            if !self.has_data {
                *event = Some(value);
                self.has_data = true;
                return;
            }
            // the event's lines are joined with newlines
            if let Some(first) = event.take() {
                self.data.extend_from_slice(first);
            }
            self.data.push(b'\n');
            self.data.extend_from_slice(value);
        }
    }

    // -- JSON values one after another, or the elements of one array

    /// The whole values of `buf`; the result is where the value still arriving starts (or
    /// where scanning stopped). Where the next event starts is known even after a bad one: a
    /// value that does not open with `{` runs to the end of its line (in an array, to the
    /// next `,` or `]`), and a raw newline inside a string (never valid JSON) ends the value
    /// it is in. Unbalanced brackets cannot be told apart from a value still arriving: the
    /// rest of the stream is then read as that value, cut by the end (`truncated`).
    fn scan(&mut self, buf: &[u8], sink: &mut dyn Sink, last: bool) -> usize {
        let array = self.kind == Some(TransportKind::Array);
        let n = buf.len();
        // the scanner's state in locals (the loop runs per byte outside strings)
        let (mut pos, mut depth, mut in_str, mut esc, mut junk, mut start) = (
            self.pos,
            self.depth,
            self.in_str,
            self.esc,
            self.junk,
            self.start,
        );
        while pos < n {
            let c = buf[pos];
            let Some(first) = start else {
                if is_ws(c) || (array && matches!(c, b',' | b'[' | b']')) {
                    pos += 1;
                    continue;
                }
                if c == b'{' && !array {
                    // a whole line in the buffer: offered to the sink first, whose reading
                    // of it finds its end (no byte scanned here but the newline search)
                    if let Some(end) = memchr::memchr(b'\n', &buf[pos..]) {
                        let line = trim_ws(&buf[pos..pos + end]);
                        if line.ends_with(b"}") && sink.whole_line(line) {
                            pos += end + 1;
                            continue;
                        }
                    }
                }
                start = Some(pos);
                depth = 0;
                junk = c != b'{';
                continue;
            };
            if junk {
                let end = if array {
                    memchr::memchr3(b'\n', b',', b']', &buf[pos..])
                } else {
                    memchr::memchr(b'\n', &buf[pos..])
                };
                match end {
                    Some(i) => {
                        pos += i;
                        sink.payload(&buf[first..pos]);
                        start = None;
                        junk = false;
                    }
                    None => pos = n,
                }
                continue;
            }
            // inside the value: a string to its end, then the brackets between it and the
            // next string, and so on (without going back through the checks above)
            loop {
                if in_str {
                    if esc {
                        esc = false;
                        pos += 1;
                    }
                    // to the string's next quote, backslash or raw newline, a word at a time;
                    // an escape skips the byte after it
                    loop {
                        pos = string_stop(buf, pos);
                        if pos >= n {
                            break;
                        }
                        match buf[pos] {
                            b'\\' => {
                                pos += 2;
                                if pos > n {
                                    // the escaped byte is in the next block
                                    pos = n;
                                    esc = true;
                                    break;
                                }
                            }
                            b'"' => {
                                in_str = false;
                                pos += 1;
                                break;
                            }
                            _ => {
                                // a raw newline: this value is broken, the next starts after it
                                sink.payload(&buf[first..pos]);
                                start = None;
                                in_str = false;
                                pos += 1;
                                break;
                            }
                        }
                    }
                    if in_str || start.is_none() {
                        break;
                    }
                }
                // between strings: brackets counted, to the next quote
                while pos < n {
                    let c = buf[pos];
                    pos += 1;
                    if !STRUCTURAL[usize::from(c)] {
                        continue;
                    }
                    match c {
                        b'"' => {
                            in_str = true;
                            break;
                        }
                        b'{' | b'[' => depth += 1,
                        _ => {
                            depth -= 1;
                            if depth == 0 {
                                sink.payload(&buf[first..pos]);
                                start = None;
                                break;
                            }
                        }
                    }
                }
                if !in_str {
                    break;
                }
            }
        }
        if last && junk {
            // a value that is not an object, ended by the end of the stream: whole, and bad
            if let Some(first) = start.take() {
                sink.payload(&buf[first..]);
            }
            junk = false;
        }
        let keep = start.unwrap_or(pos);
        self.pos = pos - keep;
        self.start = start.map(|_| 0);
        self.depth = depth;
        self.in_str = in_str;
        self.esc = esc;
        self.junk = junk;
        keep
    }
}

/// The bytes the scan looks at between strings: a quote and the brackets.
static STRUCTURAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < 5 {
        table[b"\"{}[]"[i] as usize] = true;
        i += 1;
    }
    table
};

/// The first position from `pos` on of a quote, a backslash or a raw newline in `buf` (or
/// `buf.len()`): eight bytes per step while eight are left, as provider strings are too short
/// for a SIMD search's set-up to pay (a step may read past the string's end, never past
/// `buf`'s).
fn string_stop(buf: &[u8], mut pos: usize) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // the bytes of `word` equal to `byte` have their high bit set (and no byte before the
    // first of them does: a lower false positive needs a true match below it)
    let equal = |word: u64, byte: u8| {
        let x = word ^ (ONES * u64::from(byte));
        x.wrapping_sub(ONES) & !x & HIGHS
    };
    while let Some(bytes) = buf.get(pos..pos + 8) {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(bytes);
        let word = u64::from_le_bytes(eight);
        let found = equal(word, b'"') | equal(word, b'\\') | equal(word, b'\n');
        if found != 0 {
            return pos + (found.trailing_zeros() / 8) as usize;
        }
        pos += 8;
    }
    while pos < buf.len() && !matches!(buf[pos], b'"' | b'\\' | b'\n') {
        pos += 1;
    }
    pos
}

/// What an input with no event in it was, from its first bytes (`head`) and its length: the
/// detail of the aggregator's "no event could be read" error (the twin's `diagnose`); None
/// for an input of nothing but blanks, which the aggregator calls empty
/// ([`crate::engine::aggregate::AggError::EmptyInput`]).
pub fn diagnose(head: &[u8], total: usize) -> Option<String> {
    const MAGIC: [(&[u8], &str); 5] = [
        (b"\x1f\x8b", "gzip"),
        (b"\x28\xb5\x2f\xfd", "zstd"),
        (b"BZh", "bzip2"),
        (b"\xfd7zXZ\x00", "xz"),
        (b"PK\x03\x04", "zip"),
    ];
    for (magic, name) in MAGIC {
        if head.starts_with(magic) {
            return Some(format!("{name}-compressed input: decompress it first"));
        }
    }
    // a cut UTF-8 sequence at the end of the head is still text
    let valid = match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && head.len() == HEAD,
    };
    let whole = total == head.len();
    let head = head.strip_prefix(BOM).unwrap_or(head);
    let text = trim_ws(head);
    if text.is_empty() {
        return None;
    }
    let printable = |c: &u8| *c >= 0x20 || matches!(c, b'\t' | b'\r' | b'\n' | 0x0c);
    if !valid || !head.iter().all(printable) {
        return Some("binary input, not provider events".to_owned());
    }
    let line = trim_ws(text.split(|c| *c == b'\n').next().unwrap_or(text));
    let looks_like_path = whole
        && !text.contains(&b'\n')
        && !text.contains(&b' ')
        && (text.contains(&b'/')
            || text.contains(&b'\\')
            || [
                ".json", ".jsonl", ".ndjson", ".sse", ".txt", ".log", ".gz", ".zst",
            ]
            .iter()
            .any(|ext| text.ends_with(ext.as_bytes())));
    if looks_like_path {
        return Some(
            "the input is text that looks like a file path, not a stream; pass a \
             pathlib.Path to read a file"
                .to_owned(),
        );
    }
    Some(match parse(line) {
        Err(err) if err.0 != NOT_JSON => err.0,
        _ => "no JSON object, JSON array or SSE data: line in the input".to_owned(),
    })
}
