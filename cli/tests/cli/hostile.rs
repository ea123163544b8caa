//! Hostile artifacts built with raw git plumbing: every one gets a clear error or a refusal,
//! nothing is written outside the tree, nothing panics.

use std::path::Path;

use crate::common::*;

/// Replay `artifact` with `args`; assert the exit code and that the message contains `says`,
/// that no session appeared and nothing outside the repository changed.
fn refused(w: &World, args: &[&str], artifact: &Path, exit: i32, says: &str) {
    let outside = w.base().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let before = listing(&outside);
    let mut full: Vec<&str> = args.to_vec();
    full.push(artifact.to_str().unwrap());
    let out = w.run(&full);
    assert_eq!(code(&out), exit, "{full:?}: {}", stderr(&out));
    assert!(stderr(&out).contains(says), "{full:?}: {}", stderr(&out));
    assert_eq!(listing(&outside), before, "something was written outside");
    assert_eq!(w.ok(&["session", "list"]), "", "a session appeared");
}

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
fn unsafe_paths_in_the_fingerprint_are_refused() {
    let w = World::new();
    let forge = Forge::new(&w);
    let d = b3(b"x");
    for (path, says) in [
        ("../x", "not a Stella artifact: unsafe path \"../x\""),
        (
            "/etc/passwd",
            "not a Stella artifact: unsafe path \"/etc/passwd\"",
        ),
        ("a//b", "unsafe path"),
        (
            ".git/hooks/pre-commit",
            "not a Stella artifact: it names '.git/hooks/pre-commit', a path inside .git",
        ),
        ("sub/.GIT/config", "a path inside .git"),
        (".stella/private/workspace.toml", "a path inside .stella"),
    ] {
        let a = forge.artifact(&manifest("1"), &format!("{d}  {path}\n"), None);
        refused(&w, &["replay", "--materialize"], &a, 2, says);
        refused(&w, &["replay", "--ignore-fingerprint"], &a, 2, says);
    }
    assert!(!w.repo.join(".git/hooks/pre-commit").exists());
    let a = forge.artifact(
        &manifest("1"),
        &format!("{d}  README.md\n{d}  readme.md\n"),
        None,
    );
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        2,
        "collides with another path when case is folded",
    );
}

#[test]
fn hostile_trees_under_files_are_refused() {
    let w = World::new();
    let forge = Forge::new(&w);
    let x = forge.blob(b"x");
    let d = b3(b"x");
    // An entry named '..' under files/: git's object checks refuse it on import.
    let inner = forge.tree(&[("100644", b"x", &x)]);
    let files = forge.tree(&[("40000", b"..", &inner)]);
    let a = forge.artifact(&manifest("1"), &format!("{d}  x\n"), Some(&files));
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        2,
        "git refused its objects",
    );
    assert!(!w.base().join("x").exists());
    // A name with a slash in it.
    let files = forge.tree(&[("100644", b"etc/passwd", &x)]);
    let a = forge.artifact(&manifest("1"), &format!("{d}  x\n"), Some(&files));
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        2,
        "git refused its objects",
    );
    // A gitlink where a file belongs.
    let commit = forge.commit(&forge.tree(&[]));
    let files = forge.tree(&[("160000", b"sub", &commit)]);
    let a = forge.artifact(&manifest("1"), &format!("{d}  sub\n"), Some(&files));
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        2,
        "not a Stella artifact: files/sub is a gitlink, not a file",
    );
    assert!(!w.repo.join("sub").exists());
    // A symbolic link where a file belongs.
    let target = forge.blob(b"/etc/passwd");
    let files = forge.tree(&[("120000", b"link", &target)]);
    let a = forge.artifact(
        &manifest("1"),
        &format!("{}  link\n", b3(b"/etc/passwd")),
        Some(&files),
    );
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        2,
        "files/link is a symbolic link, not a file",
    );
    assert!(w.repo.join("link").symlink_metadata().is_err());
    // Bytes that do not match the fingerprint.
    let files = forge.tree(&[("100644", b"f", &x)]);
    let a = forge.artifact(
        &manifest("1"),
        &format!("{}  f\n", b3(b"other")),
        Some(&files),
    );
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        2,
        "files/f does not match its fingerprint",
    );
    assert!(!w.repo.join("f").exists());
}

#[test]
fn materialize_never_writes_through_a_link_or_over_a_file() {
    let w = World::new();
    let forge = Forge::new(&w);
    let x = forge.blob(b"x");
    let sub = forge.tree(&[("100644", b"x.txt", &x)]);
    let files = forge.tree(&[("40000", b"sub", &sub)]);
    let a = forge.artifact(
        &manifest("1"),
        &format!("{}  sub/x.txt\n", b3(b"x")),
        Some(&files),
    );
    let outside = w.base().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, w.repo.join("sub")).unwrap();
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        1,
        "  sub/x.txt: 'sub' is a symbolic link or a file where a folder must go\n",
    );
    assert!(!outside.join("x.txt").exists());
    std::fs::remove_file(w.repo.join("sub")).unwrap();
    w.write("sub", "a file where a folder must go\n");
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        1,
        "'sub' is a symbolic link or a file where a folder must go",
    );
    assert_eq!(w.read("sub"), "a file where a folder must go\n");
    // The final component a link: never followed either.
    std::fs::remove_file(w.repo.join("sub")).unwrap();
    std::fs::create_dir(w.repo.join("sub")).unwrap();
    std::os::unix::fs::symlink(outside.join("x.txt"), w.repo.join("sub/x.txt")).unwrap();
    refused(
        &w,
        &["replay", "--materialize"],
        &a,
        1,
        "  sub/x.txt: it is a symbolic link\n",
    );
    // With the way clear, it writes.
    std::fs::remove_file(w.repo.join("sub/x.txt")).unwrap();
    let out = w.run(&["replay", "--materialize", a.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("sub/x.txt"), "x");
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
