//! A session's history as a timeline: each step, oldest first, with what it was, the paths whose
//! entry it changed, what it refused (with the diff the store can still show) and the turn it
//! was in. Read once from the journal; `git stella show` prints it as text or as a page.
//!
//! What a step was comes from its summary, the first line of its commit, which the library wrote
//! (`read a.rs`, `turn begin 1f2e…`); a refusal is recognised as `log --json` recognises it, by the
//! step changing the refusal record. The paths are the map entries the step added, changed or
//! dropped, so a re-read of bytes the session already held names no path (the summary still does).

use std::collections::HashMap;

use gix::ObjectId;

use crate::digest::Digest;
use crate::guard;
use crate::ids::SessionId;
use crate::journal::{self, Entry, Journal, RootFile, Seen, layout};
use crate::paths::RelPath;
use crate::refusals::{self, Record};
use crate::session::turn::ResumePoint;

/// What a step was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `session start`, or a start after the journal was lost.
    Start,
    /// `session end`.
    End,
    /// `read`: the session read the paths.
    Read,
    /// `write` through Stella, or `wrote` after a host's tool wrote.
    Write,
    /// `rm`.
    Delete,
    /// `moved`: a host's tool renamed a path the session tracks.
    Move,
    /// A refused write or delete: the step changed the refusal record.
    Refused,
    /// `turn begin`: the host opened a turn.
    TurnBegin,
    /// `step N of turn …`: a boundary the host marked inside a turn.
    TurnStep,
    /// `turn end`: the host closed the turn.
    TurnEnd,
    /// A command run under the shell guard (`exec …`).
    Command,
    /// The commit an artifact carries, between the steps of the session it was made from and
    /// the first step of the session replayed from it: not a step of either.
    Checkpoint,
    /// The first step of a session replayed from an artifact.
    Replay,
    /// `undo`: the files the session wrote were put back as they were before.
    Undo,
    /// `redo`: an undo right after an undo put back what that undo replaced.
    Redo,
    /// A transcript stored, or where to find it.
    Transcript,
    /// Bytes kept before a change made without reading them.
    Keep,
    /// What a repair of a damaged journal recorded.
    Repair,
    /// A step this version does not name.
    Other,
}

impl Kind {
    /// The step whose summary is `summary` (`refused`: it changed the refusal record).
    fn of(summary: &str, refused: bool) -> Kind {
        if refused {
            return Kind::Refused;
        }
        let verb = |v: &str| {
            summary
                .strip_prefix(v)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', ':']))
        };
        match () {
            _ if verb("session start") => Kind::Start,
            _ if summary == guard::ENDED || summary.starts_with("session end:") => Kind::End,
            _ if verb("read") => Kind::Read,
            _ if verb("write") || verb("wrote") => Kind::Write,
            _ if verb("rm") => Kind::Delete,
            _ if verb("moved") => Kind::Move,
            _ if verb("turn begin") => Kind::TurnBegin,
            _ if verb("turn end") => Kind::TurnEnd,
            _ if summary.starts_with("step ") && summary.contains(" of turn ") => Kind::TurnStep,
            _ if verb("exec") => Kind::Command,
            _ if summary.starts_with("checkpoint of session ") => Kind::Checkpoint,
            _ if summary.starts_with("replay of session ") => Kind::Replay,
            _ if verb("undo") => Kind::Undo,
            _ if verb("redo") => Kind::Redo,
            _ if verb("transcript") || summary == "remember transcript path" => Kind::Transcript,
            _ if summary.starts_with("keep before a blind change") => Kind::Keep,
            _ if verb("repair") => Kind::Repair,
            _ => Kind::Other,
        }
    }

    /// One word or two for people and for CSS classes: `read`, `turn begin`.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Start => "start",
            Kind::End => "end",
            Kind::Read => "read",
            Kind::Write => "write",
            Kind::Delete => "delete",
            Kind::Move => "move",
            Kind::Refused => "refused",
            Kind::TurnBegin => "turn begin",
            Kind::TurnStep => "turn step",
            Kind::TurnEnd => "turn end",
            Kind::Command => "command",
            Kind::Checkpoint => "checkpoint",
            Kind::Replay => "replay",
            Kind::Undo => "undo",
            Kind::Redo => "redo",
            Kind::Transcript => "transcript",
            Kind::Keep => "keep",
            Kind::Repair => "repair",
            Kind::Other => "step",
        }
    }
}

