//! The batch's reader: its inputs in order as blocks of whole lines ([`read_file`], also the
//! reader of [`super::split`]), and each block's lines routed to the shard of their stream
//! key ([`route`]), found once on the reader's thread. The shards that fold them are
//! [`super::shard`]'s.

use std::hash::BuildHasher;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::bucket::Sorter;
use super::input::Input;
use super::pool::{Block, Pool, BLOCK};
use super::record;
use super::{BatchError, Plan};

/// Lines of a block: numbered in the order the reader cut them.
pub(super) struct Chunk {
    pub(super) seq: u64,
    pub(super) file: usize,
    /// the input-wide number of the file's line 0: a line's number in the whole input is
    /// `base + line` (each file counts its `\n`s plus one)
    pub(super) base: u64,
    pub(super) first_line: u64,
    pub(super) data: Block,
    /// the file's last block
    pub(super) last: bool,
}

pub(super) enum Job {
    Chunk(Chunk),
    /// The input cannot be read from here on.
    Fatal {
        seq: u64,
        text: BatchError,
    },
    End {
        seq: u64,
    },
}

/// A block's share for one shard.
pub(super) struct Share {
    pub(super) seq: u64,
    /// the input-wide number of the block's first line (`u64::MAX` at the end of the input)
    pub(super) at: u64,
    pub(super) chunk: Option<Arc<Chunk>>,
    /// the block is this shard's file stream (`group_by="file"`)
    pub(super) file: bool,
    /// with more than one shard, the block's lines whose keys are this shard's (one shard
    /// reads every line)
    pub(super) lines: Option<Vec<Line>>,
    pub(super) fatal: Option<BatchError>,
    pub(super) end: bool,
}

/// A line of a block for one shard: its number, where it is in the block, and whether its
/// key was found by the light scan ([`record::read_routed`] reads it) or by reading it.
pub(super) struct Line {
    pub(super) line: u64,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) routed: bool,
}

impl Share {
    pub(super) fn empty(seq: u64, at: u64) -> Share {
        Share {
            seq,
            at,
            chunk: None,
            file: false,
            lines: None,
            fatal: None,
            end: false,
        }
    }
}

/// The reader: inputs in order, as blocks of whole lines, each given to `send` (which returns
/// a block's number of `\n`s, or None: stop).
pub(super) fn read_inputs(plan: &Plan, mut send: impl FnMut(Job) -> Option<u64>) {
    let mut seq = 0u64;
    let mut base = 0u64;
    let pool = Arc::new(Pool::default());
    for file in 0..plan.paths.len() {
        let sent = read_file(plan, file, &mut seq, &mut base, &pool, |chunk| {
            send(Job::Chunk(chunk))
        });
        match sent {
            Ok(true) => {}
            Ok(false) => return,
            Err(text) => {
                send(Job::Fatal { seq, text });
                return;
            }
        }
    }
    send(Job::End { seq });
}

