#!/usr/bin/env python3
"""Runs a command and prints its wall time (s) and peak resident memory (MB) as `TIME <s> RSS <MB>`.
Usage: bench/measure.py CMD [ARGS...]   (the command's own output goes to /dev/null)."""
import os, resource, subprocess, sys, time

start = time.monotonic()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(proc.pid, 0)
elapsed = time.monotonic() - start
code = os.waitstatus_to_exitcode(status)
if code != 0:
    print(f"command failed with exit code {code}: {' '.join(sys.argv[1:])}", file=sys.stderr)
    sys.exit(1)
print(f"TIME {elapsed:.3f} RSS {usage.ru_maxrss / 1024:.1f}")
