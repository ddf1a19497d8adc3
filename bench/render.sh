#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/render.sh LAPSE_BIN SHARED_DATA
#
# The projector (LapseRender) against ffmpeg's v360 filter, in one run on the same input:
# FRAMES (default 100) views of 1280x720 at 90° horizontal fov from 4096x2048 equirectangular panoramas
# (the first FRAMES frames of pano360/valiant360_overpass/overpass-clip.mp4, upscaled), bilinear.
#   lapse:  `lapse view PANOS.rgba --raw 4096x2048 --bench FRAMES` renders one view of each panorama in turn,
#           turning the heading every frame (so the projection table is reused as a horizontal shift).
#   ffmpeg: `ffmpeg -f rawvideo -pix_fmt rgba -i PANOS.rgba -vf v360=...` with a fixed heading.
# Decoding is excluded from both sides: both read the same raw RGBA frames from one file (in the page cache).
# Printed: wall-clock seconds of each run, ffmpeg's run with no filter (the cost of reading the input), and
# the ratios. With YUV=1, ffmpeg also runs on the same panoramas pre-converted to yuv420p (its cheapest input,
# where v360 resamples 1.5 bytes a pixel instead of 4).
set -euo pipefail
LAPSE=${1:?usage: bench/render.sh LAPSE_BIN SHARED_DATA}
SHARED=${2:?usage: bench/render.sh LAPSE_BIN SHARED_DATA}
FRAMES=${FRAMES:-100}
CLIP="$SHARED/pano360/valiant360_overpass/overpass-clip.mp4"
W=4096; H=2048; OW=1280; OH=720; FOV=90
VFOV=$(python3 -c "import math; print(2*math.degrees(math.atan(math.tan(math.radians($FOV/2))*$OH/$OW)))")
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lapse-bench-render.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

echo "preparing $FRAMES panoramas of ${W}x${H} as raw RGBA ($((FRAMES * W * H * 4 / 1000000)) MB)..." >&2
ffmpeg -v error -nostdin -y -i "$CLIP" -frames:v "$FRAMES" -vf "scale=$W:$H:flags=bicubic" \
    -f rawvideo -pix_fmt rgba "$TMP/panos.rgba"
GOT=$(( $(stat -c %s "$TMP/panos.rgba") / (W * H * 4) ))
[ "$GOT" -ge 1 ] || { echo "no panoramas made" >&2; exit 1; }
cat "$TMP/panos.rgba" > /dev/null   # into the page cache

V360="v360=input=e:output=flat:h_fov=$FOV:v_fov=$VFOV:yaw=0:pitch=0:roll=0:interp=linear:w=$OW:h=$OH"
run_ffmpeg() {  # pix_fmt file filter
    ffmpeg -v error -nostdin -f rawvideo -pix_fmt "$1" -s "${W}x${H}" -i "$2" ${3:+-vf "$3"} -f null -
}

t0=$(now); cpu "$TMP/ff.cpu" ffmpeg -v error -nostdin -f rawvideo -pix_fmt rgba -s "${W}x${H}" -i "$TMP/panos.rgba" -vf "$V360" -f null -; t1=$(now)
FF=$(elapsed "$t0" "$t1")
t0=$(now); run_ffmpeg rgba "$TMP/panos.rgba" ""; t1=$(now)
FFREAD=$(elapsed "$t0" "$t1")
t0=$(now)
OUT=$(cpu "$TMP/lapse.cpu" "$LAPSE" view "$TMP/panos.rgba" --raw "${W}x${H}" --bench "$GOT" --size "${OW}x${OH}" --fov "$FOV" --json --quiet)
t1=$(now)
LP=$(elapsed "$t0" "$t1")
read -r LRENDER LREAD < <(python3 -c "import json,sys; j=json.loads(sys.argv[1]); print('%.3f %.3f' % (j['render_seconds'], j['read_seconds']))" "$OUT")

echo "render: $GOT views ${OW}x${OH}, hfov $FOV°, from ${W}x${H} panoramas, bilinear, $(nproc) cores"
printf "  lapse  (heading turning every frame): %7.3f s total, %.3f s rendering (%.2f ms a view), %.3f s reading\n" \
    "$LP" "$LRENDER" "$(python3 -c "print(1000*$LRENDER/$GOT)")" "$LREAD"
printf "  ffmpeg v360 (fixed heading, rgba in): %7.3f s total; reading the same input alone: %.3f s\n" "$FF" "$FFREAD"
echo "  CPU seconds (user+sys): lapse $(cpusum "$TMP/lapse.cpu"), ffmpeg $(cpusum "$TMP/ff.cpu")"
python3 - "$FF" "$FFREAD" "$LP" "$LRENDER" <<'PY'
import sys
ff, ffread, lp, lrender = map(float, sys.argv[1:])
print("  ratio ffmpeg/lapse: %.1fx (whole runs)" % (ff / lp))
print("  ratio without reading: %.1fx (ffmpeg %.3f s − %.3f s vs lapse rendering %.3f s)" % (max(ff - ffread, 0) / lrender, ff, ffread, lrender))
PY

if [ "${YUV:-0}" = 1 ]; then
    ffmpeg -v error -nostdin -y -f rawvideo -pix_fmt rgba -s "${W}x${H}" -i "$TMP/panos.rgba" -f rawvideo -pix_fmt yuv420p "$TMP/panos.yuv"
    t0=$(now); run_ffmpeg yuv420p "$TMP/panos.yuv" "$V360"; t1=$(now)
    FFY=$(elapsed "$t0" "$t1")
    t0=$(now); run_ffmpeg yuv420p "$TMP/panos.yuv" ""; t1=$(now)
    FFYREAD=$(elapsed "$t0" "$t1")
    printf "  ffmpeg v360 on yuv420p input: %.3f s total, reading alone %.3f s -> ratio without reading %.1fx\n" \
        "$FFY" "$FFYREAD" "$(python3 -c "print(max($FFY - $FFYREAD, 0) / $LRENDER)")"
fi
