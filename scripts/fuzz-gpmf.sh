#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Fuzzes the GPMF parser (Sources/LapseTelemetry/GPMF.swift) with libFuzzer and AddressSanitizer, as the toolchain
# builds them (-sanitize=fuzzer,address), from the real payloads in ../shared/data/telemetry/gpmf as the corpus.
# usage: scripts/fuzz-gpmf.sh SHARED_DATA [SECONDS (default 60)]
set -euo pipefail
SHARED=${1:?usage: fuzz-gpmf.sh SHARED_DATA [SECONDS]}
SECONDS_TO_RUN=${2:-60}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lapse-fuzz.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# The parser alone, in one module with LapseCore (its errors): its import of LapseCore is dropped.
sed '/^import LapseCore$/d' "$ROOT/Sources/LapseTelemetry/GPMF.swift" > "$TMP/GPMF.swift"
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name LapseFuzz -package-name Lapse "$ROOT"/Sources/LapseCore/*.swift \
    "$TMP/GPMF.swift" "$ROOT/fuzz/GPMFFuzz.swift" -o "$TMP/fuzz-gpmf"
mkdir -p "$TMP/corpus"
cp "$SHARED"/telemetry/gpmf/*.raw "$TMP/corpus/"
"$TMP/fuzz-gpmf" -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -rss_limit_mb=1024 "$TMP/corpus"
