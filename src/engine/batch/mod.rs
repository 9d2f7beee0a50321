//! The batch engine: many logged streams in, one result per stream out, on all cores. The
//! twin's `_pure/batch.py` (single-threaded, the specification, whose docstring states the
//! rules) gives the same items in the same order; both are read through `BatchCore`, whose
//! interface the engine's side is:
//!
//! - [`Batch::new`] takes the [`Options`] of `BatchCore` (paths, `group_by`, `event`,
//!   `order_by`, provider, the aggregator's options, jobs, `max_open_streams`);
//! - [`Batch::next`] returns the [`Item`]s one at a time, in input order of their places
//!   ([`Place`]: where each was decided): a stream's key, provider and what
//!   `AggregatorCore.finish()` returns for its events alone, or the error that aggregator
//!   raised ([`StreamError`]); or a bad line, 1-based in the decompressed text, that belongs
//!   to no stream. Nothing read is dropped: every record is in one stream or one bad line;
//! - a [`BatchError`] (an input that cannot be opened or decompressed, too many open
//!   streams) stops the batch after the items placed before the record where it happened;
//!   damage (a cut or corrupt input, a line over the limit) ends the input there, so every
//!   stream read is returned first, open ones too, as at the end of the input (E106).
//!
//! The pipeline, each stage a thread (or a pool) joined by bounded channels, so memory is
//! bounded by the blocks and streams in flight, never by the size of the input:
//!
//! 1. the reader opens the inputs in order, decompresses them ([`input`]) and cuts them into
//!    blocks of whole lines, numbered in input order (into buffers that come back when their
//!    blocks are dropped), and tells each shard which of a block's lines are its own: a
//!    light scan finds a line's key ([`record::route_key`]) while the block is at hand, a
//!    line it cannot be sure of is read for its key, a bad line is shard 0's;
//! 2. shard workers own their streams (one [`AggregatorCore`] each), take the blocks in order,
//!    read their lines' records ([`record`]: key, event, order-by value, borrowed from the
//!    line), fold each record's event on the thread that read it, and emit a stream's item
//!    when it ends (written there too when the binding gave a [`Writer`]);
//! 3. [`Batch::next`] puts the items back in input order: each shard says how far through the
//!    input it is, and an item is returned once no shard can still emit an earlier one.
//!
//! With one job the one shard reads every line (no key scan).
//!
//! [`AggregatorCore`]: crate::engine::aggregate::AggregatorCore

pub mod bucket;
pub mod input;
pub mod path;
mod pool;
mod reader;
pub mod record;
mod shard;
pub mod split;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::engine::aggregate::AggError;
use crate::engine::chunks::Options as AggOptions;
use crate::engine::value::Value;
use path::Path;
use record::Spec;

/// The OS error number of "Is a directory" (the twin's `errno.EISDIR` on Linux and macOS).
const EISDIR: i32 = 21;

/// The most worker threads a batch starts (`jobs`): each is a thread and a queue, and every
/// block of the input goes to each one, so far more than any machine's cores only stalls the
/// run (20,000 took 10 s on a 200-record log) or exhausts the system's threads.
pub const MAX_JOBS: usize = 4096;

/// The error of a `jobs` above [`MAX_JOBS`] (`value`: as the caller wrote it).
pub fn too_many_jobs(value: impl std::fmt::Display) -> BatchError {
    BatchError::Option(format!("jobs must be at most {MAX_JOBS}, not {value}"))
}

