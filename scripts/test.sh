#!/usr/bin/env bash
# The whole suite, twice: on SQLite and on PostgreSQL (every test server gets a fresh database of
# its own on the server WARREN_TEST_DATABASE_URL names). The two halves run at the same time, each
# in its own `bun test` process, their lines prefixed with the half's name: a test spends much of
# its time waiting on git, sockets and the database, so two processes keep both cores busy where
# one leaves them half idle. Both halves always run; each prints its own summary, the two are
# summed on the last line, and the exit status is non-zero if either half failed. Arguments are
# passed to both `bun test` runs (files, as below, or a name filter).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
# Bun's default limit is 5 s a test (and hook), and it reads none from bunfig.toml; setDefaultTimeout
# holds for one file only. Tests drive real servers, git and ssh, which a machine whose cores are
# busy slows many times over: the limit is there to catch a hang, not to time anything.
TEST_TIMEOUT_MS=120000
PG_URL="${WARREN_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
out_dir="$(mktemp -d)"
trap 'rm -rf "$out_dir"' EXIT

# A test file that does not depend on the run's database runs in one half only, the one its line
# `// runs in one half: sqlite` (or `postgresql`) names: the browser tests (they drive the pages in
# Chromium; the pages' server side is covered by the plain HTTP page tests), the files whose subject
# is git, SSH or markdown rather than the database (git-layer, ssh*, markdown*, the code and graph
# pages), the static checks, and the tests that open the databases they test themselves (the
# `warren` processes of cli, operator-run, shutdown, durability and binary run on SQLite in a data
# folder of their own, those of multi-process* on PostgreSQL, whatever the half: in both halves they
# would only run twice the same). The files free to go in either half are shared out so the two
# halves take about as long (the suite is as long as its longer half): `WARREN_TEST_TIMINGS=<prefix>`
# writes each half's time per file to `<prefix>.<half>.json` (bun's --timings) to share them out
# again. Every other file runs in both. File arguments are filtered the same way; other arguments
# (a name filter) go to both.
half_of() { sed -n 's|^// runs in one half: \([a-z]*\)$|\1|p' "$1" | head -1; }
files_for() { # half name: the files it runs, one per line
  local f only
  for f in "${FILES[@]}"; do
    only=$(half_of "$f")
    [ -z "$only" ] || [ "$only" = "$1" ] && echo "./${f#./}"
  done
}

run_half() { # name, then env assignments for `env`
  local name="$1"; shift
  local start=$SECONDS
  local files=()
  mapfile -t files < <(files_for "$name")
  if [ ${#files[@]} -eq 0 ]; then
    echo "=== $name: none of the files runs in this half ==="
    echo none > "$out_dir/$name.status"
    return
  fi
  # The log exists before tail opens it (tail -f gives up on a file not there yet).
  : > "$out_dir/$name.log"
  local timings=()
  [ -n "${WARREN_TEST_TIMINGS:-}" ] && timings=(--timings="$WARREN_TEST_TIMINGS.$name.json" --update-timings)
  env "$@" bun test --timeout "$TEST_TIMEOUT_MS" "${timings[@]}" "${OTHER_ARGS[@]}" "${files[@]}" > "$out_dir/$name.log" 2>&1 &
  local pid=$!
  tail -n +1 --pid="$pid" -f "$out_dir/$name.log" 2>/dev/null | sed -u "s/^/[$name] /" &
  local status=0
  wait "$pid" || status=$?
  echo "$status" > "$out_dir/$name.status"
  wait # the prefixed copy ends with the process
  echo "=== $name: exit $status in $((SECONDS - start)) s ==="
}
FILES=(); OTHER_ARGS=()
for arg in "$@"; do
  case "$arg" in *.test.ts) FILES+=("$arg") ;; *) OTHER_ARGS+=("$arg") ;; esac
done
[ ${#FILES[@]} -eq 0 ] && FILES=(test/*.test.ts)
echo "=== sqlite and postgresql, at the same time ==="
run_half sqlite -u WARREN_DATABASE_URL &
run_half postgresql WARREN_DATABASE_URL="$PG_URL" &
wait

passed=0; failed=0; worst=0
echo
echo "=== summary ==="
for name in sqlite postgresql; do
  [ "$(cat "$out_dir/$name.status")" = none ] && { echo "$name: no file of this half was asked for"; continue; }
  p=$(grep -E '^ *[0-9]+ pass$' "$out_dir/$name.log" | tail -1 | tr -dc 0-9); p=${p:-0}
  f=$(grep -E '^ *[0-9]+ fail$' "$out_dir/$name.log" | tail -1 | tr -dc 0-9); f=${f:-0}
  s=$(grep -E '^ *[0-9]+ skip$' "$out_dir/$name.log" | tail -1 | tr -dc 0-9); s=${s:-0}
  status=$(cat "$out_dir/$name.status")
  echo "$name: $p pass, $f fail, $s skip (exit $status)"
  grep -E '^\(fail\)' "$out_dir/$name.log" | sed "s/^/  $name /"
  passed=$((passed + p)); failed=$((failed + f))
  [ "$status" -ne 0 ] && worst=$status
  # A half that exits 0 without a summary ran nothing: that is a failure too.
  [ "$status" -eq 0 ] && [ "$p" -eq 0 ] && worst=1
done
echo "$passed passed, $failed failed"
exit "$worst"
