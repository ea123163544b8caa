//! The recorder: what each thing a session does to a path means for its map.
//!
//! Every entry point (the hooks, MCP, `read`/`write`/`rm`, the shell guard, replay, undo and
//! recover) says what happened in this one vocabulary, and this module alone turns it into the
//! journal's map edits, so "own write", "first sight" and "rename" mean the same thing wherever
//! they come from:
//!
//! | event | the map afterwards |
//! |---|---|
//! | [`read`] | the session saw these bytes; a path new to the map starts from them |
//! | `read_unsure` | the session may have seen another version: its next change needs a re-read |
//! | [`wrote`] | the session left these bytes; a path new to the map starts from what the write replaced ([`Replaced`]) |
//! | `wrote_unsure` | the session wrote, but cannot know what it left: a re-read first |
//! | [`deleted`] | nothing is left to overwrite: the path is dropped |
//! | [`moved`] | what the session knew of the source is what it knows of the destination (a stale source stays stale); what it knew of the destination is dropped, as for a delete; a source it never tracked leaves the destination untracked |
//!
//! A write is recorded with the bytes the writer left when it finished writing, never with what
//! the disk holds later: the caller hands over those bytes (or their digest), and no event reads
//! the disk on its own.

use gix::ObjectId;

use crate::digest::Digest;
use crate::journal::{MapEdit, Seen};
use crate::paths::RelPath;

/// One version of a file as a session came by it: its digest, and the blob that keeps its bytes
/// (with the executable bit) when the journal keeps them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Version {
    pub(crate) digest: Digest,
    pub(crate) kept: Option<(ObjectId, bool)>,
}

impl Version {
    /// A version whose bytes are kept in blob `blob`.
    pub fn kept(digest: Digest, blob: ObjectId, exec: bool) -> Version {
        Version {
            digest,
            kept: Some((blob, exec)),
        }
    }
}

/// What a write replaced, when the path was new to the session's map: where `undo` goes back to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Replaced {
    /// The digest of the bytes that were there; `None` when nothing was (a create).
    pub(crate) digest: Option<Digest>,
    /// Those bytes, when they were kept for `undo`.
    pub(crate) kept: Option<ObjectId>,
}

impl Replaced {
    /// Nothing was there: the session created the file.
    pub fn nothing() -> Replaced {
        Replaced::default()
    }

    /// Bytes with `digest` were there, and were not kept.
    pub(crate) fn unkept(digest: Option<Digest>) -> Replaced {
        Replaced { digest, kept: None }
    }
}

/// The session read `version` at `path`.
pub fn read(path: &RelPath, version: Version) -> MapEdit {
    MapEdit::Put {
        path: path.clone(),
        seen: Seen::Digest(version.digest),
        bytes: version.kept,
        first_origin: Some(version.digest),
        wrote: false,
        origin_bytes: None,
    }
}

/// The session read `path`, but may have been shown another version than the one now on disk
/// (`now`): its next change needs a re-read.
pub(crate) fn read_unsure(path: &RelPath, now: Digest) -> MapEdit {
    MapEdit::Put {
        path: path.clone(),
        seen: Seen::Reread,
        bytes: None,
        first_origin: Some(now),
        wrote: false,
        origin_bytes: None,
    }
}

/// A replayed session starts out knowing `version` at `path`, first seen as `origin`.
pub fn replayed(path: &RelPath, version: Version, origin: Option<Digest>) -> MapEdit {
    MapEdit::Put {
        path: path.clone(),
        seen: Seen::Digest(version.digest),
        bytes: version.kept,
        first_origin: origin,
        wrote: false,
        origin_bytes: None,
    }
}

/// A replayed session starts out needing a re-read of `path`.
pub(crate) fn replayed_unsure(path: &RelPath) -> MapEdit {
    MapEdit::Put {
        path: path.clone(),
        seen: Seen::Reread,
        bytes: None,
        first_origin: None,
        wrote: false,
        origin_bytes: None,
    }
}

/// The session wrote `path`, leaving `version`; `replaced` is what was there when the path is
/// new to its map.
pub fn wrote(path: &RelPath, version: Version, replaced: Replaced) -> MapEdit {
    MapEdit::Put {
        path: path.clone(),
        seen: Seen::Digest(version.digest),
        bytes: version.kept,
        first_origin: replaced.digest,
        wrote: true,
        origin_bytes: replaced.kept,
    }
}

/// The session wrote `path`, but cannot know what it left: its next change needs a re-read.
pub(crate) fn wrote_unsure(path: &RelPath, replaced: Replaced) -> MapEdit {
    MapEdit::Put {
        path: path.clone(),
        seen: Seen::Reread,
        bytes: None,
        first_origin: replaced.digest,
        wrote: true,
        origin_bytes: replaced.kept,
    }
}

