#!/usr/bin/env bash
# Benchmark of the shell guard: each command under `git stella exec` against the same command
# run plainly, measured in alternation in the same run. Prints a Markdown table for the README.
#
#   bash bench/exec.sh                    # builds the release binary first, as install.sh does
#   RUNS=20 ROUNDS=7 bash bench/exec.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

repo="$WORK/repo"
git init -q "$repo"
cd "$repo"
git commit -q --allow-empty -m init
git stella exec --check >/dev/null || { echo "error: this machine cannot run the shell guard" >&2; exit 2; }
S=$(git stella session start)

echo "| measurement | under \`exec\` | plain | plain time | ratio | goal |"
echo "|---|---|---|---|---|---|"

# (a) `true`, the program (not the shell builtin): what the guard adds to any command.
true_bin=$(type -P true)
guarded=("$BIN/git-stella" --session "$S" exec -- "$true_bin")
plain=("$true_bin")
read -r a b < <(RUNS=$((RUNS * 10)) best_pair guarded plain)
printf '| `true` | %s µs | `true` | %s µs | +%s ms | ≤ +3 ms |\n' "$a" "$b" \
  "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (a - b) / 1000 }')"

# (b) a command reading every file of a 10,000-file tree (1 KiB each), committed so git tracks
# them: `git grep` and `cat`.
mkdir -p tree
for d in $(seq 1 100); do
  mkdir -p "tree/d$d"
  for f in $(seq 1 100); do head -c 1024 /dev/urandom | base64 -w 64 > "tree/d$d/f$f"; done
done
git add tree && git commit -q -m tree
guarded=("$BIN/git-stella" --session "$S" exec -- git grep -q no-such-text-anywhere)
plain=(git grep -q no-such-text-anywhere)
read -r a b < <(RUNS=$(((RUNS + 4) / 5)) best_pair guarded plain)
row "\`git grep\` over 10,000 files" "$a" "the same, plain" "$b" "≤ 1.3×"
guarded=("$BIN/git-stella" --session "$S" exec -- sh -c 'cat tree/*/* >/dev/null')
plain=(sh -c 'cat tree/*/* >/dev/null')
read -r a b < <(RUNS=$(((RUNS + 4) / 5)) best_pair guarded plain)
row "\`cat\` of 10,000 files" "$a" "the same, plain" "$b" "≤ 1.3×"

# (c) a command writing 1,000 files.
mkdir -p out
write='for i in $(seq 1 1000); do echo "$i" > out/f$i; done'
guarded=("$BIN/git-stella" --session "$S" exec -- sh -c "$write")
plain=(sh -c "$write")
read -r a b < <(RUNS=$(((RUNS + 4) / 5)) best_pair guarded plain)
row "writing 1,000 files" "$a" "the same, plain" "$b" "≤ 1.3×"
