//! The MCP glue: the tools of [`stella::mcp::tools`] served over stdio with `rmcp`, the official Rust
//! SDK of the Model Context Protocol.
//!
//! The library stays synchronous, and its workspace handle cannot move between threads (gix's
//! `Repository` is `!Send` without gix's `parallel` feature, which Stella keeps off). So the
//! connection's one [`Tools`] lives on a worker thread of its own, and each tool call is sent
//! there and awaited over a oneshot channel: the async runtime never blocks, and the steps of a
//! session land in the order the calls arrived. Every outcome, a refusal or an error included, is a tool result
//! (`isError: true` for the failures); nothing here answers with a JSON-RPC error or closes the
//! connection because a file was stale.

use std::path::PathBuf;
use std::sync::mpsc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;

use stella::ids::SessionId;
use stella::mcp::tools::{Reply, SessionOrigin, Tools};
use stella::workspace::{Notice, Settings};

type Job = Box<dyn FnOnce(&Tools) + Send>;

/// The error returned by [`Server::start`].
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Open(#[from] stella::session::Error),
    #[error("could not start the thread that holds the workspace")]
    Thread(#[source] std::io::Error),
}

/// `read_file`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReadFileArgs {
    /// The file to read: a path relative to the workspace root (the git working tree), or an absolute path inside it.
    pub path: String,
    /// The first line to return, counting from 1. Leave it out to start at the first line.
    #[serde(default)]
    pub offset: Option<u64>,
    /// How many lines to return from `offset`. Leave it out to read to the end of the file.
    #[serde(default)]
    pub limit: Option<u64>,
}

/// `write_file`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct WriteFileArgs {
    /// The file to replace or create: relative to the workspace root, or absolute inside it. Missing folders are created.
    pub path: String,
    /// The complete new content of the file. It replaces everything in the file.
    pub content: String,
    /// Set only by [`forward_lines`]: the call was this many bytes, too large to carry.
    #[serde(default, rename = "stella-oversized-call")]
    #[schemars(skip)]
    pub oversized: Option<u64>,
}

/// `edit_file`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct EditFileArgs {
    /// The file to edit: relative to the workspace root, or absolute inside it.
    pub path: String,
    /// The exact text to replace, copied from the file as read_file returned it, whitespace and indentation included. It must occur exactly once unless replace_all is true.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence of old_string instead of requiring exactly one. Defaults to false.
    #[serde(default)]
    pub replace_all: bool,
}

/// `delete_file`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DeleteFileArgs {
    /// The file to delete: relative to the workspace root, or absolute inside it.
    pub path: String,
}

/// One connection's server: its tools and how its session was chosen.
#[derive(Clone)]
pub struct Server {
    jobs: mpsc::Sender<Job>,
    session: String,
    origin: SessionOrigin,
    root: String,
    tool_router: ToolRouter<Self>,
}

