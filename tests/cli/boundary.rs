//! The library never reads the environment, prints or exits: the command line (arguments, the
//! environment, output, exit codes) lives with the binaries under `src/bin/`. The compiler keeps
//! the library from reaching the CLI's modules; this test keeps the CLI's habits out of the
//! library.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, `src/bin/` left out.
fn library_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "bin") {
                library_sources(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// What the library must not do, as it appears in source: the environment, printing, exiting.
const FORBIDDEN: [&str; 12] = [
    "std::env",
    "env::var",
    "env::args",
    "env::current_dir",
    "set_current_dir",
    "println!",
    "eprintln!",
    "print!(",
    "eprint!(",
    "process::exit",
    "dbg!",
    "std::io::stdout",
];

/// Pure functions of `std::env` that read nothing: they split or join a value they are given.
const ALLOWED: [&str; 2] = ["std::env::split_paths", "std::env::join_paths"];

/// The offending lines of `text`: code only (comments and doc examples left out).
fn offences(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .filter(|(_, line)| {
            let mut code = line.to_string();
            for ok in ALLOWED {
                code = code.replace(ok, "");
            }
            FORBIDDEN.iter().any(|f| code.contains(f))
        })
        .map(|(i, line)| (i + 1, line.trim().to_owned()))
        .collect()
}

#[test]
fn the_library_reads_no_environment_prints_nothing_and_never_exits() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    library_sources(&root, &mut files);
    assert!(files.len() > 20, "found only {} library files", files.len());
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (line, code) in offences(&text) {
            found.push(format!("{}:{line}: {code}", file.display()));
        }
    }
    assert!(
        found.is_empty(),
        "the library must leave the environment, printing and exiting to the binaries:\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn the_check_catches_what_it_is_for() {
    let bad = "fn f() {\n    let h = std::env::var(\"HOME\");\n    println!(\"x\");\n    // println! in a comment is fine\n    std::process::exit(1);\n}\n";
    let lines: Vec<usize> = offences(bad).into_iter().map(|(l, _)| l).collect();
    assert_eq!(lines, vec![2, 3, 5]);
    assert!(offences("let p = std::env::split_paths(&v);").is_empty());
}

/// Every `.rs` file under `dir`, the binaries' included.
fn all_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            all_sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The lines of `text` that name `host` in code (not in comments or help text, not in tests):
/// its name as a string, or its module.
fn names_of(text: &str, flag: &str) -> Vec<(usize, String)> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let quoted = format!("\"{flag}\"");
    let module = format!("{}::", flag.replace('-', "_"));
    code.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .filter(|(_, line)| line.contains(&quoted) || line.contains(&module))
        .map(|(i, line)| (i + 1, line.trim().to_owned()))
        .collect()
}

#[test]
fn a_host_is_named_only_in_its_own_module_and_the_registry() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let registry = src.join("hooks/registry.rs");
    let mut files = Vec::new();
    all_sources(&src, &mut files);
    let mut found = Vec::new();
    for host in stella::hooks::registry::HOSTS {
        let own = src
            .join("hooks")
            .join(format!("{}.rs", host.flag.replace('-', "_")));
        assert!(own.is_file(), "{} has no module of its own", host.flag);
        for file in files.iter().filter(|f| **f != own && **f != registry) {
            let text = std::fs::read_to_string(file).unwrap();
            for (line, code) in names_of(&text, host.flag) {
                found.push(format!("{}:{line}: {code}", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a host is known by its registry entry, not by name:\n  {}",
        found.join("\n  ")
    );
    // The check finds a branch on a name, and not a help text that mentions one.
    let branch = "match h {\n    \"codex\" => 1,\n    _ => hooks::codex::x(),\n}\n/// \"codex\"\n";
    let lines: Vec<usize> = names_of(branch, "codex")
        .into_iter()
        .map(|(l, _)| l)
        .collect();
    assert_eq!(lines, vec![2, 3]);
}
