#!/usr/bin/env bash
# Benchmarks: each number is a ratio against a reference measured in the same run on the same
# files (git hash-object, git bundle create, b3sum). Prints a Markdown table for docs/performance.md.
# Each side's time is the best of ROUNDS mean times, the two sides measured in alternation.
#
#   bash bench/run.sh                     # builds the release binary first, as install.sh does
#   RUNS=50 ROUNDS=9 bash bench/run.sh    # more repetitions per mean, more rounds
#   ONLY=durability bash bench/run.sh     # only the rows that time syncing to disk
#   ONLY=artifact bash bench/run.sh       # only the checkpoint and verify rows
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
source bench/lib.sh

# What syncing a step to disk costs: each workspace's steps synced (the default) against the same
# steps in a workspace with stella.fsync false. Two rows: a `read` step, and the PostToolUse hook
# Claude Code runs after every Read (the captured payload of tests/fixtures), which records one.
durability_rows() {
  local ws
  for ws in synced nosync; do
    git init -q "$WORK/$ws"
    git -C "$WORK/$ws" commit -q --allow-empty -m init
    echo probe > "$WORK/$ws/probe.txt"
    printf 'alpha\nbeta\n' > "$WORK/$ws/notes.txt"
    sed -e "s|/home/dev/src/demo|$WORK/$ws|g" -e "s|/home/dev|$HOME|g" \
      "$ROOT/tests/fixtures/claude-code/PostToolUse-Read.json" > "$WORK/$ws.json"
  done
  local S U
  S=$(git -C "$WORK/synced" stella session start)
  U=$(git -C "$WORK/nosync" stella session start)
  git config --file "$(git -C "$WORK/nosync" stella store-path)/config" stella.fsync false
  local synced=(git -C "$WORK/synced" stella --session "$S" read probe.txt)
  local unsynced=(git -C "$WORK/nosync" stella --session "$U" read probe.txt)
  read -r a b < <(best_pair synced unsynced)
  row "read step, synced to disk" "$a" "the same step, stella.fsync false" "$b" "≤ +2 ms"
  # As Claude Code runs it: the binary itself, the payload on stdin (a file, so each run reads it
  # afresh). The hook must record the read and say nothing.
  hook_synced() { "$BIN/git-stella" hook claude-code <"$WORK/synced.json"; }
  hook_unsynced() { "$BIN/git-stella" hook claude-code <"$WORK/nosync.json"; }
  [ -z "$(hook_synced)" ] && [ -z "$(hook_unsynced)" ]
  synced=(hook_synced)
  unsynced=(hook_unsynced)
  read -r a b < <(best_pair synced unsynced)
  row "PostToolUse Read hook, synced to disk" "$a" "the same call, stella.fsync false" "$b" "≤ +2 ms"
}

