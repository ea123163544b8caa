#!/usr/bin/env bash
# Benchmark of writes where two writers can meet: what one uncontended write costs through each
# entry point (against the same write through an earlier build, BEFORE=<folder holding its
# git-stella>, when given), and how many writes per second land with 1, 4 and 16 sessions
# writing one file at once (each reads the file, appends a line, writes it back; a refused
# write is counted apart). Prints Markdown tables for docs/performance.md.
#
#   bash bench/race.sh                        # builds the release binary first, as install.sh does
#   BEFORE=/tmp/old-build SECONDS_EACH=5 bash bench/race.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
RUNS=${RUNS:-20}
SECONDS_EACH=${SECONDS_EACH:-5}
fixture="$PWD/tests/fixtures/claude-code/PostToolUse-Write-update.json"

repo="$WORK/repo"
git init -q "$repo"
cd "$repo"
git commit -q --allow-empty -m init
echo start > f

# The payloads of one Claude Code Write of f: its PreToolUse and PostToolUse.
S=$(git stella session start)
HOSTID=0c0c0c0c-3333-4333-8333-cccccccccccc
for event in PreToolUse PostToolUse; do
  python3 - "$fixture" "$repo" "$HOSTID" "$event" > "$WORK/$event.json" <<'PY'
import json, sys
fixture, repo, sid, event = sys.argv[1:]
p = json.load(open(fixture))
p.update(session_id=sid, cwd=repo, hook_event_name=event, tool_use_id="toolu_bench")
p["tool_input"] = {"file_path": repo + "/f", "content": "written\n"}
if event == "PreToolUse":
    p.pop("tool_response", None)
else:
    p["tool_response"] = {"type": "update", "filePath": repo + "/f", "content": "written\n", "originalFile": "written\n"}
print(json.dumps(p))
PY
done

# One uncontended write through each entry point, as `bin` (a git-stella).
cli_write() { printf 'written\n' | "$1" --session "$S" write f; }
hook_write() { "$1" hook claude-code < "$WORK/PreToolUse.json" >/dev/null && printf 'written\n' > f && "$1" hook claude-code < "$WORK/PostToolUse.json" >/dev/null; }
shell_write() { "$1" --session "$S" exec -- sh -c 'printf "written\n" > f'; }
"$BIN/git-stella" --session "$S" read f >/dev/null
for how in cli_write hook_write shell_write; do "$how" "$BIN/git-stella" >/dev/null 2>&1; done

# One MCP write_file over a connection already open, as `bin` (mean of RUNS calls, in µs), when
# python3 has the MCP SDK (`pip install mcp`).
mcp_write() {
  python3 - "$1" "$repo" "$RUNS" <<'PY'
import asyncio, sys, time
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
async def main(bin_, repo, n):
    params = StdioServerParameters(command=bin_, args=["mcp"], cwd=repo)
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            await s.call_tool("write_file", {"path": "f", "content": "written\n"})
            start = time.perf_counter()
            for _ in range(n):
                await s.call_tool("write_file", {"path": "f", "content": "written\n"})
            print(int((time.perf_counter() - start) / n * 1e6))
asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
PY
}

echo "| one uncontended write | this build |${BEFORE:+ the build before | change |}"
echo "|---|---|${BEFORE:+---|---|}"
for how in cli_write hook_write shell_write; do
  now=("$how" "$BIN/git-stella")
  if [ -n "${BEFORE:-}" ]; then
    before=("$how" "$BEFORE/git-stella")
    read -r a b < <(median_rounds now before)
    printf '| %s | %s | %s | %s× |\n' "$how" "$(ms "$a")" "$(ms "$b")" "$(ratio "$a" "$b")"
  else
    read -r a < <(median_rounds now)
    printf '| %s | %s |\n' "$how" "$(ms "$a")"
  fi
done

if python3 -c 'import mcp.client.stdio' 2>/dev/null; then
  best_now=999999999 best_before=999999999
  for ((i = 0; i < ROUNDS; i++)); do
    x=$(mcp_write "$BIN/git-stella"); ((x < best_now)) && best_now=$x
    if [ -n "${BEFORE:-}" ]; then x=$(mcp_write "$BEFORE/git-stella"); ((x < best_before)) && best_before=$x; fi
  done
  if [ -n "${BEFORE:-}" ]; then
    printf '| mcp write_file | %s | %s | %s× |\n' "$(ms "$best_now")" "$(ms "$best_before")" "$(ratio "$best_now" "$best_before")"
  else
    printf '| mcp write_file | %s |\n' "$(ms "$best_now")"
  fi
fi

# N sessions writing f at once for SECONDS_EACH: each round reads f, appends a line, writes it
# back; prints "landed refused".
contend() {
  local bin=$1 how=$2 n=$3 i
  echo start > f
  local end=$(($(date +%s%N) + SECONDS_EACH * 1000000000))
  for ((i = 0; i < n; i++)); do
    (
      s=$("$bin" session start)
      ok=0 no=0 k=0
      while (($(date +%s%N) < end)); do
        k=$((k + 1))
        case $how in
          cli)
            "$bin" --session "$s" read f >/dev/null 2>&1 || continue
            if { cat f; echo "$s-$k"; } | "$bin" --session "$s" write f >/dev/null 2>&1; then ok=$((ok + 1)); else no=$((no + 1)); fi
            ;;
          shell)
            if "$bin" --session "$s" exec -- sh -c 'cat f > "f.$0" && echo "$0" >> "f.$0" && mv "f.$0" f' "$s-$k" >/dev/null 2>&1; then ok=$((ok + 1)); else no=$((no + 1)); fi
            ;;
        esac
      done
      echo "$ok $no" > "$WORK/count-$how-$n-$i"
    ) &
  done
  wait
  cat "$WORK"/count-"$how"-"$n"-* | awk '{ok += $1; no += $2} END {print ok, no}'
}

echo
echo "| sessions writing one file at once | through | build | writes landed per second | refused per second | landed writes whose line is lost |"
echo "|---|---|---|---|---|---|"
for how in cli shell; do
  for n in 1 4 16; do
    for build in this ${BEFORE:+before}; do
      bin="$BIN/git-stella"
      [ "$build" = before ] && bin="$BEFORE/git-stella"
      read -r ok no < <(contend "$bin" "$how" "$n")
      lines=$(grep -c -- '-' f || true)
      printf '| %s | %s | %s | %s | %s | %s |\n' "$n" "$how" "$build" \
        "$(awk -v a="$ok" -v s="$SECONDS_EACH" 'BEGIN { printf "%.1f", a / s }')" \
        "$(awk -v a="$no" -v s="$SECONDS_EACH" 'BEGIN { printf "%.1f", a / s }')" \
        "$((ok - lines))"
    done
  done
done
