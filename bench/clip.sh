#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Speed of `lapse clip` (stream copy) against `ffmpeg -ss S -i IN -t 10 -c copy OUT`, on the same one-hour
# ~1 GB MP4 in the same run, plus how much of the file each reads (strace) and, over HTTP from a counting
# loopback server, how many bytes are transferred.
#
# Usage: bench/clip.sh LAPSE_BIN SHARED_DATA    (SHARED_DATA is unused: the input is generated once and cached
#        in bench/out/, which is git-ignored). Needs ffmpeg, python3, strace (optional: read fractions).
set -euo pipefail
LAPSE=${1:-.build/release/lapse}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
OUT="$HERE/out"
mkdir -p "$OUT"
HOUR="$OUT/hour_720p_faststart.mp4"
START=${CLIP_START:-1800.5}   # a start between keyframes, in the middle of the hour
LEN=10
RUNS=${RUNS:-5}

if [ ! -s "$HOUR" ]; then
  echo "building the one-hour input once (cached as $HOUR)…"
  ffmpeg -v error -y -f lavfi -i "testsrc2=s=1280x720:r=30:d=60" -f lavfi -i "sine=f=440:d=60:beep_factor=4" \
    -c:v libx264 -preset ultrafast -b:v 2200k -maxrate 2200k -bufsize 4400k -g 60 -keyint_min 60 -sc_threshold 0 \
    -c:a aac -b:a 96k "$OUT/minute.mp4"
  ffmpeg -v error -y -stream_loop 59 -i "$OUT/minute.mp4" -c copy -movflags +faststart "$HOUR.partial.mp4"
  mv "$HOUR.partial.mp4" "$HOUR"
  rm -f "$OUT/minute.mp4"
fi
SIZE=$(stat -c %s "$HOUR")
DUR=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$HOUR")
echo "input: $HOUR, $SIZE bytes, ${DUR} s; cut ${START} s + ${LEN} s"

. "$HERE/lib.sh"
# Best (smallest) wall time of $RUNS runs of "$@", alternating runs is done by the caller.
time_once() { local t0 t1; t0=$(now); "$@" >/dev/null 2>&1; t1=$(now); echo "$t1 - $t0" | bc -l; }

best_lapse=999; best_ffmpeg=999
for i in $(seq "$RUNS"); do
  t=$(time_once "$LAPSE" clip "$HOUR" -o "$OUT/cut_lapse.mp4" --start "$START" --duration "$LEN" --overwrite --quiet)
  best_lapse=$(echo "if ($t < $best_lapse) $t else $best_lapse" | bc -l)
  t=$(time_once ffmpeg -v error -y -ss "$START" -i "$HOUR" -t "$LEN" -c copy -movflags +faststart "$OUT/cut_ffmpeg.mp4")
  best_ffmpeg=$(echo "if ($t < $best_ffmpeg) $t else $best_ffmpeg" | bc -l)
done
ratio=$(echo "$best_lapse / $best_ffmpeg" | bc -l)
printf "wall time, best of %d: lapse %.3f s, ffmpeg %.3f s, ratio %.2f (target <= 1.5)\n" "$RUNS" "$best_lapse" "$best_ffmpeg" "$ratio"
printf "frames shown: lapse %s, ffmpeg %s\n" \
  "$(ffprobe -v error -select_streams v -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$OUT/cut_lapse.mp4")" \
  "$(ffprobe -v error -select_streams v -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$OUT/cut_ffmpeg.mp4")"

# Bytes read from the input file, from the read/pread64 calls on it (strace -y names each fd's file).
bytes_read() {
  local log="$OUT/strace.log"
  strace -f -qq -y -e trace=read,pread64,readv,preadv -o "$log" "$@" >/dev/null 2>&1 || true
  awk -v f="$HOUR" 'index($0, "<" f ">") { n = $NF; if (n ~ /^[0-9]+$/) s += n } END { print s + 0 }' "$log"
  rm -f "$log"
}
if command -v strace >/dev/null; then
  rl=$(bytes_read "$LAPSE" clip "$HOUR" -o "$OUT/cut_lapse.mp4" --start "$START" --duration "$LEN" --overwrite --quiet)
  rf=$(bytes_read ffmpeg -v error -y -ss "$START" -i "$HOUR" -t "$LEN" -c copy "$OUT/cut_ffmpeg.mp4")
  printf "file read: lapse %d bytes (%.2f%% of the file, target < 2%%), ffmpeg %d bytes (%.2f%%)\n" \
    "$rl" "$(echo "100 * $rl / $SIZE" | bc -l)" "$rf" "$(echo "100 * $rf / $SIZE" | bc -l)"
else
  echo "file read: strace not installed, skipped"
fi

# Over HTTP from the counting loopback server (moov at the start).
PORTFILE="$OUT/server.port"
python3 -u "$ROOT/Tests/Fixtures/http_file_server.py" --port 0 --root "$OUT" > "$PORTFILE" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q PORT "$PORTFILE" 2>/dev/null && break; sleep 0.1; done
PORT=$(awk '/PORT/ {print $2}' "$PORTFILE")
BASE="http://127.0.0.1:$PORT"
NAME=$(basename "$HOUR")
served() { curl -s "$BASE/__stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["bytes"])'; }
curl -s "$BASE/__reset" >/dev/null
t0=$(now); "$LAPSE" clip "$BASE/$NAME" -o "$OUT/cut_http.mp4" --start "$START" --duration "$LEN" --overwrite --quiet; t1=$(now)
hl=$(served)
curl -s "$BASE/__reset" >/dev/null
t2=$(now); ffmpeg -v error -y -ss "$START" -i "$BASE/$NAME" -t "$LEN" -c copy "$OUT/cut_http_ffmpeg.mp4"; t3=$(now)
hf=$(served)
printf "HTTP: lapse transferred %d bytes (%.2f%% of the file, target < 5%%) in %.2f s; ffmpeg %d bytes (%.2f%%) in %.2f s\n" \
  "$hl" "$(echo "100 * $hl / $SIZE" | bc -l)" "$(echo "$t1 - $t0" | bc -l)" \
  "$hf" "$(echo "100 * $hf / $SIZE" | bc -l)" "$(echo "$t3 - $t2" | bc -l)"
