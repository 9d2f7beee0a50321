//! The buffers of the reader's blocks (see [`super::worker`]).

use std::sync::{Arc, Mutex};

/// Bytes of decompressed input per block (cut at a line end; a longer line makes a longer
/// block).
pub const BLOCK: usize = 1 << 20;

/// The buffers of blocks, given back when a block is dropped (by whichever thread held it
/// last) and read into again: memory already written is read into as it is, where a new
/// buffer was zeroed first and faulted in page by page (most of the reader's own work).
#[derive(Default)]
pub(crate) struct Pool(Mutex<Vec<Vec<u8>>>);

/// Buffers kept for reuse at most (more are in flight only when the workers lag).
const POOLED: usize = 64;

impl Pool {
    /// A buffer of `size` bytes or more, every one of them written (its length).
    pub fn take(&self, size: usize) -> Vec<u8> {
        let pooled = self.0.lock().ok().and_then(|mut bufs| bufs.pop());
        // a new buffer is allocated zeroed (calloc: fresh pages are not written twice)
        let Some(mut buf) = pooled else {
            return vec![0; size];
        };
        if buf.len() < size {
            buf.resize(size, 0);
        }
        buf
    }

    pub fn give(&self, buf: Vec<u8>) {
        // a buffer grown for a long line is not kept
        if buf.len() > 2 * BLOCK {
            return;
        }
        if let Ok(mut bufs) = self.0.lock() {
            if bufs.len() < POOLED {
                bufs.push(buf);
            }
        }
    }
}

/// A block's bytes: a range of a pooled buffer, which goes back to its pool when the block
/// is dropped.
pub(crate) struct Block {
    pub buf: Vec<u8>,
    pub start: usize,
    pub end: usize,
    pub pool: Arc<Pool>,
}

impl std::ops::Deref for Block {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        self.pool.give(std::mem::take(&mut self.buf));
    }
}
