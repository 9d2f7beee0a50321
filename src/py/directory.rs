//! `DirectoryWriter`: the files of `fastmerge batch --output-dir` written on a thread of their
//! own. Each file costs an open, a write and a close (about 8 µs of system calls on a small
//! record); on the thread that drains the batch they added a third to the run on logs of
//! many short streams. Here they run beside it, without the GIL. The twin's
//! `fastmerge._pure.batch.DirectoryWriter` writes each file as it is given, and is what this
//! one does, in order: the file, then its index line.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};

/// Files given and not yet written, at most: the writer lags the batch by this many.
const QUEUED: usize = 256;

struct Job {
    name: PyBackedStr,
    data: PyBackedBytes,
    index_line: PyBackedBytes,
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

type Failed = Arc<Mutex<Option<Failure>>>;

/// Writes each file given (`put`) in `directory`, then appends its line to the index, on a
/// thread of its own; after a failed write nothing more is written.
#[pyclass(module = "fastmerge._fastmerge")]
pub struct DirectoryWriter {
    sender: Option<SyncSender<Job>>,
    thread: Option<JoinHandle<()>>,
    failed: Failed,
}

/// The writer thread: each job's file, then its index line, in the order given.
fn write_all(
    directory: &std::path::Path,
    index: (&mut File, &std::path::Path),
    jobs: Receiver<Job>,
    failed: &Failed,
) {
    let (index, index_path) = index;
    for job in jobs {
        if failed.lock().map_or(true, |f| f.is_some()) {
            continue; // dropped unwritten: the run stops at its first failure
        }
        let path = directory.join(&*job.name);
        let written = File::create(&path).and_then(|mut file| file.write_all(&job.data));
        let failure = match written {
            Err(error) => Some(Failure::new(&error, path)),
            Ok(()) => index
                .write_all(&job.index_line)
                .err()
                .map(|error| Failure::new(&error, index_path.to_owned())),
        };
        if let (Some(failure), Ok(mut first)) = (failure, failed.lock()) {
            first.get_or_insert(failure);
        }
    }
}

impl DirectoryWriter {
    fn failure(&self) -> Option<PyErr> {
        self.failed.lock().ok()?.as_ref().map(Failure::to_py)
    }
}

#[pymethods]
impl DirectoryWriter {
    /// Writes into `directory` (which exists), its index file `index` made or emptied now.
    #[new]
    fn new(directory: PathBuf, index: &str) -> PyResult<Self> {
        let index_path = directory.join(index);
        let mut index_file = File::create(&index_path)
            .map_err(|error| Failure::new(&error, index_path.clone()).to_py())?;
        let failed: Failed = Arc::default();
        let (sender, jobs) = sync_channel(QUEUED);
        let shared = failed.clone();
        let thread = std::thread::Builder::new()
            .name("fastmerge-files".to_owned())
            .spawn(move || write_all(&directory, (&mut index_file, &index_path), jobs, &shared))
            .map_err(|error| {
                PyOSError::new_err(format!("cannot start the file writer: {error}"))
            })?;
        Ok(DirectoryWriter {
            sender: Some(sender),
            thread: Some(thread),
            failed,
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
        if let Some(error) = self.failure() {
            return Err(error);
        }
        let Some(sender) = &self.sender else {
            return Err(PyValueError::new_err("the directory writer is closed"));
        };
        let job = Job {
            name,
            data,
            index_line,
        };
        // a full queue is waited on without the GIL
        let sent = match sender.try_send(job) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(job)) => py.detach(|| sender.send(job).map_err(|_| ())),
            Err(TrySendError::Disconnected(_)) => Err(()),
        };
        match sent {
            Ok(()) => Ok(()),
            Err(()) => Err(self
                .failure()
                .unwrap_or_else(|| PyOSError::new_err("the file writer stopped"))),
        }
    }

    /// Writes what is queued and stops the thread; the first failed write's `OSError`, or
    /// None. Closing again gives the same.
    fn close(&mut self, py: Python<'_>) -> Option<PyErr> {
        self.sender = None;
        if let Some(thread) = self.thread.take() {
            if py.detach(|| thread.join()).is_err() {
                return Some(PyOSError::new_err("the file writer stopped"));
            }
        }
        self.failure()
    }
}

impl Drop for DirectoryWriter {
    fn drop(&mut self) {
        // the thread never takes the GIL: joining it here cannot wait on this thread
        self.sender = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DirectoryWriter>()
}
