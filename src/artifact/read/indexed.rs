//! The reader for a pack in any order: stock `git index-pack` checks it in a private temporary
//! repository, and the head is looked up there.

use std::io::{self, Write};
use std::path::Path;

use super::{
    Head, MAX_HEAD_OBJECT, corrupt, head_entries, parse_head, read_bundle_header, read_pack_header,
};
use crate::artifact::{Error, HEAD_BLOBS, not_artifact};

/// Read a bundle in any order: stock `git index-pack` indexes its pack in a private temporary
/// repository (checking the pack's checksum and every object it carries), `git rev-list` checks
/// that the tip's history is all there, and the head is looked up by name.
pub(super) fn read_indexed(path: &Path) -> Result<Head, Error> {
    use std::process::Stdio;
    let mut r = io::BufReader::with_capacity(256 * 1024, std::fs::File::open(path)?);
    let (refname, tip) = read_bundle_header(&mut r)?;
    let (header, count) = read_pack_header(&mut r)?;
    let dir = tempfile::Builder::new()
        .prefix("stella-artifact-")
        .tempdir()?;
    // The scratch repository is the only one git may touch: none of the caller's.
    let git = |args: &[&str]| {
        let mut cmd = crate::store::git_command(dir.path());
        cmd.args(args).stdout(Stdio::null()).stderr(Stdio::piped());
        cmd
    };
    let said = |stderr: &[u8]| {
        let said = String::from_utf8_lossy(stderr);
        said.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let format = format!("--object-format={}", tip.kind());
    let out = git(&["init", "-q", "--bare", &format])
        .stdin(Stdio::null())
        .output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!("git init failed: {}", said(&out.stderr))).into());
    }
    let mut child = git(&["index-pack", "--stdin"])
        .stdin(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("piped");
    // A refusal closes the pipe early; git's message says why, not the broken pipe.
    let copied = stdin
        .write_all(&header)
        .and_then(|()| io::copy(&mut r, &mut stdin).map(drop));
    drop(stdin);
    let out = child.wait_with_output()?;
    if !out.status.success() {
        return Err(corrupt(format!(
            "git index-pack says: {}",
            said(&out.stderr)
        )));
    }
    copied?;
    let repo = gix::open_opts(dir.path(), gix::open::Options::isolated())
        .map_err(|e| io::Error::other(e.to_string()))?;
    let commit = match repo.find_object(tip) {
        Ok(object) if object.kind == gix::objs::Kind::Commit => object.into_commit(),
        Ok(object) => {
            return Err(not_artifact(format!(
                "the bundle's tip is a {}, not a commit",
                object.kind
            )));
        }
        Err(_) => {
            return Err(corrupt(format!(
                "the bundle names its tip {tip}, which its pack does not hold"
            )));
        }
    };
    let out = git(&["rev-list", "--objects", "--quiet", &tip.to_string()])
        .stdin(Stdio::null())
        .output()?;
    if !out.status.success() {
        return Err(corrupt(format!(
            "its pack lacks objects the tip's history needs: {}",
            said(&out.stderr)
        )));
    }
    let tree = commit
        .tree()
        .map_err(|_| not_artifact("the tip commit does not parse"))?;
    let mut blobs = [None, None, None];
    for ((blob, id), name) in blobs
        .iter_mut()
        .zip(head_entries(&tree.data, tip.kind())?)
        .zip(HEAD_BLOBS)
    {
        if let Some(id) = id {
            let size = repo
                .find_header(id)
                .map_err(|_| corrupt(format!("its pack lacks the object {id}")))?
                .size();
            if size > MAX_HEAD_OBJECT {
                return Err(not_artifact(format!(
                    "its '{name}' holds {size} bytes, more than an artifact's head may hold"
                )));
            }
            let object = repo
                .find_object(id)
                .map_err(|_| corrupt(format!("its pack lacks the object {id}")))?;
            *blob = Some(object.detach().data);
        }
    }
    parse_head(refname, tip, tree.id, blobs, count)
}
