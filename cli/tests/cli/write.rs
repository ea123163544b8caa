//! `git stella write`: the refusal of a stale write names the path as given, whatever it is.

use crate::common::*;

#[test]
fn a_refusal_through_a_symlink_names_the_link_and_the_file() {
    let w = World::new();
    let s = session(&w);
    w.write("real.txt", "real\n");
    std::os::unix::fs::symlink("real.txt", w.repo.join("link.txt")).unwrap();
    w.ok(&["--session", &s, "read", "link.txt"]);
    w.write("real.txt", "theirs\n");
    let out = w.run_stdin(&["--session", &s, "write", "link.txt"], b"mine\n");
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).starts_with("refusing to write: link.txt -> real.txt\nreal.txt changed since"),
        "{}",
        stderr(&out)
    );
    let out = w.run(&["--session", &s, "guard", "link.txt"]);
    assert!(
        stderr(&out).starts_with("refusing to write: link.txt -> real.txt\n"),
        "{}",
        stderr(&out)
    );
    assert_eq!(w.read("real.txt"), "theirs\n");
    assert!(
        w.repo
            .join("link.txt")
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn a_newline_in_a_file_name_cannot_split_the_refusal_line() {
    let w = World::new();
    let s = session(&w);
    let name = "a\nrefusing to write: b\x1b[31m.txt";
    w.write(name, "one\n");
    w.ok(&["--session", &s, "read", name]);
    w.write(name, "two\n");
    let out = w.run_stdin(&["--session", &s, "write", name], b"three\n");
    assert_eq!(code(&out), 1);
    let err = stderr(&out);
    assert!(
        err.starts_with("refusing to write: a\\nrefusing to write: b\\x1b[31m.txt\n"),
        "{err}"
    );
    let firsts = err.lines().filter(|l| l.starts_with("refusing to write:"));
    assert_eq!(firsts.count(), 1, "{err}");
    assert!(!err.contains('\x1b'), "{err}");
}
