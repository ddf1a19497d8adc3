#!/usr/bin/env bash
# lapse panoramas (download from the local Map Tiles stand-in + decode + stitch + crop + JPEG) vs the ffmpeg CLI
# decoding and stitching the same tiles from disk (tile filter + crop + JPEG), for one older-family panorama at
# zoom 4 (6656x3328, 13x7 = 91 tiles) and one newer-family one at zoom 4 (8192x4096, 128 tiles), plus a rerun
# served from the cache. Usage: bench/panoramas.sh LAPSE_BIN SHARED_DATA
set -euo pipefail
lapse=${1:-.build/release/lapse}
data=${2:-../shared/data}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out=$here/out/panoramas
rm -rf "$out/lapse" "$out/cache"
mkdir -p "$out/work"
key=bench-key-000000
python3 -u "$root/Tests/Fixtures/maptiles_standin.py" --port 0 --key "$key" --data "$data/pano360" --workdir "$out/work" > "$out/server.txt" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q PORT "$out/server.txt" 2>/dev/null && break; sleep 0.1; done
port=$(head -1 "$out/server.txt" | cut -d' ' -f2)
base=http://127.0.0.1:$port
measure() { "$here/measure.py" "$@"; }

# Two route points: one on each panorama. Cut the tiles once (not timed).
printf '55.70000,13.19000\n55.70050,13.19000\n' > "$out/route.txt"
GOOGLE_MAPS_API_KEY=$key "$lapse" panoramas --quiet --route "$out/route.txt" --spacing 100 --radius 10 --source google \
  --zoom 4 --maptiles-url "$base" --no-cache --out "$out/warm" --overwrite

read -r _ t_lapse _ m_lapse < <(GOOGLE_MAPS_API_KEY=$key measure "$lapse" panoramas --quiet --route "$out/route.txt" \
  --spacing 100 --radius 10 --source google --zoom 4 --maptiles-url "$base" --cache-dir "$out/cache" --out "$out/lapse")
read -r _ t_cached _ _ < <(GOOGLE_MAPS_API_KEY=$key measure "$lapse" panoramas --quiet --route "$out/route.txt" \
  --spacing 100 --radius 10 --source google --zoom 4 --maptiles-url "$base" --cache-dir "$out/cache" --out "$out/lapse" --overwrite)
ff() {  # folder cols rows width height output
  ffmpeg -v error -y -framerate 1 -start_number 0 -i "$1/%d.jpg" -vf "tile=$2x$3,crop=$4:$5:0:0" -frames:v 1 -q:v 3 "$6"
}
start=$(python3 -c 'import time; print(time.monotonic())')
ff "$out/work/CAoSNewFamily_pano-1/4" 16 8 8192 4096 "$out/ffmpeg-new.jpg"
ff "$out/work/CAoSOldFamily_pano-2/4" 13 7 6656 3328 "$out/ffmpeg-old.jpg"
t_ffmpeg=$(python3 -c "import time; print(f'{time.monotonic() - $start:.3f}')")
echo "2 panoramas at zoom 4 (219 tiles): lapse ${t_lapse}s (download over HTTP + stitch, peak ${m_lapse} MB), from the cache ${t_cached}s; ffmpeg tile+crop from disk ${t_ffmpeg}s"
echo "wall-time ratio lapse/ffmpeg: $(python3 -c "print(f'{$t_lapse/$t_ffmpeg:.2f}')") (cold), $(python3 -c "print(f'{$t_cached/$t_ffmpeg:.2f}')") (cached)"