/// What a step did to one path's entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// The session read the bytes there (first sight, or bytes new to it).
    Read,
    /// The session wrote the bytes there.
    Wrote,
    /// The entry was dropped: the file was deleted, or found gone.
    Deleted,
    /// The entry came from `from`, renamed.
    Moved {
        /// The path the entry was at before the rename.
        from: RelPath,
    },
}

impl Change {
    /// `read`, `wrote`, `deleted`, `moved`.
    pub fn label(&self) -> &'static str {
        match self {
            Change::Read => "read",
            Change::Wrote => "wrote",
            Change::Deleted => "deleted",
            Change::Moved { .. } => "moved",
        }
    }
}

/// One path a step changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathChange {
    /// The path, relative to the workspace root.
    pub path: RelPath,
    /// What the step did to its entry.
    pub change: Change,
}

/// One refused write or delete, with what changed.
#[derive(Clone, Debug)]
pub struct Refusal {
    /// The refusal as the session's refusal record holds it.
    pub record: Record,
    /// A unified diff from the bytes the session had seen to the bytes found (a sentence instead
    /// for a binary or large file), as the refusal showed it; `None` when the store does not
    /// hold both (a file found gone or unreadable, or bytes no session of the store ever read).
    pub diff: Option<String>,
}

/// One step of the session.
#[derive(Clone, Debug)]
pub struct Step {
    /// The step's commit in the store.
    pub commit: ObjectId,
    /// When it was recorded: its commit's committer time.
    pub time: gix::date::Time,
    /// The first line of its commit, as `log` shows it.
    pub summary: String,
    /// What it was, read from the summary.
    pub kind: Kind,
    /// The entries it added, changed or dropped, in path order.
    pub paths: Vec<PathChange>,
    /// What it refused (empty unless `kind` is [`Kind::Refused`]).
    pub refused: Vec<Refusal>,
    /// The turn open during the step (for `turn end`, the turn it ended); `Some("")` when the
    /// turn's record cannot be read.
    pub turn: Option<String>,
}

/// The most bytes either side of a refusal may have for its diff to be computed.
const DIFF_MAX_BYTES: u64 = 1 << 20;

