#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Lists the stored properties of Swift types (structs, classes, enums, actors, their extensions and local types)
whose type holds a SIMD vector of 32 bytes or more (SIMD3<Double>, SIMD4<Double>, SIMD8<Float>, SIMD16<UInt16>…)
other than inside an array or dictionary; exits 1 if there are any. Such a property is stored through
@StoredAsDoubles / @OptionalStoredAsDoubles instead: Swift 6.3 lays out a 32-byte vector kept in an async
function's frame at the wrong size and the frame overwrites the heap after it (see Sources/LapseCore/
StoredAsDoubles.swift). Static properties, computed properties and locals in function bodies are not stored in a
value and are left alone. Usage: scripts/vector-fields.py PATH..."""
import os, re, sys

ELEMENT_BYTES = {
    "Double": 8, "Int": 8, "UInt": 8, "Int64": 8, "UInt64": 8,
    "Float": 4, "Int32": 4, "UInt32": 4,
    "Float16": 2, "Int16": 2, "UInt16": 2,
    "Int8": 1, "UInt8": 1,
}
SIMD = re.compile(r"SIMD(\d+)\s*<\s*(\w+)\s*>")
TYPE_HEADER = re.compile(r"\b(struct|class|enum|extension|actor|protocol)\s+[A-Za-z_]")
DECLARATION = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|package|private|fileprivate|internal|open)(?:\(set\))?\s+|final\s+|lazy\s+|weak\s+|unowned\s+"
    r"|nonisolated(?:\(unsafe\))?\s+|static\s+|class\s+)*"
    r"(let|var)\s+(.*)$")


def vector_bytes(type_text):
    """The largest SIMD vector in a type's text outside brackets (arrays, dictionaries), in bytes of storage."""
    outside = re.sub(r"\[[^\[\]]*\]", "", type_text)
    while re.search(r"\[[^\[\]]*\]", outside):
        outside = re.sub(r"\[[^\[\]]*\]", "", outside)
    largest = 0
    for lanes, element in SIMD.findall(outside):
        lanes = int(lanes)
        storage = 4 if lanes == 3 else lanes
        largest = max(largest, storage * ELEMENT_BYTES.get(element, 8))
    return largest


def strip(line):
    """The line without string literals and its // comment."""
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    return line.split("//", 1)[0]


def check(path):
    found = []
    scopes = []  # True for a type's body
    previous = ""
    for number, raw in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        line = strip(raw)
        in_type = bool(scopes) and scopes[-1]
        match = DECLARATION.match(line) if in_type else None
        if match and not re.search(r"\bstatic\b|\bclass\s+(let|var)\b", line.split(match.group(1))[0]):
            wrapped = "@StoredAsDoubles" in line or "@OptionalStoredAsDoubles" in line
            rest = match.group(2)
            computed = "{" in rest and "=" not in rest.split("{", 1)[0]
            declared = rest.split("=", 1)[0].split("{", 1)[0]
            if ":" not in declared and "=" in rest:  # the type inferred: `var x = SIMD3<Double>(…)`
                declared = rest.split("=", 1)[1].split("(", 1)[0]
            if not wrapped and not computed and vector_bytes(declared) >= 32:
                found.append(f"{path}:{number}: stored property of a {vector_bytes(declared)}-byte SIMD vector: "
                             f"{raw.strip()}")
        for k, char in enumerate(line):
            if char == "{":
                header = line[:k]
                if not header.strip():
                    header = previous
                scopes.append(bool(TYPE_HEADER.search(header)) and not re.search(r"\b(func|init)\b", header))
            elif char == "}" and scopes:
                scopes.pop()
        if line.strip():
            previous = line
    return found


files = []
for a in sys.argv[1:]:
    if os.path.isdir(a):
        for root, _, names in os.walk(a):
            files += [os.path.join(root, n) for n in names if n.endswith(".swift")]
    else:
        files.append(a)
problems = [p for f in sorted(files) for p in check(f)]
for p in problems:
    print(p)
if problems:
    print(f"{len(problems)} stored properties of 32-byte vectors: store them with @StoredAsDoubles", file=sys.stderr)
sys.exit(1 if problems else 0)
