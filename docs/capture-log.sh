#!/usr/bin/env bash
# Capture `git stella log` as a terminal shows it, colours and all, into docs/log-colour.svg.
# Runs the walkthrough (docs/walkthrough.md) in a temporary repository, then `git stella log` on a real
# pseudo-terminal (script(1)), and draws the bytes it printed, escape codes read as colours.
# Usage: bash docs/capture-log.sh   (git-stella on the PATH)
set -euo pipefail
out="$(cd "$(dirname "$0")" && pwd)/log-colour.svg"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export STELLA_HOME="$tmp/stella" GIT_CONFIG_NOSYSTEM=1 HOME="$tmp" TERM=xterm-256color
git config --global user.name demo && git config --global user.email demo@example.com
cd "$tmp" && git init -q demo && cd demo
printf 'alpha\nbeta\ngamma\n' > notes.txt && git add notes.txt && git commit -qm notes
git stella session start --id agent-a >/dev/null
git stella session start --id agent-b >/dev/null
git stella --session agent-a read notes.txt
git stella --session agent-b read notes.txt
printf 'alpha\nbetamax\ngamma\n' | git stella --session agent-b write notes.txt
printf 'alpha\nBETA\ngamma\n' | git stella --session agent-a write notes.txt 2>/dev/null || true
git stella --session agent-a read notes.txt
printf 'alpha\nBETAMAX\ngamma\n' | git stella --session agent-a write notes.txt
script -qec "git stella log --date=relative --no-pager agent-a" /dev/null >"$tmp/capture"
python3 - "$tmp/capture" "$out" <<'PY'
import html, re, sys
text = open(sys.argv[1], encoding="utf-8").read().replace("\r\n", "\n").rstrip("\n")
colours = {"31": "#d0413e", "32": "#3a9c3a", "33": "#b8860b", "36": "#2a9bb0", "1": None}
lines, width = [], 0
for raw in text.split("\n"):
    spans, colour, bold, pos = [], None, False, 0
    for m in re.finditer(r"\x1b\[([0-9;]*)m|[^\x1b]+", raw):
        if m.group(1) is not None or m.group(0).startswith("\x1b"):
            code = m.group(1) or ""
            colour = colours.get(code) if code in colours else None
            bold = code == "1"
            continue
        spans.append((m.group(0), colour, bold))
        pos += len(m.group(0))
    width = max(width, pos)
    lines.append(spans)
cw, lh = 8.4, 20
w, h = int(width * cw + 32), int(len(lines) * lh + 56)
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">',
       f'<rect width="{w}" height="{h}" rx="6" fill="#1e1e1e"/>',
       '<text x="16" y="28" font-family="monospace" font-size="14" fill="#9a9a9a">$ git stella log --date=relative agent-a</text>']
for i, spans in enumerate(lines):
    y = 28 + (i + 1) * lh
    weight = ' font-weight="bold"'
    parts = "".join(
        '<tspan fill="%s"%s>%s</tspan>' % (c or "#e6e6e6", weight if b else "", html.escape(t))
        for t, c, b in spans)
    svg.append(f'<text x="16" y="{y}" font-family="monospace" font-size="14" xml:space="preserve">{parts}</text>')
svg.append("</svg>")
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(svg) + "\n")
PY
echo "wrote $out"
