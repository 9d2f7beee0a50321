//! Input files as decompressed bytes. The format is told by the first bytes (magic numbers),
//! never by the name: gzip, zstd, bzip2 and xz, each read whole (concatenated members,
//! frames and streams), else the bytes as they are.
//!
//! What may follow a member is the format's own rule, judged here between two members (the
//! twin's `_pure/batch/input.py` judges alike): the next member; for xz, stream padding (null bytes,
//! a multiple of four, between or after streams: the .xz format, §2.2); for gzip, null bytes
//! up to the end of the input (what `gzip -d` accepts without a word). Anything else is corrupt
//! (nothing after a member is silently dropped), except the start of a member's magic cut by
//! the end of the input, which is truncated.
//!
//! A member is decoded in [`STEP`]s of its stored bytes, as the twin's
//! `_pure/batch/input.py` decodes it: a step's text is given once the whole step decoded, so
//! damage inside a member gives the same text and names the same offset on both backends.

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::BatchError;

/// Stored bytes read at a time (the twin's `CHUNK`).
const CHUNK: usize = 1 << 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Plain,
    Gzip,
    Zstd,
    Bzip2,
    Xz,
}

impl Format {
    /// The name messages use.
    pub fn name(self) -> &'static str {
        match self {
            Format::Plain => "plain",
            Format::Gzip => "gzip",
            Format::Zstd => "zstd",
            Format::Bzip2 => "bzip2",
            Format::Xz => "xz",
        }
    }

    fn detect(head: &[u8]) -> Format {
        if head.starts_with(GZIP) {
            Format::Gzip
        } else if head.starts_with(ZSTD) {
            Format::Zstd
        } else if head.starts_with(BZIP2) {
            Format::Bzip2
        } else if head.starts_with(XZ) {
            Format::Xz
        } else {
            Format::Plain
        }
    }
}

const GZIP: &[u8] = &[0x1f, 0x8b];
const ZSTD: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];
/// A zstd skippable frame: its first byte is 0x50 to 0x5f, then these three.
const ZSTD_SKIPPABLE: &[u8] = &[0x2a, 0x4d, 0x18];
const BZIP2: &[u8] = b"BZh";
const XZ: &[u8] = &[0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00];

/// Whether `head` (the next stored bytes, all of them when fewer than `want`) can start a
/// member of `format`: the whole magic, or its start cut by the end of the input. A gzip
/// header's method (deflate) and reserved flag bits are judged as soon as they are there.
fn starts_member(format: Format, head: &[u8]) -> bool {
    let fits = |magic: &[u8]| {
        let n = head.len().min(magic.len());
        head[..n] == magic[..n]
    };
    match format {
        Format::Gzip => fits(GZIP) && (head.len() < 4 || (head[2] == 8 && head[3] & 0xe0 == 0)),
        Format::Zstd => {
            fits(ZSTD)
                || (head[0] & 0xf0 == 0x50 && {
                    let n = (head.len() - 1).min(ZSTD_SKIPPABLE.len());
                    head[1..1 + n] == ZSTD_SKIPPABLE[..n]
                })
        }
        Format::Bzip2 => fits(BZIP2),
        Format::Xz => fits(XZ),
        Format::Plain => true,
    }
}

/// The stored (compressed) bytes read so far, for progress.
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// The stored bytes, buffered: a member's decoder reads them as a `BufRead` (taking only its
/// member's bytes), and between two members the next bytes are looked at ([`Stored::peek`]).
struct Stored {
    inner: Counting<Box<dyn Read + Send>>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Stored {
    /// Reads more stored bytes after `end` (at least one unless the input ended); whether any
    /// came.
    fn more(&mut self) -> io::Result<bool> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            self.buf.resize(self.buf.len() + CHUNK, 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(n) => {
                    self.end += n;
                    return Ok(n > 0);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The next `n` stored bytes, without taking them (fewer at the end of the input).
    fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        while self.end - self.start < n && self.more()? {}
        let end = self.end.min(self.start + n);
        Ok(&self.buf[self.start..end])
    }

    /// Takes the null bytes that come next; how many.
    fn skip_zeros(&mut self) -> io::Result<u64> {
        let mut count = 0u64;
        loop {
            let data = self.fill_buf()?;
            if data.is_empty() {
                return Ok(count);
            }
            let zeros = data.iter().position(|&b| b != 0).unwrap_or(data.len());
            count += zeros as u64;
            let all = zeros == data.len();
            self.consume(zeros);
            if !all {
                return Ok(count);
            }
        }
    }
}

impl Read for Stored {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.start == self.end && out.len() >= CHUNK {
            // nothing buffered: a large read goes straight to the caller (plain input)
            return self.inner.read(out);
        }
        let data = self.fill_buf()?;
        let n = data.len().min(out.len());
        out[..n].copy_from_slice(&data[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Stored {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            self.more()?;
        }
        Ok(&self.buf[self.start..self.end])
    }

    fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
    }
}

/// Stored bytes a member's decoder is given at a time, counted from the member's start (the
/// twin's `STEP`). A step's decompressed bytes are given only once the whole step decoded: a
/// damaged step gives none, so both backends name the same offset and read the same lines
/// before the damage (their decoders cannot be asked for the bytes of a call that failed).
/// Small, so that little is lost before damage and a step's bytes are few in memory.
pub const STEP: usize = 1 << 14;

/// Free room kept in a step's output for each decoder call.
const ROOM: usize = 1 << 15;

/// The raw decoder of one member (gzip member, zstd frame, bzip2 or xz stream): the library
/// each format's twin module binds (zlib's port zlib-rs, libzstd, libbz2's port, liblzma).
enum Decoder {
    Gzip(flate2::Decompress),
    Zstd(Box<zstd::stream::raw::Decoder<'static>>),
    Bzip2(bzip2::Decompress),
    Xz(liblzma::stream::Stream),
}

fn corrupt() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "not a member")
}

impl Decoder {
    fn new(format: Format) -> io::Result<Decoder> {
        Ok(match format {
            // 15 bits of window, gzip's header and trailer (zlib's `wbits=31`)
            Format::Gzip => Decoder::Gzip(flate2::Decompress::new_gzip(15)),
            Format::Zstd => Decoder::Zstd(Box::new(zstd::stream::raw::Decoder::new()?)),
            Format::Bzip2 => Decoder::Bzip2(bzip2::Decompress::new(false)),
            Format::Xz => Decoder::Xz(
                liblzma::stream::Stream::new_stream_decoder(u64::MAX, 0).map_err(|_| corrupt())?,
            ),
            Format::Plain => return Err(corrupt()), // plain input has no members
        })
    }

