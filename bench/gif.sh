#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lapse gif vs ffmpeg's two-pass palettegen=stats_mode=diff + paletteuse=dither=sierra2_4a:diff_mode=rectangle,
# same frames (fps=10, frame i = source at i/10 s) and size, on real clips, in one run:
# SSIM of each GIF against the source (ffmpeg's ssim filter, frames aligned by index), file size ratio
# (target <= 0.8), wall time ratio (target <= 1.0); then peak memory of lapse on a 60 s 1080p input (<= 300 MB).
# Usage: bench/gif.sh LAPSE_BIN SHARED_DATA
set -euo pipefail
lapse=$(realpath "${1:-.build/release/lapse}")
shared=$(realpath "${2:-../shared/data}")
here=$(cd "$(dirname "$0")" && pwd)
out=$here/out/gif
mkdir -p "$out"
measure() { "$here/measure.py" "$@"; }
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }

# SSIM (ffmpeg ssim filter, "All", in yuv444p) of a GIF against the source sampled the same way (fps=10:round=up),
# by frame index. The reference is scaled with a scaler neither tool uses (lanczos, full chroma, accurate rounding),
# so neither GIF is favoured by having been scaled exactly like the reference.
ssim_of() { # gif source width height
  ffmpeg -hide_banner -nostdin -i "$1" -i "$2" -lavfi \
    "[0:v]fps=10,format=yuv444p,setpts=N/10/TB[a];[1:v]fps=10:round=up,scale=$3:$4:flags=lanczos+accurate_rnd+full_chroma_int,format=yuv444p,setpts=N/10/TB[b];[a][b]ssim=shortest=1" \
    -f null - 2>&1 | sed -n 's/.*All:\([0-9.]*\).*/\1/p' | tail -1
}

printf "%-22s %9s %9s %7s %9s %9s %6s %7s %7s %6s\n" clip size ssim_lapse ssim_ff kB_lapse kB_ff size_r t_lapse t_ff time_r
for clip in "$shared/video/regift-test-file.mov" "$shared/pano360/valiant360_overpass/overpass-clip.mp4" \
            "$shared/video/iphone_rotated.mov"; do
  name=$(basename "$clip")
  read -r _ t_lapse _ _ < <(measure "$lapse" gif "$clip" --fps 10 --overwrite --quiet -o "$out/$name.lapse.gif")
  size=$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=p=0:s=x "$out/$name.lapse.gif")
  w=${size%x*}; h=${size#*x}
  # ffmpeg, the classic two passes (palette file, then the GIF); its wall time is the sum of both.
  read -r _ t1 _ _ < <(measure ffmpeg -v error -nostdin -y -i "$clip" \
    -vf "fps=10:round=up,scale=$w:$h,palettegen=stats_mode=diff" "$out/$name.palette.png")
  read -r _ t2 _ _ < <(measure ffmpeg -v error -nostdin -y -i "$clip" -i "$out/$name.palette.png" -lavfi \
    "fps=10:round=up,scale=$w:$h[x];[x][1:v]paletteuse=dither=sierra2_4a:diff_mode=rectangle" "$out/$name.ffmpeg.gif")
  t_ff=$(python3 -c "print(f'{$t1+$t2:.3f}')")
  s_lapse=$(ssim_of "$out/$name.lapse.gif" "$clip" "$w" "$h")
  s_ff=$(ssim_of "$out/$name.ffmpeg.gif" "$clip" "$w" "$h")
  b_lapse=$(stat -c %s "$out/$name.lapse.gif"); b_ff=$(stat -c %s "$out/$name.ffmpeg.gif")
  printf "%-22s %9s %9s %7s %9s %9s %6s %7s %7s %6s\n" "$name" "$size" "$s_lapse" "$s_ff" $((b_lapse / 1000)) $((b_ff / 1000)) \
    "$(ratio "$b_lapse" "$b_ff")" "$t_lapse" "$t_ff" "$(ratio "$t_lapse" "$t_ff")"
done
echo "targets: ssim_lapse >= ssim_ff, size_r <= 0.80, time_r <= 1.00"

# Peak memory on a 60 s 1080p input (made once).
long=$out/long_1080p_60s.mp4
if [ ! -f "$long" ]; then
  echo "making a 60 s 1920x1080 30 fps test video once…"
  ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=s=1920x1080:r=30:d=60,noise=alls=6:allf=t" \
    -c:v libx264 -preset veryfast -crf 23 -pix_fmt yuv420p "$long"
fi
read -r _ t_long _ m_long < <(measure "$lapse" gif "$long" --overwrite --quiet -o "$out/long.lapse.gif")
read -r _ t_short _ m_short < <(measure "$lapse" gif "$long" --duration 6 --overwrite --quiet -o "$out/short.lapse.gif")
echo "60 s 1080p -> $(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=p=0:s=x "$out/long.lapse.gif") GIF:" \
  "peak memory ${m_long} MB in ${t_long} s (6 s of it: ${m_short} MB) (target <= 300 MB, not growing with duration)"
