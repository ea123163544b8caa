//! The guard through the session's writes and deletes: every decision that lets a change go
//! ahead, every refusal, and the message a refusal carries.

use std::path::Path;

use stella::digest::Digest;
use stella::guard::{self, Allow, Conflict, Intent, Verdict};
use stella::journal::Seen;

use crate::common::*;

#[test]
fn a_write_after_someone_elses_edit_is_refused_naming_the_file() {
    let w = World::new();
    let ctx = w.open();
    let id = ctx.start_session(None).unwrap();
    w.write("notes.txt", "alpha\nbeta\ngamma\n");
    ctx.session(&id).read(&[p("notes.txt")]).unwrap();
    w.write("notes.txt", "alpha\nbetamax\ngamma\n");

    let outcome = ctx
        .session(&id)
        .write(&p("notes.txt"), b"alpha\nBETA\ngamma\n");
    let checks = refused(outcome.unwrap());
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0].path, p("notes.txt"));
    assert_eq!(checks[0].verdict, Verdict::Refuse(Conflict::Changed));
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nbetamax\ngamma\n",
        "nothing was written"
    );
    assert_eq!(
        guard::refusal_message(&ctx.journal(), ctx.root(), &checks[0]),
        "refusing to write: notes.txt\n\
         notes.txt changed since this session last read it: another process or a person edited it after this session looked.\n\
         This write would overwrite their work with a plan formed against content that no longer exists.\n\
         Nothing was written. To recover, re-read notes.txt and redo the change against what is there now.\n\
         --- notes.txt (seen by this session)\n\
         +++ notes.txt (on disk now)\n\
         @@ -1,3 +1,3 @@\n\
         \x20alpha\n\
         -beta\n\
         +betamax\n\
         \x20gamma"
    );
    // The recovery the message gives works: re-read, then the write goes ahead.
    ctx.session(&id).read(&[p("notes.txt")]).unwrap();
    done(
        ctx.session(&id)
            .write(&p("notes.txt"), b"alpha\nBETAMAX\ngamma\n")
            .unwrap(),
    );
    assert_eq!(w.read("notes.txt"), "alpha\nBETAMAX\ngamma\n");
}

#[test]
fn a_write_of_a_file_read_and_unchanged_is_allowed_and_becomes_the_sessions_own() {
    let w = World::new();
    let ctx = w.open();
    let id = ctx.start_session(None).unwrap();
    w.write("config.toml", "debug = false\n");
    ctx.session(&id).read(&[p("config.toml")]).unwrap();
    let write = Intent::Write { content: None };
    let checks = ctx.session(&id).guard(&[p("config.toml")], write).unwrap();
    assert_eq!(checks[0].verdict, Verdict::Allow(Allow::Fresh));

    done(
        ctx.session(&id)
            .write(&p("config.toml"), b"debug = true\n")
            .unwrap(),
    );
    assert_eq!(w.read("config.toml"), "debug = true\n");
    let entry = ctx
        .journal()
        .lookup(&id, &p("config.toml"))
        .unwrap()
        .unwrap();
    assert_eq!(entry.seen, Seen::Digest(Digest::of(b"debug = true\n")));
    assert!(entry.wrote.is_some(), "recorded as the session's write");
    // Its own write does not make the file stale for it: the next write goes ahead too.
    done(
        ctx.session(&id)
            .write(&p("config.toml"), b"debug = 1\n")
            .unwrap(),
    );
    assert_eq!(w.read("config.toml"), "debug = 1\n");
}

#[test]
fn a_file_never_read_and_a_new_file_may_be_written() {
    let w = World::new();
    let ctx = w.open();
    let id = ctx.start_session(None).unwrap();
    w.write("other.txt", "someone's\n");
    let write = Intent::Write { content: None };
    let checks = ctx
        .session(&id)
        .guard(&[p("other.txt"), p("new/file.txt")], write)
        .unwrap();
    assert_eq!(checks[0].verdict, Verdict::Allow(Allow::Untracked));
    assert_eq!(checks[1].verdict, Verdict::Allow(Allow::Untracked));
    done(
        ctx.session(&id)
            .write(&p("new/file.txt"), b"created\n")
            .unwrap(),
    );
    assert_eq!(w.read("new/file.txt"), "created\n");
}