/// The steps of session `id`, oldest first. A replayed session's history reaches back into the
/// session it was replayed from, as `log` shows it.
/// With `diffs` false, refusals carry no diff (nothing but the records is read for them).
pub fn of(journal: &Journal<'_>, id: &SessionId, diffs: bool) -> Result<Vec<Step>, journal::Error> {
    let history = journal.history(id)?;
    let trees = history
        .iter()
        .map(|(commit, _, _)| journal.tree_of(*commit))
        .collect::<Result<Vec<_>, _>>()?;
    let maps = history
        .iter()
        .map(|(commit, _, _)| journal.map_of(*commit))
        .collect::<Result<Vec<_>, _>>()?;
    let refused_files = trees
        .iter()
        .map(|t| journal.root_file_id(*t, &refusals::FILE))
        .collect::<Result<Vec<_>, _>>()?;
    let turn_files = trees
        .iter()
        .map(|t| journal.root_file_id(*t, &RootFile::Turn))
        .collect::<Result<Vec<_>, _>>()?;
    let mut turns: HashMap<ObjectId, String> = HashMap::new();
    let mut versions: HashMap<RelPath, Vec<journal::Version>> = HashMap::new();
    let mut steps = Vec::with_capacity(history.len());
    // The step before, in the newest-first lists: a checkpoint's commit is passed over, since
    // its tree is the artifact's, not a step's.
    let mut last: Option<usize> = None;
    // Oldest first.
    for i in (0..history.len()).rev() {
        let (commit, time, summary) = &history[i];
        if Kind::of(summary, false) == Kind::Checkpoint {
            steps.push(Step {
                commit: *commit,
                time: *time,
                summary: summary.clone(),
                kind: Kind::Checkpoint,
                paths: Vec::new(),
                refused: Vec::new(),
                turn: None,
            });
            continue;
        }
        let parent = |list: &[Option<ObjectId>]| last.and_then(|j| list[j]);
        // This step changed the refusal record: it is a refusal (as `log --json` tells).
        let refusal = refused_files[i].is_some() && parent(&refused_files) != refused_files[i];
        let kind = Kind::of(summary, refusal);
        let refused = if refusal {
            refusals::read(journal, trees[i])
                .last
                .into_iter()
                .map(|record| {
                    let diff = match diffs {
                        true => refusal_diff(journal, trees[i], &record, &mut versions)?,
                        false => None,
                    };
                    Ok(Refusal { record, diff })
                })
                .collect::<Result<_, journal::Error>>()?
        } else {
            Vec::new()
        };
        let turn_file = match (turn_files[i], kind) {
            // The step that ended a turn belongs to it.
            (None, Kind::TurnEnd) => parent(&turn_files),
            (file, _) => file,
        };
        let turn = turn_file.map(|blob| {
            turns
                .entry(blob)
                .or_insert_with(|| {
                    journal
                        .blob(blob)
                        .ok()
                        .and_then(|b| layout::parse::<ResumePoint>(&b))
                        .map(|p| p.turn)
                        .unwrap_or_default()
                })
                .clone()
        });
        let paths = path_changes(journal.map_changes(parent(&maps), maps[i])?);
        last = Some(i);
        steps.push(Step {
            commit: *commit,
            time: *time,
            summary: summary.clone(),
            kind,
            paths,
            refused,
            turn,
        });
    }
    Ok(steps)
}

