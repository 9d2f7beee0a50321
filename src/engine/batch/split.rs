//! Buckets of stream keys for `fastmerge.dask`.
//!
//! - [`split_file`]: one input's records cut into buckets (the split step on URLs and Bags),
//!   read by the batch's own reader (decompression, blocks of whole lines, line numbers) and
//!   sorted by [`Sorter`], so a bucket's records are exactly the lines the batch would read,
//!   numbered as it numbers them. The twin is `fastmerge._pure.batch.split_file`.
//! - [`Sorter`] ([`super::bucket`]): which bucket a line is.

use std::collections::HashMap;
use std::sync::Arc;

use super::pool::Pool;
use super::reader::{each_line, read_file};
use super::{Batch, BatchError, Options};

pub use super::bucket::{bucket_of, Sorter};

/// One bucket's records of an input, in input order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fragment {
    pub bucket: usize,
    /// The input's text from its first line to the fragment's last record, the records at
    /// their lines and every other line blank (a line holds no `\n`): written as it is at
    /// the input's place, the records keep their line numbers.
    pub data: Vec<u8>,
    /// Their 1-based line numbers in the decompressed input.
    pub lines: Vec<u64>,
}

/// The input's lines (its `\n`s plus one, as the batch counts them between records) and its
/// records as one fragment per bucket that has any, in bucket order, of `options.paths[0]`
/// (the only path), each line in the bucket [`Sorter`] gives it (the bucket's core reads the
/// record: only the key is looked for here). The options are checked as [`Batch::new`] checks
/// them; `group_by` must be a path (a file read as one stream has no records to split),
/// `buckets` 1 or more.
pub fn split_file(options: Options, buckets: usize) -> Result<(u64, Vec<Fragment>), BatchError> {
    if buckets == 0 {
        return Err(BatchError::Option(
            "buckets must be 1 or more, not 0".to_owned(),
        ));
    }
    if options.paths.len() != 1 {
        return Err(BatchError::Option("split_file reads one input".to_owned()));
    }
    let batch = Batch::new(options)?;
    let plan = &batch.plan;
    let Some(spec) = &plan.spec else {
        return Err(BatchError::Option(
            "split_file cuts records by their stream key: pass group_by (e.g. stream_id)"
                .to_owned(),
        ));
    };
    let sorter = Sorter::new(spec, buckets);
    let mut fragments: Vec<Fragment> = Vec::new();
    // each bucket's fragment, by bucket: a map, since any number of buckets may be asked for
    let mut slot: HashMap<usize, usize> = HashMap::new();
    let (mut seq, mut lines) = (0, 0);
    read_file(
        plan,
        0,
        &mut seq,
        &mut lines,
        &Arc::new(Pool::default()),
        |chunk| {
            let count = each_line(&chunk, |line, _, text| {
                let bucket = sorter.bucket(text);
                let at = *slot.entry(bucket).or_insert_with(|| {
                    fragments.push(Fragment {
                        bucket,
                        ..Fragment::default()
                    });
                    fragments.len() - 1
                });
                let fragment = &mut fragments[at];
                // the lines since the record before (none: since the input's first)
                let after = fragment.lines.last().copied().unwrap_or(1);
                let blank = fragment.data.len() + (line - after) as usize;
                fragment.data.resize(blank, b'\n');
                fragment.data.extend_from_slice(text);
                fragment.lines.push(line);
            });
            Some(count)
        },
    )?;
    fragments.sort_by_key(|f| f.bucket);
    Ok((lines, fragments))
}
