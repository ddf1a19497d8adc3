#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Fuzzes the JPEG header walk and the Multi-Picture Format index (Sources/LapseMedia: JPEGSegments, MultiPicture) with
# libFuzzer and AddressSanitizer, as the toolchain builds them (-sanitize=fuzzer,address), SECONDS long: the corpus
# the headers of the real GoPro photos in ../shared/data/pano360 that carry a reduced copy (their first 64 kB, the
# MPF segment among them).
# usage: scripts/fuzz-jpeg.sh SHARED_DATA [SECONDS (default 60)]
set -euo pipefail
SHARED=${1:?usage: fuzz-jpeg.sh SHARED_DATA [SECONDS]}
SECONDS_TO_RUN=${2:-60}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lapse-fuzz-jpeg.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/corpus"
for f in "$SHARED"/pano360/geovisio_gopromax_walk/1.jpg "$SHARED"/pano360/trekview_360/GSAG2002.JPG; do
    head -c 65536 "$f" > "$TMP/corpus/$(basename "$f").head"
done
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name LapseFuzz -package-name Lapse \
    "$ROOT/Sources/LapseMedia/JPEGSegments.swift" "$ROOT/Sources/LapseMedia/MultiPicture.swift" \
    "$ROOT/fuzz/MultiPictureFuzz.swift" -o "$TMP/fuzz-mpf"
"$TMP/fuzz-mpf" -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -rss_limit_mb=1024 "$TMP/corpus"
