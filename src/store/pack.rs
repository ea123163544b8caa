//! Objects written into the store as one pack, streamed into `git index-pack` an object at a
//! time: a step that records thousands of paths writes one pack, not tens of thousands of loose
//! files.
//!
//! Apart from the other git runners, because it writes git's pack format itself (entry headers,
//! deflate, the trailing hash) and keeps a child running while the caller adds objects.

use std::path::PathBuf;

use gix::ObjectId;

use super::durable::sync_dir;
use super::{Error, Store, git_command};

impl Store {
    /// Store `objects` as one pack (`git index-pack` writes it and its index into the store):
    /// a step that records thousands of paths would otherwise write tens of thousands of loose
    /// objects, one file, rename and folder check each. The objects are readable once this
    /// returns, before any ref names them.
    pub(crate) fn write_pack<'a>(
        &self,
        objects: impl ExactSizeIterator<Item = (gix::objs::Kind, &'a [u8])>,
    ) -> Result<(), Error> {
        let count = u32::try_from(objects.len()).map_err(|_| Error::Io {
            op: "write a pack into",
            path: self.dir.clone(),
            source: std::io::Error::other("too many objects for one pack"),
        })?;
        let mut pack = self.pack_writer(count)?;
        for (kind, data) in objects {
            pack.add(kind, data)?;
        }
        pack.finish()
    }

    /// Start a pack of exactly `count` objects, written into the store by `git index-pack` as
    /// they are added ([`PackWriter::add`]): one object in memory at a time, however many the
    /// pack holds.
    pub(crate) fn pack_writer(&self, count: u32) -> Result<PackWriter, Error> {
        let mut child = git_command(&self.dir)
            .args([
                "-c",
                "core.fsync=pack,pack-metadata",
                "-c",
                "core.fsyncMethod=fsync",
            ])
            .args(["index-pack", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|source| Error::Io {
                op: "write a pack into",
                path: self.dir.clone(),
                source,
            })?;
        let stdin = child.stdin.take().expect("piped");
        let mut pack = PackWriter {
            child: Some(child),
            out: Some(std::io::BufWriter::with_capacity(1 << 20, stdin)),
            hasher: gix::hash::hasher(gix::hash::Kind::Sha1),
            left: count,
            deflate: zlib_rs::Deflate::new(PACK_COMPRESSION, true, 15),
            z: Vec::new(),
            dir: self.dir.clone(),
            fsync: self.fsync(),
        };
        let mut header = b"PACK\0\0\0\x02".to_vec();
        header.extend_from_slice(&count.to_be_bytes());
        pack.emit(&header)?;
        Ok(pack)
    }
}

/// A pack going into the store (see [`Store::pack_writer`]). Dropped before
/// [`PackWriter::finish`], it stores nothing: `git index-pack` sees the pack end early and
/// removes what it wrote.
pub(crate) struct PackWriter {
    child: Option<std::process::Child>,
    out: Option<std::io::BufWriter<std::process::ChildStdin>>,
    hasher: gix::hash::Hasher,
    left: u32,
    deflate: zlib_rs::Deflate,
    z: Vec<u8>,
    dir: PathBuf,
    fsync: bool,
}

/// How the store's packs are compressed. `git pack-objects` copies this data into every
/// artifact as it is, and `verify` inflates it. Level 1 (zlib-rs's quick strategy) codes every
/// block with fixed Huffman codes, even incompressible ones: random files came out 5% larger
/// than they went in, and inflated 5x slower than stored blocks. From level 2 on, a block that
/// does not compress is stored.
const PACK_COMPRESSION: i32 = 2;

impl PackWriter {
    /// Add one whole object; its id.
    pub(crate) fn add(&mut self, kind: gix::objs::Kind, data: &[u8]) -> Result<ObjectId, Error> {
        if self.left == 0 {
            return Err(self.io_err(std::io::Error::other("more objects than the pack counts")));
        }
        self.left -= 1;
        let id =
            gix::objs::compute_hash(gix::hash::Kind::Sha1, kind, data).map_err(|e| Error::Git {
                op: "hash an object",
                store: self.dir.clone(),
                source: gix::Error::from_error(e),
            })?;
        self.emit(&entry_header(kind, data.len() as u64))?;
        let mut z = std::mem::take(&mut self.z);
        z.clear();
        z.resize(zlib_rs::compress_bound(data.len()), 0);
        // One compressor for every object, reset between them: a new one allocates and clears
        // its window and tables (zlib-rs: 64 KiB, 64 KiB, 128 KiB) and clears its hash table
        // again, which for a step's thousands of small objects cost more than deflating them.
        self.deflate.reset();
        let emitted = match self
            .deflate
            .compress(data, &mut z, zlib_rs::DeflateFlush::Finish)
        {
            Ok(zlib_rs::Status::StreamEnd) => {
                let n = self.deflate.total_out() as usize;
                self.emit(&z[..n])
            }
            done => Err(self.io_err(std::io::Error::other(format!(
                "could not deflate an object of {} bytes: {done:?}",
                data.len()
            )))),
        };
        self.z = z;
        emitted?;
        Ok(id)
    }