    /// One call: decodes from `input` into the free room of `out`; the input bytes taken, and
    /// whether the member ended. Any error of the decoder is damage (the twin's modules raise
    /// on each of them, a buffer error too).
    fn call(&mut self, input: &[u8], out: &mut Vec<u8>) -> io::Result<(usize, bool)> {
        match self {
            Decoder::Gzip(d) => {
                let before = d.total_in();
                let status = d
                    .decompress_vec(input, out, flate2::FlushDecompress::Sync)
                    .map_err(|_| corrupt())?;
                let taken = (d.total_in() - before) as usize;
                Ok((taken, status == flate2::Status::StreamEnd))
            }
            Decoder::Zstd(d) => {
                use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
                let mut from = InBuffer::around(input);
                let pos = out.len();
                let mut to = OutBuffer::around_pos(out, pos);
                // 0: the frame is decoded and every byte of it given
                let hint = d.run(&mut from, &mut to).map_err(|_| corrupt())?;
                Ok((from.pos(), hint == 0))
            }
            Decoder::Bzip2(d) => {
                let before = d.total_in();
                let status = d.decompress_vec(input, out).map_err(|_| corrupt())?;
                let taken = (d.total_in() - before) as usize;
                match status {
                    bzip2::Status::MemNeeded => Err(corrupt()),
                    status => Ok((taken, status == bzip2::Status::StreamEnd)),
                }
            }
            Decoder::Xz(d) => {
                let before = d.total_in();
                let status = d
                    .process_vec(input, out, liblzma::stream::Action::Run)
                    .map_err(|_| corrupt())?;
                let taken = (d.total_in() - before) as usize;
                match status {
                    liblzma::stream::Status::MemNeeded => Err(corrupt()),
                    status => Ok((taken, status == liblzma::stream::Status::StreamEnd)),
                }
            }
        }
    }

