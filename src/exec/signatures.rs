//! What the shell guard knows of workspace files by their `stat` signature, kept per session:
//! for each file it hashed, the device, inode, size, mtime and ctime it had (what git's index
//! keeps; kept as a 16-byte print of them), with its digest, by a 16-byte print of its path. A
//! read of a file whose signature has not moved since takes the digest from here instead of
//! reading and hashing the file again.
//!
//! An entry is only learned when it cannot be racily clean (git's rule): the file's newest
//! timestamp must be older than the moment the guard started reading it by more than the
//! filesystem's timestamp granularity. A change after that moment then always moves the ctime,
//! which no program can set back. Only reads use this; every check before a change still hashes
//! the bytes on disk.
//!
//! Kept in `.stella/private/exec/<session>.signatures` (machine-local: inode numbers mean nothing
//! elsewhere), written whole at the end of each command, checked whole when read: a file that
//! does not check out is ignored, and the guard hashes as if it had never been written.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gix::ObjectId;

use crate::digest::Digest;
use crate::fsutil;
use crate::ids::SessionId;
use crate::journal::{self, Journal};
use crate::paths::RelPath;

use super::HashMap;

/// What `stat` says of a file, enough to tell it changed (git's index keeps the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Signature {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Signature {
    pub(super) fn of(meta: &std::fs::Metadata) -> Signature {
        Signature {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The regular file at `path` now; `None` when there is none.
    pub(super) fn at(path: &Path) -> Option<Signature> {
        std::fs::symlink_metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| Signature::of(&m))
    }

    /// Whether a change made after `taken` must move this signature: its newest timestamp is
    /// older than `taken` by more than a timestamp's granularity (two seconds where the
    /// filesystem keeps whole seconds, as FAT and some network filesystems do).
    fn settled(&self, taken: SystemTime) -> bool {
        let ns = |(s, n): (i64, i64)| i128::from(s) * 1_000_000_000 + i128::from(n);
        let coarse = self.mtime.1 == 0 && self.ctime.1 == 0;
        let margin = if coarse {
            Duration::from_secs(2)
        } else {
            Duration::from_millis(50)
        };
        let taken = match taken.duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i128,
            Err(_) => return false,
        };
        let margin = margin.as_nanos() as i128;
        ns(self.mtime).max(ns(self.ctime)) + margin < taken
    }

    /// What the table keeps of it: the first 16 bytes of the BLAKE3 of its fields. Two
    /// signatures are taken for the same only when these are equal, a chance of 2^-128 for two
    /// that differ, beyond anyone's choosing; and a third of the fields' room in a table of
    /// 100,000 entries.
    fn print(&self) -> Print {
        let mut fields = [0u8; 56];
        let values = [
            self.dev,
            self.ino,
            self.size,
            self.mtime.0 as u64,
            self.mtime.1 as u64,
            self.ctime.0 as u64,
            self.ctime.1 as u64,
        ];
        for (chunk, v) in fields.chunks_exact_mut(8).zip(values) {
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        let hash = Digest::of(&fields).0;
        Print(hash[..16].try_into().expect("16 of 32 bytes"))
    }
}

/// A [`Signature`] as the table keeps it ([`Signature::print`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Print([u8; 16]);

/// A path as the table keys it: the first 16 bytes of its BLAKE3 digest, the digest the
/// session's map names the path's entry by ([`journal::entry_digest`]). The table keeps
/// no path: an entry is found without following a pointer to the path's bytes (a cache miss on
/// every read the guard answers), and the paths of 100,000 files take no room. Two paths taken
/// for one would need the same print (2^-128); even then an entry is used only when the file's
/// signature matches it too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct PathKey([u8; 16]);

impl PathKey {
    fn of(path: &RelPath) -> PathKey {
        PathKey::from_digest(&journal::entry_digest(path))
    }

    fn from_digest(d: &Digest) -> PathKey {
        PathKey(d.0[..16].try_into().expect("16 of 32 bytes"))
    }
}

/// What one `stat` of a path says, as far as the guard needs it: taken from std's `Metadata`, or
/// from an `fstatat` in a folder the supervisor holds open.
#[derive(Clone, Copy, Debug)]
pub(super) struct Stat {
    pub(super) sig: Signature,
    /// A regular file (not a link, a folder, a FIFO, a device).
    pub(super) file: bool,
    pub(super) exec: bool,
}

