//! The one-pass reader: an artifact in Stella's order, its head first, every other entry
//! inflated and checked, and the pack's checksum computed on a second thread.

use std::io::{self, BufRead, Read};

use gix::ObjectId;

use super::{
    Head, MAX_HEAD_OBJECT, corrupt, head_entries, parse_head, read_bundle_header, read_pack_header,
};
use crate::artifact::{Error, not_artifact};

/// What a streaming read found: the head, and what ran alongside the check of the pack.
pub(super) enum Streamed<T> {
    Head(Box<Head>, Option<T>),
    /// The pack is not in Stella's order: its head must be looked up, not read in passing.
    OtherOrder,
}

/// The pack's checksum, computed on a second thread while the reading thread inflates: hashing
/// every byte on the reading thread doubled what reading the pack costs.
///
/// The trailer is a checksum of the bytes, not an object's name, so plain SHA-1 checks it (the
/// `sha1` crate, with the CPU's SHA instructions where there are some): git's collision-detecting
/// SHA-1, which names objects, was 60% of `verify`'s time here. Objects are still named, and
/// checked, with git's.
struct Checksum {
    pending: Vec<u8>,
    chunks: Option<std::sync::mpsc::SyncSender<Vec<u8>>>,
    worker: Option<std::thread::JoinHandle<sha1::Sha1>>,
}

impl Checksum {
    const CHUNK: usize = 1 << 20;

    /// A checksum of a pack whose objects are named with `kind`, which must be SHA-1: this
    /// build reads no other.
    fn new(kind: gix::hash::Kind) -> Checksum {
        debug_assert_eq!(kind, gix::hash::Kind::Sha1);
        // A few chunks in flight bound the memory; the reader waits when the hasher lags.
        let (chunks, receive) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
        let worker = std::thread::spawn(move || {
            use sha1::Digest as _;
            let mut hasher = sha1::Sha1::new();
            for chunk in receive {
                hasher.update(&chunk);
            }
            hasher
        });
        Checksum {
            pending: Vec::with_capacity(Self::CHUNK),
            chunks: Some(chunks),
            worker: Some(worker),
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        if self.pending.len() >= Self::CHUNK {
            self.send();
        }
    }

    fn send(&mut self) {
        let full = std::mem::replace(&mut self.pending, Vec::with_capacity(Self::CHUNK));
        if let Some(chunks) = &self.chunks {
            // The worker only stops when the channel closes.
            let _ = chunks.send(full);
        }
    }

    fn finish(mut self) -> Result<ObjectId, Error> {
        self.send();
        self.chunks = None;
        let hasher = self
            .worker
            .take()
            .expect("finished once")
            .join()
            .map_err(|_| corrupt("the pack could not be hashed"))?;
        use sha1::Digest as _;
        ObjectId::try_from(hasher.finalize().as_slice())
            .map_err(|e| corrupt(format!("the pack could not be hashed: {e}")))
    }
}

/// The pack as it streams by: every byte handed out is hashed for the trailing checksum, and
/// counted.
struct Tap<'a, R> {
    inner: &'a mut io::BufReader<R>,
    hasher: Checksum,
    /// Bytes of the pack handed out so far.
    pos: u64,
}

impl<R: Read> Read for Tap<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = {
            let available = self.fill_buf()?;
            let n = available.len().min(buf.len());
            buf[..n].copy_from_slice(&available[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> BufRead for Tap<'_, R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.hasher.update(&self.inner.buffer()[..n]);
        self.pos += n as u64;
        self.inner.consume(n);
    }
}

/// What a pack entry holds, as its header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stored {
    Whole(gix::objs::Kind),
    /// A delta against the entry that many bytes before this one.
    OffsetDelta(u64),
    /// A delta against the object of a given id.
    RefDelta,
}

/// Walks a pack entry by entry, checking each as it goes.
struct PackReader<'a, R> {
    tap: Tap<'a, R>,
    hash: gix::hash::Kind,
    count: u32,
    /// Entries begun so far.
    index: u32,
    /// Where each entry begun so far starts in the pack, ascending.
    starts: Vec<u64>,
    zlib: gix_zlib::Decompress,
    /// Where entries inflate to when their bytes are not kept.
    scratch: Vec<u8>,
}