    /// Decodes the next step of `stored` ([`STEP`] bytes, fewer at the end of the input) into
    /// `out`, the whole of its output (called until the step is taken and a call gives no more
    /// bytes, as the twin's modules give a call's bytes); whether the member ended there (its
    /// bytes after the end are left in `stored`), None at the end of the input.
    fn step(&mut self, stored: &mut Stored, out: &mut Vec<u8>) -> io::Result<Option<bool>> {
        let len = stored.peek(STEP)?.len();
        if len == 0 {
            return Ok(None);
        }
        let piece = &stored.buf[stored.start..stored.start + len];
        let mut taken = 0;
        let ended = loop {
            if out.capacity() - out.len() < ROOM {
                out.reserve(ROOM.max(out.len()));
            }
            let before = out.len();
            let (n, ended) = self.call(&piece[taken..], out)?;
            taken += n;
            let gave = out.len() > before;
            if ended || (taken == len && !gave) {
                break ended;
            }
            if n == 0 && !gave {
                return Err(corrupt()); // no progress: never a loop without end
            }
        };
        stored.consume(taken);
        Ok(Some(ended))
    }
}

enum State {
    /// Before a member (or the end), and whether a member was read.
    Between(bool),
    In(Decoder),
    Done,
}

/// A compressed input's decompressed bytes: its members one after another, with the rule of
/// what may follow one (see the module's documentation), each decoded in [`STEP`]s. A
/// truncated input is an `UnexpectedEof` error, a corrupt one any other.
struct Members {
    format: Format,
    stored: Stored,
    state: State,
    /// the decoded step being given, from `at`
    step: Vec<u8>,
    at: usize,
}

impl Members {
    /// The decoder of the next member, or None at the end of the input.
    fn next_member(&mut self, after: bool) -> io::Result<Option<Decoder>> {
        let (format, stored) = (self.format, &mut self.stored);
        if after {
            let zeros = match format {
                Format::Gzip | Format::Xz => stored.skip_zeros()?,
                _ => 0,
            };
            let ended = stored.peek(1)?.is_empty();
            if format == Format::Xz && zeros % 4 != 0 {
                return Err(corrupt());
            }
            if ended {
                return Ok(None);
            }
            if format == Format::Gzip && zeros > 0 {
                return Err(corrupt()); // null bytes are the end, never between members
            }
        }
        if !starts_member(format, stored.peek(XZ.len())?) {
            return Err(corrupt());
        }
        Decoder::new(format).map(Some)
    }
}

impl Read for Members {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.at < self.step.len() {
                let n = (self.step.len() - self.at).min(buf.len());
                buf[..n].copy_from_slice(&self.step[self.at..self.at + n]);
                self.at += n;
                return Ok(n);
            }
            self.step.clear();
            self.at = 0;
            // (an error leaves the state Done: nothing is read after it)
            match std::mem::replace(&mut self.state, State::Done) {
                State::In(mut decoder) => match decoder.step(&mut self.stored, &mut self.step) {
                    Ok(Some(false)) => self.state = State::In(decoder),
                    Ok(Some(true)) => self.state = State::Between(true),
                    Ok(None) => return Err(io::ErrorKind::UnexpectedEof.into()),
                    Err(e) => {
                        self.step.clear();
                        return Err(e);
                    }
                },
                State::Between(after) => {
                    if let Some(decoder) = self.next_member(after)? {
                        self.state = State::In(decoder);
                    }
                }
                State::Done => return Ok(0),
            }
        }
    }
}

fn file_error(path: &str, err: &io::Error) -> BatchError {
    BatchError::File {
        source: path.to_owned(),
        errno: err.raw_os_error().unwrap_or(0),
    }
}

/// An open input: its decompressed bytes, and how to word a read error.
pub struct Input {
    pub path: String,
    pub format: Format,
    reader: Box<dyn Read + Send>,
    /// decompressed bytes given so far (where a damaged input's error says reading stopped)
    decoded: u64,
}

impl Input {
    /// Opens `path` ("-" is standard input); `count` grows with the bytes read from it.
    pub fn open(path: &str, count: Arc<AtomicU64>) -> Result<Input, BatchError> {
        let raw: Box<dyn Read + Send> = if path == "-" {
            Box::new(io::stdin())
        } else {
            let file = File::open(path).map_err(|e| file_error(path, &e))?;
            Box::new(file)
        };
        let mut stored = Stored {
            inner: Counting { inner: raw, count },
            buf: Vec::new(),
            start: 0,
            end: 0,
        };
        // the magic number: up to 6 bytes, however the reads are split (a pipe)
        let head = stored.peek(XZ.len()).map_err(|e| file_error(path, &e))?;
        let format = Format::detect(head);
        let reader: Box<dyn Read + Send> = match format {
            Format::Plain => Box::new(stored),
            format => Box::new(Members {
                format,
                stored,
                state: State::Between(false),
                step: Vec::new(),
                at: 0,
            }),
        };
        Ok(Input {
            path: path.to_owned(),
            format,
            reader,
            decoded: 0,
        })
    }
    /// Fills `out` with decompressed bytes as far as the input goes: how many, and whether
    /// the input ended (or the error that stopped it, the bytes before it counted).
    pub fn read_into(&mut self, out: &mut [u8]) -> (usize, Result<bool, BatchError>) {
        let mut filled = 0;
        let result = loop {
            if filled == out.len() {
                break Ok(false);
            }
            match self.reader.read(&mut out[filled..]) {
                Ok(0) => break Ok(true),
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        self.decoded += filled as u64;
        (filled, result.map_err(|e| self.reason(&e)))
    }

    /// Appends up to `want` decompressed bytes to `buf` (into its spare room: nothing is
    /// zeroed first); whether the input ended. On an error the bytes read before it are in
    /// `buf` too (a damaged input's records before the damage are read).
    pub fn fill(&mut self, buf: &mut Vec<u8>, want: usize) -> Result<bool, BatchError> {
        let before = buf.len();
        let read = (&mut self.reader).take(want as u64).read_to_end(buf);
        self.decoded += (buf.len() - before) as u64;
        match read {
            Ok(n) => Ok(n < want),
            Err(e) => Err(self.reason(&e)),
        }
    }

    fn reason(&self, err: &io::Error) -> BatchError {
        match self.format {
            Format::Plain => file_error(&self.path, err),
            format => BatchError::Compressed {
                source: self.path.clone(),
                format: format.name(),
                truncated: err.kind() == io::ErrorKind::UnexpectedEof,
                offset: self.decoded,
            },
        }
    }
}