/// One input as blocks of whole lines (records: cut at line ends, a byte order mark opening
/// the input dropped), numbered from `seq` on, each given to `send`; false when reading
/// stopped (`send` returned None, or the batch is stopping), the error of an input that
/// cannot be read (records: after the whole lines read before the damage). `base` is the
/// input-wide number of the file's line 0, advanced past the file when it was read whole.
/// The blocks' buffers come from `pool`. The one reader of the batch and of [`super::split`].
/// `send` returns the block's number of `\n`s (its consumer walks its lines anyway: the
/// reader's own count was a second pass over every byte), or None to stop.
pub(super) fn read_file(
    plan: &Plan,
    file: usize,
    seq: &mut u64,
    base: &mut u64,
    pool: &Arc<Pool>,
    mut send: impl FnMut(Chunk) -> Option<u64>,
) -> Result<bool, BatchError> {
    let mut input = Input::open(&plan.paths[file], Arc::clone(&plan.bytes_read))?;
    let mut line = 1u64;
    // the cut line at the end of the last block, which starts the next one
    let mut carry: Vec<u8> = Vec::new();
    let mut first = true;
    loop {
        if plan.stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        // a block, or twice a line longer than one (so a long line is read in few steps),
        // but no more than the longest line allowed past a block (`long_line` stops there)
        let want = BLOCK
            .saturating_sub(carry.len())
            .max(carry.len())
            .max(64 * 1024)
            .min(BLOCK.max(plan.max_line.saturating_add(1).saturating_sub(carry.len())));
        let mut buf = pool.take(carry.len() + want);
        buf[..carry.len()].copy_from_slice(&carry);
        let mut len = carry.len();
        carry.clear();
        let (read, result) = input.read_into(&mut buf[len..len + want]);
        len += read;
        let (mut eof, mut damage) = match result {
            Ok(eof) => (eof, None),
            // a file that is one stream: its bytes before the damage are its last (E106);
            // none at all make no stream
            Err(err) if plan.spec.is_none() && first && len == 0 => return Err(err),
            Err(err) if plan.spec.is_none() => (true, Some(err)),
            Err(err) => (false, Some(err)),
        };
        let bom = usize::from(first && buf[..len].starts_with(BOM)) * BOM.len();
        let mut long = None;
        if plan.spec.is_some() && len - bom > plan.max_line {
            // only a block longer than the limit can hold a line longer (the last one counted
            // as far as it was read, damage or not): the input ends there, after the lines
            // before it; the line itself is never held whole
            long = long_line(&buf[bom..len], plan.max_line);
        }
        if let Some((at, before)) = long {
            len = bom + at;
            eof = false;
            damage = Some(BatchError::LongLine {
                source: plan.paths[file].clone(),
                line: line + before,
                limit: plan.max_line,
            });
        } else if damage.is_some() && plan.spec.is_some() {
            // the whole lines before the damage are records; the cut one is not
            len = memchr::memrchr(b'\n', &buf[..len]).map_or(0, |end| end + 1);
        }
        if !eof && damage.is_none() && plan.spec.is_some() {
            // records: the block ends at a line end, the rest starts the next one
            match memchr::memrchr(b'\n', &buf[..len]) {
                Some(end) => {
                    carry.extend_from_slice(&buf[end + 1..len]);
                    len = end + 1;
                }
                None => {
                    carry.extend_from_slice(&buf[..len]);
                    pool.give(buf);
                    continue;
                }
            }
        }
        // (none when the damage left no whole line)
        let start = if plan.spec.is_some() { bom.min(len) } else { 0 };
        first = false;
        let data = Block {
            buf,
            start,
            end: len,
            pool: Arc::clone(pool),
        };
        let chunk = Chunk {
            seq: *seq,
            file,
            base: *base,
            first_line: line,
            data,
            last: eof,
        };
        *seq += 1;
        match send(chunk) {
            Some(newlines) => line += newlines,
            None => return Ok(false),
        }
        if let Some(err) = damage {
            return Err(err);
        }
        if eof {
            *base += line;
            return Ok(true);
        }
    }
}

/// The byte order mark an input may open with (not part of its first line).
const BOM: &[u8] = b"\xef\xbb\xbf";

/// Where the first line of `data` longer than `limit` bytes starts (its last line counted as
/// far as it goes), and the number of line ends before it.
fn long_line(data: &[u8], limit: usize) -> Option<(usize, u64)> {
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', data).chain(std::iter::once(data.len()));
    for (before, end) in ends.enumerate() {
        // a line's bytes without its end: the `\r` of a `\r\n` is not counted (nor a last
        // `\r` the block ends with, which may be the start of one)
        let cr = usize::from(end > start && data[end - 1] == b'\r');
        if end - start - cr > limit {
            return Some((start, before as u64));
        }
        start = end + 1;
    }
    None
}

