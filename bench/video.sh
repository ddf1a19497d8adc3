#!/usr/bin/env bash
# lapse video vs the ffmpeg command line on the same 300 JPEGs (1920x1080 → H.264 CRF 23, preset medium, 30 fps),
# plus peak memory for 100 vs 1000 images. Usage: bench/video.sh LAPSE_BIN SHARED_DATA
# The JPEGs are testsrc2 with temporal noise (x264's worst case); SMOOTH=1 uses them without the noise (slides:
# the conversions around the encoder weigh more) and skips the memory runs. PHOTOS=1 instead runs 120 real
# 5760x2880 and 5376x2688 360° photos (the two in SHARED_DATA/pano360/trekview_360, alternating) → 1920x960.
set -euo pipefail
lapse=${1:-.build/release/lapse}
shared=${2:-../shared/data}
here=$(cd "$(dirname "$0")" && pwd)
smooth=${SMOOTH:-0}
if [ "${PHOTOS:-0}" = 1 ]; then
  out=$here/out/video-photos
  mkdir -p "$out/jpg"
  for i in $(seq 1 120); do
    photo=GSAG2002.JPG; [ $((i % 2)) = 0 ] && photo=R0014760.JPG
    ln -sf "$(cd "$shared" && pwd)/pano360/trekview_360/$photo" "$out/jpg/$(printf %04d "$i").jpg"
  done
  read -r _ t_ffmpeg _ m_ffmpeg < <("$here/measure.py" ffmpeg -v error -y -framerate 30 -i "$out/jpg/%04d.jpg" \
    -vf scale=1920:960:flags=bicubic -c:v libx264 -preset medium -crf 23 -pix_fmt yuv420p -movflags +faststart "$out/ffmpeg.mp4")
  read -r _ t_lapse _ m_lapse < <("$here/measure.py" "$lapse" video --quiet --overwrite --fps 30 --image-duration 0.0333333333 \
    --size 1920x960 --crf 23 --preset medium "$out/jpg" -o "$out/lapse.mp4")
  echo "120 real 360° photos (5760x2880, 5376x2688) -> 1920x960 H.264 CRF 23 medium: ffmpeg ${t_ffmpeg}s ${m_ffmpeg} MB, lapse ${t_lapse}s ${m_lapse} MB"
  echo "wall-time ratio lapse/ffmpeg: $(python3 -c "print(f'{$t_lapse/$t_ffmpeg:.2f}')") (target <= 0.75)"
  exit 0
fi
out=$here/out/video
kind=noisy; noise=",noise=alls=8:allf=t"
if [ "$smooth" = 1 ]; then kind=smooth; noise=""; out=$here/out/video-smooth; fi
mkdir -p "$out/jpg"
if [ ! -f "$out/jpg/0300.jpg" ]; then
  echo "making 300 $kind test JPEGs (1920x1080) once…"
  ffmpeg -v error -y -f lavfi -i "testsrc2=s=1920x1080:r=30$noise" -frames:v 300 -q:v 3 "$out/jpg/%04d.jpg"
fi
measure() { "$here/measure.py" "$@"; }
read -r _ t_ffmpeg _ m_ffmpeg < <(measure ffmpeg -v error -y -framerate 30 -i "$out/jpg/%04d.jpg" -c:v libx264 -preset medium -crf 23 \
  -pix_fmt yuv420p -movflags +faststart "$out/ffmpeg.mp4")
read -r _ t_lapse _ m_lapse < <(measure "$lapse" video --quiet --overwrite --fps 30 --image-duration 0.0333333333 \
  --crf 23 --preset medium "$out/jpg" -o "$out/lapse.mp4")
frames_ffmpeg=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$out/ffmpeg.mp4")
frames_lapse=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$out/lapse.mp4")
echo "300 $kind JPEGs 1920x1080 -> H.264 CRF 23 medium: ffmpeg ${t_ffmpeg}s (${frames_ffmpeg} frames), lapse ${t_lapse}s (${frames_lapse} frames)"
echo "wall-time ratio lapse/ffmpeg: $(python3 -c "print(f'{$t_lapse/$t_ffmpeg:.2f}')") (target <= 1.00)"
[ "$smooth" = 1 ] && exit 0

# Memory: 100 vs 1000 images (a list file repeating the 300 JPEGs), small frames so the run is short.
for n in 100 1000; do
  python3 -c "
import sys
for i in range($n): print('$out/jpg/%04d.jpg\t0.0333' % (i % 300 + 1))" > "$out/list$n.txt"
done
read -r _ _ _ m100 < <(measure "$lapse" video --quiet --overwrite --preset ultrafast @"$out/list100.txt" -o "$out/m100.mp4")
read -r _ _ _ m1000 < <(measure "$lapse" video --quiet --overwrite --preset ultrafast @"$out/list1000.txt" -o "$out/m1000.mp4")
echo "peak memory: 100 images ${m100} MB, 1000 images ${m1000} MB, ratio $(python3 -c "print(f'{$m1000/$m100:.2f}')") (target <= 1.20)"
