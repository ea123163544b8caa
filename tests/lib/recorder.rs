//! The recorder: a change made outside Stella (by a host's own tool, by a shell command), stated
//! in the recorder's words ([`stella::session::record`]) and recorded as one step of the session; the
//! journal then shows what the session knows.

use stella::digest::Digest;
use stella::guard::{Allow, Conflict, Intent, Verdict};
use stella::journal::Seen;
use stella::session::record::{self, Replaced, Version};
use stella::session::{Context, Freshness};

use crate::common::*;

/// The paths session `id` tracks, as the journal lists them.
fn tracked(ctx: &Context, id: &stella::ids::SessionId) -> Vec<String> {
    let entries = ctx.journal().entries(id).unwrap();
    let mut paths: Vec<String> = entries.iter().map(|e| e.path.to_string()).collect();
    paths.sort();
    paths
}

#[test]
fn a_write_made_outside_stella_and_recorded_is_tracked_as_the_sessions_own() {
    let w = World::new();
    let ctx = w.open();
    let id = ctx.start_session(None).unwrap();
    // The host's tool created the file; the recorder is told what it wrote.
    w.write("gen.rs", "// generated\n");
    let blob = ctx.journal().write_blob(b"// generated\n").unwrap();
    let version = Version::kept(Digest::of(b"// generated\n"), blob, false);
    let edit = record::wrote(&p("gen.rs"), version, Replaced::nothing());
    let tip = ctx
        .session(&id)
        .record("wrote", &[p("gen.rs")], vec![edit], Vec::new())
        .unwrap();
    assert_eq!(tip.summary, "wrote gen.rs");

    assert_eq!(tracked(&ctx, &id), ["gen.rs"]);
    let entry = ctx.journal().lookup(&id, &p("gen.rs")).unwrap().unwrap();
    assert_eq!(entry.seen, Seen::Digest(Digest::of(b"// generated\n")));
    assert!(entry.wrote.is_some());
    assert_eq!(entry.origin, None, "the session created it");
    // From now on the file is guarded like one it read.
    w.write("gen.rs", "// hand-edited\n");
    let checks = ctx.session(&id).write(&p("gen.rs"), b"// again\n").unwrap();
    assert_eq!(
        refused(checks)[0].verdict,
        Verdict::Refuse(Conflict::Changed)
    );
}

#[test]
fn a_write_recorded_with_the_bytes_meant_never_absorbs_a_later_edit() {
    let w = World::new();
    let ctx = w.open();
    let id = ctx.start_session(None).unwrap();
    // The session's tool wrote "mine"; someone changed it before the record came in.
    w.write("f.txt", "theirs\n");
    let (_, not_absorbed) = ctx
        .session(&id)
        .wrote(&[p("f.txt")], Some(b"mine\n"))
        .unwrap();
    assert_eq!(not_absorbed.len(), 1);
    assert_eq!(not_absorbed[0].path, p("f.txt"));
    let entry = ctx.journal().lookup(&id, &p("f.txt")).unwrap().unwrap();
    assert_eq!(entry.seen, Seen::Digest(Digest::of(b"mine\n")));
    assert_eq!(ctx.session(&id).status().unwrap()[0].1, Freshness::Changed);
    refused(ctx.session(&id).write(&p("f.txt"), b"next\n").unwrap());
    assert_eq!(w.read("f.txt"), "theirs\n");
}