impl<R: Read> PackReader<'_, R> {
    /// Begin the next entry: what it holds and how many bytes it inflates to.
    fn next_entry(&mut self) -> Result<(Stored, u64), Error> {
        self.index += 1;
        self.starts.push(self.tap.pos);
        let (index, count) = (self.index, self.count);
        let ends = || corrupt(format!("the file ends inside object {index} of {count}"));
        let r = &mut self.tap;
        let mut byte = [0u8; 1];
        r.read_exact(&mut byte).map_err(|_| ends())?;
        let type_id = (byte[0] >> 4) & 0b111;
        let mut size = u64::from(byte[0] & 0b1111);
        let mut shift = 4;
        while byte[0] & 0x80 != 0 {
            r.read_exact(&mut byte).map_err(|_| ends())?;
            if shift > 57 {
                return Err(corrupt(format!(
                    "object {index} of {count} has a malformed size"
                )));
            }
            size |= u64::from(byte[0] & 0x7f) << shift;
            shift += 7;
        }
        let stored = match type_id {
            1 => Stored::Whole(gix::objs::Kind::Commit),
            2 => Stored::Whole(gix::objs::Kind::Tree),
            3 => Stored::Whole(gix::objs::Kind::Blob),
            4 => Stored::Whole(gix::objs::Kind::Tag),
            6 => {
                // git's offset encoding: base 128, big-endian, each continuation adding one.
                r.read_exact(&mut byte).map_err(|_| ends())?;
                let mut offset = u64::from(byte[0] & 0x7f);
                while byte[0] & 0x80 != 0 {
                    r.read_exact(&mut byte).map_err(|_| ends())?;
                    if offset > u64::MAX >> 8 {
                        return Err(corrupt(format!(
                            "object {index} of {count} has a malformed delta offset"
                        )));
                    }
                    offset = ((offset + 1) << 7) | u64::from(byte[0] & 0x7f);
                }
                let start = self.starts[self.starts.len() - 1];
                let base = start.checked_sub(offset);
                if base.is_none_or(|b| self.starts.binary_search(&b).is_err()) {
                    return Err(corrupt(format!(
                        "object {index} of {count} is a delta against a place in the pack where no object starts"
                    )));
                }
                Stored::OffsetDelta(offset)
            }
            7 => {
                let mut id = vec![0u8; self.hash.len_in_bytes()];
                r.read_exact(&mut id).map_err(|_| ends())?;
                Stored::RefDelta
            }
            t => {
                return Err(corrupt(format!(
                    "object {index} of {count} has the unknown type {t}"
                )));
            }
        };
        Ok((stored, size))
    }

    /// Inflate the current entry's data whole: it must be one complete zlib stream of exactly
    /// `size` bytes. Kept in `keep` when given.
    fn inflate(&mut self, size: u64, mut keep: Option<&mut Vec<u8>>) -> Result<(), Error> {
        use gix_zlib::{FlushDecompress, Status};
        let (index, count) = (self.index, self.count);
        let (state, scratch) = (&mut self.zlib, &mut self.scratch);
        state.reset();
        let mut produced = 0u64;
        loop {
            let (status, consumed, written, eof) = {
                let input = self.tap.fill_buf()?;
                let eof = input.is_empty();
                let (in0, out0) = (state.total_in(), state.total_out());
                let flush = if eof {
                    FlushDecompress::Finish
                } else {
                    FlushDecompress::None
                };
                let status = state.decompress(input, scratch, flush).map_err(|_| {
                    corrupt(format!(
                        "object {index} of {count} does not inflate ({})",
                        state.error_message().unwrap_or("corrupt deflate stream")
                    ))
                })?;
                (
                    status,
                    (state.total_in() - in0) as usize,
                    (state.total_out() - out0) as usize,
                    eof,
                )
            };
            self.tap.consume(consumed);
            produced += written as u64;
            if produced > size {
                return Err(corrupt(format!(
                    "object {index} of {count} inflates to more than the {size} bytes its header says"
                )));
            }
            if let Some(keep) = keep.as_deref_mut() {
                keep.extend_from_slice(&scratch[..written]);
            }
            match status {
                Status::StreamEnd => break,
                _ if eof => {
                    return Err(corrupt(format!(
                        "the file ends inside object {index} of {count}"
                    )));
                }
                _ if consumed == 0 && written == 0 => {
                    return Err(corrupt(format!(
                        "object {index} of {count} does not inflate"
                    )));
                }
                _ => {}
            }
        }
        if produced != size {
            return Err(corrupt(format!(
                "object {index} of {count} inflates to {produced} bytes where its header says {size}"
            )));
        }
        Ok(())
    }

    /// The next entry as a head object: whole, of `kind`, hashing to `expected`. `None` when it is
    /// anything else, which a pack in another order gives.
    fn head_object(
        &mut self,
        expected: ObjectId,
        kind: gix::objs::Kind,
    ) -> Result<Option<Vec<u8>>, Error> {
        if self.index >= self.count {
            return Ok(None);
        }
        let (stored, size) = self.next_entry()?;
        if stored != Stored::Whole(kind) {
            return Ok(None);
        }
        if size > MAX_HEAD_OBJECT {
            // A large file may open a pack in another order; a commit or tree that large is a
            // hostile claim, refused before anything is allocated for it.
            if kind == gix::objs::Kind::Blob {
                return Ok(None);
            }
            return Err(not_artifact(format!(
                "a head object claims {size} bytes, more than an artifact's head may hold"
            )));
        }
        let mut data = Vec::with_capacity(size as usize);
        self.inflate(size, Some(&mut data))?;
        let id = gix::objs::compute_hash(expected.kind(), kind, &data)
            .map_err(|_| not_artifact("an object could not be hashed"))?;
        Ok((id == expected).then_some(data))
    }

    /// Every remaining entry inflated whole, then the trailing checksum against every byte of
    /// the pack before it, then the end of the file.
    fn check_rest(mut self) -> Result<(), Error> {
        while self.index < self.count {
            let (_, size) = self.next_entry()?;
            self.inflate(size, None)?;
        }
        let Tap { inner, hasher, .. } = self.tap;
        let computed = hasher.finish()?;
        let mut trailer = vec![0u8; self.hash.len_in_bytes()];
        inner
            .read_exact(&mut trailer)
            .map_err(|_| corrupt("the file ends before the pack's checksum"))?;
        if trailer != computed.as_bytes() {
            let said: String = trailer.iter().map(|b| format!("{b:02x}")).collect();
            return Err(corrupt(format!(
                "the pack's checksum is wrong: it says {said}, its bytes hash to {computed}"
            )));
        }
        if !inner.fill_buf()?.is_empty() {
            return Err(corrupt("bytes follow the pack's checksum"));
        }
        Ok(())
    }
}