    /// End the pack and wait for `git index-pack`: its objects are in the store, synced (with
    /// `stella.fsync`), and readable once this returns.
    pub(crate) fn finish(mut self) -> Result<(), Error> {
        use std::io::Write;
        if self.left != 0 {
            return Err(self.io_err(std::io::Error::other("fewer objects than the pack counts")));
        }
        let trailer = std::mem::replace(&mut self.hasher, gix::hash::hasher(gix::hash::Kind::Sha1))
            .try_finalize()
            .map_err(|e| self.io_err(std::io::Error::other(e.to_string())))?;
        let mut out = self.out.take().expect("open until finished");
        let written = out.write_all(trailer.as_bytes()).and_then(|()| out.flush());
        // Closing stdin ends the pack for index-pack.
        drop(out);
        let child = self.child.take().expect("running");
        let output = child.wait_with_output().map_err(|e| self.io_err(e))?;
        if !output.status.success() {
            return Err(Error::GitCommand {
                args: "index-pack --stdin".into(),
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            });
        }
        written.map_err(|e| self.io_err(e))?;
        // git synced the pack and its index; their names are durable once the folder is.
        if self.fsync {
            sync_dir(&super::pack_folder(&self.dir))?;
        }
        Ok(())
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<(), Error> {
        use std::io::Write;
        self.hasher.update(bytes);
        let out = self.out.as_mut().expect("open until finished");
        out.write_all(bytes).map_err(|e| self.stopped_reading(e))
    }

    /// A write to `git index-pack` failed, `e`: it stopped reading (a full disk, a store it
    /// cannot write). What it said is the error, not the pipe it left: a closed pipe means "the
    /// reader went away, stop quietly" to the command line, and this must not be quiet.
    fn stopped_reading(&mut self, e: std::io::Error) -> Error {
        drop(self.out.take());
        match self.child.take().map(std::process::Child::wait_with_output) {
            Some(Ok(output)) if !output.status.success() => Error::GitCommand {
                args: "index-pack --stdin".into(),
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            },
            _ => self.io_err(std::io::Error::other(format!(
                "git index-pack stopped reading the pack: {e}"
            ))),
        }
    }

    fn io_err(&self, source: std::io::Error) -> Error {
        Error::Io {
            op: "write a pack into",
            path: self.dir.clone(),
            source,
        }
    }
}

impl Drop for PackWriter {
    fn drop(&mut self) {
        // Unfinished: index-pack reads a pack that ends early, fails and removes its files.
        drop(self.out.take());
        if let Some(mut child) = self.child.take() {
            let _ = child.wait();
        }
    }
}

/// A pack entry header for a whole object: type and size, as git writes it.
pub(crate) fn entry_header(kind: gix::objs::Kind, size: u64) -> Vec<u8> {
    let type_id: u8 = match kind {
        gix::objs::Kind::Commit => 1,
        gix::objs::Kind::Tree => 2,
        gix::objs::Kind::Blob => 3,
        gix::objs::Kind::Tag => 4,
    };
    let mut out = vec![(type_id << 4) | (size & 0x0f) as u8];
    let mut rest = size >> 4;
    while rest > 0 {
        *out.last_mut().expect("one byte") |= 0x80;
        out.push((rest & 0x7f) as u8);
        rest >>= 7;
    }
    out
}
