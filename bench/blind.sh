#!/usr/bin/env bash
# Benchmark: what a blind change costs once other sessions hold many writes. A session that never
# read a file asks every other live session whether the bytes there are its uncommitted write
# (SPEC "Blind writes and uncommitted work"). Measured with `git stella guard` on a file the
# session never read, with no other session, and with SESSIONS other sessions that each hold
# FILES paths and wrote one: a file one of them wrote (its bytes committed, so the check goes all
# the way: the index of writers, that session's map, a hash of the file, git's HEAD, then
# allowed), and a file none of them wrote (the index of writers alone). `git hash-object` of the same file
# runs in the same rounds as the reference. Prints a Markdown table for docs/performance.md.
#
#   bash bench/blind.sh                          # builds the release binary first
#   SESSIONS=20 FILES=10000 RUNS=30 bash bench/blind.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SESSIONS=${SESSIONS:-20}
FILES=${FILES:-10000}

repo="$WORK/repo"
git init -q "$repo"
cd "$repo"
mkdir f
for ((i = 0; i < FILES; i++)); do printf 'file %d\n' "$i" >"f/$i.rs"; done
echo "never written by a session" >other.rs
echo "read by the blind session" >mine.rs
git add -A && git commit -q -m files
target="f/$((FILES / 2)).rs"
B=$(git stella session start --id blind)
git stella --session "$B" read mine.rs

hash=(git hash-object "$target")
alone=("$BIN/git-stella" --session "$B" guard "$target")
read -r h0 t0 < <(median_rounds hash alone)

# The other sessions: each holds every file (read), and wrote one file of its own.
for ((s = 0; s < SESSIONS; s++)); do
  id=$(git stella session start --id "writer-$s")
  (cd f && ls | xargs git stella --session "$id" read)
  git stella --session "$id" wrote "f/$s.rs"
done
# The target is the last writer's own file (its bytes committed: the check reads HEAD, then
# allows); guard must allow, a failure here is a wrong result, not a slow one.
target="f/$((SESSIONS - 1)).rs"
wrote=("$BIN/git-stella" --session "$B" guard "$target")
"${wrote[@]}" >/dev/null
missed=("$BIN/git-stella" --session "$B" guard other.rs)
tracked=("$BIN/git-stella" --session "$B" guard mine.rs)
read -r h1 tt t1 tm < <(median_rounds hash tracked wrote missed)

added() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f ms", (a - b) / 1000 }'; }
echo "| case | \`git hash-object\` | \`git stella guard\` | the blind check's cost (over a tracked file, same store) |"
echo "|---|---|---|---|"
echo "| no other session; a file never read | $(ms "$h0") | $(ms "$t0") | – |"
echo "| $SESSIONS sessions holding $FILES paths each; a file the session read | $(ms "$h1") | $(ms "$tt") | – |"
echo "| the same; a file never read that one of them wrote (committed: allowed) | $(ms "$h1") | $(ms "$t1") | $(added "$t1" "$tt") |"
echo "| the same; a file never read that none of them wrote | $(ms "$h1") | $(ms "$tm") | $(added "$tm" "$tt") |"
