#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/hyperlapse-video.sh LAPSE_BIN SHARED_DATA
#
# The hyperlapse of a real 360° video against the ffmpeg command line doing the same work, in one run:
# overpass-clip.mp4 (120 frames of 2048x1024 yuv420p) -> a level 90° view down the road, 1280x720, H.264 CRF 20
# preset medium, 24 fps.
#   lapse:        `lapse hyperlapse --source video:CLIP --no-stabilize --forward 180` (the view down the road, 180°
#                 from the video's centre column, as the stabiliser finds it; frames rendered as Y′CbCr straight
#                 into x264); its SSIM against the peer's output is printed, to show both made the same view;
#   lapse stab.:  the same, stabilised (the default: its reference frames decoded again for the analysis, reduced to
#                 1024x512, 29 pairs measured);
#   peer:         `ffmpeg -r 24 -i CLIP -vf v360=e:flat:yaw=180:h_fov=90:v_fov=…:interp=linear -c:v libx264`.
# RUNS (default 3) alternating runs of each; prints every run's wall and CPU seconds, the medians and the ratios.
# Target (issue #13): lapse <= 0.9 x peer.
set -euo pipefail
LAPSE=${1:?usage: bench/hyperlapse-video.sh LAPSE_BIN SHARED_DATA}
SHARED=${2:?usage: bench/hyperlapse-video.sh LAPSE_BIN SHARED_DATA}
RUNS=${RUNS:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lapse-bench-hyperlapse-video.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
. "$HERE/lib.sh"

CLIP="$SHARED/pano360/valiant360_overpass/overpass-clip.mp4"
VFOV=$(python3 -c "import math; print(2*math.degrees(math.atan(math.tan(math.radians(45))*720/1280)))")
lapse() {  # name extra-flags...
    local name=$1; shift
    python3 "$HERE/measure.py" /usr/bin/time -f "%U %S" -o "$TMP/$name.cpu" "$LAPSE" hyperlapse --source "video:$CLIP" \
        --size 1280x720 --fps 24 --crf 20 --preset medium -o "$TMP/$name.mp4" --overwrite --quiet "$@"
}
peer() {  # name
    python3 "$HERE/measure.py" /usr/bin/time -f "%U %S" -o "$TMP/$1.cpu" ffmpeg -v error -y -r 24 -i "$CLIP" \
        -vf "v360=e:flat:yaw=180:h_fov=90:v_fov=$VFOV:w=1280:h=720:interp=linear,format=yuv420p" \
        -c:v libx264 -crf 20 -preset medium "$TMP/$1.mp4"
}

echo "warming up (page cache)..." >&2
lapse warmup --frame-step 30 > /dev/null
peer warmup-peer > /dev/null
: > "$TMP/results"
for k in $(seq 1 "$RUNS"); do
    read -r _ a _ _ < <(lapse "plain-$k" --no-stabilize --forward 180)
    read -r _ b _ _ < <(lapse "stable-$k")
    read -r _ c _ _ < <(peer "peer-$k")
    echo "$a $(cpusum "$TMP/plain-$k.cpu") $b $(cpusum "$TMP/stable-$k.cpu") $c $(cpusum "$TMP/peer-$k.cpu")" >> "$TMP/results"
done
python3 - "$TMP/results" "$(nproc)" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
print(f"hyperlapse of overpass-clip.mp4 -> 1280x720 H.264, {sys.argv[2]} cores, {len(rows)} runs (wall s / CPU s):")
for i, (a, ca, b, cb, c, cc) in enumerate(rows, 1):
    print(f"  run {i}: lapse {a:.2f} / {ca:.1f}   lapse stabilised {b:.2f} / {cb:.1f}   ffmpeg v360 + libx264 {c:.2f} / {cc:.1f}"
          f"   ratios {a / c:.2f}, {b / c:.2f}")
m = [statistics.median(col) for col in zip(*rows)]
print(f"  medians: lapse {m[0]:.2f} s, stabilised {m[2]:.2f} s, peer {m[4]:.2f} s; ratio {m[0] / m[4]:.2f} "
      f"(stabilised {m[2] / m[4]:.2f}); per-run ratios {min(r[0] / r[4] for r in rows):.2f}–{max(r[0] / r[4] for r in rows):.2f} (target <= 0.9)")
PY
ssim=$(ffmpeg -v info -i "$TMP/plain-1.mp4" -i "$TMP/peer-1.mp4" -lavfi "[0][1]ssim" -f null - 2>&1 | grep -o "All:[0-9.]*")
echo "  the same view: SSIM of lapse's video against the peer's, $ssim"
