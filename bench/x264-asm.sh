#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/x264-asm.sh LAPSE_BIN SHARED_DATA [RUNS]   (LAPSE_BIN unused: both sides are ffmpeg; taken as the other
# scripts take it, for `make bench`)
#
# x264 with its AVX-512 code against x264 limited to AVX2 (what lapse asks for on a CPU with AVX-512, because
# the AVX-512 code reads memory it never set and outputs then vary; see Sources/LapseMedia/VideoEncoder.swift):
# the same raw frames encoded by ffmpeg's libx264, CRF 20, preset medium, yuv420p, the two settings alternating,
# RUNS (default 3) each, on
#   video:  overpass-clip.mp4's 120 frames decoded once to raw 2048x1024 yuv420p (a hyperlapse's input size);
#   slides: 120 frames of testsrc2 at 1920x1080 (smooth pictures).
# Prints wall and CPU seconds of each run and the ratio of the medians (AVX2 / AVX-512: above 1, AVX-512 is faster).
set -euo pipefail
SHARED=${2:?usage: bench/x264-asm.sh LAPSE_BIN SHARED_DATA [RUNS]}
RUNS=${3:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lapse-bench-x264.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
. "$HERE/lib.sh"
grep -q avx512f /proc/cpuinfo || { echo "this CPU has no AVX-512: nothing to compare" >&2; exit 0; }

ffmpeg -v error -nostdin -i "$SHARED/pano360/valiant360_overpass/overpass-clip.mp4" -f rawvideo -pix_fmt yuv420p "$TMP/video.yuv"
ffmpeg -v error -nostdin -f lavfi -i testsrc2=s=1920x1080:r=24:d=5 -f rawvideo -pix_fmt yuv420p "$TMP/slides.yuv"

encode() {  # input size asm-or-empty out
    local params=()
    [ -n "$3" ] && params=(-x264-params "asm=$3")
    python3 "$HERE/measure.py" /usr/bin/time -f "%U %S" -o "$TMP/cpu" ffmpeg -v error -nostdin -y -f rawvideo \
        -pix_fmt yuv420p -s "$2" -r 24 -i "$1" -c:v libx264 -preset medium -crf 20 "${params[@]}" "$4" | awk '{print $2}'
}
for clip in video:2048x1024 slides:1920x1080; do
    name=${clip%%:*} size=${clip#*:}
    wide=() narrow=() cwide=() cnarrow=()
    encode "$TMP/$name.yuv" "$size" "" "$TMP/wide.mp4" > /dev/null   # warm-up (page cache, CPU clocks), not counted
    for run in $(seq 1 "$RUNS"); do
        wide+=("$(encode "$TMP/$name.yuv" "$size" "" "$TMP/wide.mp4")"); cwide+=("$(cpusum "$TMP/cpu")")
        narrow+=("$(encode "$TMP/$name.yuv" "$size" AVX2,FMA3,BMI2 "$TMP/narrow.mp4")"); cnarrow+=("$(cpusum "$TMP/cpu")")
    done
    python3 - "$name" "$size" "${wide[*]}" "${narrow[*]}" "${cwide[*]}" "${cnarrow[*]}" <<'PY'
import statistics, sys
name, size = sys.argv[1:3]
w, n, cw, cn = ([float(v) for v in a.split()] for a in sys.argv[3:7])
print(f"{name} ({size}, 120 frames): AVX-512 wall {' '.join(f'{v:.2f}' for v in w)} s, CPU {' '.join(f'{v:.1f}' for v in cw)} s;"
      f" AVX2 wall {' '.join(f'{v:.2f}' for v in n)} s, CPU {' '.join(f'{v:.1f}' for v in cn)} s;"
      f" AVX2 / AVX-512: wall {statistics.median(n) / statistics.median(w):.3f}, CPU {statistics.median(cn) / statistics.median(cw):.3f}")
PY
done
