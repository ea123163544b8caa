//! Hostile artifacts built with raw git plumbing: every one gets a clear error or a refusal,
//! nothing is written outside the tree, nothing panics; and an artifact whose every string tries
//! to drive the terminal or forge a line reaches no command's output raw.
//!
//! Not per command: each artifact here must be refused, or shown tamed, alike by every command
//! that reads one (`inspect`, `verify`, `replay`, and `session list` and `log` after it); those
//! only `replay` meets are in `replay.rs`.

use serde_json::Value;

use crate::common::*;

#[test]
fn formats_outside_the_window_and_broken_manifests_are_refused() {
    let w = World::new();
    let forge = Forge::new(&w);
    for (format, says) in [
        (
            "0",
            "error: this artifact has format 0; this git-stella reads formats 1–1; no version of git-stella reads it\n",
        ),
        (
            "2",
            "error: this artifact has format 2; this git-stella reads formats 1–1; a newer git-stella reads it\n",
        ),
        (
            "99",
            "error: this artifact has format 99; this git-stella reads formats 1–1; a newer git-stella reads it\n",
        ),
        (
            "\"1\"",
            "error: not a Stella artifact: stella.toml has no integer 'format'\n",
        ),
        (
            "",
            "error: not a Stella artifact: stella.toml is malformed: ",
        ),
    ] {
        let a = forge.artifact(&manifest(format), "", None);
        for cmd in [&["inspect"][..], &["verify"], &["replay"]] {
            refused(&w, cmd, &a, 2, says);
        }
    }
    // No stella.toml at all: git's own bundle of such a commit.
    let (b1, b2, b3_, b4) = (
        forge.blob(b"1"),
        forge.blob(b"2"),
        forge.blob(b"3"),
        forge.blob(b""),
    );
    let tree = forge.tree(&[
        ("100644", b"a", &b1),
        ("100644", b"b", &b2),
        ("100644", b"c", &b3_),
        ("100644", b"fingerprint", &b4),
    ]);
    let tip = forge.commit(&tree);
    forge.git_stdin(&["update-ref", "refs/stella/checkpoints/evil", &tip], b"");
    let a = w.base().join("no-manifest.bundle");
    forge.git_stdin(
        &[
            "bundle",
            "create",
            "-q",
            a.to_str().unwrap(),
            "refs/stella/checkpoints/evil",
        ],
        b"",
    );
    refused(
        &w,
        &["inspect"],
        &a,
        2,
        "error: not a Stella artifact: its tree has no 'stella.toml'\n",
    );
}

#[test]
fn broken_packs_and_random_bytes_are_refused() {
    let w = World::new();
    let s = w.start();
    w.write("f", "content\n");
    w.ok(&["--session", &s, "read", "f"]);
    let good = std::fs::read(w.ok(&["--session", &s, "checkpoint"])).unwrap();
    w.ok(&["session", "drop", &s]);
    let pack = good.windows(4).position(|win| win == b"PACK").unwrap();
    let dir = w.base();
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    // A 2 GB size claim on the first object.
    let mut claim = good[..pack + 12].to_vec();
    let size: u64 = 2 << 30;
    claim.push(0x80 | (1 << 4) | (size & 0xf) as u8);
    let mut rest = size >> 4;
    while rest > 0x7f {
        claim.push(0x80 | (rest & 0x7f) as u8);
        rest >>= 7;
    }
    claim.push(rest as u8);
    claim.extend_from_slice(&[0u8; 64]);
    let a = write("claim.bundle", &claim);
    refused(
        &w,
        &["inspect"],
        &a,
        2,
        "not a Stella artifact: a head object claims 2147483648 bytes, more than an artifact's head may hold",
    );
    // Truncated inside the head.
    let a = write("short.bundle", &good[..pack + 40]);
    refused(
        &w,
        &["inspect"],
        &a,
        2,
        "error: the artifact is corrupt or truncated: ",
    );
    // Truncated after the head: the whole pack is checked before anything is read from it.
    let a = write("tail.bundle", &good[..good.len() - 30]);
    refused(
        &w,
        &["inspect"],
        &a,
        2,
        "error: the artifact is corrupt or truncated: ",
    );
    // In another clone, whose store does not hold those objects already.
    let b = World::clone_of(&w);
    b.write("f", "content\n");
    refused(
        &b,
        &["replay"],
        &a,
        2,
        "error: the artifact is corrupt or truncated: ",
    );
    // Random bytes, and a bundle header over random bytes.
    let mut seed = 0x2545f4914f6cdd1du64;
    let noise: Vec<u8> = (0..4096)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        })
        .collect();
    let a = write("noise.bundle", &noise);
    refused(&w, &["replay"], &a, 2, "error: not a Stella artifact: ");
    let mut headed = good[..pack].to_vec();
    headed.extend_from_slice(&noise);
    let a = write("headed.bundle", &headed);
    refused(
        &w,
        &["replay"],
        &a,
        2,
        "error: not a Stella artifact: the bundle does not hold a version 2 pack",
    );
}

/// A manifest whose every string tries to drive the terminal or forge a line of its own.
const HOSTILE_MANIFEST: &str = r#"format = 1
session = "evil\u001b[31m\r\nrefusing to write: README"
base = "cafe\u001b]0;pwned\u0007"
object_format = "sha1"
producer = "forge\u001b[2J"
started = "2026\r\n"
last_step = "\u001b[1A"
steps = 1
needs_reread = ["re\u001bread\nrefusing to write: x"]

