//! The batch's shards and threads: [`start`] runs the reader ([`super::reader`]) on one thread
//! and a shard per job on the others; a shard owns the streams whose keys hash to it, folds
//! their records in input order and returns each stream's item (see the module docs of
//! [`super`]).

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::reader::{each_line, read_inputs, route, Chunk, Line, Share};
use super::record::{self, Feed, OrderKey};
use super::{Item, Msg, Out, Place, Plan, Pos, StreamError};
use crate::engine::aggregate::{AggError, AggregatorCore};
use crate::engine::events::{self, EventDataError, NOT_JSON};
use crate::engine::providers;

/// Lines of input after an ended stream's last record within which a record of its key that
/// belongs to the same response still joins it (spec §6: an end event is a hint, not a wall).
/// Past them the stream is returned: memory holds the ended streams of this many lines at
/// most, not every stream of the input. The twin's `PARK_LINES`.
pub const PARK_LINES: u64 = 1 << 16;

/// A record of a block.
struct BlockRecord {
    line: u64,
    /// where the line starts in the block
    start: usize,
    record: Result<record::Record, String>,
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    let text = if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic".to_owned()
    };
    format!("fastmerge batch worker panicked: {text}")
}

/// Runs `body` on a new thread; a panic is reported to the collector, never lost.
fn spawn(
    name: &str,
    out: SyncSender<Msg>,
    body: impl FnOnce(&SyncSender<Msg>) + Send + 'static,
) -> Option<JoinHandle<()>> {
    let report = out.clone();
    let spawned = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| body(&out))) {
                let _ = out.send(Msg::Panic(panic_text(payload)));
            }
        });
    match spawned {
        Ok(handle) => Some(handle),
        Err(err) => {
            let _ = report.try_send(Msg::Panic(format!("cannot start a batch thread: {err}")));
            None
        }
    }
}

/// Starts the threads; the receiver of what they emit, their handles, the number of shards.
/// One job: the reader, and one shard that reads each record and folds it. More: the reader
/// finds each line's key once ([`record::route_key`], the block's bytes at hand) and gives
/// every shard the block with its own lines, which it reads and folds: a record is read on
/// the thread that folds it (handing records from parsing threads to folding ones cost
/// every byte twice in caches, and every shard scanning every line's key a fifth of the CPU).
pub(super) fn start(plan: &Arc<Plan>, jobs: usize) -> (Receiver<Msg>, Vec<JoinHandle<()>>, usize) {
    let (out_tx, out_rx) = sync_channel::<Msg>(4096);
    let mut threads = Vec::new();
    let mut shard_txs = Vec::new();
    for index in 0..jobs {
        let (tx, rx) = sync_channel::<Share>(4);
        shard_txs.push(tx);
        let plan = Arc::clone(plan);
        threads.extend(spawn(
            &format!("fastmerge-shard-{index}"),
            out_tx.clone(),
            move |out| {
                let mut shard = Shard::new(plan, index, out.clone());
                while let Ok(sub) = rx.recv() {
                    if !shard.process(sub) {
                        return;
                    }
                }
            },
        ));
    }
    let plan = Arc::clone(plan);
    threads.extend(spawn("fastmerge-read", out_tx, move |_| {
        let mut hint = 0;
        read_inputs(&plan, |job| {
            let (subs, count) = route(&plan, job, shard_txs.len(), hint);
            hint = count;
            let sent = shard_txs
                .iter()
                .zip(subs)
                .all(|(tx, sub)| tx.send(sub).is_ok());
            sent.then_some(count)
        })
    }));
    (out_rx, threads, jobs)
}