impl Stat {
    pub(super) fn of(meta: &std::fs::Metadata) -> Stat {
        Stat {
            sig: Signature::of(meta),
            file: meta.is_file(),
            exec: meta.mode() & 0o111 != 0,
        }
    }

    pub(super) fn of_raw(st: &rustix::fs::Stat) -> Stat {
        let kind = rustix::fs::FileType::from_raw_mode(st.st_mode);
        Stat {
            sig: Signature {
                dev: st.st_dev,
                ino: st.st_ino,
                size: st.st_size as u64,
                mtime: (st.st_mtime, st.st_mtime_nsec as i64),
                ctime: (st.st_ctime, st.st_ctime_nsec as i64),
            },
            file: kind.is_file(),
            exec: st.st_mode & 0o111 != 0,
        }
    }

    /// Whether this is a symbolic link (`fstatat` without following it).
    pub(super) fn is_link(st: &rustix::fs::Stat) -> bool {
        rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Symlink
    }
}

/// A file as the guard hashed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Known {
    sig: Print,
    digest: Digest,
    /// The session's map held these bytes, digest and all, at [`Signatures::at_map`].
    held: bool,
}

/// At most this many entries (65 bytes each on disk, about 70 in memory): past it, files not
/// hashed before are not learned.
const MAX_ENTRIES: usize = 500_000;

const MAGIC: &[u8] = b"stella-signatures 4\n";
/// One entry: the path's key, the signature's print, the digest, held.
const ENTRY: usize = 16 + 16 + 32 + 1;
/// The map tree the `held` marks are of: a flag and 20 bytes.
const AT_MAP: usize = 21;

/// The signatures of one session, loaded when first asked.
pub(super) struct Signatures {
    root: PathBuf,
    file: RelPath,
    map: Option<HashMap<PathKey, Known>>,
    /// The session's map tree the `held` marks are true of.
    at_map: Option<ObjectId>,
    /// Whether the marks were brought up to the command's start ([`Signatures::check_held`]).
    checked: bool,
    /// The session's map could not be read: no mark is made.
    marks_off: bool,
    changed: bool,
    /// Reads answered from here, and what the session was known to hold, for the log.
    hits: usize,
    held_hits: usize,
}

impl Signatures {
    pub(super) fn new(root: &Path, id: &SessionId) -> Signatures {
        Signatures {
            root: root.to_owned(),
            file: crate::workspace::Workspace::signatures_file(id),
            map: None,
            at_map: None,
            checked: false,
            marks_off: false,
            changed: false,
            hits: 0,
            held_hits: 0,
        }
    }

    fn map(&mut self) -> &mut HashMap<PathKey, Known> {
        if self.map.is_none() {
            // A regular file only: a FIFO put there never hangs the guard.
            let (at_map, map) = fsutil::read_regular(&self.file.under(&self.root))
                .ok()
                .and_then(|b| decode(&b))
                .unwrap_or_default();
            self.at_map = at_map;
            self.map = Some(map);
        }
        self.map.as_mut().expect("loaded")
    }

    /// The digest of the regular file at `path` (under `root`) when its signature is the one
    /// it had when it was hashed: what `stat` says of it, or one `lstat`; none when the path was
    /// never hashed. With it, whether the file is executable, and whether the session held these
    /// bytes where the command started (once [`Signatures::check_held`] ran).
    pub(super) fn lookup(
        &mut self,
        root: &Path,
        path: &RelPath,
        stat: Option<Stat>,
    ) -> Option<(Digest, bool, bool)> {
        let known = *self.map().get(&PathKey::of(path))?;
        let stat = match stat {
            Some(s) => s,
            None => Stat::of(&std::fs::symlink_metadata(path.under(root)).ok()?),
        };
        if !stat.file || stat.sig.print() != known.sig {
            return None;
        }
        self.hits += 1;
        let held = known.held && self.checked;
        self.held_hits += usize::from(held);
        Some((known.digest, stat.exec, held))
    }