[transcripts]
"t\u001b.jsonl" = 3

[[provenance]]
session = "prior\u001b[31m\nx"
artifact = "ab\u001bcdééééééééééé"
replayed = "when\r"
"#;

/// Human output: no escape byte, no carriage return, exactly `lines` lines, none of them forged.
fn assert_tame(what: &str, text: &str, lines: usize) {
    assert!(
        !text.contains('\x1b'),
        "{what}: an escape reached the terminal: {text:?}"
    );
    assert!(
        !text.contains('\r'),
        "{what}: a carriage return reached the terminal: {text:?}"
    );
    assert!(
        !text.contains('\x07'),
        "{what}: a bell reached the terminal: {text:?}"
    );
    assert_eq!(
        text.lines().count(),
        lines,
        "{what}: lines were split: {text}"
    );
    assert!(
        !text.lines().any(|l| l.starts_with("refusing to write")),
        "{what}: a forged line: {text}"
    );
}

#[test]
fn strings_from_an_artifact_never_reach_the_terminal_raw() {
    let w = World::new();
    let forge = Forge::new(&w);
    let names: [&[u8]; 3] = [b"cr\r.txt", b"nl\n.txt", b"red\x1b[31m.txt"];
    let mut entries: Vec<(&str, &[u8], String)> = Vec::new();
    let mut fingerprint = String::new();
    for (i, name) in names.iter().enumerate() {
        let bytes = format!("file {i}\n");
        entries.push(("100644", name, forge.blob(bytes.as_bytes())));
        let shown = String::from_utf8(name.to_vec()).unwrap();
        if shown.contains('\n') {
            fingerprint += &format!(
                "\\{}  {}\n",
                b3(bytes.as_bytes()),
                shown.replace('\n', "\\n")
            );
        } else {
            fingerprint += &format!("{}  {shown}\n", b3(bytes.as_bytes()));
        }
    }
    let entries: Vec<(&str, &[u8], &str)> = entries
        .iter()
        .map(|(m, n, id)| (*m, *n, id.as_str()))
        .collect();
    let files = forge.tree(&entries);
    let artifact = forge.artifact(HOSTILE_MANIFEST, &fingerprint, Some(&files));
    let a = artifact.to_str().unwrap();

    let out = w.run(&["inspect", a]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // format, session, base, producer, started, last step, replayed, transcript, objects, files,
    // three files, one re-read.
    assert_tame("inspect", &stdout(&out), 14);
    assert_tame("inspect's warning", &stderr(&out), 1);
    assert!(stdout(&out).contains("session     evil\\x1b[31m\\r\\nrefusing to write: README\n"));
    assert!(
        stdout(&out).contains("  red\\x1b[31m.txt\n"),
        "{}",
        stdout(&out)
    );
    // JSON keeps the strings as they are; serde escapes them.
    let out = w.run(&["inspect", "--json", a]);
    assert_eq!(code(&out), 0);
    assert!(!stdout(&out).contains('\x1b'));
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["session"], "evil\x1b[31m\r\nrefusing to write: README");
    assert_eq!(json["fingerprint"][1]["path"], "nl\n.txt");

    let out = w.run(&["verify", a]);
    assert_eq!(code(&out), 1);
    assert_tame("verify", &stderr(&out), 4);
    let out = w.run(&["replay", a]);
    assert_eq!(code(&out), 1);
    assert_tame("replay", &stderr(&out), 5);
    assert!(
        stderr(&out).contains("  deleted    nl\\n.txt\n"),
        "{}",
        stderr(&out)
    );

    let out = w.run(&["replay", "--materialize", a]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The summary, what was written, and that HEAD is not the base.
    assert_tame("replay --materialize", &stderr(&out), 3);
    assert_tame("replay's id", &stdout(&out), 1);
    assert!(stderr(&out).contains(
        "stella: wrote 3 files of session evil\\x1b[31m\\r\\nrefusing to write: README; it was made against base commit cafe\\x1b]0;pwned\\x07,"
    ), "{}", stderr(&out));
    for name in names {
        let name = std::ffi::OsStr::new(std::str::from_utf8(name).unwrap());
        assert!(w.repo.join(name).is_file(), "{name:?} was not written");
    }
    let id = stdout(&out).trim().to_owned();
    // What the new session remembers of its origin is escaped wherever a person reads it.
    let list = w.ok(&["session", "list"]);
    assert_tame("session list", &list, 2);
    let log = w.ok(&["log", &id]);
    // The replay step, and the forged tip it descends from.
    assert_tame("log", &log, 2);
    let plain = w.store_git(&["log", "--format=%s", &format!("refs/stella/sessions/{id}")]);
    assert!(
        !plain.contains('\x1b') && !plain.contains('\r'),
        "{plain:?}"
    );
    // An error quoting the file escapes it too: a plain bundle whose ref name is hostile.
    let bundle = w.base().join("plain.bundle");
    let mut bytes = format!(
        "# v2 git bundle\n{} refs/heads/\x1b[31mx\rrefusing to write: y\n\n",
        "a".repeat(40)
    )
    .into_bytes();
    bytes.extend_from_slice(b"PACK");
    std::fs::write(&bundle, bytes).unwrap();
    let out = w.run(&["inspect", bundle.to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    assert_tame("inspect's error", &stderr(&out), 1);
}
