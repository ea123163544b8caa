#!/usr/bin/env bash
# Benchmark: start-up of the calls an agent host makes before every edit — `guard`, and each
# host's hook on its pre-write event — against `git hash-object` of the same file in the same run.
# Prints a Markdown table (see bench/lib.sh for how each side is timed).
#
#   bash bench/startup.sh                 # builds the release binary first, as install.sh does
#   BASELINE=/path/to/old/git-stella bash bench/startup.sh
#                                         # each row against that older build instead (before/after)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

# Both builds run from the same folder: where a binary lies (its file system, its page cache)
# moved start-up by up to a third in measurements here, more than any change to the code.
mkdir -p "$WORK/new" "$WORK/old"
cp "$BIN/git-stella" "$WORK/new/git-stella"
BIN="$WORK/new"
if [[ -n "${BASELINE:-}" ]]; then
  cp "$BASELINE" "$WORK/old/git-stella"
  BASELINE="$WORK/old/git-stella"
fi
export PATH="$BIN:$PATH"
repo="$WORK/repo"
git init -q "$repo"
cd "$repo"
git commit -q --allow-empty -m init
head -c 16384 /dev/urandom | base64 > notes.txt
git stella session start --id bench-session >/dev/null
git stella --session bench-session read notes.txt
for host in claude codex gemini; do
  git stella session start --id "bench-$host" >/dev/null
  git stella --session "bench-$host" read notes.txt
done

printf '{"session_id":"bench-claude","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"%s/notes.txt","old_string":"a","new_string":"b","replace_all":false},"tool_use_id":"toolu_bench"}' \
  "$repo" "$repo" > "$WORK/claude.json"
printf '{"session_id":"bench-codex","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\\n*** Update File: notes.txt\\n@@\\n-a\\n+b\\n*** End Patch\\n"},"tool_use_id":"call_bench"}' \
  "$repo" > "$WORK/codex.json"
printf '{"session_id":"bench-gemini","cwd":"%s","hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{"file_path":"notes.txt","content":"x\\n"}}' \
  "$repo" > "$WORK/gemini.json"

echo "| measurement | Stella | reference | reference time | ratio |"
echo "|---|---|---|---|---|"
# The reference: git hash-object of the same file, or the same call to the BASELINE build.
refname="git hash-object"
[[ -n "${BASELINE:-}" ]] && refname="the same, baseline build"
hash=(git hash-object notes.txt)
guard=("$BIN/git-stella" --session bench-session guard notes.txt)
[[ -n "${BASELINE:-}" ]] && hash=("$BASELINE" --session bench-session guard notes.txt)
read -r a b < <(RUNS=$((RUNS * 5)) best_pair guard hash)
printf '| %s | %s µs | %s | %s µs | **%s×** |\n' "guard, 22 KB file" "$a" "$refname" "$b" "$(ratio "$a" "$b")"
for host in claude-code:claude codex gemini; do
  name=${host%%:*} file=${host##*:}
  # The hook must allow (the file is as read) and deny nothing.
  out=$("$BIN/git-stella" hook "$name" < "$WORK/$file.json")
  case "$out" in *deny*) echo "error: the $name hook denied: $out" >&2; exit 2 ;; esac
  call=(sh -c "exec '$BIN/git-stella' hook $name < '$WORK/$file.json'")
  ref=(sh -c "exec git hash-object notes.txt < /dev/null")
  [[ -n "${BASELINE:-}" ]] && ref=(sh -c "exec '$BASELINE' hook $name < '$WORK/$file.json'")
  read -r a b < <(RUNS=$((RUNS * 5)) best_pair call ref)
  printf '| %s | %s µs | %s | %s µs | **%s×** |\n' "hook $name, pre-write event" "$a" "$refname" "$b" "$(ratio "$a" "$b")"
done

# A shell command as Codex runs it under Stella's hooks: the pre-event that rewrites it, then the
# rewritten command, which runs it under the shell guard and records the read. Against the same
# `cat` run as Codex would run it without Stella (`bash -c`).
[[ -n "${BASELINE:-}" ]] && exit 0
printf '{"session_id":"bench-codex","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cat notes.txt"},"tool_use_id":"call_bench_sh"}' \
  "$repo" > "$WORK/codex-bash.json"
rewritten=$("$BIN/git-stella" hook codex < "$WORK/codex-bash.json" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["hookSpecificOutput"]["updatedInput"]["command"])')
call=(sh -c "'$BIN/git-stella' hook codex < '$WORK/codex-bash.json' >/dev/null && bash -c \"\$0\" >/dev/null" "$rewritten")
ref=(bash -c "cat notes.txt >/dev/null")
read -r a b < <(best_pair call ref)
printf '| %s | %s µs | %s | %s µs | **%s×** |\n' "Codex shell command: hook + cat under the guard" "$a" "bash -c cat" "$b" "$(ratio "$a" "$b")"