    /// Remember that the file at `path`, whose signature was `sig` when reading it began at
    /// `taken`, holds `digest`; forgotten instead when it may be racily clean.
    pub(super) fn learn(
        &mut self,
        path: &RelPath,
        sig: Signature,
        taken: SystemTime,
        digest: Digest,
    ) {
        let settled = sig.settled(taken);
        let key = PathKey::of(path);
        let map = self.map();
        if !settled {
            if map.remove(&key).is_some() {
                self.changed = true;
            }
            return;
        }
        let held = map.get(&key).is_some_and(|k| k.held && k.digest == digest);
        let entry = Known {
            sig: sig.print(),
            digest,
            held,
        };
        if (map.len() < MAX_ENTRIES || map.contains_key(&key))
            && map.insert(key, entry) != Some(entry)
        {
            self.changed = true;
        }
    }

    /// Bring the `held` marks to the session's map tree `map` (where the command started): the
    /// marks of entries that changed since the tree they were true of are dropped. Once per
    /// command; on any error every mark is dropped.
    pub(super) fn check_held(
        &mut self,
        journal: &Journal,
        map: impl FnOnce() -> Result<Option<ObjectId>, journal::Error>,
    ) {
        if self.checked {
            return;
        }
        self.checked = true;
        self.map();
        let map = match map() {
            Ok(map) => map,
            Err(e) => {
                // Not knowing which tree marks would be true of, none is kept or made.
                tracing::debug!(error = %e, "the session's map could not be read");
                let entries = self.map.as_mut().expect("loaded");
                entries.values_mut().for_each(|k| k.held = false);
                self.at_map = None;
                self.marks_off = true;
                self.changed = true;
                return;
            }
        };
        if self.at_map == map {
            return;
        }
        let before = self.at_map;
        self.at_map = map;
        self.changed = true;
        let entries = self.map.as_mut().expect("loaded");
        if !entries.values().any(|k| k.held) {
            return;
        }
        match journal.map_changed_digests(before, map) {
            Ok(digests) => {
                for d in digests {
                    if let Some(k) = entries.get_mut(&PathKey::from_digest(&d)) {
                        k.held = false;
                    }
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "the session's map could not be compared");
                entries.values_mut().for_each(|k| k.held = false);
            }
        }
    }

    /// What the session held of `path` where the command started, when this knows it: the
    /// digest it held, with its bytes ([`Signatures::check_held`] first).
    pub(super) fn held(&mut self, path: &RelPath) -> Option<Digest> {
        debug_assert!(self.checked);
        let k = self
            .map
            .as_ref()?
            .get(&PathKey::of(path))
            .filter(|k| k.held)?;
        self.held_hits += 1;
        Some(k.digest)
    }

    /// The session held `digest` of `path`, bytes and all, where the command started.
    pub(super) fn mark_held(&mut self, path: &RelPath, digest: Digest) {
        if self.marks_off {
            return;
        }
        if let Some(k) = self.map().get_mut(&PathKey::of(path))
            && k.digest == digest
            && !k.held
        {
            k.held = true;
            self.changed = true;
        }
    }

    /// Write what changed, whole; a failure only costs the next command a re-hash.
    pub(super) fn save(&mut self) {
        tracing::debug!(
            known_by_signature = self.hits,
            held_by_signature = self.held_hits,
            learned = self.changed,
            "reads of files unchanged since they were hashed"
        );
        if !self.changed {
            return;
        }
        let Some(map) = &self.map else {
            return;
        };
        let bytes = encode(self.at_map, map);
        // Beneath the workspace, never through a link, as every write on Stella's behalf.
        if let Err(e) = fsutil::replace_beneath(&self.root, &self.file, &bytes, || true) {
            tracing::debug!(error = %e, file = %self.file, "signatures not saved");
        }
    }
}

fn encode(at_map: Option<ObjectId>, map: &HashMap<PathKey, Known>) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAGIC.len() + AT_MAP + map.len() * ENTRY + 32);
    out.extend_from_slice(MAGIC);
    out.push(u8::from(at_map.is_some()));
    match at_map {
        Some(id) => out.extend_from_slice(id.as_bytes()),
        None => out.extend_from_slice(&[0; 20]),
    }
    for (key, k) in map {
        out.extend_from_slice(&key.0);
        out.extend_from_slice(&k.sig.0);
        out.extend_from_slice(&k.digest.0);
        out.push(u8::from(k.held));
    }
    let sum = Digest::of(&out);
    out.extend_from_slice(&sum.0);
    out
}