/// An event kept for sorting (`order_by`), as the aggregator will be given it.
enum Kept {
    Text(Vec<u8>),
    Done,
    NotObject(&'static str),
}

/// Where an ended stream waits (its end event is a hint, not a wall: spec §6): its last
/// record, which is where its item is placed.
#[derive(Clone, Copy)]
struct LastRecord {
    pos: Pos,
    place: Place,
    /// the record's input-wide line number
    at: u64,
}

/// A stream being read.
struct Stream {
    key: String,
    core: AggregatorCore,
    /// the position of its first record (streams open at the end come in this order)
    first: Pos,
    /// and where that record is
    first_place: Place,
    /// what an event raised: the stream's result; its later events are not read
    error: Option<AggError>,
    /// with order-by: its events, kept until the end of input
    buffered: Vec<(OrderKey, Kept)>,
    /// set when its end event was read: the stream is no longer open and waits, at its last
    /// record, for a later record of its key (which joins it unless it starts another
    /// response or comes [`PARK_LINES`] lines later)
    parked: Option<LastRecord>,
}

/// An event that is not an object, as `Aggregator.add` reads it: an unreadable event.
fn not_object(core: &mut AggregatorCore, kind: &str) -> Result<(), AggError> {
    core.add(Err(EventDataError(format!(
        "an event must be a JSON object, not {kind}"
    ))))
}

/// Whether the event of a record (its text: a JSON object's, or a string event's) starts
/// another response than the one `core` read (spec §6): the aggregator's own `new_response`
/// rule, asked before the event is read; after the stream's end event (`ended`) also an
/// event its adapter does not know. A string event that is not one object's JSON (SSE
/// lines, an array) never does.
fn opens_response(core: &AggregatorCore, text: &[u8], ended: bool) -> bool {
    text.iter().find(|c| !b" \t\r\n".contains(c)) == Some(&b'{')
        && core.starts_response(text, ended)
}

/// A shard: the streams whose keys hash to it.
struct Shard {
    plan: Arc<Plan>,
    index: usize,
    out: SyncSender<Msg>,
    /// by key, as bytes (a record's key is looked up without a UTF-8 check)
    streams: foldhash::HashMap<Vec<u8>, Stream>,
    /// the keys of the ended streams, by the input-wide line of their last records
    parked: BTreeMap<u64, Vec<u8>>,
    /// what the sub-batch being read emits: sent with its mark, one message per block (a
    /// message per item would wake the collector per item)
    outbox: Vec<(Pos, Out)>,
}

impl Shard {
    fn new(plan: Arc<Plan>, index: usize, out: SyncSender<Msg>) -> Shard {
        Shard {
            plan,
            index,
            out,
            streams: foldhash::HashMap::default(),
            parked: BTreeMap::new(),
            outbox: Vec::new(),
        }
    }

    fn emit(&mut self, pos: Pos, out: Out) {
        // a stream's item written here, on this worker, when the binding asked for it
        let out = match (out, self.plan.writer.get()) {
            (Out::Item(item @ Item::Stream { .. }, place), Some(writer)) => match writer(&item) {
                Some(written) => Out::Written(item, place, written),
                None => Out::Item(item, place),
            },
            (out, _) => out,
        };
        self.outbox.push((pos, out));
    }

    /// Sends what was emitted, and that every item up to `mark` was (or up to the earliest
    /// ended stream's place, whose item is still to come); false when the collector is gone.
    fn flush(&mut self, mark: Pos) -> bool {
        let waiting = self
            .parked
            .first_key_value()
            .and_then(|(_, key)| self.streams.get(key))
            .and_then(|stream| stream.parked);
        let mark = match waiting {
            Some(park) => mark.min(park.pos.with_sub(0)),
            None => mark,
        };
        let outs = std::mem::take(&mut self.outbox);
        let msg = Msg::Block {
            shard: self.index,
            outs,
            mark,
        };
        self.out.send(msg).is_ok()
    }

    fn new_core(&self) -> AggregatorCore {
        let mut core = AggregatorCore::new(self.plan.provider.as_deref(), self.plan.aggregate);
        core.set_fast_events(self.plan.fast_events);
        core
    }

    fn new_stream(&mut self, key: String, first: Pos, file: usize, line: u64) -> Stream {
        let core = self.new_core();
        if self.plan.count_starts {
            self.emit(first.with_sub(0), Out::Start { file, line });
        }
        Stream {
            key,
            core,
            first,
            first_place: Place {
                end: true,
                file,
                line,
            },
            error: None,
            buffered: Vec::new(),
            parked: None,
        }
    }

    /// A stream stops being open at `pos` (counted only with `max_open_streams`).
    fn close(&mut self, pos: Pos) {
        if self.plan.count_starts {
            self.emit(pos.with_sub(0), Out::Close);
        }
    }

