#!/usr/bin/env bash
# The demo: until the hyperlapse lands, a slideshow of 29 real street photos (Lund, OpenSfM sample data).
set -euo pipefail
lapse=$1; data=$2
mkdir -p demo
"$lapse" video "$data/images/opensfm_lund/images" --image-duration 0.25 --fps 24 --overwrite -o demo/lund.mp4