/// What a batch reads, and how (the arguments of `BatchCore`).
#[derive(Clone, Debug)]
pub struct Options {
    pub paths: Vec<String>,
    /// `"auto"`, `"file"` or a path to the stream key.
    pub group_by: String,
    pub event: Option<String>,
    pub order_by: Option<String>,
    /// A name of `PROVIDERS`, or None for "auto" (the caller checks the name).
    pub provider: Option<String>,
    pub aggregate: AggOptions,
    /// Threads; 0 = all cores.
    pub jobs: usize,
    /// 0 = no limit.
    pub max_open_streams: usize,
    /// The longest record line read (its bytes, without the line end); a longer one ends
    /// its input with [`BatchError::LongLine`], so that memory holds no more than it.
    pub max_line_bytes: usize,
    /// Whether events may take their adapter's typed fast path (see `AggregatorCore`).
    pub fast_events: bool,
    /// `(bucket, buckets)`: read only the records whose stream key is in that bucket
    /// ([`split::Sorter`]; a bad line is one bucket's), the others as if blank, at their own
    /// line numbers. So each of `buckets` batches over the same input gives its bucket's
    /// items, each where the whole batch gives it (`fastmerge.dask`'s task per bucket).
    pub bucket: Option<(usize, usize)>,
}

impl Options {
    pub fn new(paths: Vec<String>) -> Options {
        Options {
            paths,
            group_by: "auto".to_owned(),
            event: None,
            order_by: None,
            provider: None,
            aggregate: AggOptions::DEFAULT,
            jobs: 0,
            max_open_streams: 0,
            max_line_bytes: MAX_LINE_BYTES,
            fast_events: true,
            bucket: None,
        }
    }
}

/// [`Options::max_line_bytes`] by default: 1 GiB, far past any record a provider's stream
/// makes, and a bound on what one line can take of memory.
pub const MAX_LINE_BYTES: usize = 1 << 30;

/// The variable that sets [`Options::max_line_bytes`].
pub const MAX_LINE_VARIABLE: &str = "FASTMERGE_MAX_LINE_BYTES";

/// [`Options::max_line_bytes`] from [`MAX_LINE_VARIABLE`]'s value (None: unset, the
/// default): ASCII digits, 1 or more, at most `u64::MAX`; anything else is an option error.
pub fn max_line_bytes(value: Option<&std::ffi::OsStr>) -> Result<usize, BatchError> {
    let Some(value) = value else {
        return Ok(MAX_LINE_BYTES);
    };
    value
        .to_str()
        .filter(|text| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|text| text.parse::<u64>().ok())
        .filter(|n| *n > 0)
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
        .ok_or_else(|| {
            BatchError::Option(format!(
                "{MAX_LINE_VARIABLE} must be a whole number of bytes, 1 or more"
            ))
        })
}

/// Why a stream has no messages.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamError {
    /// What its aggregator raised (the binding words it as `aggregate` would).
    Aggregate(AggError),
    /// A batch rule's error (order-by values of two kinds).
    Text(String),
}

/// One result of a batch, in input order.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Stream {
        key: String,
        provider: Option<&'static str>,
        result: Result<Vec<Value>, StreamError>,
    },
    /// A record that belongs to no stream; `line` is 1-based, in the decompressed text.
    Bad {
        source: String,
        line: u64,
        reason: String,
    },
}

/// Why a batch stops (the binding raises `fastmerge.errors.BatchError` through the helper
/// of each, which words it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BatchError {
    /// `file_error`: an input that cannot be opened or read (`errno` 0: none given).
    File { source: String, errno: i32 },
    /// `compressed_error`: a compressed input cut short or that does not decode, after
    /// `offset` bytes of decompressed text (the whole lines among them were read).
    Compressed {
        source: String,
        format: &'static str,
        truncated: bool,
        offset: u64,
    },
    /// `too_many_streams`: a record at `source:line` would open one stream too many.
    TooManyStreams {
        limit: usize,
        source: String,
        line: u64,
    },
    /// `long_line`: a record line at `source:line` longer than `limit` bytes; the input ends
    /// there (its whole lines before it were read).
    LongLine {
        source: String,
        line: u64,
        limit: usize,
    },
    /// `batch_option`: options that cannot be used.
    Option(String),
    /// A worker panicked (a bug): never a crash, an exception.
    Internal(String),
}

