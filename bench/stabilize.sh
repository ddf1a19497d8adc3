#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/stabilize.sh LAPSE_BIN SHARED_DATA
#
# What the stabiliser costs: the same hyperlapse with and without it (--no-stabilize, the video's run looking down
# the road as the stabilised one does: --forward 180), in one run, on
#   video:  the real 360° video overpass-clip.mp4 (120 frames of 2048x1024) -> 1280x720 H.264 CRF 20 medium, 24 fps
#           (the analysis decodes the video's 33 reference frames again at 1024x512 and measures 29 pairs);
#   route:  N (default 100) Street View panoramas at zoom 3 from the Map Tiles stand-in on loopback
#           (Tests/Fixtures/maptiles_route_world.py, real 360 photos, one every 10 m), tile cache warm
#           (the analysis reads each panorama's zoom-0 tile and measures each pair);
#   photos: a photo sequence as a 360° camera on a car takes it: every third frame of the same video as a JPEG
#           (2048x1024, GPS 2.55 m apart written by bench/geotag.py, no compass), 40 photos -> 1280x720
#           (`--source local:DIR`; plain: --no-stabilize --forward 180).
# Prints wall time and CPU seconds of both and the stabiliser's share of the stabilised run's wall time;
# target <= 15 %. ROUNDS=n rounds (default 3), medians.
set -euo pipefail
LAPSE=${1:?usage: bench/stabilize.sh LAPSE_BIN SHARED_DATA}
SHARED=${2:?usage: bench/stabilize.sh LAPSE_BIN SHARED_DATA}
N=${N:-100}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
KEY=bench-key
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lapse-bench-stabilize.XXXXXX")
PID=""
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
. "$HERE/lib.sh"

VIDEO="$SHARED/pano360/valiant360_overpass/overpass-clip.mp4"
video() {  # name extra-flags...
    local name=$1; shift
    python3 "$HERE/measure.py" /usr/bin/time -f "%U %S" -o "$TMP/$name.cpu" "$LAPSE" hyperlapse --source "video:$VIDEO" \
        --size 1280x720 --fps 24 --crf 20 --preset medium -o "$TMP/$name.mp4" --overwrite --quiet "$@"
}

python3 -u "$ROOT/Tests/Fixtures/maptiles_route_world.py" --port 0 --key "$KEY" --max-zoom 3 --no-marker \
    --every 10 --gap "" --length $(( (N - 1) * 10 )) --data "$SHARED/pano360" \
    --spec "$SHARED/streetview/googlemaps_openapi_spec" --route-out "$TMP/route.txt" > "$TMP/port" 2>"$TMP/log" &
PID=$!
for _ in $(seq 1 300); do grep -q PORT "$TMP/port" 2>/dev/null && break; sleep 0.1; done
PORT=$(awk '/PORT/ {print $2}' "$TMP/port")
[ -n "$PORT" ] || { echo "stand-in did not start: $(cat "$TMP/log")" >&2; exit 1; }
route() {  # name extra-flags...
    local name=$1; shift
    GOOGLE_MAPS_API_KEY=$KEY LAPSE_MAPTILES_URL="http://127.0.0.1:$PORT" python3 "$HERE/measure.py" \
        /usr/bin/time -f "%U %S" -o "$TMP/$name.cpu" "$LAPSE" hyperlapse --route "$TMP/route.txt" --source google \
        --spacing 10 --radius 20 --zoom 3 --size 1280x720 --fov 90 --crf 20 --preset medium --cache-dir "$TMP/cache" \
        -o "$TMP/$name.mp4" --overwrite --quiet "$@"
}

