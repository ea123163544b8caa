//! `git stella inspect`: an artifact's manifest and its warning, and what is not an artifact
//! refused by name.

use crate::common::*;

#[test]
fn inspect_shows_the_manifest_and_the_warning() {
    let w = World::new();
    let (s, artifact) = session_with_work(&w);
    let out = w
        .stella_in(&w.home)
        .args(["inspect", artifact.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with(&format!(
            "format      1\nsession     {s}\nbase        {}\n",
            w.git(&["rev-parse", "HEAD"])
        )),
        "{text}"
    );
    assert!(text.contains("files       3\n"), "{text}");
    assert!(text.contains("  src/new.rs\n"), "{text}");
    assert!(stderr(&out).starts_with("warning: This artifact holds the conversation verbatim"));
    let json: serde_json::Value =
        serde_json::from_str(&w.ok(&["inspect", "--json", artifact.to_str().unwrap()])).unwrap();
    assert_eq!(json["format"], 1);
    assert_eq!(json["fingerprint"].as_array().unwrap().len(), 3);
    assert!(
        json["warning"]
            .as_str()
            .unwrap()
            .contains("Stella does not encrypt, redact")
    );
}

#[test]
fn inspect_refuses_what_is_not_an_artifact() {
    let w = World::new();
    let dir = w.base();
    let garbage = dir.join("garbage");
    std::fs::write(&garbage, b"\x00\x01 random bytes that are no bundle").unwrap();
    let empty = dir.join("empty");
    std::fs::write(&empty, b"").unwrap();
    let plain = dir.join("plain.bundle");
    w.git(&[
        "bundle",
        "create",
        "-q",
        plain.to_str().unwrap(),
        "HEAD",
        "main",
    ]);
    let v3 = dir.join("v3.bundle");
    std::fs::write(&v3, b"# v3 git bundle\n@object-format=sha1\n\n").unwrap();
    for (file, why) in [
        (&garbage, "it is not a git bundle"),
        (&empty, "the file ends where a git bundle header belongs"),
        (
            &plain,
            "the bundle holds 2 refs, none under refs/stella/checkpoints/: it is a plain git bundle",
        ),
        (
            &v3,
            "it is a v3 git bundle; Stella artifacts are v2 bundles",
        ),
    ] {
        let out = w.run(&["inspect", file.to_str().unwrap()]);
        assert_eq!(code(&out), 2);
        assert_eq!(
            stderr(&out),
            format!("error: not a Stella artifact: {why}\n")
        );
    }
    let one_ref = dir.join("one.bundle");
    w.git(&["bundle", "create", "-q", one_ref.to_str().unwrap(), "main"]);
    let out = w.run(&["inspect", one_ref.to_str().unwrap()]);
    assert_eq!(
        stderr(&out),
        "error: not a Stella artifact: the bundle's ref is 'refs/heads/main', not one under refs/stella/checkpoints/: it is a plain git bundle\n"
    );
    let missing = w.run(&["inspect", "nope.bundle"]);
    assert_eq!(code(&missing), 2);
    assert!(stderr(&missing).starts_with("error: could not read the artifact\n"));
}