#[test]
fn a_delete_of_a_changed_file_is_refused_and_leaves_it_in_place() {
    let w = World::new();
    let ctx = w.open();
    let id = ctx.start_session(None).unwrap();
    w.write("old.rs", "fn old() {}\n");
    ctx.session(&id).read(&[p("old.rs")]).unwrap();
    w.write("old.rs", "fn old() { still_used(); }\n");

    let named = ctx.resolve_named(ctx.root(), Path::new("old.rs")).unwrap();
    let checks = refused(ctx.session(&id).rm(std::slice::from_ref(&named)).unwrap());
    assert_eq!(checks[0].path, p("old.rs"));
    assert_eq!(checks[0].intent, Intent::Delete);
    assert_eq!(checks[0].verdict, Verdict::Refuse(Conflict::Changed));
    assert_eq!(w.read("old.rs"), "fn old() { still_used(); }\n");
    let message = guard::refusal_message(&ctx.journal(), ctx.root(), &checks[0]);
    assert!(
        message.starts_with(
            "refusing to delete: old.rs\n\
             old.rs changed since this session last read it: another process or a person edited it after this session looked.\n\
             Deleting it would overwrite their work with a plan formed against content that no longer exists.\n\
             Nothing was deleted. To recover, re-read old.rs and decide again against what is there now.\n"
        ),
        "{message}"
    );
    // Re-read, the delete goes ahead and the path leaves the session's memory.
    ctx.session(&id).read(&[p("old.rs")]).unwrap();
    done(ctx.session(&id).rm(&[named]).unwrap());
    assert!(!w.exists("old.rs"));
    assert_eq!(ctx.journal().lookup(&id, &p("old.rs")).unwrap(), None);
}

#[test]
fn a_write_of_the_bytes_already_on_disk_is_allowed_even_after_someone_elses_edit() {
    let w = World::new();
    let ctx = w.open();
    let id = ctx.start_session(None).unwrap();
    w.write("version", "1\n");
    ctx.session(&id).read(&[p("version")]).unwrap();
    w.write("version", "2\n");

    // Nothing would be lost: the bytes about to be written are the ones there (If-Match).
    let same = Intent::Write {
        content: Some(Digest::of(b"2\n")),
    };
    let other = Intent::Write {
        content: Some(Digest::of(b"3\n")),
    };
    let session = ctx.session(&id);
    assert_eq!(
        session.guard(&[p("version")], same).unwrap()[0].verdict,
        Verdict::Allow(Allow::SameBytes)
    );
    assert_eq!(
        session.guard(&[p("version")], other).unwrap()[0].verdict,
        Verdict::Refuse(Conflict::Changed)
    );
    refused(session.write(&p("version"), b"3\n").unwrap());
    done(session.write(&p("version"), b"2\n").unwrap());
    assert_eq!(w.read("version"), "2\n");
    // And the session now knows those bytes as its own: a change from them goes ahead.
    done(session.write(&p("version"), b"3\n").unwrap());
    assert_eq!(w.read("version"), "3\n");
}

#[test]
fn a_write_over_a_file_deleted_since_the_read_is_refused_but_its_delete_is_already_done() {
    let w = World::new();
    let ctx = w.open();
    let id = ctx.start_session(None).unwrap();
    w.write("gone.txt", "here\n");
    ctx.session(&id).read(&[p("gone.txt")]).unwrap();
    std::fs::remove_file(w.repo.join("gone.txt")).unwrap();

    let checks = refused(ctx.session(&id).write(&p("gone.txt"), b"back\n").unwrap());
    assert_eq!(checks[0].verdict, Verdict::Refuse(Conflict::Deleted));
    assert!(!w.exists("gone.txt"), "it was not re-created");
    let message = guard::refusal_message(&ctx.journal(), ctx.root(), &checks[0]);
    assert!(
        message.starts_with("refusing to write: gone.txt\ngone.txt was deleted since"),
        "{message}"
    );
    let delete = ctx.session(&id).guard(&[p("gone.txt")], Intent::Delete);
    assert_eq!(
        delete.unwrap()[0].verdict,
        Verdict::Allow(Allow::AlreadyGone)
    );
}

/// A check answers as the write would: while the project's configuration is invalid (which
/// refuses every write, fail-closed), a check is an error, not an "allow"; `compare` still says
/// where the file stands.
#[test]
fn a_check_under_an_invalid_configuration_is_an_error_as_the_write_would_be() {
    let w = World::new();
    let ctx = w.open();
    let id = ctx.start_session(None).unwrap();
    w.write("notes.txt", "alpha\n");
    ctx.session(&id).read(&[p("notes.txt")]).unwrap();
    w.write(".stella/config.toml", "[hooks]\non-error = \"sometimes\"\n");
    let write = Intent::Write { content: None };

    let checked = ctx.session(&id).guard(&[p("notes.txt")], write);
    let err = checked.expect_err("an invalid configuration allows nothing");
    assert!(
        stella::report::Report::of(&err)
            .causes_with_message()
            .join("\n")
            .contains("on-error"),
        "{err}"
    );
    assert!(matches!(
        ctx.session(&id).write(&p("notes.txt"), b"beta\n"),
        Err(stella::session::Error::Config(_))
    ));
    let compared = ctx.session(&id).compare(&[p("notes.txt")], write).unwrap();
    assert_eq!(compared[0].verdict, Verdict::Allow(Allow::Fresh));
    assert_eq!(w.read("notes.txt"), "alpha\n");
}
