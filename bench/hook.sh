#!/usr/bin/env bash
# Benchmark: `git stella hook claude-code` on a PreToolUse Edit payload (the hot path: it runs
# before every edit) against `git hash-object` of the same file, measured in the same run.
# Prints hyperfine's tables and the ratio per file size, each side's best of ROUNDS (default 3)
# hyperfine runs. Needs hyperfine:
#   bash bench/hook.sh        # builds the release binary first, as install.sh does
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/release.sh
cargo build --release --quiet --locked ${release_args[@]+"${release_args[@]}"}
command -v hyperfine >/dev/null || { echo "error: hyperfine is not installed" >&2; exit 2; }

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
# A copy is timed, as install.sh installs one: the linker's own output starts slower
# (bench/lib.sh says why).
cp "$release_dir/git-stella" "$TMP/git-stella"
BIN="$TMP/git-stella"
export STELLA_HOME="$TMP/stella" HOME="$TMP/home" GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME"
REPO="$TMP/repo"
git init -q "$REPO"
cd "$REPO"
git -c user.name=b -c user.email=b@b commit -q --allow-empty -m init
SID=bench-session
"$BIN" session start --id "$SID" >/dev/null

for size in 1K 1M 16M; do
    FILE="$REPO/file-$size.txt"
    head -c "$size" /dev/urandom | base64 > "$FILE"
    "$BIN" --session "$SID" read "$FILE"
    PAYLOAD="$TMP/payload-$size.json"
    printf '{"session_id":"%s","transcript_path":"%s/t.jsonl","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"%s","old_string":"a","new_string":"b","replace_all":false},"tool_use_id":"toolu_bench"}' \
        "$SID" "$TMP" "$REPO" "$FILE" > "$PAYLOAD"
    # The hook must allow (a fresh file) and say nothing.
    [ -z "$("$BIN" hook claude-code < "$PAYLOAD")" ]
    bytes=$(stat -c %s "$FILE")
    echo "== file of $bytes bytes"
    # Both through the same shell (hyperfine subtracts its start-up), so stdin can be redirected.
    # ROUNDS runs of hyperfine, the order of the two swapped each round; each side's best mean
    # and best median count, so a burst of load on the shared machine does not hit one side only.
    for ((round = 0; round < ${ROUNDS:-3}; round++)); do
        git_cmd=(-n "git hash-object" "git hash-object '$FILE' </dev/null")
        hook_cmd=(-n "hook claude-code" "'$BIN' hook claude-code < '$PAYLOAD'")
        if ((round % 2)); then order=("${hook_cmd[@]}" "${git_cmd[@]}"); else order=("${git_cmd[@]}" "${hook_cmd[@]}"); fi
        hyperfine --warmup 20 --min-runs 200 --export-json "$TMP/h-$size-$round.json" "${order[@]}" >&2
    done
    python3 - "$bytes" "$TMP"/h-"$size"-*.json <<'PY'
import json, sys
best = {}
for path in sys.argv[2:]:
    for x in json.load(open(path))["results"]:
        b = best.setdefault(x["command"], {"mean": x["mean"], "median": x["median"]})
        b["mean"], b["median"] = min(b["mean"], x["mean"]), min(b["median"], x["median"])
g, h = best["git hash-object"], best["hook claude-code"]
print(f"{sys.argv[1]:>9} bytes: git hash-object {g['mean']*1e3:.2f} ms (median {g['median']*1e3:.2f}), "
      f"hook {h['mean']*1e3:.2f} ms (median {h['median']*1e3:.2f}), ratio {h['mean']/g['mean']:.2f}x (medians {h['median']/g['median']:.2f}x)")
PY
done