/// A tool's reply as MCP carries it.
fn to_result(r: Reply) -> CallToolResult {
    let content = vec![ContentBlock::text(r.text)];
    if r.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

#[tool_router]
impl Server {
    /// Open the workspace and the session on a worker thread that keeps them for the whole
    /// connection; the server, and what the person should hear on stderr.
    pub fn start(
        settings: Settings,
        cwd: PathBuf,
        session: Option<SessionId>,
    ) -> Result<(Server, Vec<Notice>), StartError> {
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (ready_tx, ready) = mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("stella-tools".into())
            .spawn(move || {
                let tools = match Tools::open(&settings, &cwd, session) {
                    Ok((tools, origin, notices)) => {
                        let about = (
                            tools.id.to_string(),
                            tools.ctx.root().display().to_string(),
                            origin,
                            notices,
                        );
                        let _ = ready_tx.send(Ok(about));
                        tools
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                // Ends when the server, and with it the last sender, is dropped.
                for job in inbox {
                    job(&tools);
                }
            })
            .map_err(StartError::Thread)?;
        let (session, root, origin, notices) = ready
            .recv()
            .expect("the worker thread answers before it ends")?;
        Ok((
            Server {
                jobs,
                session,
                origin,
                root,
                tool_router: Self::tool_router(),
            },
            notices,
        ))
    }

    /// The connection's session id.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// Run one tool call on the worker thread and wait for it without blocking the runtime.
    async fn call(&self, f: impl FnOnce(&Tools) -> Reply + Send + 'static) -> CallToolResult {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |t| {
            let reply = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(t)));
            let _ = tx.send(reply.ok());
        });
        if self.jobs.send(job).is_err() {
            return to_result(Reply::error(
                "error: the server's worker thread is gone; restart the MCP server",
            ));
        }
        match rx.await {
            Ok(Some(reply)) => to_result(reply),
            _ => to_result(Reply::error(
                "error: the tool call failed inside the server; check the file with read_file before retrying",
            )),
        }
    }

    #[tool(
        description = "Read a text file in the workspace and return its content. Stella records the version you saw, so later write_file, edit_file and delete_file calls on this file are refused if someone else changes it in the meantime. Read a file before you change it. Use offset and limit to read a range of lines of a large file."
    )]
    async fn read_file(&self, Parameters(a): Parameters<ReadFileArgs>) -> CallToolResult {
        self.call(move |t| t.read_file(&a.path, a.offset, a.limit))
            .await
    }

    #[tool(
        description = "Replace a file's whole content, or create the file. Refused, with nothing written, when the file changed since you last read or wrote it (another agent or a person edited it): then read it again and redo your change against what is there now. The write is atomic: readers never see half a file."
    )]
    async fn write_file(&self, Parameters(a): Parameters<WriteFileArgs>) -> CallToolResult {
        if let Some(bytes) = a.oversized {
            return to_result(Reply::error(format!(
                "error: this call was {bytes} bytes, over the {} MiB one message to this server may carry; nothing was written. Write a file this large another way (a shell command, say), then read_file it.",
                MAX_MESSAGE >> 20
            )));
        }
        self.call(move |t| t.write_file(&a.path, &a.content)).await
    }

    #[tool(
        description = "Replace exact text in a file: old_string must occur exactly once (or set replace_all). Refused, with nothing written, when the file changed since you last read or wrote it: then read it again and redo the edit. Fails clearly when old_string is not found or is ambiguous."
    )]
    async fn edit_file(&self, Parameters(a): Parameters<EditFileArgs>) -> CallToolResult {
        self.call(move |t| t.edit_file(&a.path, &a.old_string, &a.new_string, a.replace_all))
            .await
    }

    #[tool(
        description = "Delete a file. Refused, with nothing deleted, when the file changed since you last read or wrote it: read it again and decide again."
    )]
    async fn delete_file(&self, Parameters(a): Parameters<DeleteFileArgs>) -> CallToolResult {
        self.call(move |t| t.delete_file(&a.path)).await
    }

    #[tool(
        description = "List every file this session has read or written and whether it is still as you saw it (unchanged), changed by someone else (changed), deleted (deleted) or unreadable. Re-read changed files before writing them."
    )]
    async fn status(&self) -> CallToolResult {
        self.call(|t| t.status()).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let session = &self.session;
        let how = match self.origin {
            SessionOrigin::Given => format!(
                "This connection is Stella session '{session}'; reconnecting with the same --session keeps what it has seen."
            ),
            SessionOrigin::Minted => format!(
                "This connection is Stella session '{session}', minted for it. To keep the guard across a reconnect or a crash, start the server with '--session {session}' (or STELLA_SESSION={session})."
            ),
        };
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "git-stella",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(format!(
                "Guarded file tools for the workspace {}. Read a file with read_file before changing it; write_file, edit_file and delete_file are refused when the file changed since you read it (someone else edited it), and the refusal says how to recover: read it again and redo the change. Paths are relative to the workspace root. {how}",
                self.root
            ))
    }
}

/// The most one message from the client may carry: the transport's own limit for one line.
pub const MAX_MESSAGE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// Serve on stdin/stdout until the client closes the connection.
pub async fn serve_stdio(server: Server) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let (input, lines) = tokio::io::duplex(1 << 16);
    tokio::spawn(forward_lines(tokio::io::stdin(), input));
    let running = server.serve((lines, tokio::io::stdout())).await?;
    running.waiting().await?;
    Ok(())
}

/// Copy the client's messages, one line each, to the transport; a line over [`MAX_MESSAGE`]
/// (which the transport would drop without a word, leaving the client waiting forever) becomes a
/// small `write_file` call with the same id that answers with a tool error naming the limit.
/// Only the start and the end of such a line are kept, where clients put the id.
async fn forward_lines(
    input: impl tokio::io::AsyncRead + Unpin,
    mut out: impl tokio::io::AsyncWrite + Unpin,
) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    const HEAD: usize = 64 << 10;
    const TAIL: usize = 256;
    let mut input = tokio::io::BufReader::with_capacity(1 << 16, input);
    let mut line: Vec<u8> = Vec::new();
    // For a line over the limit: its start, its last bytes, and its length.
    let mut over: Option<(Vec<u8>, Vec<u8>, usize)> = None;
    loop {
        let buf = match input.fill_buf().await {
            Ok([]) | Err(_) => return,
            Ok(buf) => buf,
        };
        let newline = buf.iter().position(|b| *b == b'\n');
        let take = newline.map_or(buf.len(), |i| i + 1);
        let chunk = &buf[..take];
        match &mut over {
            None if line.len() + take < MAX_MESSAGE => line.extend_from_slice(chunk),
            None => {
                line.extend_from_slice(chunk);
                let len = line.len();
                let tail = line[len.saturating_sub(TAIL)..].to_vec();
                line.truncate(HEAD);
                over = Some((std::mem::take(&mut line), tail, len));
            }
            Some((_, tail, len)) => {
                *len += take;
                tail.extend_from_slice(chunk);
                let cut = tail.len().saturating_sub(TAIL);
                tail.drain(..cut);
            }
        }
        input.consume(take);
        if newline.is_none() {
            continue;
        }
        let message = match over.take() {
            None => std::mem::take(&mut line),
            Some((head, tail, len)) => match oversized::request_id(&head, &tail) {
                Some(id) => format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"write_file\",\"arguments\":{{\"path\":\"\",\"content\":\"\",\"stella-oversized-call\":{len}}}}}}}\n"
                )
                .into_bytes(),
                None => {
                    tracing::error!(bytes = len, "dropped a message over the size limit that carried no id to answer");
                    continue;
                }
            },
        };
        if out.write_all(&message).await.is_err() {
            return;
        }
    }
}

