//! Input files as decompressed bytes. The format is told by the first bytes (magic numbers),
//! never by the name: gzip, zstd, bzip2 and xz, each read whole (concatenated members,
//! frames and streams), else the bytes as they are.
//!
//! What may follow a member is the format's own rule, judged here between two members (the
//! twin's `_pure/batch.py` judges alike): the next member; for xz, stream padding (null bytes,
//! a multiple of four, between or after streams: the .xz format, §2.2); for gzip, null bytes
//! up to the end of the input (what `gzip -d` accepts without a word). Anything else is corrupt
//! (nothing after a member is silently dropped), except the start of a member's magic cut by
//! the end of the input, which is truncated.

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

/// The decoder of one member (gzip member, zstd frame, bzip2 or xz stream).
enum Member {
    Gzip(flate2::bufread::GzDecoder<Stored>),
    Zstd(Box<zstd::stream::read::Decoder<'static, Stored>>),
    Bzip2(bzip2::bufread::BzDecoder<Stored>),
    Xz(liblzma::bufread::XzDecoder<Stored>),
}

impl Member {
    fn new(format: Format, stored: Stored) -> io::Result<Member> {
        Ok(match format {
            Format::Gzip => Member::Gzip(flate2::bufread::GzDecoder::new(stored)),
            Format::Zstd => Member::Zstd(Box::new(
                zstd::stream::read::Decoder::with_buffer(stored)?.single_frame(),
            )),
            Format::Bzip2 => Member::Bzip2(bzip2::bufread::BzDecoder::new(stored)),
            Format::Xz => Member::Xz(liblzma::bufread::XzDecoder::new(stored)),
            Format::Plain => unreachable!("plain input has no members"),
        })
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Member::Gzip(d) => d.read(buf),
            Member::Zstd(d) => d.read(buf),
            Member::Bzip2(d) => d.read(buf),
            Member::Xz(d) => d.read(buf),
        }
    }

    /// The stored bytes after the member.
    fn into_stored(self) -> Stored {
        match self {
            Member::Gzip(d) => d.into_inner(),
            Member::Zstd(d) => d.finish(),
            Member::Bzip2(d) => d.into_inner(),
            Member::Xz(d) => d.into_inner(),
        }
    }
}

enum State {
    /// Before a member (or the end): the stored bytes, and whether a member was read.
    Between(Stored, bool),
    In(Member),
    Done,
}

/// A compressed input's decompressed bytes: its members one after another, with the rule of
/// what may follow one (see the module's documentation). A truncated input is an
/// `UnexpectedEof` error, a corrupt one any other.
struct Members {
    format: Format,
    state: State,
}

fn corrupt() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "not a member")
}

impl Members {
    /// The decoder of the next member, or None at the end of the input.
    fn next_member(&self, mut stored: Stored, after: bool) -> io::Result<Option<Member>> {
        let format = self.format;
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
        Member::new(format, stored).map(Some)
    }
}

impl Read for Members {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match std::mem::replace(&mut self.state, State::Done) {
                State::In(mut member) => match member.read(buf) {
                    Ok(0) if !buf.is_empty() => {
                        self.state = State::Between(member.into_stored(), true);
                    }
                    Ok(n) => {
                        self.state = State::In(member);
                        return Ok(n);
                    }
                    Err(e) => return Err(e),
                },
                State::Between(stored, after) => {
                    if let Some(member) = self.next_member(stored, after)? {
                        self.state = State::In(member);
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
                state: State::Between(stored, false),
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
