#!/usr/bin/env bash
# Install git-stella with its man pages and shell completions, for the current user.
#
#   ./install.sh                       build with `cargo install --locked --path cli` (flags from
#                                      scripts/release.sh), then install
#   STELLA_BIN_DIR=target/release ./install.sh
#                                      install binaries already built in that folder instead
#
# Where things go (nothing outside your home folder; no sudo):
#   binaries      $CARGO_INSTALL_ROOT or $CARGO_HOME or ~/.cargo, in bin/
#   man pages     beside them in share/man/man1/: man finds them because that bin/ is on PATH
#   bash          ${XDG_DATA_HOME:-~/.local/share}/bash-completion/completions/git-stella
#   zsh           ${XDG_DATA_HOME:-~/.local/share}/zsh/site-functions/_git-stella (add to fpath)
#   fish          ${XDG_CONFIG_HOME:-~/.config}/fish/completions/git-stella.fish, and for
#                 `git stella`, conf.d/git-stella.fish beside it
set -euo pipefail

src="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}"
data="${XDG_DATA_HOME:-$HOME/.local/share}"
config="${XDG_CONFIG_HOME:-$HOME/.config}"

say() { printf '%s\n' "$*" >&2; }

if [[ -n "${STELLA_BIN_DIR:-}" ]]; then
    found=0
    for f in "$STELLA_BIN_DIR"/git-stella "$STELLA_BIN_DIR"/stella-mcp; do
        # cargo leaves dependency files (git-stella.d) beside the binaries.
        [[ -f "$f" && -x "$f" && "$f" != *.d ]] || continue
        install -D -m 0755 "$f" "$root/bin/$(basename "$f")"
        say "installed $root/bin/$(basename "$f")"
        found=1
    done
    if [[ $found == 0 ]]; then
        say "error: no git-stella binary in '$STELLA_BIN_DIR'"
        exit 2
    fi
else
    # shellcheck source=scripts/release.sh
    source "$src/scripts/release.sh"
    say "building git-stella: $release_how"
    cargo install --locked --path "$src/cli" --root "$root" ${release_args[@]+"${release_args[@]}"}
fi

# Earlier versions named the MCP server git-stella-mcp, which git listed as a command of its own.
if [[ -e "$root/bin/git-stella-mcp" ]]; then
    rm -f "$root/bin/git-stella-mcp"
    say "removed $root/bin/git-stella-mcp (the MCP server is stella-mcp now)"
fi

install -d "$root/share/man/man1"
install -m 0644 "$src"/man/*.1 "$root/share/man/man1/"
say "installed $(ls "$src"/man/*.1 | wc -l | tr -d ' ') man pages in $root/share/man/man1"

# bash-completion loads completions/git-stella on the first `git-stella <TAB>`, and git's own
# completion asks it to on the first `git stella <TAB>` (it looks for _git_stella).
install -D -m 0644 "$src/completions/git-stella.bash" \
    "$data/bash-completion/completions/git-stella"
say "installed bash completion in $data/bash-completion/completions/git-stella"

install -D -m 0644 "$src/completions/_git-stella" "$data/zsh/site-functions/_git-stella"
say "installed zsh completion in $data/zsh/site-functions/_git-stella"

install -D -m 0644 "$src/completions/git-stella.fish" "$config/fish/completions/git-stella.fish"
install -D -m 0644 "$src/completions/git-stella.conf.fish" "$config/fish/conf.d/git-stella.fish"
say "installed fish completion in $config/fish/completions/git-stella.fish"

say ""
case ":$PATH:" in
*":$root/bin:"*) ;;
*) say "note: put $root/bin on PATH, so that git finds 'git stella' and man its pages" ;;
esac
say "note: bash without the bash-completion package: add to ~/.bashrc, after git's completion:"
say "    source $data/bash-completion/completions/git-stella"
say "note: zsh: add to ~/.zshrc, before compinit:"
say "    fpath=($data/zsh/site-functions \$fpath)"
say "try: git stella --help"
