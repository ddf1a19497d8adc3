#!/usr/bin/env bash
# The demo: the main job on a real input, with no key and no network. A hyperlapse from a real 360° video
# (a camera on a car on a highway, Valiant360's sample clip) with a keyframed camera: down the road in the
# direction of travel, then a slow turn up to the overpasses. Writes demo/hyperlapse.mp4 and demo/hyperlapse.gif.
set -euo pipefail
lapse=$1; data=$2
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p demo
"$lapse" hyperlapse \
  --source "video:$data/pano360/valiant360_overpass/overpass-clip.mp4" \
  --pano-heading 0 \
  --keyframes "$here/examples/overpass-camera.json" \
  --fps 24 --size 1280x720 \
  -o demo/hyperlapse.mp4 --gif demo/hyperlapse.gif --report demo/hyperlapse.html --overwrite
echo "next: a real route, e.g."
echo "  GOOGLE_MAPS_API_KEY=… $lapse hyperlapse --from 48.8584,2.2945 --to 48.8738,2.2950 --source google -o champs.mp4"
