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
# The #168 deadlock (seed 7) shrunk: fewest preemptions found, then fewest steps.
gen shrink ttrpc --server v1.0.2 --client v1.2.3 --seed 7 --trace "$out/ttrpc-s1.0.2-c1.2.3-deadlock-shrunk.json"
# Flink FLINK-22946 in 1.13.1: the minimal scenario and the full pipeline.
gen hunt flink --flink-version 1.13.1 --scenario minimal --seeds 0..1000 --trace "$out/flink-1.13.1-minimal-deadlock.json"
gen hunt flink --flink-version 1.13.1 --scenario pipeline --seeds 0..30000 --trace "$out/flink-1.13.1-pipeline-deadlock.json"
# The report's first proposal read with a cleared waiting flag (self-assign-clear): seed 7 is the
# lowest where the pool's notification fails checkState. (As worded, self-assign never fails.)
gen run flink --flink-version 1.13.1 --fix self-assign-clear --seed 7 --trace "$out/flink-1.13.1-self-assign-clear-failure.json"
# The figures of every committed trace (timeline, locks, pipes, wait-for graph), as PNG.
mkdir -p "$out/figures"
rm -f "$out"/figures/*.png
for t in "$out"/*.json; do
  "$ds" render "$t" --chart all --format png -o "$out/figures/" >/dev/null 2>&1 || { echo "failed: render $t" >&2; exit 1; }
done
# For the README: the pipeline's last 60 steps, the two threads of the cycle only (the whole run
# gives each of its 585 steps under a pixel).
"$ds" render "$out/flink-1.13.1-pipeline-deadlock.json" --window last:60 --tasks 'Join*,Channel*' \
  -o "$out/figures/flink-1.13.1-pipeline-deadlock-last60-timeline.png" >/dev/null 2>&1 \
  || { echo "failed: render the pipeline's last 60 steps" >&2; exit 1; }
# For the README: the bug and its fix on one axis, the fix coloured as the bug (render --align-with,
# --colours-of). The fix's run is made here, not committed: its seed and flags make it again.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bug="$out/flink-1.13.1-minimal-deadlock.json"
# (Exit 0 only: the figure and the README say that the fixed run completes.)
"$ds" run flink --flink-version 1.13.2 --scenario minimal --seed 8 --trace "$tmp/flink-1.13.2-minimal.json" \
  >/dev/null 2>&1 || { echo "failed: the 1.13.2 run (no deadlock expected)" >&2; exit 1; }
names=(--rename 'Join*=task thread' --rename 'Channel state writer*=channel state writer')
"$ds" render "$bug" --align-with "$tmp/flink-1.13.2-minimal.json" "${names[@]}" \
  -o "$out/figures/flink-minimal-1.13.1-aligned-timeline.png" >/dev/null 2>&1 \
  && "$ds" render "$tmp/flink-1.13.2-minimal.json" --align-with "$bug" --colours-of "$bug" "${names[@]}" \
  -o "$out/figures/flink-minimal-1.13.2-aligned-timeline.png" >/dev/null 2>&1 \
  || { echo "failed: render the aligned pair" >&2; exit 1; }
echo "traces and figures regenerated in $out/"
