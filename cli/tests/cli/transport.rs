//! An artifact through any transport: pushed and fetched with stock git, bundled again by stock
//! git in its own order, replayed from the fetched ref; damaged on the way (truncated, a byte
//! flipped) and refused as corrupt before any verdict; in another format, refused by name
//! however it was packed.
//!
//! Not per command: each checks an artifact that every command reading one (`inspect`, `verify`,
//! `replay`) takes alike, however it travelled.

use std::path::{Path, PathBuf};

use crate::common::*;

/// The files the session leaves, as it last saw them.
const WORK: [(&str, &str); 3] = [
    ("src/lib.rs", "pub fn one() { two() }\n"),
    ("src/new.rs", "pub fn two() {}\n"),
    ("notes.txt", "alpha\nbeta\n"),
];

/// Give `w`'s tree the session's bytes, so apply finds a matching fingerprint.
fn match_the_session(w: &World) {
    for (path, bytes) in WORK {
        w.write(path, bytes);
    }
}

/// The stock git path: fetch the checkpoint ref out of the artifact into A's repository, push it
/// to a bare repository, fetch it into B (a clone of A). Returns the ref's name.
fn push_and_fetch(a: &World, b: &World, s: &str, artifact: &Path) -> String {
    let name = format!("refs/stella/checkpoints/{s}");
    let refspec = format!("{name}:{name}");
    a.git(&["fetch", "-q", artifact.to_str().unwrap(), &refspec]);
    let bare = a.base().join("transport.git");
    git_in(
        &a.base(),
        &a.home,
        &["init", "-q", "--bare", bare.to_str().unwrap()],
    );
    a.git(&["push", "-q", bare.to_str().unwrap(), &name]);
    b.git(&["fetch", "-q", bare.to_str().unwrap(), &refspec]);
    name
}

/// `git bundle create` of `name` in `w`'s repository: stock git's own order.
fn rebundle(w: &World, name: &str) -> PathBuf {
    let path = w.base().join("rebundled.bundle");
    w.git(&["bundle", "create", "-q", path.to_str().unwrap(), name]);
    let bytes = std::fs::read(&path).unwrap();
    let streamed = stella::artifact::read_head(&bytes[..]).unwrap_err();
    assert_eq!(
        streamed.to_string(),
        "not a Stella artifact: its pack does not start with the artifact's head; read it from a file, which is indexed whole",
        "stock git's order differs from Stella's, or this test proves nothing"
    );
    path
}

