#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/segments.sh LAPSE_BIN SHARED_DATA
#
# What a hyperlapse's segments cost, to choose N for a route and estimate a cluster's wall time. N (default 200)
# Street View panoramas 10 m apart at zoom 3 from the Map Tiles stand-in on loopback, 1280x720 H.264 CRF 20
# medium, stabilised (the defaults), as bench/hyperlapse.sh:
#   single:  the whole job in one process, tile cache warm (R = render + plan);
#   plan:    `--segment 1/1000000`: a segment without frames, which plans the whole job (lookups, the
#            stabiliser's pictures and motion, the camera path) and renders nothing (P);
#   parts:   SEGMENTS (default 4) segments at once on this machine sharing the cache, then `lapse concat`;
# then, from the per-frame costs p = P/F and r = (R − P)/F, the wall time of F frames on M machines like this one
# (each segment plans everything, renders F/M frames): F·p + F/M·r + the join (measured here per frame).
# Prints the figures and the estimate for a 100 km route at 10 m (10 000 frames) on 50 machines.
set -euo pipefail
LAPSE=${1:?usage: bench/segments.sh LAPSE_BIN SHARED_DATA}
SHARED=${2:?usage: bench/segments.sh LAPSE_BIN SHARED_DATA}
N=${N:-200}
SEGMENTS=${SEGMENTS:-4}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
KEY=bench-key
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lapse-bench-segments.XXXXXX")
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$TMP"; }
trap cleanup EXIT
. "$HERE/lib.sh"

start_world "$N" route
make_tiles "$PORT_route"
export GOOGLE_MAPS_API_KEY=$KEY LAPSE_MAPTILES_URL="http://127.0.0.1:$PORT_route"
hyperlapse() {  # output extra...
    local out=$1; shift
    "$LAPSE" hyperlapse --route "$TMP/route.txt" --source google --spacing 10 --radius 20 --zoom 3 --size 1280x720 \
        --fov 90 --crf 20 --preset medium --cache-dir "$TMP/cache" -o "$out" --overwrite --quiet "$@"
}
timed() { local t0; t0=$(now); "$@"; elapsed "$t0" "$(now)"; }

echo "filling the tile cache (a first run, not measured)..." >&2
hyperlapse "$TMP/cold.mp4"
FRAMES=$(ffprobe -v error -select_streams v:0 -show_entries stream=nb_frames -of csv=p=0 "$TMP/cold.mp4")
SINGLE=$(timed hyperlapse "$TMP/single.mp4")
PLAN=$(timed hyperlapse "$TMP/plan.mp4" --segment 1/1000000)
parts() { seq 1 "$SEGMENTS" | parallel --will-cite --halt now,fail=1 -j "$SEGMENTS" \
    "$LAPSE" hyperlapse --route "$TMP/route.txt" --source google --spacing 10 --radius 20 --zoom 3 --size 1280x720 \
    --fov 90 --crf 20 --preset medium --cache-dir "$TMP/cache" --segment "{}/$SEGMENTS" -o "$TMP/part-{}.mp4" --overwrite --quiet; }
PARTS=$(timed parts)
JOIN=$(timed "$LAPSE" concat $(ls "$TMP"/part-*.mp4 | sort -V) -o "$TMP/joined.mp4" --overwrite --quiet)
JOINED=$(ffprobe -v error -select_streams v:0 -show_entries stream=nb_frames -of csv=p=0 "$TMP/joined.mp4")

python3 - "$FRAMES" "$SINGLE" "$PLAN" "$PARTS" "$JOIN" "$SEGMENTS" "$JOINED" "$(nproc)" <<'PY'
import sys
frames, single, plan, parts, join, segments, joined, cores = sys.argv[1:]
F, R, P, T, J, S = int(frames), float(single), float(plan), float(parts), float(join), int(segments)
p, r, j = P / F, (R - P) / F, J / F
print(f"segments of a {F}-frame Street View hyperlapse (zoom 3 -> 1280x720, stabilised, tile cache warm, {cores} cores):")
print(f"  whole job in one process: {R:.2f} s; planning alone (--segment 1/1000000): {P:.2f} s")
print(f"  per frame: planning {1000 * p:.1f} ms (every segment plans every frame), rendering {1000 * r:.1f} ms")
print(f"  {S} segments at once on this machine: {T:.2f} s, + join {J:.2f} s ({joined} frames; {T + J:.2f} s vs {R:.2f} s in one process)")
def wall(frames, machines): return frames * p + frames / machines * r + frames * j
best = r / p if p > 0 else float("inf")
print(f"  estimate, 10 000 frames (100 km at 10 m) on machines like this one: 1 machine {wall(10000, 1) / 60:.1f} min, "
      f"10: {wall(10000, 10) / 60:.1f} min, 50: {wall(10000, 50) / 60:.1f} min (of which planning {10000 * p / 60:.1f} min, "
      f"join {10000 * j:.0f} s); beyond about {best:.0f} machines the planning every segment repeats is most of the time")
PY
