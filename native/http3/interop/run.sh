#!/usr/bin/env bash
# Interop: aioquic's HTTP/3 client against cog-http3's example server, on 127.0.0.1 only.
# Needs Python with aioquic (pip install aioquic); PYTHON names the interpreter.
# Runs twice: with Retry (address validation, the default) and without.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-python3}"
PORT="${PORT:-4433}"
cargo build -q -p cog-http3 --example serve
status=0
for mode in "" "--no-retry"; do
  ./target/debug/examples/serve "127.0.0.1:$PORT" $mode --requests 23 > /tmp/cog-http3-serve.log 2>&1 &
  server=$!
  sleep 0.5
  echo "== aioquic client, server ${mode:-with Retry}"
  "$PYTHON" http3/interop/aioquic_client.py "$PORT" || status=1
  wait "$server" || status=1
  grep -E "^(answered|closed)" /tmp/cog-http3-serve.log || true
done
exit $status
