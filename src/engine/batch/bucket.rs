//! Buckets of stream keys (`fastmerge.dask`): [`bucket_of`] a key, and [`Sorter`], which
//! bucket a line is, where a batch with `Options::bucket` reads only its own (on local files,
//! every task reads the inputs itself). The twin is `fastmerge._pure.batch.bucket`.

use super::record;

/// The bucket of a stream key: the CRC-32 (IEEE, as zlib's `crc32`) of its UTF-8 text, modulo
/// `buckets`.
pub fn bucket_of(key: &str, buckets: usize) -> usize {
    (crc32fast::hash(key.as_bytes()) as usize) % buckets
}

/// Which bucket each record line goes to: its stream key's ([`bucket_of`]), found by a light
/// scan of the line where it can be ([`record::route_key`]), else by the record reader; a
/// bad line's is 0, or the bucket of the key the light scan finds in it (a bad line belongs
/// to no stream: any one bucket reports it where it is).
pub struct Sorter<'s> {
    spec: &'s record::Spec,
    buckets: usize,
}

impl<'s> Sorter<'s> {
    pub fn new(spec: &'s record::Spec, buckets: usize) -> Sorter<'s> {
        Sorter { spec, buckets }
    }

    /// The bucket of a line that is not blank.
    pub fn bucket(&self, line: &[u8]) -> usize {
        self.bucket_found(line, record::route_key(line, self.spec))
    }

    /// The bucket of a line whose light scan found `key` (None: found nothing).
    pub fn bucket_found(&self, line: &[u8], key: Option<&[u8]>) -> usize {
        match key {
            // the bytes of a string without escapes: its text (on a record's line, UTF-8)
            Some(key) => (crc32fast::hash(key) as usize) % self.buckets,
            // the line read as the batch finds it in the end: a record, or a bad line (one
            // whose event, which the record reader may skip unread, is not JSON, too)
            None => match record::read_whole(line, self.spec) {
                Ok(rec) if rec.checked || record::event_is_json(rec.feed.text(line)) => {
                    bucket_of(rec.key.text(line), self.buckets)
                }
                _ => 0,
            },
        }
    }
}
