//! `DirectoryWriter`: the files of `fastmerge batch --output-dir` written on a thread of their
//! own. Each file costs an open, a write and a close (about 8 µs of system calls on a small
//! record); on the thread that drains the batch they added a third to the run on logs of
//! many short streams. Here they run beside it, without the GIL: `put` pushes onto a shared
//! queue, and the writer takes all that is queued at a time, sleeping briefly when it finds
//! none (waking it for each file cost as much as writing it). The twin's
//! `fastmerge._pure.batch.DirectoryWriter` writes each file as it is given, and is what this
//! one does, in order: the files taken at a time, then their index lines (in one write: the
//! index is at most one such batch behind the files made).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};

/// Files given and not yet written, at most: `put` waits (without the GIL) beyond this.
const QUEUED: usize = 256;
/// How long the writer sleeps when it finds nothing to write, at first and at most: it looks
/// again rather than being woken, so that `put` makes no system call (a wake-up for every file
/// cost about as much as writing it).
const NAP: Duration = Duration::from_micros(100);
const NAP_MOST: Duration = Duration::from_millis(2);

struct Job {
    name: PyBackedStr,
    data: PyBackedBytes,
    index_line: PyBackedBytes,
}

/// What a file of the directory that is a symbolic link fails with (the twin's `LINK`).
const LINK: &str = "a symbolic link: no file is written through one";

/// Opens `path` to be written, made or emptied; a symbolic link there (to a file outside, or
/// dangling) is refused, never followed (E108; the twin's `_open`).
fn create(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path)
}

/// The first write that failed: raised as Python's `OSError` for that path.
struct Failure {
    errno: Option<i32>,
    message: String,
    path: PathBuf,
}

impl Failure {
    fn new(error: &std::io::Error, path: PathBuf) -> Self {
        // Python's strerror text, not Rust's "... (os error N)"
        let text = error.to_string();
        let message = match text.rfind(" (os error ") {
            #[cfg(unix)]
            _ if error.raw_os_error() == Some(libc::ELOOP) => LINK.to_owned(),
            Some(at) => text[..at].to_owned(),
            None => text,
        };
        Failure {
            errno: error.raw_os_error(),
            message,
            path,
        }
    }

    fn to_py(&self) -> PyErr {
        let path = self.path.to_string_lossy().into_owned();
        match self.errno {
            Some(errno) => PyOSError::new_err((errno, self.message.clone(), path)),
            None => PyOSError::new_err(format!("{}: {path}", self.message)),
        }
    }
}

/// What `put` and the writer thread share.
#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    /// no more jobs will come: the writer writes what is queued and stops
    closed: bool,
    /// the first failed write; nothing is written after it
    failure: Option<Failure>,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    /// signalled when the writer takes the queued jobs (a `put` may wait for room)
    room: Condvar,
    /// signalled by `close`: the writer, napping, looks at once (the last files are not
    /// left waiting for the end of a nap); `put` never signals it
    closing: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // a panic on the writer thread cannot leave the queue half-changed: take it as it is
        self.queue
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// No more jobs: the writer, woken if it naps, writes what is queued and stops.
    fn close(&self) {
        self.lock().closed = true;
        self.closing.notify_all();
    }
}

/// Writes each file given (`put`) in `directory`, then appends its line to the index, on a
/// thread of its own; after a failed write nothing more is written.
#[pyclass(module = "fastmerge._fastmerge")]
pub struct DirectoryWriter {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// The writer thread: the files of the jobs taken at a time, in the order given, then their
/// index lines.
fn write_all(directory: &Path, index: &mut File, index_path: &Path, shared: &Shared) {
    let mut nap = NAP;
    let mut batch = Vec::new();
    let mut lines = Vec::new();
    loop {
        let mut queue = shared.lock();
        std::mem::swap(&mut batch, &mut queue.jobs);
        if batch.is_empty() {
            if queue.closed || queue.failure.is_some() {
                return;
            }
            // a nap, cut short by `close`
            drop(shared.closing.wait_timeout(queue, nap));
            nap = (nap * 2).min(NAP_MOST);
            continue;
        }
        drop(queue);
        shared.room.notify_all();
        nap = NAP;
        // the index lines of the files written, appended in one write after them (a write
        // for each line was a fourth system call per file)
        lines.clear();
        let mut failure = None;
        for job in batch.drain(..) {
            let path = directory.join(&*job.name);
            match create(&path).and_then(|mut file| file.write_all(&job.data)) {
                Ok(()) => lines.extend_from_slice(&job.index_line),
                Err(error) => {
                    failure = Some(Failure::new(&error, path));
                    break;
                }
            }
        }
        if let Err(error) = index.write_all(&lines) {
            failure.get_or_insert_with(|| Failure::new(&error, index_path.to_owned()));
        }
        if let Some(failure) = failure {
            let mut queue = shared.lock();
            queue.failure = Some(failure);
            queue.jobs.clear(); // dropped unwritten: the run stops at its first failure
            drop(queue);
            shared.room.notify_all();
            return;
        }
    }
}

#[pymethods]
impl DirectoryWriter {
    /// Writes into `directory` (which exists), its index file `index` made or emptied now.
    #[new]
    fn new(directory: PathBuf, index: &str) -> PyResult<Self> {
        let index_path = directory.join(index);
        let mut index_file = create(&index_path)
            .map_err(|error| Failure::new(&error, index_path.clone()).to_py())?;
        let shared = Arc::new(Shared::default());
        let theirs = shared.clone();
        let thread = std::thread::Builder::new()
            .name("fastmerge-files".to_owned())
            .spawn(move || write_all(&directory, &mut index_file, &index_path, &theirs))
            .map_err(|error| {
                PyOSError::new_err(format!("cannot start the file writer: {error}"))
            })?;
        Ok(DirectoryWriter {
            shared,
            thread: Some(thread),
        })
    }

    /// Queues file `name` with `data`, and its index line: raises the first failed write's
    /// `OSError` instead once one failed.
    fn put(
        &self,
        py: Python<'_>,
        name: PyBackedStr,
        data: PyBackedBytes,
        index_line: PyBackedBytes,
    ) -> PyResult<()> {
        let job = Job {
            name,
            data,
            index_line,
        };
        let full = |q: &mut Queue| q.jobs.len() >= QUEUED && q.failure.is_none() && !q.closed;
        let mut queue = self.shared.lock();
        if full(&mut queue) {
            // a full queue is waited on without the GIL
            drop(queue);
            py.detach(|| {
                let queue = self.shared.lock();
                drop(self.shared.room.wait_while(queue, full));
            });
            queue = self.shared.lock();
        }
        if let Some(failure) = &queue.failure {
            return Err(failure.to_py());
        }
        if queue.closed {
            return Err(PyValueError::new_err("the directory writer is closed"));
        }
        queue.jobs.push(job);
        Ok(())
    }

    /// Writes what is queued and stops the thread; the first failed write's `OSError`, or
    /// None. Closing again gives the same.
    fn close(&mut self, py: Python<'_>) -> Option<PyErr> {
        self.shared.close();
        if let Some(thread) = self.thread.take() {
            if py.detach(|| thread.join()).is_err() {
                return Some(PyOSError::new_err("the file writer stopped"));
            }
        }
        self.shared.lock().failure.as_ref().map(Failure::to_py)
    }
}

impl Drop for DirectoryWriter {
    fn drop(&mut self) {
        // the thread never takes the GIL: joining it here cannot wait on this thread
        self.shared.close();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DirectoryWriter>()
}