/// Where an item was decided, in the input (`BatchCore(positions=True)`): while the input was
/// read (`end` false), at the record (`file`: its input's index, `line`: 1-based) that ended
/// the stream or is the bad line; for a stream still open at the end of the input (`end`
/// true), at its first record. A file read as one stream: its index, line 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub end: bool,
    pub file: usize,
    pub line: u64,
}

/// What a binding made of a stream's item on the worker that finished it (its record as
/// written, say), handed back with the item ([`Batch::write_items`]).
pub type Written = Box<dyn std::any::Any + Send>;

/// How a binding writes a stream's item, called on the workers so that items are written in
/// parallel; None leaves the item to the caller of [`Batch::next`].
pub type Writer = Arc<dyn Fn(&Item) -> Option<Written> + Send + Sync>;

/// What [`Batch::next`] found.
#[derive(Debug)]
pub enum Next {
    /// The next item in input order, and where it was decided.
    Item(Item, Place),
    /// The same, with what the [`Writer`] made of it.
    Written(Item, Place, Written),
    /// `timeout` passed without an item.
    Timeout,
    /// Every item was returned.
    End,
}

/// An input position an item is sorted by: `phase` 0 while the input is read (`seq` the
/// block, `line` the line of the record that ended the stream), 1 for the streams still open
/// at the end (by their first record); `sub` orders what happens at one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Pos {
    pub phase: u8,
    pub seq: u64,
    pub line: u64,
    pub sub: u8,
}

impl Pos {
    pub const MAX: Pos = Pos {
        phase: u8::MAX,
        seq: u64::MAX,
        line: u64::MAX,
        sub: u8::MAX,
    };

    pub fn at(seq: u64, line: u64, sub: u8) -> Pos {
        Pos {
            phase: 0,
            seq,
            line,
            sub,
        }
    }
}

/// What a worker sends to the collector.
pub(crate) enum Out {
    Item(Item, Place),
    /// An item as the [`Writer`] wrote it.
    Written(Item, Place, Written),
    /// A stream's first record (counted only with `max_open_streams`).
    Start {
        file: usize,
        line: u64,
    },
    /// A stream stops being open: its end event was read (its item may come later, with
    /// the records that join it), or another response starts under its key.
    Close,
    /// An input that cannot be read: the batch stops there.
    Fatal(BatchError),
}

pub(crate) enum Msg {
    /// What a shard emitted for one block, and that it has now sent every item up to `mark`.
    Block {
        shard: usize,
        outs: Vec<(Pos, Out)>,
        mark: Pos,
    },
    Panic(String),
}

/// The resolved options every worker shares.
pub(crate) struct Plan {
    pub paths: Vec<String>,
    /// None: each file is one stream.
    pub spec: Option<Spec>,
    pub provider: Option<String>,
    pub aggregate: AggOptions,
    pub fast_events: bool,
    /// `Options::bucket`
    pub bucket: Option<(usize, usize)>,
    /// `Options::max_line_bytes`
    pub max_line: usize,
    pub count_starts: bool,
    pub stop: AtomicBool,
    pub bytes_read: Arc<AtomicU64>,
    /// set by [`Batch::write_items`]
    pub writer: OnceLock<Writer>,
}

/// A running batch.
pub struct Batch {
    /// The jobs to start the workers with, until the first `next` starts them (nothing is
    /// read before: `progress` starts at 0 bytes read, as the twin's).
    unstarted: Option<usize>,
    rx: Option<Receiver<Msg>>,
    pending: BTreeMap<(Pos, u64), Out>,
    serial: u64,
    marks: Vec<Pos>,
    plan: Arc<Plan>,
    threads: Vec<JoinHandle<()>>,
    /// an input may block a read for as long as its writer likes (standard input, a FIFO, a
    /// device): `close` does not wait for the reader then
    blocking: bool,
    finished: bool,
    max_open: usize,
    open: usize,
    bytes_total: u64,
    streams_done: u64,
    bad_lines: u64,
}

fn option_path(option: &str, value: &str) -> Result<Path, BatchError> {
    Path::parse(option, value).map_err(BatchError::Option)
}

