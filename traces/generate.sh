#!/usr/bin/env bash
# Regenerates every committed trace (and, once the visualizer lands, figure)
# from a release build. CI runs this and fails if a byte differs.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
ds=target/release/deadsim
out=traces

# `run` exits 1 when it finds a deadlock, which is what these traces show.
gen() { "$ds" "$@" >/dev/null 2>&1 || [ $? -eq 1 ] || { echo "failed: deadsim $*" >&2; exit 1; }; }

gen run abba --seed 0 --trace "$out/abba-deadlock.json"
gen run philosophers --seed 0 --trace "$out/philosophers-deadlock.json"
# ttrpc: the deadlocking cells of the verdict matrix, at their lowest failing seed.
gen hunt ttrpc --server v1.0.2 --client v1.0.2 --seeds 0..1000 --trace "$out/ttrpc-s1.0.2-c1.0.2-deadlock.json"
gen hunt ttrpc --server v1.0.2 --client v1.2.3 --seeds 0..1000 --trace "$out/ttrpc-s1.0.2-c1.2.3-deadlock.json"
gen hunt ttrpc --server v1.1.0 --client v1.0.2 --seeds 0..1000 --trace "$out/ttrpc-s1.1.0-c1.0.2-deadlock.json"
gen hunt ttrpc --server v1.1.0 --client v1.2.3 --seeds 0..1000 --trace "$out/ttrpc-s1.1.0-c1.2.3-deadlock.json"
echo "traces regenerated in $out/"