#[test]
fn a_rename_moves_what_the_session_knew_to_the_new_path_and_the_old_path_is_gone() {
    let w = World::new();
    let ctx = w.open();
    let id = ctx.start_session(None).unwrap();
    w.write("a.txt", "as read\n");
    ctx.session(&id).read(&[p("a.txt")]).unwrap();
    std::fs::rename(w.repo.join("a.txt"), w.repo.join("b.txt")).unwrap();
    let edit = record::moved(&p("a.txt"), &p("b.txt"));
    ctx.session(&id)
        .record("moved", &[p("a.txt"), p("b.txt")], vec![edit], Vec::new())
        .unwrap();

    assert_eq!(tracked(&ctx, &id), ["b.txt"]);
    assert_eq!(ctx.journal().lookup(&id, &p("a.txt")).unwrap(), None);
    let b = ctx.journal().lookup(&id, &p("b.txt")).unwrap().unwrap();
    assert_eq!(b.seen, Seen::Digest(Digest::of(b"as read\n")));
    assert_eq!(b.moved_from, Some(p("a.txt")));
    assert_eq!(ctx.session(&id).status().unwrap()[0].1, Freshness::Fresh);
    // The destination is guarded as the source was; a new file at the old name is not.
    w.write("b.txt", "edited under its new name\n");
    let checks = refused(ctx.session(&id).write(&p("b.txt"), b"mine\n").unwrap());
    assert_eq!(checks[0].path, p("b.txt"));
    let write = Intent::Write { content: None };
    w.write("a.txt", "a new file\n");
    let checks = ctx.session(&id).guard(&[p("a.txt")], write).unwrap();
    assert_eq!(checks[0].verdict, Verdict::Allow(Allow::Untracked));
}

#[test]
fn a_delete_made_outside_stella_and_recorded_drops_the_path_so_a_re_create_goes_ahead() {
    let w = World::new();
    let ctx = w.open();
    let id = ctx.start_session(None).unwrap();
    w.write("tmp.log", "log\n");
    ctx.session(&id).read(&[p("tmp.log")]).unwrap();
    std::fs::remove_file(w.repo.join("tmp.log")).unwrap();
    // Not yet told: to the session the file was removed under it.
    let write = Intent::Write { content: None };
    let before = ctx.session(&id).guard(&[p("tmp.log")], write).unwrap();
    assert_eq!(before[0].verdict, Verdict::Refuse(Conflict::Deleted));

    let edit = record::deleted(&p("tmp.log"));
    let tip = ctx
        .session(&id)
        .record("deleted", &[p("tmp.log")], vec![edit], Vec::new())
        .unwrap();
    assert_eq!(tip.tracked, 0);
    assert!(tracked(&ctx, &id).is_empty());
    let after = ctx.session(&id).guard(&[p("tmp.log")], write).unwrap();
    assert_eq!(after[0].verdict, Verdict::Allow(Allow::Untracked));
    done(ctx.session(&id).write(&p("tmp.log"), b"new log\n").unwrap());
}

#[test]
fn a_write_a_rename_and_a_delete_recorded_together_land_as_one_step() {
    let w = World::new();
    let ctx = w.open();
    let id = ctx.start_session(None).unwrap();
    w.write("keep.txt", "keep\n");
    w.write("old.txt", "old\n");
    w.write("drop.txt", "drop\n");
    let session = ctx.session(&id);
    session
        .read(&[p("keep.txt"), p("old.txt"), p("drop.txt")])
        .unwrap();
    let steps = ctx.journal().tip(&id).unwrap().steps;

    // One shell command: it rewrote keep.txt, renamed old.txt and removed drop.txt.
    w.write("keep.txt", "kept\n");
    std::fs::rename(w.repo.join("old.txt"), w.repo.join("new.txt")).unwrap();
    std::fs::remove_file(w.repo.join("drop.txt")).unwrap();
    let blob = ctx.journal().write_blob(b"kept\n").unwrap();
    let edits = vec![
        record::wrote(
            &p("keep.txt"),
            Version::kept(Digest::of(b"kept\n"), blob, false),
            Replaced::nothing(),
        ),
        record::moved(&p("old.txt"), &p("new.txt")),
        record::deleted(&p("drop.txt")),
    ];
    let paths = [p("keep.txt"), p("old.txt"), p("new.txt"), p("drop.txt")];
    let tip = session.record("ran", &paths, edits, Vec::new()).unwrap();
    assert_eq!(tip.steps, steps + 1);
    assert_eq!(tracked(&ctx, &id), ["keep.txt", "new.txt"]);
    let status = session.status().unwrap();
    assert!(
        status.iter().all(|(_, f)| *f == Freshness::Fresh),
        "{status:?}"
    );
    assert_eq!(
        w.git_log(&ctx, &id)[0],
        "ran 4 paths: keep.txt, old.txt, new.txt, drop.txt"
    );
}
