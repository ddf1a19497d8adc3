#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A hyperlapse rendered as N segments at once on one machine with GNU parallel, then joined by stream copy.
#
#   examples/segments/parallel.sh N OUT.mp4 HYPERLAPSE-OPTIONS...
#   e.g. examples/segments/parallel.sh 4 walk.mp4 --route walk.gpx --source google --cache-dir ~/.cache/lapse
#
# Every segment plans the whole job (lookups and stabilisation, shared through the cache) and renders its own
# frames; the parts go to OUT.parts/ and are joined into OUT.mp4 (and OUT.credits.txt; OUT.gif with GIF=OUT.gif).
# LAPSE: the lapse binary (default: lapse on PATH); JOBS: segments run at once (default N); OVERWRITE=1 replaces
# existing outputs. The parts are removed once the join succeeded.
set -euo pipefail
n=${1:?usage: parallel.sh N OUT.mp4 HYPERLAPSE-OPTIONS...}
out=${2:?usage: parallel.sh N OUT.mp4 HYPERLAPSE-OPTIONS...}
shift 2
lapse=${LAPSE:-lapse}
if [ "${OVERWRITE:-0}" != 1 ] && [ -e "$out" ]; then echo "error: $out: file exists (OVERWRITE=1 replaces it)" >&2; exit 1; fi
parts="${out%.*}.parts"
rm -rf "$parts"
mkdir -p "$parts"
# -q: the options reach lapse as they are (no second shell parsing); {} is the segment's number.
seq 1 "$n" | parallel --will-cite --halt now,fail=1 -j "${JOBS:-$n}" -q \
    "$lapse" hyperlapse "$@" --segment "{}/$n" -o "$parts/part-{}.mp4" --overwrite --quiet
# A segment without frames (N larger than the job's frames) writes nothing.
mapfile -t files < <(ls "$parts"/part-*.mp4 | sort -V)
extra=()
[ -n "${GIF:-}" ] && extra+=(--gif "$GIF")
[ "${OVERWRITE:-0}" = 1 ] && extra+=(--overwrite)
if [ "${#files[@]}" -ge 2 ]; then
    "$lapse" concat "${files[@]}" -o "$out" "${extra[@]}" --quiet
else   # one part is the whole job
    mv "${files[0]}" "$out"
    mv "${files[0]%.mp4}.credits.txt" "${out%.*}.credits.txt"
    if [ -n "${GIF:-}" ]; then "$lapse" gif "$out" -o "$GIF" --quiet $([ "${OVERWRITE:-0}" = 1 ] && echo --overwrite); fi
fi
rm -rf "$parts"
echo "wrote $out from ${#files[@]} segments" >&2