/// The lines of a block of records that are not blank (spaces, tabs, CRs), in order: each
/// one's number, where it starts in the block, and its bytes (without the line end); the
/// block's number of `\n`s.
pub(super) fn each_line(chunk: &Chunk, mut visit: impl FnMut(u64, usize, &[u8])) -> u64 {
    let data = &chunk.data;
    let mut line = chunk.first_line;
    let mut start = 0;
    while start < data.len() {
        let end = memchr::memchr(b'\n', &data[start..]).map_or(data.len(), |i| start + i);
        let text = &data[start..end];
        if !text.iter().all(|c| matches!(c, b' ' | b'\t' | b'\r')) {
            visit(line, start, text);
        }
        line += 1;
        start = end + 1;
    }
    // every line but a last one without its `\n`
    line - chunk.first_line - u64::from(!data.is_empty() && data[data.len() - 1] != b'\n')
}

/// The number of `\n`s of a block whose lines are not walked on the reader's thread.
fn newlines(chunk: &Chunk) -> u64 {
    memchr::memchr_iter(b'\n', &chunk.data).count() as u64
}

/// The shard of a stream key (a fixed hash: the same shards every run).
fn shard_of(key: &[u8], shards: usize) -> usize {
    if shards == 1 {
        return 0;
    }
    let hash = foldhash::fast::FixedState::with_seed(0x5eed).hash_one(key);
    (hash % shards as u64) as usize
}

/// A job's sub-batches, one per shard, in shard order: a block of records goes to every
/// shard (each reads its own lines), a block of a file that is one stream to its shard; and
/// the block's number of `\n`s. `hint`: the block before's (each shard's list of lines is
/// made that long, shared out).
pub(super) fn route(plan: &Plan, job: Job, shards: usize, hint: u64) -> (Vec<Share>, u64) {
    let mut subs: Vec<Share>;
    let mut count = 0;
    match job {
        Job::End { seq } => {
            subs = (0..shards).map(|_| Share::empty(seq, u64::MAX)).collect();
            subs.iter_mut().for_each(|s| s.end = true);
        }
        Job::Fatal { seq, text } => {
            // the input ends here (E106): every shard returns every stream it read, ended or
            // open, as at the end of the input; then shard 0 the error
            subs = (0..shards).map(|_| Share::empty(seq, u64::MAX)).collect();
            subs.iter_mut().for_each(|s| s.end = true);
            subs[0].fatal = Some(text);
        }
        Job::Chunk(chunk) => {
            let (seq, at) = (chunk.seq, chunk.base + chunk.first_line);
            subs = (0..shards).map(|_| Share::empty(seq, at)).collect();
            if plan.spec.is_none() {
                let target = chunk.file % shards;
                subs[target].file = true;
                count = newlines(&chunk);
                subs[target].chunk = Some(Arc::new(chunk));
                return (subs, count);
            }
            if let (Some(spec), true) = (&plan.spec, shards > 1 || plan.bucket.is_some()) {
                // each line to the shard of its key, found here once for every shard (the
                // reader has the block's bytes at hand); with a bucket, only its lines
                let sorter = plan.bucket.map(|(b, n)| (b, Sorter::new(spec, n)));
                let share = hint as usize / shards + 16;
                let mut lines: Vec<Vec<Line>> =
                    (0..shards).map(|_| Vec::with_capacity(share)).collect();
                count = each_line(&chunk, |line, start, text| {
                    let found = record::route_key(text, spec);
                    if let Some((bucket, sorter)) = &sorter {
                        if sorter.bucket_found(text, found) != *bucket {
                            return; // another bucket's: as if blank
                        }
                    }
                    let (target, routed) = match found {
                        Some(key) => (shard_of(key, shards), true),
                        None => match record::read(text, spec) {
                            Ok(rec) => (shard_of(rec.key.bytes(text), shards), false),
                            Err(_) => (0, false), // a bad line is shard 0's
                        },
                    };
                    let end = start + text.len();
                    lines[target].push(Line {
                        line,
                        start,
                        end,
                        routed,
                    });
                });
                for (sub, lines) in subs.iter_mut().zip(lines) {
                    sub.lines = Some(lines);
                }
            } else {
                count = newlines(&chunk); // the one shard walks the lines itself
            }
            let chunk = Arc::new(chunk);
            for sub in &mut subs {
                sub.chunk = Some(Arc::clone(&chunk));
            }
        }
    }
    (subs, count)
}
