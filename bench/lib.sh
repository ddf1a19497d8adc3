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