/// `path` is gone (the session deleted it, or found it deleted): nothing is left to overwrite.
pub fn deleted(path: &RelPath) -> MapEdit {
    MapEdit::Remove { path: path.clone() }
}

/// `from` was renamed to `to`.
pub fn moved(from: &RelPath, to: &RelPath) -> MapEdit {
    MapEdit::Move {
        from: from.clone(),
        to: to.clone(),
    }
}

/// How a session came by the bytes now at a path, for the operations that store them from the
/// disk ([`crate::session::Context::file_edit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sight {
    /// It read them.
    Read,
    /// It wrote them, over what `Replaced` says.
    Wrote(Replaced),
}

impl Sight {
    /// The event for `version` at `path`, seen this way.
    pub(crate) fn edit(self, path: &RelPath, version: Version) -> MapEdit {
        match self {
            Sight::Read => read(path, version),
            Sight::Wrote(replaced) => wrote(path, version, replaced),
        }
    }
}

#[cfg(test)]
mod tests {
    //! The recorder's events applied to a real journal store in a temporary folder: no process,
    //! no workspace.
    use super::*;
    use crate::guard::{self, Intent};
    use crate::ids::SessionId;
    use crate::journal::{Entry, Journal, Step};
    use crate::store::Store;

    struct World {
        _tmp: tempfile::TempDir,
        store: Store,
        id: SessionId,
    }