impl Batch {
    /// Checks the options and the inputs (each must exist and not be a directory), in the
    /// twin's order, and starts the workers; inputs are opened as they are reached.
    pub fn new(options: Options) -> Result<Batch, BatchError> {
        if options.jobs > MAX_JOBS {
            return Err(too_many_jobs(options.jobs));
        }
        let event = match &options.event {
            Some(text) => Some(option_path("event", text)?),
            None => None,
        };
        let order = match &options.order_by {
            Some(text) => Some(option_path("order_by", text)?),
            None => None,
        };
        let file_mode = matches!(options.group_by.as_str(), "auto" | "file");
        if file_mode && event.is_some() {
            return Err(BatchError::Option(
                "wrapper records need a stream key: pass group_by (e.g. group_by='stream_id')"
                    .to_owned(),
            ));
        }
        let spec = if file_mode {
            if order.is_some() {
                return Err(BatchError::Option(
                    "order_by sorts the records of a stream: pass group_by (e.g. group_by='stream_id'); \
                     a file read as one stream is read in its order"
                        .to_owned(),
                ));
            }
            None
        } else {
            let key = option_path("group_by", &options.group_by)?;
            Some(Spec::new(key, event, order))
        };
        if let Some((bucket, buckets)) = options.bucket {
            if file_mode {
                return Err(BatchError::Option(
                    "bucket reads records by their stream key: pass group_by (e.g. stream_id)"
                        .to_owned(),
                ));
            }
            if buckets == 0 {
                return Err(BatchError::Option(
                    "buckets must be 1 or more, not 0".to_owned(),
                ));
            }
            if bucket >= buckets {
                return Err(BatchError::Option(format!(
                    "bucket must be below buckets ({buckets}), not {bucket}"
                )));
            }
        }
        let mut bytes_total = Some(0u64);
        let mut blocking = false;
        for path in &options.paths {
            if path == "-" {
                bytes_total = None;
                blocking = true;
                continue;
            }
            let meta = std::fs::metadata(path).map_err(|e| BatchError::File {
                source: path.clone(),
                errno: e.raw_os_error().unwrap_or(0),
            })?;
            if meta.is_dir() {
                return Err(BatchError::File {
                    source: path.clone(),
                    errno: EISDIR,
                });
            }
            blocking |= !meta.is_file();
            bytes_total = bytes_total.map(|t| t + meta.len());
        }
        let bytes_total = bytes_total.unwrap_or(0);
        let jobs = match options.jobs {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let plan = Arc::new(Plan {
            paths: options.paths,
            spec,
            provider: options.provider,
            aggregate: options.aggregate,
            fast_events: options.fast_events,
            bucket: options.bucket,
            max_line: options.max_line_bytes,
            count_starts: options.max_open_streams > 0 && !file_mode,
            stop: AtomicBool::new(false),
            bytes_read: Arc::new(AtomicU64::new(0)),
            writer: OnceLock::new(),
        });
        Ok(Batch {
            unstarted: Some(jobs),
            rx: None,
            pending: BTreeMap::new(),
            serial: 0,
            marks: Vec::new(),
            plan,
            threads: Vec::new(),
            blocking,
            finished: false,
            max_open: options.max_open_streams,
            open: 0,
            bytes_total,
            streams_done: 0,
            bad_lines: 0,
        })
    }

    /// `(bytes_read, bytes_total, streams_done, bad_lines)`: stored bytes of the inputs
    /// (0 total when unknown); items returned so far.
    pub fn progress(&self) -> (u64, u64, u64, u64) {
        (
            self.plan.bytes_read.load(Ordering::Relaxed),
            self.bytes_total,
            self.streams_done,
            self.bad_lines,
        )
    }

    /// From now on each stream's item is also given to `writer` on the worker that finished
    /// it, and comes back from [`Self::next`] with what it made ([`Next::Written`]); items
    /// already finished come as they are. Only the first writer counts.
    pub fn write_items(&self, writer: Writer) {
        let _ = self.plan.writer.set(writer);
    }

    /// The next item in input order, waiting at most `timeout` (None: until there is one).
    pub fn next(&mut self, timeout: Option<Duration>) -> Result<Next, BatchError> {
        let deadline = timeout.map(|t| Instant::now() + t);
        if let (Some(jobs), false) = (self.unstarted.take(), self.finished) {
            let (rx, threads, shards) = shard::start(&self.plan, jobs);
            self.rx = Some(rx);
            self.threads = threads;
            self.marks = vec![Pos::at(0, 0, 0); shards];
        }
        loop {
            if self.finished {
                return Ok(Next::End);
            }
            let low = self.marks.iter().copied().min().unwrap_or(Pos::MAX);
            if let Some(entry) = self.pending.first_entry() {
                if entry.key().0 <= low {
                    let ((pos, _), out) = entry.remove_entry();
                    if let Some(found) = self.release(pos, out)? {
                        return Ok(found);
                    }
                    continue;
                }
            }
            if low == Pos::MAX {
                self.close();
                return Ok(Next::End);
            }
            let Some(rx) = &self.rx else {
                return Ok(Next::End);
            };
            let msg = match deadline {
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                Some(deadline) => {
                    rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
                }
            };
            match msg {
                Ok(Msg::Block { shard, outs, mark }) => {
                    for (pos, out) in outs {
                        self.serial += 1;
                        self.pending.insert((pos, self.serial), out);
                    }
                    self.marks[shard] = mark;
                }
                Ok(Msg::Panic(text)) => {
                    self.close();
                    return Err(BatchError::Internal(text));
                }
                Err(RecvTimeoutError::Timeout) => return Ok(Next::Timeout),
                // every worker is gone: what they sent is all there is
                Err(RecvTimeoutError::Disconnected) => self.marks.fill(Pos::MAX),
            }
        }
    }

    /// An item whose turn it is: returned, counted, or the error it is.
    fn release(&mut self, _pos: Pos, out: Out) -> Result<Option<Next>, BatchError> {
        let item = match &out {
            Out::Item(item, _) | Out::Written(item, _, _) => item,
            _ => return self.release_other(out).map(|()| None),
        };
        match item {
            Item::Stream { .. } => self.streams_done += 1,
            Item::Bad { .. } => self.bad_lines += 1,
        }
        Ok(match out {
            Out::Written(item, place, written) => Some(Next::Written(item, place, written)),
            Out::Item(item, place) => Some(Next::Item(item, place)),
            _ => None,
        })
    }

    /// What else a worker sent: counted, or the error it is.
    fn release_other(&mut self, out: Out) -> Result<(), BatchError> {
        match out {
            Out::Item(..) | Out::Written(..) => Ok(()),
            Out::Close => {
                self.open = self.open.saturating_sub(1);
                Ok(())
            }
            Out::Start { file, line } => {
                self.open += 1;
                if self.open > self.max_open {
                    let err = BatchError::TooManyStreams {
                        limit: self.max_open,
                        source: self.plan.paths[file].clone(),
                        line,
                    };
                    self.close();
                    return Err(err);
                }
                Ok(())
            }
            Out::Fatal(err) => {
                self.close();
                Err(err)
            }
        }
    }

    /// Stops the workers and closes the inputs; `next` then ends. Idempotent.
    pub fn close(&mut self) {
        self.finished = true;
        self.plan.stop.store(true, Ordering::Relaxed);
        self.pending.clear();
        // dropping the receiver fails the workers' sends, so none stays blocked
        self.rx = None;
        if self.blocking {
            // a reader blocked on standard input or a FIFO (in its open, until a writer comes,
            // or in a read) cannot be woken: the threads end on their own when it returns
            self.threads.clear();
        }
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        self.finished = true;
        self.plan.stop.store(true, Ordering::Relaxed);
        self.rx = None;
        // not joined: the threads end as their sends fail
    }
}