/// Finding the id of a JSON-RPC request from only the start and the end of its text.
mod oversized {
    /// The request's id, as JSON text: the top-level `"id"` among the first keys (Python's SDK
    /// writes it second), or the last key (TypeScript clients write it last).
    pub fn request_id(head: &[u8], tail: &[u8]) -> Option<String> {
        from_head(head).or_else(|| from_tail(tail))
    }

    fn ws(b: &[u8], mut i: usize) -> usize {
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
            i += 1;
        }
        i
    }

    /// The end of the JSON string starting at `b[i] == '"'`.
    fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
        i += 1;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
        None
    }

    /// The end of the JSON value starting at `b[i]`, if it ends within `b`.
    fn value_end(b: &[u8], i: usize) -> Option<usize> {
        match *b.get(i)? {
            b'"' => string_end(b, i),
            b'{' | b'[' => {
                let mut depth = 0usize;
                let mut j = i;
                while j < b.len() {
                    match b[j] {
                        b'"' => {
                            j = string_end(b, j)?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                return Some(j + 1);
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                None
            }
            _ => {
                let mut j = i;
                while j < b.len()
                    && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n')
                {
                    j += 1;
                }
                (j < b.len()).then_some(j)
            }
        }
    }

    /// An id is a number or a string; anything else is not answered.
    fn id_text(v: &[u8]) -> Option<String> {
        let text = std::str::from_utf8(v).ok()?;
        match serde_json::from_str::<serde_json::Value>(text).ok()? {
            serde_json::Value::Number(_) | serde_json::Value::String(_) => Some(text.to_owned()),
            _ => None,
        }
    }

    fn from_head(b: &[u8]) -> Option<String> {
        let mut i = ws(b, 0);
        if b.get(i) != Some(&b'{') {
            return None;
        }
        i += 1;
        loop {
            i = ws(b, i);
            if b.get(i) != Some(&b'"') {
                return None;
            }
            let key_end = string_end(b, i)?;
            let key = &b[i..key_end];
            i = ws(b, key_end);
            if b.get(i) != Some(&b':') {
                return None;
            }
            i = ws(b, i + 1);
            let end = value_end(b, i)?;
            if key == b"\"id\"" {
                return id_text(&b[i..end]);
            }
            i = ws(b, end);
            if b.get(i) != Some(&b',') {
                return None;
            }
            i += 1;
        }
    }

    fn from_tail(b: &[u8]) -> Option<String> {
        let mut end = b.len();
        while end > 0 && matches!(b[end - 1], b' ' | b'\t' | b'\r' | b'\n') {
            end -= 1;
        }
        let b = &b[..end.checked_sub(1).filter(|&e| b.get(e) == Some(&b'}'))?];
        let text = std::str::from_utf8(b).ok()?;
        let at = text.rfind("\"id\"")?;
        let before = text[..at].trim_end();
        if !before.ends_with(',') {
            return None;
        }
        let value = text[at + 4..].trim_start().strip_prefix(':')?.trim();
        id_text(value.as_bytes())
    }

    #[cfg(test)]
    mod tests {
        use super::request_id;

        #[test]
        fn ids_are_found_at_the_start_or_the_end() {
            let python = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_file","arguments":{"content":"xxxx"#;
            assert_eq!(request_id(python, b"xxxx\"}}}\n").as_deref(), Some("7"));
            let ts = br#"{"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a","id":3,"content":"xxx"#;
            assert_eq!(
                request_id(ts, br#"xxx"}},"jsonrpc":"2.0","id":"r-12"}"#).as_deref(),
                Some("\"r-12\"")
            );
            assert_eq!(
                request_id(
                    b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"a",
                    b"a\"}}\n"
                ),
                None
            );
            assert_eq!(request_id(b"not json", b"nope"), None);
            assert_eq!(request_id(br#"{"id":{"x":1},"#, b"}"), None);
        }
    }
}
