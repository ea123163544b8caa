//! One way to tell a person about an error, used by the command line, the hooks and the MCP
//! tools alike: `error: <message>`, then each cause once as `caused by: …`, then an optional
//! `hint: …`. A cause whose text the message (or an earlier cause) already carries is left out,
//! so a chain never says the same thing twice.

use std::error::Error;

/// An error's message and its distinct causes, ready to be rendered.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// The error's own text: `error: <message>`.
    pub message: String,
    /// Each cause that says something new, outermost first: `caused by: <cause>`.
    pub causes: Vec<String>,
    /// What to do about it, when the front end has something to say: `hint: <hint>`.
    pub hint: Option<String>,
}

impl Report {
    /// A report with `message` and no causes.
    pub fn new(message: impl Into<String>) -> Report {
        Report {
            message: message.into(),
            ..Report::default()
        }
    }

    /// The report of `e` and its chain of sources.
    pub fn of(e: &(dyn Error + 'static)) -> Report {
        let mut report = Report::new(e.to_string());
        let mut source = e.source();
        while let Some(s) = source {
            report.push_cause(s.to_string());
            source = s.source();
        }
        report
    }

    /// The message and then the causes, as the causes of some other error.
    pub fn causes_with_message(self) -> Vec<String> {
        std::iter::once(self.message).chain(self.causes).collect()
    }

    /// Add a cause, unless the report already says it.
    pub fn push_cause(&mut self, cause: String) {
        if !cause.is_empty()
            && !self.message.contains(&cause)
            && !self.causes.iter().any(|c| c.contains(&cause))
        {
            self.causes.push(cause);
        }
    }

    /// The lines `error: …`, `caused by: …` and `hint: …`, without a final newline.
    pub fn render(&self) -> String {
        let mut text = format!("error: {}", self.message);
        for c in &self.causes {
            text.push_str("\ncaused by: ");
            text.push_str(c);
        }
        if let Some(h) = &self.hint {
            text.push_str("\nhint: ");
            text.push_str(h);
        }
        text
    }

    /// The message and its causes on one line, joined by `: ` (for a line that is part of
    /// another message).
    pub(crate) fn one_line(&self) -> String {
        std::iter::once(self.message.as_str())
            .chain(self.causes.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(": ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("could not read 'a.txt'")]
    struct Outer(#[source] Middle);

    #[derive(Debug, thiserror::Error)]
    #[error("{0}")]
    struct Middle(#[source] std::io::Error);

    #[test]
    fn each_cause_is_said_once() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let e = Outer(Middle(io));
        let r = Report::of(&e);
        assert_eq!(r.message, "could not read 'a.txt'");
        assert_eq!(r.causes, vec!["entity not found".to_owned()]);
        assert_eq!(
            r.render(),
            "error: could not read 'a.txt'\ncaused by: entity not found"
        );
        assert_eq!(r.one_line(), "could not read 'a.txt': entity not found");
    }
}
