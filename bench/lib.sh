# SPDX-License-Identifier: GPL-3.0-or-later
# Timing helpers shared by the bench scripts (source it: . "$HERE/lib.sh").

now() { date +%s.%N; }
# CPU seconds (user + system) of a command into OUTFILE, when GNU time is installed (the wall clock is noisy on a
# busy machine); "0 0" without it.
cpu() {  # outfile command...
    local out=$1; shift
    if [ -x /usr/bin/time ]; then /usr/bin/time -f "%U %S" -o "$out" "$@"; else "$@"; echo "0 0" > "$out"; fi
}
# The sum of the CPU seconds in one or more files written by cpu().
cpusum() { python3 -c "import sys; print('%.2f' % sum(float(v) for f in sys.argv[1:] for v in open(f).read().split()[-2:]))" "$@"; }
# Seconds from START to END (both from now()).
elapsed() { python3 -c "print('%.3f' % ($2 - $1))"; }

# start_world COUNT NAME: the Map Tiles stand-in (Tests/Fixtures/maptiles_route_world.py) with COUNT panoramas 10 m
# apart at zoom 3; sets PORT_<NAME> and writes the route to $TMP/NAME.txt. Uses ROOT, SHARED, KEY, TMP and appends the
# server's pid to PIDS (the caller kills them on exit).
start_world() {
    local count=$1 name=$2
    python3 -u "$ROOT/Tests/Fixtures/maptiles_route_world.py" --port 0 --key "$KEY" --max-zoom 3 --no-marker \
        --every 10 --gap "" --length $(( (count - 1) * 10 )) --data "$SHARED/pano360" \
        --spec "$SHARED/streetview/googlemaps_openapi_spec" --route-out "$TMP/$name.txt" > "$TMP/$name.port" 2>"$TMP/$name.log" &
    PIDS+=($!)
    for _ in $(seq 1 300); do grep -q PORT "$TMP/$name.port" 2>/dev/null && break; sleep 0.1; done
    local port; port=$(awk '/PORT/ {print $2}' "$TMP/$name.port")
    [ -n "$port" ] || { echo "stand-in did not start: $(cat "$TMP/$name.log")" >&2; exit 1; }
    eval "PORT_$name=$port"
}

# make_tiles PORT: the stand-in cuts its tile sets on first request: make them now (not part of any measurement).
make_tiles() {
    local s
    s=$(curl -s -X POST -H 'Content-Type: application/json' -d '{"mapType":"streetview"}' \
        "http://127.0.0.1:$1/v1/createSession?key=$KEY" | python3 -c 'import json,sys; print(json.load(sys.stdin)["session"])')
    for id in CAoSRoute_0000 CAoSRoute_0001; do
        curl -s -o /dev/null "http://127.0.0.1:$1/v1/streetview/tiles/3/0/0?key=$KEY&session=$s&panoId=$id"
    done
}