    /// The ended streams whose last record is [`PARK_LINES`] lines or more before the
    /// input-wide line `at` (all of them at `u64::MAX`): returned, at their last records.
    fn release_parked(&mut self, at: u64) {
        while let Some(entry) = self.parked.first_entry() {
            if entry.key().saturating_add(PARK_LINES) > at {
                break;
            }
            let key = entry.remove();
            if let Some(stream) = self.streams.remove(&key) {
                if let Some(park) = stream.parked {
                    self.finish(stream, park.pos, park.place);
                }
            }
        }
    }

    /// One sub-batch; false when the shard is to stop.
    fn process(&mut self, sub: Share) -> bool {
        if self.plan.stop.load(Ordering::Relaxed) {
            return false;
        }
        let seq = sub.seq;
        self.release_parked(sub.at);
        if sub.end {
            self.finish_all();
            if let Some(text) = sub.fatal {
                // after every stream's item (those still open at the damage come last)
                let pos = Pos {
                    phase: 2,
                    ..Pos::at(seq, 0, 0)
                };
                self.emit(pos, Out::Fatal(text));
            }
            let _ = self.flush(Pos::MAX);
            return false;
        }
        if let Some(chunk) = &sub.chunk {
            if sub.file {
                self.file_block(chunk);
            } else {
                self.records(chunk, sub.lines);
            }
        }
        self.flush(Pos::at(seq, u64::MAX, u8::MAX))
    }

    /// The records of a block: every line (one shard), or the lines whose keys are this
    /// shard's, in order.
    fn records(&mut self, chunk: &Chunk, lines: Option<Vec<Line>>) {
        let plan = Arc::clone(&self.plan);
        let Some(spec) = &plan.spec else { return };
        match lines {
            Some(lines) => lines
                .into_iter()
                .for_each(|line| self.read_line(chunk, spec, line)),
            None => {
                each_line(chunk, |line, start, text| {
                    let end = start + text.len();
                    let routed = false;
                    self.read_line(
                        chunk,
                        spec,
                        Line {
                            line,
                            start,
                            end,
                            routed,
                        },
                    );
                });
            }
        }
    }

    /// A line's record, read and folded.
    fn read_line(&mut self, chunk: &Chunk, spec: &record::Spec, line: Line) {
        let text = &chunk.data[line.start..line.end];
        let record = match line.routed {
            true => record::read_routed(text, spec),
            false => record::read(text, spec),
        };
        let (line, start) = (line.line, line.start);
        self.record(
            chunk,
            BlockRecord {
                line,
                start,
                record,
            },
        );
    }

    /// A block of a file that is one stream.
    fn file_block(&mut self, chunk: &Chunk) {
        let key = self.plan.paths[chunk.file].clone();
        let stream = match self.streams.remove(key.as_bytes()) {
            Some(stream) => stream,
            None => self.new_stream(key.clone(), Pos::at(chunk.seq, 0, 0), chunk.file, 1),
        };
        let mut stream = stream;
        if stream.error.is_none() {
            if let Err(err) = stream.core.feed(&chunk.data) {
                stream.error = Some(err);
            }
        }
        if chunk.last {
            let place = Place {
                end: false,
                file: chunk.file,
                line: 0,
            };
            return self.finish(stream, Pos::at(chunk.seq, u64::MAX, 1), place);
        }
        self.streams.insert(key.into_bytes(), stream);
    }

