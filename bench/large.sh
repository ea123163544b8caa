#!/usr/bin/env bash
# One large file: what `read` and `checkpoint` cost in memory and time, against git doing the
# same with the same file (measured in the same run). Prints two Markdown tables for docs/performance.md.
#
#   bash bench/large.sh                  # a 200 MB file of random bytes, then one of text
#   SIZE=50000000 bash bench/large.sh    # another size
#   BIN=/path/to/dir bash bench/large.sh # the git-stella in that folder, not a fresh build
#
# Memory: "Stella" is the peak resident size of the git-stella process itself (VmHWM, polled
# while it runs); "with git" adds the git helpers it starts (GNU time's maximum over the process
# tree: the largest of them, not their sum). Git maps the objects it reads, so its helpers' peak
# grows with the file whatever Stella does. Time: best of ROUNDS single runs, in alternation.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SIZE=${SIZE:-200000000}
ROUNDS=${ROUNDS:-3}
mib() { awk -v k="$1" 'BEGIN { printf "%d", k / 1024 }'; }

# measure CMD...: run CMD once; prints "<seconds> <peak KiB of CMD itself> <peak KiB of its tree>".
measure() {
  local out="$WORK/time.out" pid child="" hwm=0 k v rest
  /usr/bin/time -f '%e %M' -o "$out" "$@" >/dev/null 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    [ -z "$child" ] && child=$(pgrep -P "$pid" | head -n 1 || true)
    if [ -n "$child" ]; then
      {
        while read -r k v rest; do
          [ "$k" = VmHWM: ] && ((v > hwm)) && hwm=$v
        done <"/proc/$child/status"
      } 2>/dev/null || true
    fi
    sleep 0.02
  done
  wait "$pid" || true
  local secs tree
  read -r secs tree <"$out"
  echo "$secs $hwm $tree"
}

repo="$WORK/repo"
plain="$WORK/plain"
git init -q "$repo"
git -C "$repo" commit -q --allow-empty -m init
cd "$repo"

# checkpoint_rows SESSION WHAT REFERENCE: the memory row of SESSION's checkpoint against `git
# bundle create` of $plain, printed; its time row, kept for the second table.
checkpoint_rows() {
  local own tree ref_tree a b
  read -r _ own tree < <(measure "$BIN/git-stella" --session "$1" checkpoint -o "$WORK/ck.bundle")
  read -r _ _ ref_tree < <(measure git -C "$plain" bundle create -q "$WORK/ref.bundle" --all)
  echo "| \`checkpoint\`, $2 | $(mib "$own") MiB | $(mib "$tree") MiB | \`git bundle create\` | $(mib "$ref_tree") MiB | Stella ≤ 64 MiB |"
  stella=("$BIN/git-stella" --session "$1" checkpoint -o "$WORK/ck.bundle")
  bundle=(git -C "$plain" bundle create -q "$WORK/ref.bundle" --all)
  read -r a b < <(RUNS=1 best_pair stella bundle)
  time_rows+=("$(row "checkpoint, $2" "$a" "git bundle create of $3" "$b" "≤ 1.2×")")
}

echo "| measurement | Stella | with git's helpers | reference | reference peak | goal |"
echo "|---|---|---|---|---|---|"
time_rows=()
for kind in random text; do
  label="$((SIZE / 1000000)) MB $kind"
  case $kind in
  random) head -c "$SIZE" /dev/urandom >big ;;
  # base64 ends early when the last head has its bytes: that broken pipe is expected.
  text) head -c "$((SIZE * 3 / 4 + 3))" /dev/urandom | base64 -w 76 | head -c "$SIZE" >big || true ;;
  esac
  # The reference: a plain repository holding the same file as a loose object.
  rm -rf "$plain"
  git init -q "$plain"
  cp big "$plain/big"
  read -r _ ref_own _ < <(measure git -C "$plain" hash-object -w big)
  git -C "$plain" add big
  git -C "$plain" commit -q -m big

  S=$(git stella session start)
  read -r _ own tree < <(measure "$BIN/git-stella" --session "$S" read big)
  echo "| \`read\`, $label file | $(mib "$own") MiB | $(mib "$tree") MiB | \`git hash-object -w\` | $(mib "$ref_own") MiB | Stella ≤ 64 MiB |"
  checkpoint_rows "$S" "one $label file" "the same blob"
done

# Two large files in one session: git's delta search compares each blob with the other.
head -c "$SIZE" /dev/urandom >big
head -c "$SIZE" /dev/urandom >big2
rm -rf "$plain"
git init -q "$plain"
cp big big2 "$plain/"
git -C "$plain" add big big2
git -C "$plain" commit -q -m big
S=$(git stella session start)
"$BIN/git-stella" --session "$S" read big big2
checkpoint_rows "$S" "two $((SIZE / 1000000)) MB random files" "the same blobs"
echo
echo "| measurement | Stella | reference | reference time | ratio | goal |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${time_rows[@]}"