PHOTOS="$TMP/photos"
mkdir -p "$PHOTOS"
ffmpeg -v error -nostdin -i "$VIDEO" -vf "select=not(mod(n\,3))" -vsync 0 -q:v 3 "$PHOTOS/IMG_%04d.jpg"
python3 "$HERE/geotag.py" "$PHOTOS" 52.44 6.89 60 2.55
photos() {  # name extra-flags...
    local name=$1; shift
    python3 "$HERE/measure.py" /usr/bin/time -f "%U %S" -o "$TMP/$name.cpu" "$LAPSE" hyperlapse --source "local:$PHOTOS" \
        --size 1280x720 --crf 20 --preset medium -o "$TMP/$name.mp4" --overwrite --quiet "$@"
}

echo "warming up (stand-in tiles, page cache, the route's tile cache)..." >&2
route warmup > /dev/null
video warmup-video --frame-step 30 > /dev/null

# ROUNDS (default 3) rounds, each running the four in turn, so that a slow spell of the machine falls on both runs
# of a pair; medians reported, and the share of each round.
ROUNDS=${ROUNDS:-3}
: > "$TMP/rounds"
for round in $(seq 1 "$ROUNDS"); do
    read -r _ VP_T _ VP_M < <(video video-plain --no-stabilize --forward 180)
    read -r _ VS_T _ VS_M < <(video video-stable)
    read -r _ RP_T _ RP_M < <(route route-plain --no-stabilize)
    read -r _ RS_T _ RS_M < <(route route-stable)
    read -r _ PP_T _ PP_M < <(photos photos-plain --no-stabilize --forward 180)
    read -r _ PS_T _ PS_M < <(photos photos-stable)
    echo "$VP_T $VS_T $RP_T $RS_T $(cpusum "$TMP/video-plain.cpu") $(cpusum "$TMP/video-stable.cpu")" \
        "$(cpusum "$TMP/route-plain.cpu") $(cpusum "$TMP/route-stable.cpu") $VP_M $VS_M $RP_M $RS_M" \
        "$PP_T $PS_T $(cpusum "$TMP/photos-plain.cpu") $(cpusum "$TMP/photos-stable.cpu") $PP_M $PS_M" >> "$TMP/rounds"
done

python3 - "$TMP/rounds" "$N" "$(nproc)" <<'PY'
import statistics, sys
rounds = [list(map(float, line.split())) for line in open(sys.argv[1])]
n, cores = sys.argv[2], sys.argv[3]
med = [statistics.median(r[i] for r in rounds) for i in range(18)]
vp, vs, rp, rs, cvp, cvs, crp, crs, mvp, mvs, mrp, mrs, pp, ps, cpp, cps, mpp, mps = med
def shares(a, b): return ", ".join(f"{100 * (r[b] - r[a]) / r[b]:.1f}" for r in rounds)
print(f"stabiliser cost, {cores} cores, median of {len(rounds)} rounds (wall s / CPU s / peak RSS MB):")
print(f"  video overpass-clip.mp4, 120 frames -> 1280x720: --no-stabilize {vp:.2f} / {cvp:.1f} / {mvp:.0f}; stabilised {vs:.2f} / {cvs:.1f} / {mvs:.0f}")
print(f"    stabiliser's share of the wall time: {100 * (vs - vp) / vs:.1f} % of the medians (rounds: {shares(0, 1)} %; target <= 15 %)")
print(f"  route, {n} Street View panoramas (stand-in, cache warm) -> 1280x720: --no-stabilize {rp:.2f} / {crp:.1f} / {mrp:.0f}; stabilised {rs:.2f} / {crs:.1f} / {mrs:.0f}")
print(f"    stabiliser's share of the wall time: {100 * (rs - rp) / rs:.1f} % of the medians (rounds: {shares(2, 3)} %; target <= 15 %)")
print(f"  photos, 40 from a car (2048x1024 JPEG, GPS) -> 1280x720: --no-stabilize {pp:.2f} / {cpp:.1f} / {mpp:.0f}; stabilised {ps:.2f} / {cps:.1f} / {mps:.0f}")
print(f"    stabiliser's share of the wall time: {100 * (ps - pp) / ps:.1f} % of the medians (rounds: {shares(12, 13)} %; target <= 10 %)")
PY
