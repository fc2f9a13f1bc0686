#!/usr/bin/env bash
# Regenerates every committed trace (and, once the visualizer lands, figure)
# from a release build. CI runs this and fails if a byte differs.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
ds=target/release/deadsim
out=traces

# `run` exits 1 when it finds a deadlock, which is what these traces show.
gen() { "$ds" "$@" >/dev/null || [ $? -eq 1 ]; }

gen run abba --seed 0 --trace "$out/abba-deadlock.json"
gen run philosophers --seed 0 --trace "$out/philosophers-deadlock.json"
echo "traces regenerated in $out/"
