//! Reading the journal: the steps a session recorded, as the library lists them and as plain
//! `git` reads them from the store.

use stella::session::Outcome;

use crate::common::*;

#[test]
fn the_journal_and_plain_git_list_the_same_steps_newest_first() {
    let w = World::new();
    let ctx = w.open();
    let id = ctx.start_session(None).unwrap();
    let session = ctx.session(&id);
    w.write("a.txt", "a\n");
    w.write("b.txt", "b\n");
    session.read(&[p("a.txt"), p("b.txt")]).unwrap();
    done(session.write(&p("a.txt"), b"A\n").unwrap());
    let named = ctx
        .resolve_named(ctx.root(), std::path::Path::new("b.txt"))
        .unwrap();
    done(session.rm(&[named]).unwrap());

    let expected = [
        "rm b.txt",
        "write a.txt",
        "read 2 paths: a.txt, b.txt",
        "session start",
    ];
    let history: Vec<String> = ctx
        .journal()
        .history(&id)
        .unwrap()
        .into_iter()
        .map(|(_, _, summary)| summary)
        .collect();
    assert_eq!(history, expected);
    assert_eq!(w.git_log(&ctx, &id), expected);
    let tip = ctx.journal().tip(&id).unwrap();
    assert_eq!((tip.steps, tip.tracked), (4, 1), "{tip:?}");
    assert_eq!(tip.summary, "rm b.txt");
}

#[test]
fn a_refusal_is_a_step_only_once_the_caller_notes_it() {
    let w = World::new();
    let ctx = w.open();
    let id = ctx.start_session(None).unwrap();
    w.write("f.txt", "seen\n");
    ctx.session(&id).read(&[p("f.txt")]).unwrap();
    w.write("f.txt", "changed\n");
    let steps = ctx.journal().tip(&id).unwrap().steps;

    let Outcome::Refused(checks) = ctx.session(&id).write(&p("f.txt"), b"mine\n").unwrap() else {
        panic!("the write went ahead");
    };
    // The refused write itself records nothing: every front end notes the refusal (the command
    // line and the MCP server both do), and a control plane does the same.
    assert_eq!(ctx.journal().tip(&id).unwrap().steps, steps);
    stella::refusals::note(&ctx.journal(), &id, &checks).unwrap();
    let tip = ctx.journal().tip(&id).unwrap();
    assert_eq!(tip.steps, steps + 1);
    assert_eq!(tip.summary, "refused write f.txt");
    let noted = stella::refusals::read(&ctx.journal(), tip.tree);
    assert_eq!(noted.count, 1);
    assert_eq!(noted.last[0].path, "f.txt");
    assert_eq!(noted.last[0].intent, "write");
    // Noting it changes nothing the session knows: the file is still stale for it.
    refused(ctx.session(&id).write(&p("f.txt"), b"mine\n").unwrap());
}
