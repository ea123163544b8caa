# Shared by the benchmarks (source it): builds the release binary as install.sh does, puts it
# first on PATH, makes a scratch HOME and STELLA_HOME, and gives the timing helpers. Each side's
# time is the best of ROUNDS mean times of RUNS runs, the two sides measured in alternation.
# The binaries install.sh ships, built the same way; or, with BIN set, the git-stella in that
# folder (an earlier build, to compare).
if [ -z "${BIN:-}" ]; then
  source scripts/release.sh
  cargo build --release --quiet --locked ${release_args[@]+"${release_args[@]}"}
  BIN="$PWD/$release_dir"
fi
RUNS=${RUNS:-30}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# Copies are run, as install.sh installs them: the linker's own output starts slower (its pages
# fault in one at a time: a guarded `true` took 0.3 ms more from the build folder than from a copy
# beside it), which no installed binary does.
mkdir -p "$WORK/bin"
for b in git-stella stella-mcp; do
  if [ -x "$BIN/$b" ]; then cp "$BIN/$b" "$WORK/bin/"; fi
done
BIN="$WORK/bin"
export PATH="$BIN:$PATH"
export STELLA_HOME="$WORK/stella" GIT_CONFIG_NOSYSTEM=1 HOME="$WORK/home"
mkdir -p "$HOME"
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid

# Mean wall time of RUNS runs of a command, in microseconds.
time_us() {
  local start end i
  start=$(date +%s%N)
  for ((i = 0; i < RUNS; i++)); do "$@" >/dev/null 2>&1 || true; done
  end=$(date +%s%N)
  echo $(( (end - start) / RUNS / 1000 ))
}
# Best of ROUNDS mean times (µs) of two commands measured in alternation, printed as "A B": a
# burst of load on a shared machine then hits both sides rather than one.
ROUNDS=${ROUNDS:-5}
best_pair() {
  local -n first=$1 second=$2
  local ba=999999999 bb=999999999 x i
  for ((i = 0; i < ROUNDS; i++)); do
    x=$(time_us "${first[@]}"); ((x < ba)) && ba=$x
    x=$(time_us "${second[@]}"); ((x < bb)) && bb=$x
  done
  echo "$ba $bb"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
row() { printf '| %s | %s µs | %s | %s µs | **%s×** | %s |\n' "$1" "$2" "$3" "$4" "$(ratio "$2" "$4")" "$5"; }


# Median of ROUNDS mean times (µs) of several commands, given as names of arrays, measured in
# alternation round by round; printed as one line of numbers in the order given.
median_rounds() {
  local names=("$@") i n
  local -A times=()
  for ((i = 0; i < ROUNDS; i++)); do
    for n in "${names[@]}"; do
      local -n cmd=$n
      times[$n]+="$(time_us "${cmd[@]}") "
      unset -n cmd
    done
  done
  for n in "${names[@]}"; do
    printf '%s ' "$(tr ' ' '\n' <<<"${times[$n]}" | grep . | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')"
  done
  echo
}
ms() { awk -v a="$1" 'BEGIN { printf "%.1f ms", a / 1000 }'; }
