#!/usr/bin/env bash
# Throughput of the `proxy` network mode: 100 MiB over HTTP from a loopback fixture, fetched by
# curl in the sandbox directly (workspace-net, the host's network) and through sbx's proxy
# (a proxy profile naming the fixture through a hosts file), in one run. curl reports its own
# download speed, so the sandbox's start-up is not part of either figure.
# Usage: benches/proxy.sh [runs] [sbx-binary]   (builds the release binary unless one is given)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-7}
sbx=${2:-}
if [ -z "$sbx" ]; then
  cargo build --release --quiet
  sbx=$PWD/target/$(rustc -vV | sed -n 's/^host: //p')/release/sbx
fi
work=$(mktemp -d /var/tmp/sbx-bench.XXXXXX)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
mkdir "$work/www" "$work/ws"
head -c $((100 << 20)) /dev/urandom >"$work/www/blob"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/www" >/dev/null 2>&1 &
server=$!
until curl -s -o /dev/null "http://127.0.0.1:$port/"; do sleep 0.1; done
echo "127.0.0.1 blob.test" >"$work/hosts"
cat >"$work/proxy.toml" <<TOML
extends = "workspace"
[network]
mode = "proxy"
allow = ["blob.test"]
private = ["127.0.0.1/32"]
hosts = "$work/hosts"
TOML
fetch() { # profile url -> bytes per second
  "$sbx" run --no-policy --workspace "$work/ws" --profile "$1" -- \
    curl -sS -o /dev/null -w '%{speed_download}\n' "$2" 2>/dev/null

}
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
direct=() proxied=()
for _ in $(seq "$runs"); do
  direct+=("$(fetch workspace-net "http://127.0.0.1:$port/blob")")
  proxied+=("$(fetch "$work/proxy.toml" "http://blob.test:$port/blob")")
done
d=$(printf '%s\n' "${direct[@]}" | median)
p=$(printf '%s\n' "${proxied[@]}" | median)
awk -v d="$d" -v p="$p" -v n="$runs" 'BEGIN {
  printf "100 MiB over loopback HTTP, median of %d runs\n", n
  printf "  direct (workspace-net): %8.1f MiB/s\n", d / 1048576
  printf "  through the proxy:      %8.1f MiB/s\n", p / 1048576
  printf "  ratio proxied/direct:   %8.2f (target >= 0.5)\n", p / d
}'