/// The map's changes in one step, as what happened to each path. An entry that appeared with
/// the very state of an entry the same step dropped, and says it was renamed from there (or,
/// back where a chain of renames began, says nothing more), is a move, not a read and a delete.
fn path_changes(changes: Vec<journal::MapChange>) -> Vec<PathChange> {
    let dropped: Vec<&Entry> = changes
        .iter()
        .filter_map(|(had, has)| match (had, has) {
            (Some(e), None) => Some(e),
            _ => None,
        })
        .collect();
    let source_of = |e: &Entry| {
        dropped
            .iter()
            .find(|d| {
                (d.seen, d.origin, d.bytes, d.wrote) == (e.seen, e.origin, e.bytes, e.wrote)
                    && match (&e.moved_from, &d.moved_from) {
                        (Some(from), _) if *from == d.path => true,
                        (Some(from), Some(first)) => from == first,
                        (None, Some(first)) => *first == e.path,
                        _ => false,
                    }
            })
            .map(|d| d.path.clone())
    };
    let sources: Vec<RelPath> = changes
        .iter()
        .filter_map(|(_, has)| source_of(has.as_ref()?))
        .collect();
    let mut out: Vec<PathChange> = changes
        .iter()
        .filter_map(|(had, has)| {
            let (path, change) = match (had, has) {
                (Some(e), None) if sources.contains(&e.path) => return None,
                (Some(e), None) => (&e.path, Change::Deleted),
                (had, Some(e)) => {
                    let change = if let Some(from) = source_of(e) {
                        Change::Moved { from }
                    } else if e.wrote.is_some() && had.as_ref().is_none_or(|h| h.wrote != e.wrote) {
                        Change::Wrote
                    } else {
                        Change::Read
                    };
                    (&e.path, change)
                }
                (None, None) => return None,
            };
            Some(PathChange {
                path: path.clone(),
                change,
            })
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The diff a refusal showed, rebuilt from the store: the bytes the session had seen (its entry
/// in the refusal's step) to the bytes found (any version a session of the store came by with
/// that digest, in `versions`, filled per path as needed).
fn refusal_diff(
    journal: &Journal<'_>,
    tree: ObjectId,
    record: &Record,
    versions: &mut HashMap<RelPath, Vec<journal::Version>>,
) -> Result<Option<String>, journal::Error> {
    // A name that was not UTF-8 is recorded lossily: it cannot be found again.
    let Some(path) = RelPath::from_bytes(record.path.as_bytes())
        .filter(|_| !record.path.contains(char::REPLACEMENT_CHARACTER))
    else {
        return Ok(None);
    };
    let (Some(seen), Some(found)) = (
        record.seen.as_deref().and_then(Digest::from_hex),
        record.found.as_deref().and_then(Digest::from_hex),
    ) else {
        return Ok(None);
    };
    let seen_blob = match journal.lookup_at(tree, &path)? {
        Some(Entry {
            seen: Seen::Digest(d),
            bytes: Some((blob, _)),
            ..
        }) if d == seen => Some(blob),
        _ => None,
    };
    if !versions.contains_key(&path) {
        versions.insert(path.clone(), journal.versions(&path)?);
    }
    let known = &versions[&path];
    let blob_of = |digest: Digest| known.iter().find(|v| v.digest == digest)?.blob;
    let (Some(seen_blob), Some(found_blob)) = (seen_blob.or_else(|| blob_of(seen)), blob_of(found))
    else {
        return Ok(None);
    };
    for (blob, when) in [
        (seen_blob, "when this session saw it"),
        (found_blob, "when found"),
    ] {
        let size = journal.blob_size(blob)?;
        if size > DIFF_MAX_BYTES {
            return Ok(Some(format!(
                "(no diff shown: {path} was {size} bytes {when}, too large to diff here)"
            )));
        }
    }
    let (seen, found) = (journal.blob(seen_blob)?, journal.blob(found_blob)?);
    Ok(Some(guard::unified_diff(&path, &seen, &found, None)))
}

#[cfg(test)]
mod tests {
    //! Steps recorded into a real journal store in a temporary folder: no process, no workspace.
    use super::*;
    use crate::journal::{MapEdit, Step as JournalStep};
    use crate::store::Store;

    fn p(s: &str) -> RelPath {
        RelPath::from_bytes(s.as_bytes()).unwrap()
    }

    fn put(journal: &Journal<'_>, path: &str, bytes: &[u8], wrote: bool) -> MapEdit {
        MapEdit::Put {
            path: p(path),
            seen: Seen::Digest(Digest::of(bytes)),
            bytes: Some((journal.write_blob(bytes).unwrap(), false)),
            first_origin: Some(Digest::of(bytes)),
            wrote,
            origin_bytes: None,
        }
    }

    #[test]
    fn kinds_are_read_from_the_summaries_the_library_writes() {
        for (summary, kind) in [
            ("session start", Kind::Start),
            (crate::session::FORGOT_ALL, Kind::Start),
            ("session end", Kind::End),
            ("read a.rs", Kind::Read),
            ("read 3 paths: a, b, c", Kind::Read),
            ("write a.rs", Kind::Write),
            ("wrote a.rs", Kind::Write),
            ("rm a.rs", Kind::Delete),
            ("moved 2 paths: a, b", Kind::Move),
            ("turn begin 1a2b", Kind::TurnBegin),
            ("turn begin 3c (ended open turn 1a2b)", Kind::TurnBegin),
            ("step 2 of turn 1a2b: tests pass", Kind::TurnStep),
            ("turn end 1a2b", Kind::TurnEnd),
            ("exec make (3 read, 1 changed)", Kind::Command),
            ("checkpoint of session a", Kind::Checkpoint),
            (
                "replay of session a from artifact 0123456789ab",
                Kind::Replay,
            ),
            ("undo a.rs", Kind::Undo),
            ("transcript main", Kind::Transcript),
            ("keep before a blind change: a.rs", Kind::Keep),
            ("repair: forgot every file", Kind::Repair),
            ("reader.rs", Kind::Other),
        ] {
            assert_eq!(Kind::of(summary, false), kind, "{summary}");
        }
        assert_eq!(Kind::of("refused write a.rs", true), Kind::Refused);
    }

    #[test]
    fn each_step_names_what_it_did_to_each_path_and_the_turn_it_was_in() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open_or_init(&tmp.path().join("store")).unwrap();
        let journal = Journal::new(&store);
        let id = SessionId::parse("s").unwrap();
        let file = layout::SessionFile {
            id: id.to_string(),
            ..Default::default()
        };
        let start = JournalStep {
            summary: "session start".into(),
            ..Default::default()
        };
        journal.start(&id, &file, None, &start).unwrap();
        let record = |summary: &str, map: Vec<MapEdit>, root| {
            let step = JournalStep {
                summary: summary.into(),
                map,
                root,
            };
            journal.record(&id, &step).unwrap();
        };
        let point = ResumePoint {
            turn: "t1".into(),
            started: "2026-01-01T00:00:00+00:00".into(),
            steps: 0,
            note: None,
            updated: "2026-01-01T00:00:00+00:00".into(),
        };
        let turn = journal.toml_edit(RootFile::Turn, &point).unwrap();
        record("turn begin t1", Vec::new(), vec![turn]);
        let reads = vec![
            put(&journal, "a", b"one\n", false),
            put(&journal, "b", b"b\n", false),
        ];
        record("read 2 paths: a, b", reads, Vec::new());
        record(
            "write a",
            vec![put(&journal, "a", b"two\n", true)],
            Vec::new(),
        );
        record(
            "moved b",
            vec![MapEdit::Move {
                from: p("b"),
                to: p("c"),
            }],
            Vec::new(),
        );
        record("rm c", vec![MapEdit::Remove { path: p("c") }], Vec::new());
        let tip = journal.tip(&id).unwrap();
        let refused = Record {
            intent: "write".into(),
            path: "a".into(),
            seen: Some(Digest::of(b"two\n").to_hex()),
            found: Some(Digest::of(b"three\n").to_hex()),
            writer: None,
            writer_at: None,
        };
        let edit = refusals::edit(&journal, tip.tree, vec![refused.clone()]).unwrap();
        record("refused write a", Vec::new(), vec![edit]);
        let end = journal::RootEdit::Remove {
            file: RootFile::Turn,
        };
        record("turn end t1", Vec::new(), vec![end]);

        let steps = of(&journal, &id, true).unwrap();
        let kinds: Vec<Kind> = steps.iter().map(|s| s.kind).collect();
        use Kind::*;
        assert_eq!(
            kinds,
            [
                Start, TurnBegin, Read, Write, Move, Delete, Refused, TurnEnd
            ]
        );
        let changes = |i: usize| -> Vec<(String, Change)> {
            steps[i]
                .paths
                .iter()
                .map(|c| (c.path.to_string(), c.change.clone()))
                .collect()
        };
        assert_eq!(
            changes(2),
            [("a".into(), Change::Read), ("b".into(), Change::Read)]
        );
        assert_eq!(changes(3), [("a".into(), Change::Wrote)]);
        assert_eq!(changes(4), [("c".into(), Change::Moved { from: p("b") })]);
        assert_eq!(changes(5), [("c".into(), Change::Deleted)]);
        assert!(changes(6).is_empty() && changes(7).is_empty());
        let turns: Vec<Option<&str>> = steps.iter().map(|s| s.turn.as_deref()).collect();
        let t = Some("t1");
        assert_eq!(turns, [None, t, t, t, t, t, t, t]);
        // The bytes found were never in the store: the refusal is shown without a diff.
        assert_eq!(steps[6].refused.len(), 1);
        assert_eq!(steps[6].refused[0].record, refused);
        assert_eq!(steps[6].refused[0].diff, None);
        // Once a session has read them, the diff can be shown.
        record(
            "read a",
            vec![put(&journal, "a", b"three\n", false)],
            Vec::new(),
        );
        let steps = of(&journal, &id, true).unwrap();
        assert_eq!(
            steps[6].refused[0].diff.as_deref(),
            Some("--- a (seen by this session)\n+++ a (on disk now)\n@@ -1 +1 @@\n-two\n+three")
        );
        assert_eq!(steps[8].turn, None);
    }
}
