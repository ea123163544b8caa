//! `stella-mcp`: the MCP server that `git stella mcp` runs, the only binary with tokio.

fn main() -> std::process::ExitCode {
    stella_cli::mcp_server::main()
}
