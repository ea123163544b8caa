//! Hostile artifacts built with raw git plumbing: every one gets a clear error or a refusal,
//! nothing is written outside the tree, nothing panics.
//!
//! Not per command: each artifact here must be refused alike by every command that reads one
//! (`inspect`, `verify`, `replay`); those only `replay` meets are in `replay.rs`.

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
