#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/stabilize.sh LAPSE_BIN SHARED_DATA
#
# What the stabiliser costs: the same hyperlapse with and without it (--no-stabilize, the video's run looking down
# the road as the stabilised one does: --forward 180), in one run, on
#   video:  the real 360° video overpass-clip.mp4 (120 frames of 2048x1024) -> 1280x720 H.264 CRF 20 medium, 24 fps
#           (the analysis decodes the video's 33 reference frames again at 1024x512 and measures 29 pairs);
#   photos: a photo sequence as a 360° camera on a car takes it: every third frame of the same video as a JPEG
#           (2048x1024, GPS 2.55 m apart written by bench/geotag.py, no compass), 40 photos -> 1280x720
#           (`--source local:DIR`; plain: --no-stabilize --forward 180). PHOTO_SIZE=5760x2880 scales them to a
#           GoPro MAX photo's size first, with sensor-like grain (ffmpeg noise=alls=10) so that each JPEG is about
#           3 MB and costs what a real GoPro MAX photo (geovisio_gopromax_walk, 3.3 MB) costs to decode (without it
#           the upscaled frames make 0.45 MB JPEGs that decode in half the time). PREVIEW_WIDTH=1440 stores the reduced
#           copy a GoPro MAX stores after each photo (a 1440x720 JPEG listed in an APP2 MPF segment: bench/geotag.py),
#           which the analysis then decodes instead of the photo.
# Prints wall time and CPU seconds of both and the stabiliser's share of the stabilised run's wall time;
# target <= 15 %. ROUNDS=n rounds (default 3), medians. (Street View is not measured: its pictures are never
# analysed, as Google's Map Tiles policies require, so --no-stabilize changes nothing there.)
set -euo pipefail
LAPSE=${1:?usage: bench/stabilize.sh LAPSE_BIN SHARED_DATA}
SHARED=${2:?usage: bench/stabilize.sh LAPSE_BIN SHARED_DATA}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lapse-bench-stabilize.XXXXXX")
cleanup() { rm -rf "$TMP"; }
trap cleanup EXIT
. "$HERE/lib.sh"

VIDEO="$SHARED/pano360/valiant360_overpass/overpass-clip.mp4"
video() {  # name extra-flags...
    local name=$1; shift
    python3 "$HERE/measure.py" /usr/bin/time -f "%U %S" -o "$TMP/$name.cpu" "$LAPSE" hyperlapse --source "video:$VIDEO" \
        --size 1280x720 --fps 24 --crf 20 --preset medium -o "$TMP/$name.mp4" --overwrite --quiet "$@"
}

PHOTOS="$TMP/photos"
mkdir -p "$PHOTOS"
SCALE=${PHOTO_SIZE:+,scale=${PHOTO_SIZE/x/:}:flags=bicubic,noise=alls=10:allf=t}
ffmpeg -v error -nostdin -i "$VIDEO" -vf "select=not(mod(n\,3))$SCALE" -vsync 0 -q:v 3 "$PHOTOS/IMG_%04d.jpg"
PREVIEW_WIDTH=${PREVIEW_WIDTH:-} python3 "$HERE/geotag.py" "$PHOTOS" 52.44 6.89 60 2.55
photos() {  # name extra-flags...
    local name=$1; shift
    python3 "$HERE/measure.py" /usr/bin/time -f "%U %S" -o "$TMP/$name.cpu" "$LAPSE" hyperlapse --source "local:$PHOTOS" \
        --size 1280x720 --crf 20 --preset medium -o "$TMP/$name.mp4" --overwrite --quiet "$@"
}

echo "warming up (page cache)..." >&2
video warmup-video --frame-step 30 > /dev/null

# ROUNDS (default 3) rounds, each running the four in turn, so that a slow spell of the machine falls on both runs
# of a pair; medians reported, and the share of each round.
ROUNDS=${ROUNDS:-3}
: > "$TMP/rounds"
for round in $(seq 1 "$ROUNDS"); do
    read -r _ VP_T _ VP_M < <(video video-plain --no-stabilize --forward 180)
    read -r _ VS_T _ VS_M < <(video video-stable)
    read -r _ PP_T _ PP_M < <(photos photos-plain --no-stabilize --forward 180)
    read -r _ PS_T _ PS_M < <(photos photos-stable)
    echo "$VP_T $VS_T $(cpusum "$TMP/video-plain.cpu") $(cpusum "$TMP/video-stable.cpu") $VP_M $VS_M" \
        "$PP_T $PS_T $(cpusum "$TMP/photos-plain.cpu") $(cpusum "$TMP/photos-stable.cpu") $PP_M $PS_M" >> "$TMP/rounds"
done

python3 - "$TMP/rounds" "$(nproc)" "${PHOTO_SIZE:-2048x1024}" "${PREVIEW_WIDTH:+, reduced copy ${PREVIEW_WIDTH} wide}" <<'PY'
import statistics, sys
rounds = [list(map(float, line.split())) for line in open(sys.argv[1])]
cores = sys.argv[2]
med = [statistics.median(r[i] for r in rounds) for i in range(12)]
vp, vs, cvp, cvs, mvp, mvs, pp, ps, cpp, cps, mpp, mps = med
def shares(a, b): return ", ".join(f"{100 * (r[b] - r[a]) / r[b]:.1f}" for r in rounds)
print(f"stabiliser cost, {cores} cores, median of {len(rounds)} rounds (wall s / CPU s / peak RSS MB):")
print(f"  video overpass-clip.mp4, 120 frames -> 1280x720: --no-stabilize {vp:.2f} / {cvp:.1f} / {mvp:.0f}; stabilised {vs:.2f} / {cvs:.1f} / {mvs:.0f}")
print(f"    stabiliser's share of the wall time: {100 * (vs - vp) / vs:.1f} % of the medians (rounds: {shares(0, 1)} %; target <= 15 %)")
print(f"  photos, 40 from a car ({sys.argv[3]} JPEG, GPS{sys.argv[4]}) -> 1280x720: --no-stabilize {pp:.2f} / {cpp:.1f} / {mpp:.0f}; stabilised {ps:.2f} / {cps:.1f} / {mps:.0f}")
print(f"    stabiliser's share of the wall time: {100 * (ps - pp) / ps:.1f} % of the medians (rounds: {shares(6, 7)} %; target <= 10 %)")
PY
