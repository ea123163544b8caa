//! A host's shell commands: the plain reads known by their words (`cat F`, `sed -n 'A,Bp' F`),
//! and what a command the hook saw before and after changed.

use super::*;

impl Hook {
    /// The files a plain read command (`cat`, `head`, `tail`, `sed -n`, `nl`) printed whole,
    /// known by its output: recorded as read, as if a file tool had shown them, so the model's
    /// `cat` arms the guard (and clears a refusal) where no shell guard runs. Output that is not
    /// the files' bytes (a range, a changed file, anything else) records nothing.
    pub(super) fn shell_reads(&mut self, command: &str, output: &str) -> Result<(), Error> {
        let Some((program, files)) = plain_read(command) else {
            return Ok(());
        };
        let mut read = Vec::new();
        let mut size = 0;
        for f in files {
            let Some(rel) = self.resolve(&f) else {
                return Ok(());
            };
            // Read whole only while the files can add up to what the command printed.
            size += std::fs::metadata(self.abs(&rel)).map_or(0, |m| m.len());
            if size > 2 * output.len() as u64 + 8 {
                return Ok(());
            }
            let Ok(bytes) = crate::fsutil::read_regular(&self.abs(&rel)) else {
                return Ok(());
            };
            read.push((rel, bytes));
        }
        let whole: Vec<u8> = read.iter().flat_map(|(_, b)| b.iter().copied()).collect();
        let shown = if program == "nl" {
            unnumbered(output)
        } else {
            output.to_owned()
        };
        // Hosts trim what a command printed (Gemini CLI drops the last newline).
        let trim = |b: &[u8]| -> Vec<u8> {
            let end = b.iter().rposition(|c| *c != b'\n').map_or(0, |i| i + 1);
            b[..end].to_vec()
        };
        if trim(shown.as_bytes()) != trim(&whole) {
            return Ok(());
        }
        for (rel, bytes) in read {
            if let Ok(text) = std::str::from_utf8(&bytes) {
                self.after_read(&rel, Some(text), None)?;
            }
        }
        Ok(())
    }

    /// Before a shell command: remember how each tracked file stands (size, mtime, inode), so
    /// the after-event can tell which ones changed while it ran.
    pub(super) fn before_command(&mut self, command: &str, key: Option<&str>) -> Result<(), Error> {
        if !self.session_exists()? {
            return Ok(());
        }
        let id = self.session.clone();
        let entries = self.context()?.journal().entries(&id)?;
        let stats: Vec<serde_json::Value> = entries
            .iter()
            .map(|e| serde_json::json!([e.path.to_lossy(), stat_key(&self.abs(&e.path))]))
            .collect();
        let record = serde_json::json!({ "command": command, "stats": stats });
        self.put_scratch(
            &self.scratch_file_for("command", key.unwrap_or("none")),
            record.to_string().as_bytes(),
        )
    }

    /// After a shell command: note the tracked files that changed while it ran. Nothing is
    /// absorbed — the map still holds what the session saw, so the next write is refused; the
    /// note only makes that refusal say the change happened during the command.
    pub(super) fn after_command(&mut self, key: Option<&str>) -> Result<(), Error> {
        let file = self.scratch_file_for("command", key.unwrap_or("none"));
        let Some(bytes) = self.take_scratch(&file) else {
            return Ok(());
        };
        let Ok(record) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            return Ok(());
        };
        let command = record["command"].as_str().unwrap_or_default().to_owned();
        let mut notes = self.command_notes();
        for pair in record["stats"].as_array().into_iter().flatten() {
            let (Some(p), before) = (pair[0].as_str(), &pair[1]) else {
                continue;
            };
            let Some(path) = RelPath::from_bytes(p.as_bytes()) else {
                continue;
            };
            if stat_key(&self.abs(&path)) != *before {
                notes.insert(p.to_owned(), short_command(&command));
            }
        }
        self.put_command_notes(&notes)
    }
}

/// A command as quoted in a message: one line, cut after 80 characters.
pub(super) fn short_command(command: &str) -> String {
    let one_line = command.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = one_line.chars().take(80).collect();
    if cut.len() < one_line.len() {
        format!("`{cut}…`")
    } else {
        format!("`{cut}`")
    }
}

/// The program and files of a plain read command: `cat F…`, `head`/`tail` `[-n N] F`,
/// `sed -n 'A,Bp' F`, `nl F`, one simple command with nothing but quoted or plain words.
/// `None` for anything else: a pipe, a redirect, a substitution, an option this does not know.
pub(super) fn plain_read(command: &str) -> Option<(String, Vec<String>)> {
    if command.contains([
        '|', ';', '&', '<', '>', '`', '$', '(', ')', '\n', '*', '?', '\\',
    ]) {
        return None;
    }
    let mut words = Vec::new();
    let (mut word, mut in_word, mut quote) = (String::new(), false, None);
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => (quote, in_word) = (Some(c), true),
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return None;
    }
    if in_word {
        words.push(word);
    }
    let (program, rest) = words.split_first()?;
    let mut files = Vec::new();
    let mut rest = rest.iter();
    match program.as_str() {
        "cat" | "nl" => files.extend(rest.cloned()),
        "head" | "tail" => {
            while let Some(w) = rest.next() {
                match w.as_str() {
                    "-n" => {
                        rest.next()?.parse::<u64>().ok()?;
                    }
                    o if o.starts_with("-n") && o[2..].parse::<u64>().is_ok() => {}
                    o if o.starts_with('-') && o[1..].parse::<u64>().is_ok() => {}
                    o if o.starts_with('-') => return None,
                    f => files.push(f.to_owned()),
                }
            }
        }
        "sed" => {
            if rest.next()? != "-n" {
                return None;
            }
            let script = rest.next()?;
            let range = script.strip_suffix('p')?;
            if !range
                .split(',')
                .all(|n| n == "$" || n.parse::<u64>().is_ok())
            {
                return None;
            }
            files.extend(rest.cloned());
        }
        _ => return None,
    }
    if files.is_empty() || files.iter().any(|f| f.starts_with('-')) {
        return None;
    }
    Some((program.clone(), files))
}

/// What `nl` printed, its numbers taken off: each line's leading blanks, number and tab.
pub(super) fn unnumbered(output: &str) -> String {
    output
        .split_inclusive('\n')
        .map(|line| {
            let rest = line.trim_start_matches(' ');
            let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
            match rest.strip_prefix('\t') {
                Some(text) => text,
                // A blank line, which nl leaves unnumbered.
                None if rest.trim().is_empty() => rest,
                None => line,
            }
        })
        .collect()
}

/// `text` as one single-quoted shell word (a `'` inside written `'\''`).
pub(crate) fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}
