#!/usr/bin/env bash
# Instructions per request of `GET /sandbox/v2/portal/users/me`, counted by valgrind's callgrind. Outside V8's
# compilers (whose share depends on how far compilation has got) the count repeats to within about 0.5 % from run
# to run, where CPU time per request on a shared VM moves by a third
# (docs/performance.md, "Running the benches"). For comparing two versions of fos, not for the goals, which are
# about throughput and latency (`npm run bench`).
#
#   bash bench/instructions.sh [warm-up requests, default 100000] [measured requests, default 3000]
#
# fos runs with --quiet, as bench/run.ts starts it; BENCH_REQUEST_LOG=1 keeps the request log (to a file).
# BENCH_CALLGRIND_OUT=<dir> keeps callgrind's output files there, for callgrind_annotate.
# BENCH_OTLP=1 runs fos with `--otlp` to bench/otlp-sink.ts, as bench/run.ts's telemetry rounds do, and adds the
# OTLP bytes exported per request (traces, and all three signals) over every request of the run.
# BENCH_CONNECTIONS=<n> (default 8): autocannon's connections. On a busy machine more requests arrive per read with
# 8, which moves the count per request; 1 takes that out, for an A/B in the same run.
#
# fos starts under callgrind with instrumentation off, takes the warm-up requests (so that V8 has compiled what it
# will compile), then counts the instructions of every thread over the measured requests. The count is split into
# V8's compilers, its garbage collector and the rest; a major collection in the window adds tens of thousands per
# request, so compare runs without one (the GC figure shows it) or repeat.
# Needs valgrind (on the machine, not from npm) and the dev dependencies (node, autocannon).
set -euo pipefail
cd "$(dirname "$0")/.."
warm="${1:-100000}"
measured="${2:-3000}"
command -v valgrind >/dev/null && command -v callgrind_control >/dev/null || { echo "needs valgrind (callgrind, callgrind_control)" >&2; exit 2; }
tmp="$(mktemp -d)"
sink=""
trap 'kill "$pid" 2>/dev/null || true; [ -z "$sink" ] || kill "$sink" 2>/dev/null || true; rm -rf "$tmp"' EXIT
key="ck_sandbox_$(printf 'ab%.0s' $(seq 1 32))"
cat > "$tmp/seed.json" <<SEED
{"organizations":[{"id":"org_bench","name":"Bench","status":"active","rateLimit":{"sustainedPerSecond":1000000,"burst":1000000},
"users":[{"id":"usr_bench","email":"bench@example.com","role":"admin"}],"apiKeys":[{"key":"$key","access":"read_write","createdBy":"usr_bench"}]}]}
SEED
# The node flags of `npm start`, as bench/run.ts uses them.
# BENCH_NODE_FLAGS adds node flags before them, to try one.
read -r -a start <<<"${BENCH_NODE_FLAGS:-} $(node_modules/.bin/node -p 'require("./package.json").scripts.start.replace(/^(exec )?node /, "")')"
otlp=()
if [ "${BENCH_OTLP:-}" = 1 ]; then
  node_modules/.bin/node bench/otlp-sink.ts > "$tmp/sink" 2>&1 &
  sink=$!
  for _ in $(seq 1 100); do grep -q '^otlp: ' "$tmp/sink" 2>/dev/null && break; sleep 0.1; done
  otlp=(--otlp "$(sed -n 's|^otlp: ||p' "$tmp/sink")")
  [ -n "${otlp[1]}" ] || { cat "$tmp/sink" >&2; echo "the OTLP sink did not start" >&2; exit 1; }
fi
valgrind --tool=callgrind --instr-atstart=no --smc-check=all-non-file --callgrind-out-file="$tmp/cg.out" \
  node_modules/.bin/node "${start[@]}" --store memory --port 0 --host 127.0.0.1 --seed "$tmp/seed.json" "${otlp[@]}" \
  $([ "${BENCH_REQUEST_LOG:-}" = 1 ] || echo --quiet) > "$tmp/log" 2>&1 &
pid=$!
origin=""
for _ in $(seq 1 600); do
  origin="$(sed -n 's|^sandbox: \(http://[^/]*\)/sandbox$|\1|p' "$tmp/log" 2>/dev/null)"
  [ -n "$origin" ] && break
  sleep 0.5
done
[ -n "$origin" ] || { cat "$tmp/log" >&2; echo "fos did not start" >&2; exit 1; }
url="$origin/sandbox/v2/portal/users/me"
load() { node_modules/.bin/node node_modules/autocannon/autocannon.js -c "${BENCH_CONNECTIONS:-8}" -a "$1" -H "x-api-key: $key" "$url" > "$tmp/load" 2>&1; }
load "$warm"
callgrind_control -i on "$pid" > /dev/null 2>&1
load "$measured"
callgrind_control -i off "$pid" > /dev/null 2>&1
callgrind_control -d "$pid" > /dev/null 2>&1
sleep 1
kill "$pid"; wait "$pid" 2>/dev/null || true
if [ -n "$sink" ]; then
  # fos sent what was left on SIGTERM; the sink then prints what it was sent.
  kill "$sink"; wait "$sink" 2>/dev/null || true
  sink=""
  sed -n 's|^otlp received: \([0-9]*\) (traces \([0-9]*\)).*|\1 \2|p' "$tmp/sink" | {
    read -r all traces
    n=$((warm + measured))
    echo "OTLP bytes exported per request: traces $((traces / n)), all signals $((all / n)) over $n requests"
  }
fi
[ -z "${BENCH_CALLGRIND_OUT:-}" ] || { mkdir -p "$BENCH_CALLGRIND_OUT"; cp "$tmp"/cg.out* "$BENCH_CALLGRIND_OUT"/; }
grep -q "$measured requests in\|[0-9]k requests in" "$tmp/load" || { cat "$tmp/load" >&2; echo "the measured load did not complete" >&2; exit 1; }
for f in "$tmp"/cg.out*; do callgrind_annotate --threshold=100 --inclusive=no "$f" 2>/dev/null; done | awk -v n="$measured" '
  /^Profile data file/ { body = 0 }
  /file:function/ { body = 1; next }
  body && /^ *[0-9,]+ / && !/PROGRAM TOTALS/ {
    count = $1; gsub(",", "", count)
    if ($0 ~ /compiler::|Compiler|[Mm]aglev|[Tt]urboshaft/) compiler += count
    else if ($0 ~ /Scaveng|MarkCompact|Marking|Sweep|Heap::|Evacuat|Minor/) gc += count
    else rest += count
  }
  END {
    printf "instructions per request: %d (V8 compilers %d, garbage collector %d, the rest %d) over %d requests\n",
      (compiler + gc + rest) / n, compiler / n, gc / n, rest / n, n
  }'
