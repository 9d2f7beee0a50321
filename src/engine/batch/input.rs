//! Input files as decompressed bytes. The format is told by the first bytes (magic numbers),
//! never by the name: gzip, zstd, bzip2 and xz, each read whole (concatenated members,
//! frames and streams), else the bytes as they are.

use std::fs::File;
use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::BatchError;

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
        if head.starts_with(&[0x1f, 0x8b]) {
            Format::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Format::Zstd
        } else if head.starts_with(b"BZh") {
            Format::Bzip2
        } else if head.starts_with(&[0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]) {
            Format::Xz
        } else {
            Format::Plain
        }
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
        let mut raw = Counting { inner: raw, count };
        // the magic number: up to 6 bytes, however the reads are split (a pipe)
        let mut head = Vec::with_capacity(6);
        while head.len() < 6 {
            let mut byte = [0u8; 6];
            let want = 6 - head.len();
            match raw.read(&mut byte[..want]) {
                Ok(0) => break,
                Ok(n) => head.extend_from_slice(&byte[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(file_error(path, &e)),
            }
        }
        let format = Format::detect(&head);
        let stored = io::Cursor::new(head).chain(raw);
        let reader: Box<dyn Read + Send> = match format {
            Format::Plain => Box::new(stored),
            Format::Gzip => Box::new(flate2::read::MultiGzDecoder::new(stored)),
            Format::Zstd => Box::new(zstd::stream::read::Decoder::new(stored).map_err(|_| {
                BatchError::Compressed {
                    source: path.to_owned(),
                    format: "zstd",
                    truncated: false,
                    offset: 0,
                }
            })?),
            Format::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(stored)),
            Format::Xz => Box::new(liblzma::read::XzDecoder::new_multi_decoder(stored)),
        };
        Ok(Input {
            path: path.to_owned(),
            format,
            reader,
            decoded: 0,
        })
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