/// The map tree and the entries of `bytes`, or `None` when it is not whole.
type Decoded = (Option<ObjectId>, HashMap<PathKey, Known>);
fn decode(bytes: &[u8]) -> Option<Decoded> {
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(32)?)?;
    if Digest::of(body).0 != sum || !body.starts_with(MAGIC) {
        return None;
    }
    let (head, entries) = body[MAGIC.len()..].split_at_checked(AT_MAP)?;
    let at_map = match head[0] {
        0 => None,
        1 => Some(ObjectId::try_from(&head[1..]).ok()?),
        _ => return None,
    };
    let (entries, rest) = entries.as_chunks::<ENTRY>();
    if !rest.is_empty() || entries.len() > MAX_ENTRIES {
        return None;
    }
    // Sized once for every entry: growing a table of 100,000 entries step by step touched
    // twice its memory, page by page.
    let mut map = HashMap::with_capacity_and_hasher(entries.len(), Default::default());
    for e in entries {
        let (key, e) = e.split_first_chunk::<16>()?;
        let (sig, e) = e.split_first_chunk::<16>()?;
        let (digest, held) = e.split_first_chunk::<32>()?;
        let held = match held {
            [0] => false,
            [1] => true,
            _ => return None,
        };
        let known = Known {
            sig: Print(*sig),
            digest: Digest(*digest),
            held,
        };
        if map.insert(PathKey(*key), known).is_some() {
            return None;
        }
    }
    Some((at_map, map))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(ctime: (i64, i64)) -> Signature {
        Signature {
            dev: 1,
            ino: 2,
            size: 3,
            mtime: ctime,
            ctime,
        }
    }

    #[test]
    fn a_timestamp_too_close_to_the_read_is_never_trusted() {
        let taken = UNIX_EPOCH + Duration::new(1_000, 0);
        assert!(sig((999, 900_000_000)).settled(taken));
        assert!(!sig((999, 960_000_000)).settled(taken));
        assert!(!sig((1_001, 1)).settled(taken));
        // Whole seconds: the granularity may be two of them.
        assert!(!sig((999, 0)).settled(taken));
        assert!(sig((997, 0)).settled(taken));
    }

    #[test]
    fn a_print_moves_with_every_field_of_the_signature() {
        let base = Signature {
            dev: 1,
            ino: 2,
            size: 3,
            mtime: (4, 5),
            ctime: (6, 7),
        };
        let moves: [fn(&mut Signature); 8] = [
            |s| s.dev = 9,
            |s| s.ino = 9,
            |s| s.size = 9,
            |s| s.mtime.0 = 9,
            |s| s.mtime.1 = 9,
            |s| s.ctime.0 = 9,
            |s| s.ctime.1 = 9,
            // The timestamps' values swapped.
            |s| std::mem::swap(&mut s.mtime, &mut s.ctime),
        ];
        assert_eq!(base.print(), base.print());
        for (i, change) in moves.iter().enumerate() {
            let mut moved = base;
            change(&mut moved);
            assert_ne!(moved.print(), base.print(), "change {i}");
        }
    }

    #[test]
    fn what_is_written_reads_back_and_damage_reads_as_nothing() {
        let mut map = HashMap::default();
        for (i, name) in ["a.txt", "dir/b c", "é/\u{1}"].iter().enumerate() {
            map.insert(
                PathKey::of(&RelPath::from_bytes(name.as_bytes()).unwrap()),
                Known {
                    sig: sig((i as i64, -1)).print(),
                    digest: Digest::of(name.as_bytes()),
                    held: i == 1,
                },
            );
        }
        let tree = ObjectId::from_hex(b"4b825dc642cb6eb9a060e54bf8d69288fbee4904").unwrap();
        for at_map in [None, Some(tree)] {
            assert_eq!(decode(&encode(at_map, &map)), Some((at_map, map.clone())));
        }
        let bytes = encode(Some(tree), &map);
        assert_eq!(bytes.len(), MAGIC.len() + AT_MAP + 3 * ENTRY + 32);
        for cut in [0, 1, MAGIC.len(), bytes.len() - 1] {
            assert_eq!(decode(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        flipped[MAGIC.len() + 6] ^= 1;
        assert_eq!(decode(&flipped), None);
    }
}