fn sessions(w: &World) -> Vec<String> {
    w.ok(&["session", "list"])
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Replay `artifact` (a path or a ref) with `flags` in `w` and check the new session: its
/// staleness map holds the session's files, and its history reaches the artifact's session.
fn replays(w: &World, flags: &[&str], artifact: &str, s: &str) {
    let mut args = vec!["replay"];
    args.extend_from_slice(flags);
    args.push(artifact);
    let out = w.run(&args);
    assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
    let n = stdout(&out).trim().to_owned();
    for (path, bytes) in WORK {
        assert_eq!(w.read(path), bytes, "{args:?}");
    }
    // The guard protects the session's files at once.
    w.write("src/lib.rs", "someone else\n");
    let out = w.run_stdin(&["--session", &n, "write", "src/lib.rs"], b"blind\n");
    assert_eq!(code(&out), 1, "{args:?}: {}", stderr(&out));
    assert!(stderr(&out).starts_with("refusing to write: src/lib.rs\n"));
    w.write("src/lib.rs", WORK[0].1);
    let log = w.ok(&["log", &n]);
    assert!(
        log.contains(&format!("replay of session {s} from artifact ")),
        "{log}"
    );
    assert!(log.contains(&format!("checkpoint of session {s}")), "{log}");
}

#[test]
fn a_checkpoint_pushed_fetched_and_bundled_again_by_stock_git_replays() {
    let a = World::new();
    let (s, artifact) = session_with_work(&a);
    let b = World::clone_of(&a);
    let name = push_and_fetch(&a, &b, &s, &artifact);
    let rebundled = rebundle(&b, &name);
    let file = rebundled.to_str().unwrap();

    let shown = b.ok(&["inspect", file]);
    assert!(
        shown.starts_with(&format!("format      1\nsession     {s}\n")),
        "{shown}"
    );
    // Stella's own order is read in one pass, without git; stock git's order needs git to index
    // it: with no git on PATH the one is read and the other is not.
    let no_git = b.base().join("no-git");
    std::fs::create_dir_all(&no_git).unwrap();
    let inspect_without_git = |artifact: &Path| {
        b.stella()
            .env("PATH", &no_git)
            .args(["inspect", artifact.to_str().unwrap()])
            .output()
            .unwrap()
    };
    assert_eq!(code(&inspect_without_git(&artifact)), 0);
    assert_eq!(code(&inspect_without_git(&rebundled)), 2);
    // A bundle of several refs, one of them the checkpoint.
    let both = b.base().join("both.bundle");
    b.git(&[
        "bundle",
        "create",
        "-q",
        both.to_str().unwrap(),
        "main",
        &name,
    ]);
    assert!(b.ok(&["inspect", both.to_str().unwrap()]).contains(&s));
    let out = b.run(&["verify", file]);
    assert_eq!(code(&out), 1, "B is at the base: {}", stderr(&out));

    // Materialize in a clone at the base; apply in a clone whose tree holds the session's bytes.
    let c = World::clone_of(&a);
    replays(&c, &["--materialize"], file, &s);
    let d = World::clone_of(&a);
    match_the_session(&d);
    assert_eq!(d.ok(&["verify", file]), "3 files match");
    replays(&d, &[], file, &s);
}

#[test]
fn a_checkpoint_ref_fetched_with_stock_git_replays_straight_from_the_ref() {
    let a = World::new();
    let (s, artifact) = session_with_work(&a);
    let b = World::clone_of(&a);
    let name = push_and_fetch(&a, &b, &s, &artifact);
    assert!(!b.repo.join(&name).exists());

    let shown = b.ok(&["inspect", &name]);
    assert!(
        shown.starts_with(&format!("format      1\nsession     {s}\n")),
        "{shown}"
    );
    replays(&b, &["--materialize"], &name, &s);
    assert_eq!(b.ok(&["verify", &name]), "3 files match");

    let c = World::clone_of(&a);
    let bare = a.base().join("transport.git");
    c.git(&[
        "fetch",
        "-q",
        bare.to_str().unwrap(),
        &format!("{name}:{name}"),
    ]);
    match_the_session(&c);
    replays(&c, &[], &name, &s);
    // Run from a folder below the root, the ref is still the repository's.
    let sub = c.repo.join("src");
    let out = c.stella_in(&sub).args(["verify", &name]).output().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn an_artifact_through_a_pipe_is_read_whatever_its_order() {
    let a = World::new();
    let (s, artifact) = session_with_work(&a);
    let b = World::clone_of(&a);
    let name = push_and_fetch(&a, &b, &s, &artifact);
    let rebundled = std::fs::read(rebundle(&b, &name)).unwrap();
    let mut inspect = b.stella();
    inspect.args(["inspect", "/dev/stdin"]);
    let out = feed(inspect, &rebundled);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains(&format!("session     {s}\n")));
    // As `ssh host cat agent.bundle | git stella replay --materialize /dev/stdin` would.
    let mut replay = b.stella();
    replay.args(["replay", "--materialize", "/dev/stdin"]);
    let out = feed(replay, &std::fs::read(&artifact).unwrap());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    for (path, bytes) in WORK {
        assert_eq!(b.read(path), bytes);
    }
    // Damage through a pipe is damage.
    let mut verify = b.stella();
    verify.args(["verify", "/dev/stdin"]);
    let out = feed(verify, &rebundled[..rebundled.len() - 1]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).starts_with("error: the artifact is corrupt or truncated: "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_ref_is_named_only_where_no_file_has_that_name() {
    let a = World::new();
    let (s, artifact) = session_with_work(&a);
    let name = format!("refs/stella/checkpoints/{s}");
    // Not fetched: no such ref here.
    let out = a.run(&["inspect", &name]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        format!(
            "error: no checkpoint ref '{name}' in this repository\nhint: fetch it first: git fetch <remote> {name}:{name}\n"
        )
    );
    // A file of that spelling wins over the ref.
    let file = a.repo.join(&name);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, b"not a bundle").unwrap();
    let out = a.run(&["inspect", &name]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: not a Stella artifact: it is not a git bundle\n"
    );
    std::fs::copy(&artifact, &file).unwrap();
    assert!(a.ok(&["inspect", &name]).contains(&s));
    // Anything else that does not exist is a missing file, as before.
    let out = a.run(&["inspect", "refs/heads/main"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).starts_with("error: could not read the artifact\n"));
}

/// The places a command can run: A, where the session was made and whose store already holds
/// every object of the artifact; B, a clone whose tree holds the session's bytes (so only the
/// damage can stop a replay) and whose store holds none of them; C, a clone at the base, where
/// an intact artifact does not match (so a fingerprint verdict would say so).
struct Places {
    a: World,
    b: World,
    c: World,
    /// Stella's own artifact, and the same checkpoint bundled by stock git.
    artifacts: Vec<(&'static str, Vec<u8>)>,
}

fn places() -> Places {
    let a = World::new();
    let (s, artifact) = session_with_work(&a);
    let b = World::clone_of(&a);
    match_the_session(&b);
    let name = push_and_fetch(&a, &b, &s, &artifact);
    let rebundled = rebundle(&b, &name);
    // B keeps no trace of the ref: its store and repository start without the objects.
    b.git(&["update-ref", "-d", &name]);
    b.git(&["reflog", "expire", "--expire=now", "--all"]);
    b.git(&["gc", "-q", "--prune=now"]);
    assert!(
        !std::process::Command::new("git")
            .args(["-C", b.repo.to_str().unwrap(), "cat-file", "-e"])
            .arg(a.git(&["rev-parse", &name]))
            .status()
            .unwrap()
            .success()
    );
    let c = World::clone_of(&a);
    Places {
        c,
        artifacts: vec![
            ("written by stella", std::fs::read(&artifact).unwrap()),
            ("bundled by stock git", std::fs::read(&rebundled).unwrap()),
        ],
        a,
        b,
    }
}

/// Where the pack starts in a bundle.
fn pack_start(bundle: &[u8]) -> usize {
    bundle.windows(6).position(|w| w == b"\n\nPACK").unwrap() + 2
}

/// Every command on `damaged` in both places: exit 2, a message that says corrupt or truncated
/// and what failed, never a fingerprint verdict; no session, no file written, nothing imported.
fn refused_as_corrupt(p: &Places, what: &str, damaged: &[u8]) {
    for (place, w) in [
        ("A (store holds its objects)", &p.a),
        ("B (fresh store)", &p.b),
        ("C (tree at the base)", &p.c),
    ] {
        let file = w.base().join("damaged.bundle");
        std::fs::write(&file, damaged).unwrap();
        let file = file.to_str().unwrap();
        let before_sessions = sessions(w);
        let before_tree = listing(&w.repo);
        let before_objects = w.store_git(&["count-objects", "-v"]);
        for args in [
            &["inspect", file][..],
            &["verify", file],
            &["replay", file],
            &["replay", "--ignore-fingerprint", file],
            &["replay", "--materialize", file],
        ] {
            let out = w.run(args);
            let said = stderr(&out);
            let cell = format!("{what}, {place}, {args:?}: {said}");
            assert_eq!(code(&out), 2, "{cell}");
            assert!(
                said.starts_with("error: the artifact is corrupt or truncated: "),
                "{cell}"
            );
            let why = said.lines().next().unwrap();
            assert!(
                why.len() > "error: the artifact is corrupt or truncated: ".len() + 10,
                "it names what failed: {cell}"
            );
            assert!(!said.contains("does not match"), "{cell}");
            assert_eq!(stdout(&out), "", "{cell}");
        }
        assert_eq!(sessions(w), before_sessions, "{what}, {place}: a session");
        assert_eq!(listing(&w.repo), before_tree, "{what}, {place}: a file");
        assert_eq!(
            w.store_git(&["count-objects", "-v"]),
            before_objects,
            "{what}, {place}: objects imported"
        );
    }
}

/// The undamaged artifacts pass every command in both places: the damage alone is refused.
fn intact_ones_pass(p: &Places) {
    for (how, bytes) in &p.artifacts {
        for w in [&p.a, &p.b] {
            let file = w.base().join("intact.bundle");
            std::fs::write(&file, bytes).unwrap();
            let file = file.to_str().unwrap();
            w.ok(&["inspect", file]);
            assert_eq!(w.ok(&["verify", file]), "3 files match", "{how}");
            w.ok(&["replay", file]);
            w.ok(&["replay", "--ignore-fingerprint", file]);
        }
        // In C the intact artifact gets a verdict: the damaged one above got none.
        let file = p.c.base().join("intact.bundle");
        std::fs::write(&file, bytes).unwrap();
        let out = p.c.run(&["verify", file.to_str().unwrap()]);
        assert_eq!(code(&out), 1, "{how}: {}", stderr(&out));
        assert!(stderr(&out).starts_with("the artifact does not match this tree"));
    }
}

#[test]
fn a_truncated_artifact_is_corrupt_for_every_command() {
    let p = places();
    for (how, good) in &p.artifacts {
        let pack = pack_start(good);
        let len = good.len();
        for cut in [
            pack - 1,
            pack + 6,
            pack + 12,
            pack + 60,
            len / 2,
            len - 21,
            len - 20,
            len - 1,
        ] {
            refused_as_corrupt(&p, &format!("{how}, cut at {cut} of {len}"), &good[..cut]);
        }
    }
    intact_ones_pass(&p);
}

#[test]
fn a_flipped_byte_in_the_pack_is_corrupt_for_every_command() {
    let p = places();
    for (how, good) in &p.artifacts {
        let pack = pack_start(good);
        let len = good.len();
        // The first object's data, one in the middle, the last object's, the checksum itself.
        for at in [pack + 20, pack + (len - pack) / 2, len - 22, len - 1] {
            let mut damaged = good.clone();
            damaged[at] ^= 0x04;
            refused_as_corrupt(&p, &format!("{how}, byte {at} of {len} flipped"), &damaged);
        }
    }
    intact_ones_pass(&p);
}

#[test]
fn a_flipped_byte_in_the_bundle_header_is_corrupt_for_every_command() {
    let p = places();
    for (how, good) in &p.artifacts {
        // A digit of the tip's id on the ref line: the header no longer names what the pack holds.
        let line = good.iter().position(|b| *b == b'\n').unwrap() + 1;
        for at in [line, line + 17, line + 39] {
            let mut damaged = good.clone();
            damaged[at] = if damaged[at] == b'0' { b'1' } else { b'0' };
            refused_as_corrupt(&p, &format!("{how}, header byte {at} changed"), &damaged);
        }
    }
    intact_ones_pass(&p);
}

/// A checkpoint ref built with plumbing (`hash-object`, `mktree`, `commit-tree`) and bundled by
/// `git bundle create`: a parent commit first, so the pack is in stock git's order.
fn stock_bundle(w: &World, forge: &Forge, tree: &[(&str, &[u8], &str)]) -> PathBuf {
    let parent = forge.commit(&forge.tree(&[("100644", b"journal", &forge.blob(b"steps\n"))]));
    let tree = forge.tree(tree);
    let tip = forge.git_stdin(&["commit-tree", &tree, "-p", &parent, "-m", "forged"], b"");
    let name = format!("refs/stella/checkpoints/forged-{}", rand_suffix());
    forge.git_stdin(&["update-ref", &name, &tip], b"");
    let path = w.base().join(format!("stock-{}.bundle", rand_suffix()));
    forge.git_stdin(
        &["bundle", "create", "-q", path.to_str().unwrap(), &name],
        b"",
    );
    let bytes = std::fs::read(&path).unwrap();
    assert!(
        stella::artifact::read_head(&bytes[..])
            .unwrap_err()
            .to_string()
            .contains("its pack does not start with the artifact's head"),
        "not in stock git's order"
    );
    path
}

#[test]
fn formats_outside_the_window_are_refused_by_name_however_the_bundle_was_packed() {
    let w = World::new();
    let forge = Forge::new(&w);
    let fingerprint = forge.blob(format!("{}  README\n", b3(b"hello\n")).as_bytes());
    let origins = forge.blob(format!("{}  README\n", b3(b"hello\n")).as_bytes());
    let with_manifest = |text: &str| {
        let m = forge.blob(text.as_bytes());
        stock_bundle(
            &w,
            &forge,
            &[
                ("100644", b"fingerprint", &fingerprint),
                ("100644", b"origins", &origins),
                ("100644", b"stella.toml", &m),
            ],
        )
    };
    let mut cases = Vec::new();
    for (format, reader) in [
        ("0", "no version of git-stella reads it"),
        ("2", "a newer git-stella reads it"),
        ("99", "a newer git-stella reads it"),
    ] {
        cases.push((
            with_manifest(&manifest(format)),
            format!(
                "error: this artifact has format {format}; this git-stella reads formats 1–1; {reader}\n"
            ),
        ));
    }
    cases.push((
        with_manifest("format = 1\nsession = [unclosed\n"),
        "error: not a Stella artifact: stella.toml is malformed: ".to_owned(),
    ));
    cases.push((
        with_manifest("session = \"no format\"\n"),
        "error: not a Stella artifact: stella.toml has no integer 'format'\n".to_owned(),
    ));
    cases.push((
        stock_bundle(
            &w,
            &forge,
            &[
                ("100644", b"fingerprint", &fingerprint),
                ("100644", b"origins", &origins),
            ],
        ),
        "error: not a Stella artifact: its tree has no 'stella.toml'\n".to_owned(),
    ));
    // The control: the same bundle with format 1 is read.
    let good = with_manifest(&manifest("1"));
    assert_eq!(w.ok(&["verify", good.to_str().unwrap()]), "1 file matches");

    for (bundle, says) in &cases {
        for args in [
            &["inspect"][..],
            &["verify"],
            &["replay"],
            &["replay", "--ignore-fingerprint"],
            &["replay", "--materialize"],
        ] {
            let mut full = args.to_vec();
            full.push(bundle.to_str().unwrap());
            let out = w.run(&full);
            assert_eq!(code(&out), 2, "{full:?}: {}", stderr(&out));
            if says.ends_with('\n') {
                assert_eq!(stderr(&out), *says, "{full:?}");
            } else {
                assert!(stderr(&out).starts_with(says), "{full:?}: {}", stderr(&out));
            }
        }
    }
    assert_eq!(sessions(&w), Vec::<String>::new());
}