# checkpoint of 1,000 files / 50 MB read in one step: as that step left the store, against git
# bundle create --all of a plain repository with the same files; then after a gc, against git
# bundle create of the same journal. Then verify of that artifact vs b3sum. In a repository of
# their own.
artifact_rows() {
  local dir="$WORK/artifact-repo"
  git init -q "$dir"
  cd "$dir"
  git commit -q --allow-empty -m init
  # checkpoint of 1,000 files / 50 MB vs git bundle create of the same journal.
  mkdir -p ck
  for i in $(seq 1 1000); do head -c 50000 /dev/urandom > "ck/f$i"; done
  C=$(git stella session start)
  seq 1 1000 | sed 's|^|ck/f|' | xargs git stella --session "$C" read
  STORE=$(git stella store-path)
  # As the one read step left the store (objects loose), against git bundle create --all of a
  # plain repository holding the same files as loose objects.
  git init -q "$WORK/plain-ck"
  cp -r ck "$WORK/plain-ck/"
  git -C "$WORK/plain-ck" add ck
  git -C "$WORK/plain-ck" commit -q -m ck
  stella=(git stella --session "$C" checkpoint -o "$WORK/ck.bundle")
  bundle=(git -C "$WORK/plain-ck" bundle create -q "$WORK/ref.bundle" --all)
  read -r a b < <(RUNS=$(((RUNS + 2) / 3)) best_pair stella bundle)
  row "checkpoint, 1,000 files / 50 MB, store as one read left it ($(find "$STORE/objects" -type f | wc -l) files)" "$a" "git bundle create --all, the same files loose" "$b" "≤ 1.2×"
  git --git-dir="$STORE" gc --quiet
  stella=(git stella --session "$C" checkpoint -o "$WORK/ck.bundle")
  bundle=(git --git-dir="$STORE" bundle create -q "$WORK/ref.bundle" "refs/stella/sessions/$C")
  read -r a b < <(RUNS=$(((RUNS + 2) / 3)) best_pair stella bundle)
  row "checkpoint, 1,000 files / 50 MB" "$a" "git bundle create" "$b" "≤ 1.2×"

  # verify of that artifact vs b3sum over the same files.
  if command -v b3sum >/dev/null; then
    stella=(git stella verify "$WORK/ck.bundle")
    b3=(b3sum ck/*)
    read -r a b < <(RUNS=$(((RUNS + 2) / 3)) best_pair stella b3)
    row "verify, 1,000 files / 50 MB" "$a" "b3sum of the same files" "$b" "≤ 1.5×"
  fi
}

echo "| measurement | Stella | reference | reference time | ratio | goal |"
echo "|---|---|---|---|---|---|"

# Only the durability rows: ONLY=durability bash bench/run.sh
if [ "${ONLY:-}" = durability ]; then
  durability_rows
  exit 0
fi
# Only the checkpoint and verify rows: ONLY=artifact bash bench/run.sh
if [ "${ONLY:-}" = artifact ]; then
  artifact_rows
  exit 0
fi

repo="$WORK/repo"
git init -q "$repo"
cd "$repo"
git commit -q --allow-empty -m init

# guard on a 64 KiB file with a 10,000-path session.
mkdir -p many
for i in $(seq 1 10000); do echo "$i" > "many/f$i"; done
head -c 65536 /dev/urandom > small.bin
S=$(git stella session start)
seq 1 10000 | sed 's|^|many/f|' | xargs -n 2500 git stella --session "$S" read
git stella --session "$S" read small.bin
# As agent hosts run it (the hooks and MCP config name the binary itself), then through git's
# dispatch (`git stella`), which adds a git start-up before Stella's own.
stella=("$BIN/git-stella" --session "$S" guard small.bin)
hash=(git hash-object small.bin)
read -r a b < <(RUNS=$((RUNS * 10)) best_pair stella hash)
row "guard, 64 KiB file, 10,000 tracked paths" "$a" "git hash-object" "$b" "≤ 1.2×"
stella=(git stella --session "$S" guard small.bin)
read -r a b < <(RUNS=$((RUNS * 10)) best_pair stella hash)
row "the same through \`git stella\`" "$a" "git hash-object" "$b" "(git's dispatch added)"

# guard on a 50 MB file.
head -c 50000000 /dev/urandom > big.bin
git stella --session "$S" read big.bin
stella=(git stella --session "$S" guard big.bin)
hash=(git hash-object big.bin)
read -r a b < <(RUNS=$(((RUNS + 2) / 3)) best_pair stella hash)
row "guard, 50 MB file" "$a" "git hash-object" "$b" "≤ 0.3×"

# one read step at 100,000 vs 100 tracked paths.
mkdir -p huge
for i in $(seq 1 100000); do echo "$i" > "huge/f$i"; done
L=$(git stella session start)
seq 1 100000 | sed 's|^|huge/f|' | xargs -n 5000 git stella --session "$L" read
T=$(git stella session start)
seq 1 100 | sed 's|^|huge/f|' | xargs git stella --session "$T" read
echo probe > probe.txt
large=(git stella --session "$L" read probe.txt)
small=(git stella --session "$T" read probe.txt)
read -r a b < <(best_pair large small)
row "read step, 100,000 tracked paths" "$a" "read step, 100 tracked paths" "$b" "≤ 1.3×"

durability_rows

artifact_rows
