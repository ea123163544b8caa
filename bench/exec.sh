#!/usr/bin/env bash
# Benchmark of the shell guard: each command plain, under the mechanism's floor (bench/floor.c, a
# supervisor that only reads each trapped call's path and answers "continue"), under the floor of
# a guard whose check and write are one step (`floor --one-step`: it opens a file for writing
# itself, under its folder's flock, and hands the caller the descriptor), under the floor of a
# one-step guard that also takes the looks a sound check needs (`floor --checked`: a `stat` per
# read, the file read whole before a write, a written file marked and its close watched), and
# under `git stella exec`, in alternation in the same run. Prints a Markdown table for
# docs/performance.md: the median of ROUNDS mean times of RUNS runs for each side, and `exec` over
# each floor; then the supervisor's peak memory while a command reads 100,000 files (GNU time,
# /usr/bin/time). The install row runs a second time in a workspace on tmpfs (/dev/shm) where
# the machine has one: on a disk that row is mostly the filesystem's own time.
#
#   bash bench/exec.sh                    # builds the release binary first, as install.sh does
#   RUNS=10 ROUNDS=7 bash bench/exec.sh
#   BASELINE=/path/to/old/git-stella bash bench/exec.sh
#                                         # and an older build beside it, in the same alternation
#                                         # (its own session), for a before/after column
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
RUNS=${RUNS:-10}

floor="$WORK/floor"
cc -O2 -pthread -o "$floor" bench/floor.c

repo="$WORK/repo"
git init -q "$repo"
cd "$repo"
git commit -q --allow-empty -m init
git stella exec --check >/dev/null || { echo "error: this machine cannot run the shell guard" >&2; exit 2; }
S=$(git stella session start)
printf 'build/\nnode_modules/\n' > .gitignore
# A pass of the configuration check is remembered once git's configuration files have been
# still for two seconds (docs/claude-code.md), as in any repository not configured a moment ago.
sleep 2
if [[ -n "${BASELINE:-}" ]]; then
  # Beside the new one, from the same folder: where a binary lies moves its start-up.
  cp "$BASELINE" "$WORK/git-stella-before"
  BASELINE="$WORK/git-stella-before"
  SB=$("$BASELINE" session start)
fi

echo "| workload | plain | floor | floor, one step | floor, checked | \`exec\` | floor ÷ plain | \`exec\` ÷ floor | \`exec\` ÷ one-step floor | \`exec\` ÷ checked floor | \`exec\` ÷ floor, first sight |${BASELINE:+ before ÷ floor | \`exec\` ÷ before |}"
echo "|---|---|---|---|---|---|---|---|---|---|---|${BASELINE:+---|---|}"

# One row: the command (the words after `--`) plain, under the floor, under `exec` with a session
# that already holds the files (it ran the command once before), and, with FIRST=1, under `exec`
# with a new session each run (its `session start` included).
measure() {
  local label=$1 runs=$2
  shift 2
  local plain=("$@") under_floor=("$floor" -- "$@") one_step=("$floor" --one-step -- "$@")
  local checked=("$floor" --checked -- "$@")
  local guarded=("$BIN/git-stella" --session "$S" exec -- "$@")
  "${guarded[@]}" >/dev/null 2>&1 || true
  local a b c o k e first="–" before=""
  if [[ -n "${BASELINE:-}" ]]; then
    local older=("$BASELINE" --session "$SB" exec -- "$@")
    "${older[@]}" >/dev/null 2>&1 || true
    read -r a b o k c e < <(RUNS=$runs median_rounds plain under_floor one_step checked guarded older)
    before=" $(ratio "$e" "$b")× ($(ms "$e")) | $(ratio "$c" "$e")× |"
  else
    read -r a b o k c < <(RUNS=$runs median_rounds plain under_floor one_step checked guarded)
  fi
  if [ "${FIRST:-0}" = 1 ]; then
    local line
    printf -v line '%q ' "$@"
    local fresh=(sh -c "exec \"$BIN/git-stella\" --session \"\$(\"$BIN/git-stella\" session start)\" exec -- $line")
    local d
    read -r d < <(RUNS=1 median_rounds fresh)
    first="$(ratio "$d" "$b")× ($(ms "$d"))"
  fi
  printf '| %s | %s | %s | %s | %s | %s | %s× | **%s×** | %s× | %s× | %s |%s\n' "$label" "$(ms "$a")" "$(ms "$b")" \
    "$(ms "$o")" "$(ms "$k")" "$(ms "$c")" "$(ratio "$b" "$a")" "$(ratio "$c" "$b")" "$(ratio "$c" "$o")" \
    "$(ratio "$c" "$k")" "$first" "$before"
}

# `true`, the program (not the shell builtin): what the guard adds to any command.
measure '`true`' $((RUNS * 10)) "$(type -P true)"

# A tree of 10,000 files of 1.4 KB, committed: tools reading every file.
for d in $(seq 1 100); do
  mkdir -p "tree/d$d"
  for f in $(seq 1 100); do head -c 1024 /dev/urandom | base64 -w 64 > "tree/d$d/f$f"; done
