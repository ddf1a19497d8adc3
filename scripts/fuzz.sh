#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Fuzzes the parsers of outside data with libFuzzer and AddressSanitizer, as the toolchain builds them
# (-sanitize=fuzzer,address), SECONDS each: the telemetry parsers (Sources/LapseTelemetry: GoPro's GPMF, from the real
# payloads in ../shared/data/telemetry/gpmf as the corpus, and Google's CAMM, from one sample of each packet type the
# specification defines), and the JPEG header walk with the Multi-Picture Format index (Sources/LapseMedia:
# JPEGSegments, TIFFByteOrder, MultiPicture; the corpus the headers, first 64 kB, of the real GoPro photos in
# ../shared/data/pano360 that carry a reduced copy).
# usage: scripts/fuzz.sh SHARED_DATA [SECONDS (default 60)]
set -euo pipefail
SHARED=${1:?usage: fuzz.sh SHARED_DATA [SECONDS]}
SECONDS_TO_RUN=${2:-60}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lapse-fuzz.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# The parsers alone, in one module with LapseCore (their errors) and LapseGeo (coordinates): imports of those dropped.
for f in GPMF CameraGPS CameraGravity CAMM; do
    sed '/^import Lapse/d' "$ROOT/Sources/LapseTelemetry/$f.swift" > "$TMP/$f.swift"
done
for f in "$ROOT"/Sources/LapseGeo/*.swift; do sed '/^import Lapse/d' "$f" > "$TMP/Geo-$(basename "$f")"; done
mkdir -p "$TMP/corpus-gpmf" "$TMP/corpus-camm"
cp "$SHARED"/telemetry/gpmf/*.raw "$TMP/corpus-gpmf/"
# One sample of each CAMM packet type, little-endian as the specification lays them out.
python3 - "$TMP/corpus-camm" <<'PY'
import struct, sys
fields = {0: "<3f", 1: "<2i", 2: "<3f", 3: "<3f", 4: "<3f", 5: "<3d", 6: "<di2d7f", 7: "<3f"}
values = {1: (8000000, 1000), 5: (52.44, 6.89, 30.0), 6: (1.4e9, 3, 52.44, 6.89, 30, 3, 5, 0, 10, 0, 0.5)}
for t, f in fields.items():
    v = values.get(t, (0.1, -9.8, 0.3))
    open(f"{sys.argv[1]}/type{t}", "wb").write(struct.pack("<HH", 0, t) + struct.pack(f, *v))
PY
for parser in GPMF CAMM; do
    swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name LapseFuzz -package-name Lapse \
        "$ROOT"/Sources/LapseCore/*.swift "$TMP"/Geo-*.swift "$TMP"/GPMF.swift "$TMP"/CameraGPS.swift \
        "$TMP"/CameraGravity.swift "$TMP"/CAMM.swift "$ROOT/fuzz/${parser}Fuzz.swift" -o "$TMP/fuzz-$parser"
    corpus="$TMP/corpus-$(echo "$parser" | tr A-Z a-z)"
    "$TMP/fuzz-$parser" -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -rss_limit_mb=1024 "$corpus"
done
mkdir -p "$TMP/corpus-mpf"
for f in "$SHARED"/pano360/geovisio_gopromax_walk/1.jpg "$SHARED"/pano360/trekview_360/GSAG2002.JPG; do
    head -c 65536 "$f" > "$TMP/corpus-mpf/$(basename "$f").head"
done
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name LapseFuzz -package-name Lapse \
    "$ROOT/Sources/LapseMedia/JPEGSegments.swift" "$ROOT/Sources/LapseMedia/TIFFByteOrder.swift" \
    "$ROOT/Sources/LapseMedia/MultiPicture.swift" "$ROOT/fuzz/MultiPictureFuzz.swift" -o "$TMP/fuzz-mpf"
"$TMP/fuzz-mpf" -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -rss_limit_mb=1024 "$TMP/corpus-mpf"
