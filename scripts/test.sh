#!/usr/bin/env bash
# The whole suite, twice: on SQLite and on PostgreSQL (every test server gets a fresh database of
# its own on the server WARREN_TEST_DATABASE_URL names). The two halves run at the same time, each
# in `bun test` processes of its own (WARREN_TEST_PROCESSES, below), their lines prefixed with the
# half's name: a test spends much of its time waiting on git, sockets and the database, so several
# processes keep both cores busy where one leaves them half idle. Both halves always run; each
# prints its own summary, the two are summed on the last line, and the exit status is non-zero if
# any process failed. Arguments are passed to every `bun test` run (files, as below, or a name
# filter).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
# Bun's default limit is 5 s a test (and hook), and it reads none from bunfig.toml; setDefaultTimeout
# holds for one file only. Tests drive real servers, git and ssh, which a machine whose cores are
# busy slows many times over: the limit is there to catch a hang, not to time anything.
TEST_TIMEOUT_MS=120000
# Bun's allocator (mimalloc) gives freed memory back to the system 100 ms after it is freed (its
# `purge_delay`; MIMALLOC_VERBOSE=1 lists the options), and takes it again page by page at the next
# allocation: on a virtual machine whose page faults are dear that was a tenth to a quarter of a
# test process's CPU (a profile of the suite put its scavenger thread alone at 4%; a delay of
# 1,000 ms saved nothing measurable). The test processes keep what they freed (a few hundred MB more
# each at their peak); the `warren` processes the tests start get only their own environment.
export MIMALLOC_PURGE_DELAY=-1
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
# halves take about as long (the suite is as long as its longer half). Within a half the files are
# shared out among WARREN_TEST_PROCESSES `bun test` processes by their recorded times
# (scripts/test-shards.ts, test/timings.json): `WARREN_TEST_TIMINGS=<prefix>` writes each process's
# time per file to `<prefix>.<half>.<process>.json` (bun's --timings), which
# `bun scripts/test-shards.ts record <prefix>.*.json` turns into test/timings.json. Every other
# file runs in both. File arguments are filtered the same way; other arguments (a name filter) go
# to both.
half_of() { sed -n 's|^// runs in one half: \([a-z]*\)$|\1|p' "$1" | head -1; }
files_for() { # half name: the files it runs, one per line
  local f only
  for f in "${FILES[@]}"; do
    only=$(half_of "$f")
    [ -z "$only" ] || [ "$only" = "$1" ] && echo "./${f#./}"
  done
}

run_process() { # half name, process index, then env assignments for `env`, `--`, the files
  local name="$1" index="$2"; shift 2
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  local log="$out_dir/$name.$index.log"
  # The log exists before tail opens it (tail -f gives up on a file not there yet).
  : > "$log"
  local timings=()
  [ -n "${WARREN_TEST_TIMINGS:-}" ] && timings=(--timings="$WARREN_TEST_TIMINGS.$name.$index.json" --update-timings)
  env "${envs[@]}" bun test --timeout "$TEST_TIMEOUT_MS" "${timings[@]}" "${OTHER_ARGS[@]}" "$@" > "$log" 2>&1 &
  local pid=$!
  tail -n +1 --pid="$pid" -f "$log" 2>/dev/null | sed -u "s/^/[$name] /" &
  local status=0
  wait "$pid" || status=$?
  echo "$status" > "$out_dir/$name.$index.status"
  wait # the prefixed copy ends with the process
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
  # The half's files shared out among its processes (scripts/test-shards.ts), each a `bun test` of its own.
  local plan=() index
  mapfile -t plan < <(printf '%s\n' "${files[@]}" | bun scripts/test-shards.ts "$PROCESSES")
  [ ${#plan[@]} -eq ${#files[@]} ] || { echo "=== $name: the files could not be shared out ===" >&2; echo 1 > "$out_dir/$name.status"; return; }
  for index in $(seq 0 $((PROCESSES - 1))); do
    local mine=()
    mapfile -t mine < <(printf '%s\n' "${plan[@]}" | sed -n "s/^$index //p")
    [ ${#mine[@]} -eq 0 ] && continue
    run_process "$name" "$index" "$@" -- "${mine[@]}" &
  done
  wait
  # A process that left no status (it could not be started) failed too.
  local status=0 code
  for index in $(seq 0 $((PROCESSES - 1))); do
    [ -e "$out_dir/$name.$index.log" ] || continue
    code=$(cat "$out_dir/$name.$index.status" 2>/dev/null || echo 1)
    [ "$code" -ne 0 ] && status=$code
  done
  echo "$status" > "$out_dir/$name.status"
  echo "=== $name: exit $status in $((SECONDS - start)) s ==="
}
# `bun test` processes per half (WARREN_TEST_PROCESSES, 2 unless set): a test waits much of its
# time on git, sockets, the database, a browser and timers, so on two cores four processes keep
# them busier than two do.
PROCESSES="${WARREN_TEST_PROCESSES:-2}"
[[ "$PROCESSES" =~ ^[1-9][0-9]?$ ]] || { echo "WARREN_TEST_PROCESSES must be a whole number from 1 to 99, got \"$PROCESSES\"" >&2; exit 2; }
FILES=(); OTHER_ARGS=()
for arg in "$@"; do
  case "$arg" in *.test.ts) FILES+=("$arg") ;; *) OTHER_ARGS+=("$arg") ;; esac
done
[ ${#FILES[@]} -eq 0 ] && FILES=(test/*.test.ts)
# Other arguments (a name filter, `-t`): one process a half, as bun fails a process none of whose
# files has a test the filter names, which shared-out files would make of most filters.
[ ${#OTHER_ARGS[@]} -gt 0 ] && PROCESSES=1
echo "=== sqlite and postgresql, at the same time ==="
run_half sqlite -u WARREN_DATABASE_URL &
run_half postgresql WARREN_DATABASE_URL="$PG_URL" &
wait

passed=0; failed=0; worst=0
echo
echo "=== summary ==="
for name in sqlite postgresql; do
  [ "$(cat "$out_dir/$name.status")" = none ] && { echo "$name: no file of this half was asked for"; continue; }
  hp=0; hf=0; hs=0
  for log in "$out_dir/$name".*.log; do
    [ -e "$log" ] || continue
    p=$(grep -E '^ *[0-9]+ pass$' "$log" | tail -1 | tr -dc 0-9); p=${p:-0}
    f=$(grep -E '^ *[0-9]+ fail$' "$log" | tail -1 | tr -dc 0-9); f=${f:-0}
    s=$(grep -E '^ *[0-9]+ skip$' "$log" | tail -1 | tr -dc 0-9); s=${s:-0}
    # A process that exits 0 without a summary ran nothing: that is a failure too.
    [ "$(cat "${log%.log}.status" 2>/dev/null || echo 1)" -eq 0 ] && [ "$p" -eq 0 ] && worst=1
    hp=$((hp + p)); hf=$((hf + f)); hs=$((hs + s))
  done
  status=$(cat "$out_dir/$name.status")
  echo "$name: $hp pass, $hf fail, $hs skip (exit $status)"
  cat "$out_dir/$name".*.log 2>/dev/null | grep -E '^\(fail\)' | sed "s/^/  $name /"
  passed=$((passed + hp)); failed=$((failed + hf))
  [ "$status" -ne 0 ] && worst=$status
done
echo "$passed passed, $failed failed"
exit "$worst"