done
git add .gitignore tree && git commit -q -m tree
FIRST=1 measure '`find tree -type f -exec cat {} +`' "$RUNS" sh -c 'find tree -type f -exec cat {} + >/dev/null'
FIRST=1 measure '`git grep` (threads)' "$RUNS" git grep -q no-such-text-anywhere

# The floor of receiving on more than one thread: `git grep`'s threads each wait for the one
# supervisor thread; here as many threads as the machine has cores each receive and answer.
threads_floor() {
  local cores
  cores=$(nproc)
  local one=("$floor" -- git grep -q no-such-text-anywhere)
  local many=("$floor" --threads "$cores" -- git grep -q no-such-text-anywhere)
  local a b
  read -r a b < <(RUNS=$RUNS median_rounds one many)
  threads_line="\`git grep\`: the floor with $cores receiving threads $(ms "$b") against one thread's $(ms "$a"): **$(ratio "$b" "$a")×**"
}
threads_floor

# Writing 1,000 files.
mkdir -p out
measure 'writing 1,000 files' "$RUNS" sh -c 'for i in $(seq 1 1000); do echo "$i" > out/f$i; done'

# A build: 40 small C files compiled by make, two at a time, into a gitignored folder.
mkdir -p src
for i in $(seq 1 40); do
  printf '#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\nint f%d(const char *s) { char b[64]; snprintf(b, sizeof b, "%%s%d", s); return (int)strlen(b) + atoi(s); }\n' "$i" "$i" > "src/f$i.c"
done
printf 'OBJ := $(patsubst src/%%.c,build/%%.o,$(wildcard src/*.c))\nall: $(OBJ)\nbuild/%%.o: src/%%.c\n\t@mkdir -p build\n\t@cc -O1 -c $< -o $@\n' > Makefile
git add src Makefile && git commit -q -m src
FIRST=1 measure 'a build (`make -j2`, 40 C files)' "$(((RUNS + 4) / 5))" sh -c 'rm -rf build && make -s -j2'

# An install: 20,000 small files unpacked into a gitignored folder.
mkdir -p "$WORK/pkg/node_modules"
for d in $(seq 1 200); do
  mkdir -p "$WORK/pkg/node_modules/p$d/lib"
  for f in $(seq 1 100); do echo "module.exports = $d * $f;" > "$WORK/pkg/node_modules/p$d/lib/f$f.js"; done
done
tar -C "$WORK/pkg" -cf "$WORK/pkg.tar" node_modules
measure 'an install (`tar x`, 20,000 files, gitignored)' "$(((RUNS + 4) / 5))" sh -c "rm -rf node_modules && tar -xf '$WORK/pkg.tar'"

# The same install in a workspace in memory, where the machine has a tmpfs at /dev/shm: on a
# disk the row is mostly the filesystem's own time, which hides what each call costs.
if [[ "$(stat -f -c %T /dev/shm 2>/dev/null)" == tmpfs && -w /dev/shm ]]; then
  SHM=$(mktemp -d /dev/shm/stella-bench.XXXXXX)
  trap 'rm -rf "$WORK" "$SHM"' EXIT
  cp "$WORK/pkg.tar" "$SHM/pkg.tar"
  git init -q "$SHM/repo"
  (
    cd "$SHM/repo"
    printf 'node_modules/\n' > .gitignore
    git add .gitignore && git commit -q -m init
    S=$(git stella session start)
    sleep 2
    measure 'the same install, the workspace in memory (`tmpfs`)' "$RUNS" sh -c "rm -rf node_modules && tar -xf '$SHM/pkg.tar'"
  )
fi

echo
echo "$threads_line"

# Memory: the supervisor's peak resident size (GNU time's %M of `git stella exec`) while a command
# reads 100,000 committed workspace files, for a new session and for one that holds them.
if [ -x /usr/bin/time ]; then
  python3 - <<'PY'
import os
for d in range(1000):
    os.makedirs(f"big/d{d}", exist_ok=True)
    for f in range(100):
        with open(f"big/d{d}/f{f}", "w") as out:
            out.write(f"{d} {f}\n" * 20)
PY
  git add big && git commit -q -m big
  sleep 1
  peak() {
    /usr/bin/time -f '%M %e' "$@" sh -c 'find big -type f -exec cat {} + >/dev/null' 2>&1 >/dev/null | tail -1
  }
  M=$(git stella session start)
  read -r first_kb first_s < <(peak "$BIN/git-stella" --session "$M" exec --)
  # A command keeps at most 8 MiB of the bytes it reads: the session holds all of these after a
  # few commands, and a read of what it holds records nothing.
  for _ in 1 2 3; do peak "$BIN/git-stella" --session "$M" exec -- >/dev/null; done
  read -r held_kb held_s < <(peak "$BIN/git-stella" --session "$M" exec --)
  read -r floor_kb floor_s < <(peak "$floor" --)
  echo
  echo "| reading 100,000 files | supervisor's peak | time |"
  echo "|---|---|---|"
  printf '| the floor | %s MiB | %s s |\n' "$((floor_kb / 1024))" "$floor_s"
  printf '| `exec`, first sight | %s MiB | %s s |\n' "$((first_kb / 1024))" "$first_s"
  printf '| `exec`, the session holding them | %s MiB | %s s |\n' "$((held_kb / 1024))" "$held_s"
fi
