//! Sessions: what a read remembers, that each session remembers only its own reads, and that
//! the memory outlives the `Context` (the process) that recorded it.

use stella::digest::Digest;
use stella::guard::{Allow, Conflict, Intent, Verdict};
use stella::ids::SessionId;
use stella::journal::Seen;
use stella::session::{Error, Freshness};

use crate::common::*;

#[test]
fn a_read_records_the_digest_and_bytes_on_disk_and_status_shows_the_file_unchanged() {
    let w = World::new();
    let ctx = w.open();
    let id = ctx.start_session(None).unwrap();
    w.write("notes.txt", "alpha\n");
    let tip = ctx.session(&id).read(&[p("notes.txt")]).unwrap();
    assert_eq!((tip.steps, tip.tracked), (2, 1), "{tip:?}");
    assert_eq!(tip.summary, "read notes.txt");

    let entry = ctx.journal().lookup(&id, &p("notes.txt")).unwrap().unwrap();
    assert_eq!(entry.seen, Seen::Digest(Digest::of(b"alpha\n")));
    assert_eq!(entry.wrote, None, "a read is not the session's own write");
    let (blob, exec) = entry.bytes.expect("a read keeps the bytes it saw");
    assert_eq!(ctx.journal().blob(blob).unwrap(), b"alpha\n");
    assert!(!exec);

    let status = ctx.session(&id).status().unwrap();
    assert_eq!(status.len(), 1);
    assert_eq!(status[0].0.path, p("notes.txt"));
    assert_eq!(status[0].1, Freshness::Fresh);
    // Another party's edit and delete show up as the session's view of the file going stale.
    w.write("notes.txt", "beta\n");
    assert_eq!(ctx.session(&id).status().unwrap()[0].1, Freshness::Changed);
    std::fs::remove_file(w.repo.join("notes.txt")).unwrap();
    assert_eq!(ctx.session(&id).status().unwrap()[0].1, Freshness::Gone);
}

#[test]
fn a_read_of_a_missing_file_is_an_error_and_records_nothing() {
    let w = World::new();
    let ctx = w.open();
    let id = ctx.start_session(None).unwrap();
    w.write("here.txt", "here\n");
    let err = ctx
        .session(&id)
        .read(&[p("here.txt"), p("absent.txt")])
        .unwrap_err();
    match &err {
        Error::Unreadable(failed) => {
            let paths: Vec<String> = failed.iter().map(|(p, _)| p.to_string()).collect();
            assert_eq!(paths, ["absent.txt"]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.to_string(), "could not read 'absent.txt'");
    // One call is one step, whole or not at all: the readable path is not recorded either.
    let tip = ctx.journal().tip(&id).unwrap();
    assert_eq!((tip.steps, tip.tracked), (1, 0), "{tip:?}");
}

#[test]
fn two_sessions_remember_only_what_each_read() {
    let w = World::new();
    let ctx = w.open();
    let a = ctx
        .start_session(Some(SessionId::parse("agent-a").unwrap()))
        .unwrap();
    let b = ctx
        .start_session(Some(SessionId::parse("agent-b").unwrap()))
        .unwrap();
    w.write("a.txt", "for a\n");
    w.write("b.txt", "for b\n");
    ctx.session(&a).read(&[p("a.txt")]).unwrap();
    ctx.session(&b).read(&[p("b.txt")]).unwrap();

    let tracked = |id| -> Vec<String> {
        let status = ctx.session(id).status().unwrap();
        status.iter().map(|(e, _)| e.path.to_string()).collect()
    };
    assert_eq!(tracked(&a), ["a.txt"]);
    assert_eq!(tracked(&b), ["b.txt"]);

    // A person edits a.txt: stale for the session that read it, nothing to b, which never did.
    w.write("a.txt", "a person's edit\n");
    let write = Intent::Write { content: None };
    let of_a = ctx.session(&a).guard(&[p("a.txt")], write).unwrap();
    let of_b = ctx.session(&b).guard(&[p("a.txt")], write).unwrap();
    assert_eq!(of_a[0].verdict, Verdict::Refuse(Conflict::Changed));
    assert_eq!(of_b[0].verdict, Verdict::Allow(Allow::Untracked));

    let mut listed: Vec<String> = ctx
        .journal()
        .sessions()
        .unwrap()
        .into_iter()
        .map(|(id, _)| id.to_string())
        .collect();
    listed.sort();
    assert_eq!(listed, ["agent-a", "agent-b"]);
}

#[test]
fn a_session_id_is_started_once_and_an_unknown_one_is_an_error_not_an_empty_memory() {
    let w = World::new();
    let ctx = w.open();
    let id = SessionId::parse("agent-1").unwrap();
    ctx.start_session(Some(id.clone())).unwrap();
    let again = ctx.start_session(Some(id.clone())).unwrap_err();
    assert_eq!(
        again.to_string(),
        "a session 'agent-1' already exists in this workspace"
    );

    w.write("f.txt", "x\n");
    let unknown = SessionId::parse("never-started").unwrap();
    let err = ctx.session(&unknown).read(&[p("f.txt")]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no session 'never-started' in this workspace"
    );
    let err = ctx
        .session(&unknown)
        .write(&p("f.txt"), b"y\n")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no session 'never-started' in this workspace"
    );
    assert_eq!(w.read("f.txt"), "x\n", "nothing was written");
}

#[test]
fn a_session_reopened_from_a_fresh_context_still_guards_what_it_read() {
    let w = World::new();
    w.write("src/lib.rs", "fn main() {}\n");
    let id = {
        let first = w.open();
        let id = first.start_session(None).unwrap();
        first.session(&id).read(&[p("src/lib.rs")]).unwrap();
        id
        // The first process's handles end here.
    };
    w.write("src/lib.rs", "fn main() { their_edit(); }\n");

    // A new process, opened from a folder inside the repository, finds the same workspace and
    // the same memory.
    let second = w.open_in(&w.repo.join("src"));
    assert_eq!(second.root(), w.repo);
    let checks = refused(
        second
            .session(&id)
            .write(&p("src/lib.rs"), b"mine\n")
            .unwrap(),
    );
    assert_eq!(checks[0].path, p("src/lib.rs"));
    assert_eq!(checks[0].verdict, Verdict::Refuse(Conflict::Changed));
    assert_eq!(w.read("src/lib.rs"), "fn main() { their_edit(); }\n");
    // Plain git reads the steps from the store on disk.
    assert_eq!(
        w.git_log(&second, &id),
        ["read src/lib.rs", "session start"]
    );
}