    fn world() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open_or_init(&tmp.path().join("store")).unwrap();
        let id = SessionId::parse("s").unwrap();
        let journal = Journal::new(&store);
        let file = crate::journal::layout::SessionFile {
            id: id.to_string(),
            ..Default::default()
        };
        journal.start(&id, &file, None, &Step::default()).unwrap();
        World {
            _tmp: tmp,
            store,
            id,
        }
    }

    impl World {
        fn journal(&self) -> Journal<'_> {
            Journal::new(&self.store)
        }

        fn step(&self, map: Vec<MapEdit>) {
            let step = Step {
                summary: "test".into(),
                map,
                root: Vec::new(),
            };
            self.journal().record(&self.id, &step).unwrap();
        }

        fn entry(&self, path: &RelPath) -> Option<Entry> {
            self.journal().lookup(&self.id, path).unwrap()
        }

        fn version(&self, bytes: &[u8]) -> Version {
            let blob = self.journal().write_blob(bytes).unwrap();
            Version::kept(Digest::of(bytes), blob, false)
        }

        fn tracked(&self) -> u64 {
            self.journal().tip(&self.id).unwrap().tracked
        }
    }

    fn p(s: &str) -> RelPath {
        RelPath::from_bytes(s.as_bytes()).unwrap()
    }

    #[test]
    fn a_read_is_seen_and_is_where_the_path_started() {
        let w = world();
        let v = w.version(b"one\n");
        w.step(vec![read(&p("f"), v)]);
        let e = w.entry(&p("f")).unwrap();
        assert_eq!(e.seen, Seen::Digest(v.digest));
        assert_eq!(e.origin, Some(v.digest));
        assert_eq!(e.wrote, None);
        assert_eq!(e.bytes, v.kept);
        // A second read moves what was seen, never where it started.
        let v2 = w.version(b"two\n");
        w.step(vec![read(&p("f"), v2)]);
        let e = w.entry(&p("f")).unwrap();
        assert_eq!(e.seen, Seen::Digest(v2.digest));
        assert_eq!(e.origin, Some(v.digest));
        assert_eq!(w.tracked(), 1);
    }

    #[test]
    fn a_write_is_the_sessions_own_and_keeps_what_it_replaced() {
        let w = world();
        let before = w.version(b"theirs\n");
        let after = w.version(b"mine\n");
        let replaced = Replaced {
            digest: Some(before.digest),
            kept: before.kept.map(|(b, _)| b),
        };
        w.step(vec![wrote(&p("f"), after, replaced)]);
        let e = w.entry(&p("f")).unwrap();
        assert_eq!(e.seen, Seen::Digest(after.digest));
        assert_eq!(e.origin, Some(before.digest));
        assert_eq!(e.origin_bytes, before.kept.map(|(b, _)| b));
        assert!(e.wrote.is_some());
        // A create starts from nothing.
        w.step(vec![wrote(&p("new"), after, Replaced::nothing())]);
        assert_eq!(w.entry(&p("new")).unwrap().origin, None);
        // An unsure write needs a re-read.
        w.step(vec![wrote_unsure(&p("f"), Replaced::nothing())]);
        assert_eq!(w.entry(&p("f")).unwrap().seen, Seen::Reread);
        assert_eq!(w.entry(&p("f")).unwrap().origin, Some(before.digest));
    }

    #[test]
    fn a_delete_drops_the_path() {
        let w = world();
        w.step(vec![read(&p("f"), w.version(b"x"))]);
        w.step(vec![deleted(&p("f"))]);
        assert_eq!(w.entry(&p("f")), None);
        assert_eq!(w.tracked(), 0);
        // Deleting what was never tracked changes nothing.
        w.step(vec![deleted(&p("g"))]);
        assert_eq!(w.tracked(), 0);
    }

    #[test]
    fn a_move_carries_what_the_session_knew_to_the_destination() {
        let w = world();
        let v = w.version(b"as read\n");
        w.step(vec![read(&p("f"), v)]);
        w.step(vec![moved(&p("f"), &p("g"))]);
        assert_eq!(w.entry(&p("f")), None);
        let g = w.entry(&p("g")).unwrap();
        assert_eq!(g.path, p("g"));
        assert_eq!(g.seen, Seen::Digest(v.digest));
        assert_eq!(g.origin, Some(v.digest));
        assert_eq!(g.bytes, v.kept);
        assert_eq!(g.moved_from, Some(p("f")));
        assert_eq!(w.tracked(), 1);
        // A second move keeps the first source: undo moves the file back there.
        w.step(vec![moved(&p("g"), &p("h"))]);
        assert_eq!(w.entry(&p("h")).unwrap().moved_from, Some(p("f")));
        assert_eq!(w.tracked(), 1);
        // Back under its first name: nothing is left to move back.
        w.step(vec![moved(&p("h"), &p("f"))]);
        let f = w.entry(&p("f")).unwrap();
        assert_eq!(f.moved_from, None);
        assert_eq!(f.seen, Seen::Digest(v.digest));
    }

    #[test]
    fn a_stale_source_stays_stale_under_its_new_name() {
        let w = world();
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::write(root.join("f"), b"as read\n").unwrap();
        w.step(vec![read(&p("f"), w.version(b"as read\n"))]);
        // Another process changes f; then the session renames it.
        std::fs::write(root.join("f"), b"their edit\n").unwrap();
        std::fs::rename(root.join("f"), root.join("g")).unwrap();
        w.step(vec![moved(&p("f"), &p("g"))]);
        let check = guard::check_entry(w.entry(&p("g")), &root, &p("g"), Intent::Delete);
        assert!(check.refused(), "{check:?}");
        let write = Intent::Write { content: None };
        let check = guard::check_entry(w.entry(&p("g")), &root, &p("g"), write);
        assert!(check.refused(), "{check:?}");
    }

    #[test]
    fn a_move_over_a_tracked_file_is_that_files_delete() {
        let w = world();
        let f = w.version(b"f\n");
        let g = w.version(b"g\n");
        w.step(vec![read(&p("f"), f), read(&p("g"), g)]);
        assert_eq!(w.tracked(), 2);
        w.step(vec![moved(&p("f"), &p("g"))]);
        let e = w.entry(&p("g")).unwrap();
        assert_eq!(e.seen, Seen::Digest(f.digest));
        assert_eq!(e.origin, Some(f.digest));
        assert_eq!(w.entry(&p("f")), None);
        assert_eq!(w.tracked(), 1);
        // An untracked source over a tracked destination: the destination is no longer known.
        w.step(vec![moved(&p("elsewhere"), &p("g"))]);
        assert_eq!(w.entry(&p("g")), None);
        assert_eq!(w.tracked(), 0);
    }

    #[test]
    fn events_of_one_step_see_each_other() {
        let w = world();
        let v = w.version(b"v\n");
        let v2 = w.version(b"v2\n");
        // Read, move and write within one step, as one shell command does.
        w.step(vec![
            read(&p("f"), v),
            moved(&p("f"), &p("g")),
            wrote(&p("g"), v2, Replaced::nothing()),
        ]);
        assert_eq!(w.entry(&p("f")), None);
        let g = w.entry(&p("g")).unwrap();
        assert_eq!(g.seen, Seen::Digest(v2.digest));
        // Where it started is still the read of f: the write changed no origin.
        assert_eq!(g.origin, Some(v.digest));
        assert_eq!(g.moved_from, Some(p("f")));
        assert_eq!(w.tracked(), 1);
        // Written then deleted in one step: nothing left.
        w.step(vec![
            wrote(&p("t"), v, Replaced::nothing()),
            deleted(&p("t")),
        ]);
        assert_eq!(w.entry(&p("t")), None);
        assert_eq!(w.tracked(), 1);
    }
}
