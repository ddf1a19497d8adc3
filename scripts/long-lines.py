#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Lists the lines of the given Swift files (folders: their *.swift) longer than LIMIT characters (default 120);
exits 1 if there are any. Usage: scripts/long-lines.py [--limit N] PATH..."""
import os, sys
args = sys.argv[1:]
limit = 120
if args[:1] == ["--limit"]:
    limit = int(args[1]); args = args[2:]
files = []
for a in args:
    if os.path.isdir(a):
        for root, _, names in os.walk(a):
            files += [os.path.join(root, n) for n in names if n.endswith(".swift")]
    else:
        files.append(a)
found = 0
for f in sorted(files):
    for n, line in enumerate(open(f, encoding="utf-8").read().split("\n"), 1):
        if len(line) > limit:
            print(f"{f}:{n}: {len(line)} characters")
            found += 1
if found:
    print(f"{found} lines longer than {limit} characters", file=sys.stderr)
sys.exit(1 if found else 0)
