#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/hyperlapse.sh LAPSE_BIN SHARED_DATA
#
# The whole hyperlapse (lookup, tiles, stitch, render, encode) against the work that cannot be avoided, in one run:
# N (default 100) Street View panoramas at zoom 3 (4096x2048, 8x4 tiles of 512x512) from the Map Tiles stand-in on
# loopback (Tests/Fixtures/maptiles_route_world.py: one panorama every 10 m along the real Toronto-Montreal route,
# real 360 photos), into a 1280x720 H.264 MP4 (CRF 20, preset medium, 90° fov).
#   lapse cold: empty tile cache, every tile downloaded from the stand-in (which serves pre-made tile files).
#   lapse warm: the same run again with the cache filled by the cold run (tiles read from disk): the main figure.
#   peer:       ffmpeg decoding the same JPEG tiles (those in lapse's cache: lapse fetches only the tiles each frame's
#               view reads, about 6 of the 32 of a panorama at 90°; two processes, one per half, as lapse uses both cores) + ffmpeg encoding N frames of 1280x720 (lapse's own frames, as raw RGBA) with
#               libx264 at the same settings. Target (issue #13): lapse warm <= 1.0 x peer.
# Memory: peak RSS of the cold runs with N and with BIG (default 1000) panoramas; target <= 600 MB and equal
# within 20%. BIG=0 skips the second run.
set -euo pipefail
LAPSE=${1:?usage: bench/hyperlapse.sh LAPSE_BIN SHARED_DATA}
SHARED=${2:?usage: bench/hyperlapse.sh LAPSE_BIN SHARED_DATA}
N=${N:-100}
BIG=${BIG:-1000}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
KEY=bench-key
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lapse-bench-hyperlapse.XXXXXX")
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$TMP"; }
trap cleanup EXIT

. "$HERE/lib.sh"

run_lapse() {  # name port cache output -> prints "TIME s RSS MB"; CPU seconds in $TMP/name.cpu
    GOOGLE_MAPS_API_KEY=$KEY LAPSE_MAPTILES_URL="http://127.0.0.1:$2" python3 "$HERE/measure.py" \
        /usr/bin/time -f "%U %S" -o "$TMP/$(basename "$4" .mp4).cpu" "$LAPSE" hyperlapse --route "$TMP/$1.txt" --source google --spacing 10 --radius 20 --zoom 3 \
        --size 1280x720 --fov 90 --crf 20 --preset medium --cache-dir "$3" -o "$4" --overwrite --quiet
}

echo "starting the stand-in and making its tiles..." >&2
start_world "$N" small
make_tiles "$PORT_small"

read -r _ COLD_T _ COLD_M < <(run_lapse small "$PORT_small" "$TMP/cache" "$TMP/cold.mp4")
read -r _ WARM_T _ WARM_M < <(run_lapse small "$PORT_small" "$TMP/cache" "$TMP/warm.mp4")
FRAMES=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$TMP/warm.mp4")
TILES=$(find "$TMP/cache/google" -name '*.jpg' -path '*/z3/*' | wc -l)

# Peer 1: decode the same tiles (two ffmpeg processes, ids ending in an even / odd digit).
t0=$(now)
cpu "$TMP/dec1.cpu" ffmpeg -v error -nostdin -pattern_type glob -i "$TMP/cache/google/*[02468]/z3/*.jpg" -f null - &
P1=$!
cpu "$TMP/dec2.cpu" ffmpeg -v error -nostdin -pattern_type glob -i "$TMP/cache/google/*[13579]/z3/*.jpg" -f null -
wait $P1
t1=$(now)
DEC=$(elapsed "$t0" "$t1")
# Peer 2: encode the same frames (decoded from lapse's output beforehand, into the page cache).
ffmpeg -v error -nostdin -i "$TMP/warm.mp4" -f rawvideo -pix_fmt rgba "$TMP/frames.rgba"
cat "$TMP/frames.rgba" > /dev/null
t0=$(now)
cpu "$TMP/enc.cpu" ffmpeg -v error -nostdin -y -f rawvideo -pix_fmt rgba -s 1280x720 -r 12 -i "$TMP/frames.rgba" \
    -vf "scale=out_color_matrix=bt709:out_range=tv,format=yuv420p" -c:v libx264 -crf 20 -preset medium "$TMP/peer.mp4"
t1=$(now)
ENC=$(elapsed "$t0" "$t1")
rm -f "$TMP/frames.rgba"

echo "hyperlapse: $N panoramas at zoom 3 (4096x2048; $TILES of their $((N * 32)) tiles read by the views) -> $FRAMES frames of 1280x720 H.264 CRF 20 medium, $(nproc) cores"
printf "  lapse, tile cache cold (downloads from the loopback stand-in): %7.2f s, peak RSS %6.1f MB\n" "$COLD_T" "$COLD_M"
printf "  lapse, tile cache warm (tiles read from disk):                  %7.2f s, peak RSS %6.1f MB\n" "$WARM_T" "$WARM_M"
printf "  ffmpeg decoding the %d tiles: %.2f s; ffmpeg encoding %d frames: %.2f s; sum %.2f s\n" "$TILES" "$DEC" "$FRAMES" "$ENC" \
    "$(python3 -c "print($DEC + $ENC)")"
python3 - "$WARM_T" "$COLD_T" "$DEC" "$ENC" "$(cpusum "$TMP/warm.cpu")" "$(cpusum "$TMP/cold.cpu")" \
    "$(cpusum "$TMP/dec1.cpu" "$TMP/dec2.cpu" "$TMP/enc.cpu")" <<'PY'
import sys
warm, cold, dec, enc, cwarm, ccold, cpeer = map(float, sys.argv[1:])
print("  ratio lapse warm / (decode + encode): %.2f (target <= 1.0, issue #13)" % (warm / (dec + enc)))
print("  ratio lapse cold / (decode + encode): %.2f" % (cold / (dec + enc)))
if cpeer > 0:
    print("  CPU seconds (user+sys): lapse warm %.1f, cold %.1f; ffmpeg decode + encode %.1f -> ratio warm %.2f" % (cwarm, ccold, cpeer, cwarm / cpeer))
PY

if [ "$BIG" -gt 0 ]; then
    start_world "$BIG" big
    read -r _ BIG_T _ BIG_M < <(run_lapse big "$PORT_big" "$TMP/cache-big" "$TMP/big.mp4")
    printf "  lapse, %d panoramas, cache cold: %.2f s, peak RSS %.1f MB\n" "$BIG" "$BIG_T" "$BIG_M"
    python3 - "$COLD_M" "$BIG_M" "$N" "$BIG" <<'PY'
import sys
small, big, n, b = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
print("  peak RSS %s vs %s panoramas: %.1f vs %.1f MB (%+.0f%%; target <= 600 MB and within 20%%)" % (n, b, small, big, 100 * (big / small - 1)))
PY
fi
