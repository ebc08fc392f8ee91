#!/usr/bin/env bash
# Per-call cost of `bash /bin/true` through warm `sbx mcp` and `sbx serve` sessions against a
# bare spawn and benches/floor.c, in one run (see benches/per_call.py).
# Usage: benches/per_call.sh [calls [baseline-sbx]]   (builds the release binary first)
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-300}
cargo build --release --quiet
sbx=$PWD/target/$(rustc -vV | sed -n 's/^host: //p')/release/sbx
work=$(mktemp -d /var/tmp/sbx-per-call.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -static -o "$work/floor" benches/floor.c 2>/dev/null || cc -O2 -o "$work/floor" benches/floor.c
python3 benches/per_call.py "$sbx" "$work/floor" "$calls" ${2:+"$2"}