    /// A record of a JSON-lines log.
    fn record(&mut self, chunk: &Chunk, rec: BlockRecord) {
        let pos = Pos::at(chunk.seq, rec.line, 1);
        let place = Place {
            end: false,
            file: chunk.file,
            line: rec.line,
        };
        let at = chunk.base + rec.line;
        let record = match rec.record {
            Ok(record) => record,
            Err(reason) => {
                let item = Item::Bad {
                    source: self.plan.paths[chunk.file].clone(),
                    line: rec.line,
                    reason,
                };
                return self.emit(pos, Out::Item(item, place));
            }
        };
        let key = record.key.bytes(&chunk.data[rec.start..]);
        let text = record.feed.text(&chunk.data[rec.start..]);
        // an event the record reader only skipped: an open stream's aggregator reads it if
        // its typed reading takes it (which reads only JSON); any other is checked here, and
        // a line whose event is not JSON is a bad line, as the thorough reader finds it
        let mut fed = None;
        if !record.checked {
            if let Some(stream) = self.streams.get_mut(key) {
                if stream.parked.is_none()
                    && stream.error.is_none()
                    && !opens_response(&stream.core, text, false)
                {
                    fed = stream.core.add_fast(text);
                    // the usual record: read, and its stream goes on (one lookup in all)
                    if matches!(fed, Some(Ok(()))) && !stream.core.ended() {
                        return;
                    }
                }
            }
            if fed.is_none() && !record::event_is_json(text) {
                if record.unread {
                    // the event taken as the line's last member was not: the line read whole
                    let end = chunk.data[rec.start..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .map_or(chunk.data.len(), |i| rec.start + i);
                    let line = &chunk.data[rec.start..end];
                    let Some(spec) = &self.plan.spec else { return };
                    let record = record::read_whole(line, spec);
                    return self.record(chunk, BlockRecord { record, ..rec });
                }
                let item = Item::Bad {
                    source: self.plan.paths[chunk.file].clone(),
                    line: rec.line,
                    reason: NOT_JSON.to_owned(),
                };
                return self.emit(pos, Out::Item(item, place));
            }
        }
        // (a stream that read the event above is open and its event starts no response)
        let known = fed.is_none().then(|| self.streams.get(key)).flatten();
        if let Some(stream) = known {
            match stream.parked {
                // the sentinel after a stream that ended: it carries nothing
                Some(_) if record.feed == Feed::Done => return,
                // an ended stream: the record joins it unless it starts another response or
                // comes too late
                Some(park)
                    if at.saturating_sub(park.at) >= PARK_LINES
                        || opens_response(&stream.core, text, true) =>
                {
                    self.parked.remove(&park.at);
                    if let Some(stream) = self.streams.remove(key) {
                        self.finish(stream, park.pos, park.place);
                    }
                }
                // an open stream: another response starts here, so the stream ends before it
                None if record.order.is_none() && opens_response(&stream.core, text, false) => {
                    if let Some(stream) = self.streams.remove(key) {
                        self.close(pos);
                        self.finish(stream, pos, place);
                    }
                }
                Some(_) | None => {}
            }
        }
        if !self.streams.contains_key(key) {
            if record.feed == Feed::Done {
                return; // the sentinel after a stream that ended: it carries nothing
            }
            // a whole JSON string's text, of a line read as UTF-8: never lossy
            let text = String::from_utf8_lossy(key).into_owned();
            let stream = self.new_stream(text, pos, chunk.file, rec.line);
            self.streams.insert(key.to_owned(), stream);
        }
        // looked up in place (a stream is moved out of the map only when it is returned)
        let Some(stream) = self.streams.get_mut(key) else {
            return; // inserted above
        };
        if let Some(order) = record.order {
            let kept = match &record.feed {
                Feed::Done => Kept::Done,
                Feed::NotObject(kind) => Kept::NotObject(kind),
                _ => Kept::Text(text.to_vec()),
            };
            stream.buffered.push((order, kept));
            return;
        }
        let was = stream.parked;
        let ends = match &record.feed {
            Feed::Done => true,
            // a stream whose aggregator raised reads nothing more, but still ends where its
            // adapter says
            _ if stream.error.is_some() => was.is_none() && ends_after_error(stream, text),
            feed => {
                let fed = match (fed, feed) {
                    (Some(fed), _) => fed,
                    (None, Feed::NotObject(kind)) => not_object(&mut stream.core, kind),
                    (None, _) => stream.core.add_text(text),
                };
                if let Err(err) = fed {
                    stream.error = Some(err);
                }
                // set by the aggregator as it read the event, before anything could raise; a
                // string event ends the stream only if it is one object's JSON (the twin
                // end-tests what the string parses to: SSE lines or an array parse to none)
                stream.core.ended()
                    && (matches!(record.feed, Feed::Text(_))
                        || text.iter().find(|c| !b" \t\r\n".contains(c)) == Some(&b'{'))
            }
        };
        if was.is_none() && !ends {
            return;
        }
        // an ended stream waits at its last record
        stream.parked = Some(LastRecord { pos, place, at });
        match was {
            Some(park) => {
                self.parked.remove(&park.at);
            }
            None => self.close(pos),
        }
        self.parked.insert(at, key.to_owned());
    }

    /// A stream's item, at `pos` (decided at `place`); with order-by, its events sorted and
    /// read first, an item for each response they hold.
    fn finish(&mut self, mut stream: Stream, pos: Pos, place: Place) {
        let sorted = self.plan.spec.as_ref().is_some_and(|s| s.order.is_some());
        if sorted && stream.error.is_none() {
            return self.finish_sorted(stream, pos, place);
        }
        let result = match stream.error.take() {
            Some(err) => Err(StreamError::Aggregate(err)),
            None => stream.core.finish().map_err(StreamError::Aggregate),
        };
        let item = Item::Stream {
            key: stream.key,
            provider: stream.core.provider(),
            result,
        };
        self.emit(pos, Out::Item(item, place))
    }

    /// A stream's events sorted by their order-by values (stable: equal values keep their
    /// input order) and read; an event that starts another response starts a new stream
    /// with the same key, each stream one item at `pos`.
    fn finish_sorted(&mut self, stream: Stream, pos: Pos, place: Place) {
        let Stream {
            key,
            mut core,
            buffered: mut events,
            ..
        } = stream;
        let strings = events.iter().filter(|(order, _)| order.is_str()).count();
        if strings != 0 && strings != events.len() {
            let result = Err(StreamError::Text(format!(
                "order_by values of stream {key} mix numbers and strings"
            )));
            let item = Item::Stream {
                key,
                provider: None,
                result,
            };
            return self.emit(pos, Out::Item(item, place));
        }
        events.sort_by(|a, b| a.0.order(&b.0));
        let mut error: Option<AggError> = None;
        for (_, kept) in &events {
            if let Kept::Text(text) = kept {
                if opens_response(&core, text, false) {
                    let done = std::mem::replace(&mut core, self.new_core());
                    let item = sorted_item(key.clone(), done, error.take());
                    self.emit(pos, Out::Item(item, place));
                }
            }
            if error.is_none() {
                let fed = match kept {
                    Kept::Text(text) => core.add_text(text),
                    Kept::NotObject(kind) => not_object(&mut core, kind),
                    Kept::Done => Ok(()),
                };
                error = fed.err();
            }
        }
        let item = sorted_item(key, core, error);
        self.emit(pos, Out::Item(item, place))
    }

    /// The end of input: every ended stream at its last record, then every open stream, in
    /// the order of its first record.
    fn finish_all(&mut self) {
        self.release_parked(u64::MAX);
        let mut open: Vec<Stream> = self.streams.drain().map(|(_, s)| s).collect();
        open.sort_by_key(|s| s.first);
        for stream in open {
            let (first, place) = (stream.first, stream.first_place);
            let pos = Pos { phase: 1, ..first };
            self.finish(stream, pos, place);
        }
    }
}

/// The item of a sorted stream's response: its aggregator's end, or what an event raised.
fn sorted_item(key: String, mut core: AggregatorCore, error: Option<AggError>) -> Item {
    let result = match error {
        Some(err) => Err(StreamError::Aggregate(err)),
        None => core.finish().map_err(StreamError::Aggregate),
    };
    Item::Stream {
        key,
        provider: core.provider(),
        result,
    }
}

/// Whether an event of a stream whose aggregator is closed (by an error) ends it: its
/// adapter's rule, on the event parsed again (the closed aggregator no longer reads it).
fn ends_after_error(stream: &Stream, text: &[u8]) -> bool {
    let Some(adapter) = stream.core.provider().and_then(providers::adapter) else {
        return false;
    };
    !text.is_empty() && events::parse(text).is_ok_and(|event| adapter.ends_stream(&event))
}

impl Pos {
    fn with_sub(self, sub: u8) -> Pos {
        Pos { sub, ..self }
    }
}