/// Read a bundle in Stella's order in one pass (see [`read_head`]).
pub(super) fn read_streaming<T: Send>(
    reader: impl Read,
    alongside: &mut Option<impl FnOnce(&Head) -> T + Send>,
) -> Result<Streamed<T>, Error> {
    let mut r = io::BufReader::with_capacity(256 * 1024, reader);
    let (refname, tip) = read_bundle_header(&mut r)?;
    let hash = tip.kind();
    let mut tap = Tap {
        inner: &mut r,
        hasher: Checksum::new(hash),
        pos: 0,
    };
    let (_, count) = read_pack_header(&mut tap)?;
    let mut pack = PackReader {
        tap,
        hash,
        count,
        index: 0,
        starts: Vec::new(),
        zlib: gix_zlib::Decompress::default(),
        scratch: vec![0u8; 256 * 1024],
    };
    let Some(commit) = pack.head_object(tip, gix::objs::Kind::Commit)? else {
        return Ok(Streamed::OtherOrder);
    };
    let tree_id = gix::objs::CommitRef::from_bytes(&commit, hash)
        .map_err(|_| not_artifact("the tip commit does not parse"))?
        .tree();
    let Some(tree) = pack.head_object(tree_id, gix::objs::Kind::Tree)? else {
        return Ok(Streamed::OtherOrder);
    };
    let entries = head_entries(&tree, hash)?;
    let mut blobs: Vec<Vec<u8>> = Vec::new();
    for (i, id) in entries.iter().enumerate() {
        let Some(id) = *id else {
            return Ok(Streamed::OtherOrder);
        };
        // A blob the head carried already is not carried again (artifacts written before
        // that was so carry it twice: the second copy is then one of the other entries).
        if let Some(same) = entries[..i].iter().position(|e| *e == Some(id)) {
            blobs.push(blobs[same].clone());
            continue;
        }
        let Some(blob) = pack.head_object(id, gix::objs::Kind::Blob)? else {
            return Ok(Streamed::OtherOrder);
        };
        blobs.push(blob);
    }
    let [manifest, fingerprint, origins] = <[Vec<u8>; 3]>::try_from(blobs).expect("three");
    // Read now, so `alongside` can start; surfaced only after the pack checked out.
    let parsed = parse_head(
        refname,
        tip,
        tree_id,
        [Some(manifest), Some(fingerprint), Some(origins)],
        count,
    );
    let (checked, done) = std::thread::scope(|scope| {
        let work = match &parsed {
            Ok(head) => alongside.take().map(|work| scope.spawn(move || work(head))),
            Err(_) => None,
        };
        let checked = pack.check_rest();
        let done = work.map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        (checked, done)
    });
    checked?;
    Ok(Streamed::Head(Box::new(parsed?), done))
}
