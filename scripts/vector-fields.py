#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Lists the stored properties of Swift types (structs, classes, enums, actors, their extensions and local types)
whose type holds a SIMD vector of 32 bytes or more (SIMD3<Double>, SIMD4<Double>, SIMD8<Float>, SIMD16<UInt16>…)
other than inside an array or dictionary; exits 1 if there are any. Such a property is stored through
@StoredAsDoubles / @OptionalStoredAsDoubles instead: Swift 6.3 lays out a 32-byte vector kept in an async
function's frame at the wrong size and the frame overwrites the heap after it (see Sources/LapseCore/
StoredAsDoubles.swift). Static properties, computed properties and locals in function bodies are not stored in a
value and are left alone. Seen through: typealiases (of any file given), enum cases' associated values, property
observers, `Swift.`-qualified names, inferred `SIMD3(…)` (taken as Double), multi-line string literals. Not seen:
a declaration or a type's header spread over several lines. Usage: scripts/vector-fields.py PATH..."""
import os, re, sys

ELEMENT_BYTES = {
    "Double": 8, "Int": 8, "UInt": 8, "Int64": 8, "UInt64": 8,
    "Float": 4, "Int32": 4, "UInt32": 4,
    "Float16": 2, "Int16": 2, "UInt16": 2,
    "Int8": 1, "UInt8": 1,
}
SIMD = re.compile(r"(?:Swift\.)?SIMD(\d+)\s*(?:<\s*(?:Swift\.)?(\w+)\s*>)?")
ALIAS = re.compile(r"^\s*(?:(?:public|package|private|fileprivate|internal)\s+)?typealias\s+(\w+)\s*=\s*(.+)$")
CASE = re.compile(r"^\s*(?:indirect\s+)?case\s+(.*)$")
aliases = {}  # name -> the type it stands for
TYPE_HEADER = re.compile(r"\b(struct|class|enum|extension|actor|protocol)\s+[A-Za-z_]")
DECLARATION = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|package|private|fileprivate|internal|open)(?:\(set\))?\s+|final\s+|lazy\s+|weak\s+|unowned\s+"
    r"|nonisolated(?:\(unsafe\))?\s+|static\s+|class\s+)*"
    r"(let|var)\s+(.*)$")


def vector_bytes(type_text, depth=0):
    """The largest SIMD vector in a type's text outside brackets (arrays, dictionaries), in bytes of storage;
    typealiases are followed."""
    outside = type_text
    while re.search(r"\[[^\[\]]*\]", outside):
        outside = re.sub(r"\[[^\[\]]*\]", "", outside)
    largest = 0
    for lanes, element in SIMD.findall(outside):
        lanes = int(lanes)
        storage = 4 if lanes == 3 else lanes
        largest = max(largest, storage * ELEMENT_BYTES.get(element or "Double", 8))
    if depth < 5:
        for word in set(re.findall(r"\b[A-Za-z_]\w*\b", outside)):
            if word in aliases:
                largest = max(largest, vector_bytes(aliases[word], depth + 1))
    return largest


def strip(line):
    """The line without string literals and its // comment."""
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    return line.split("//", 1)[0]


def code_lines(raws):
    """The lines without string literals and comments (a multi-line string's lines come out empty)."""
    lines, in_string = [], False
    for raw in raws:
        if in_string:
            lines.append("")
            if '"""' in raw:
                in_string = False
            continue
        line = strip(raw)
        if line.count('"""') % 2 == 1:
            in_string = True
            line = line.split('"""', 1)[0]
        lines.append(line)
    return lines


def check(path, raws, lines):
    found = []
    scopes = []  # True for a type's body
    previous = ""
    for index, line in enumerate(lines):
        number, raw = index + 1, raws[index]
        # A one-line type (`struct A { var v: T }`): its members are read as if on lines of their own.
        one_line = re.match(r"^(.*\b(?:struct|class|enum|actor|extension)\s+[^{]*)\{(.*)\}\s*$", line)
        members = [m for m in one_line.group(2).split(";")] if one_line else None
        in_type = bool(scopes) and scopes[-1]
        for text in members if members is not None else ([line] if in_type else []):
            bytes_, what = stored_vector(text, lines[index + 1] if index + 1 < len(lines) else "")
            if bytes_ >= 32:
                found.append(f"{path}:{number}: {what} of a {bytes_}-byte SIMD vector: {raw.strip()}")
        if one_line:
            line = one_line.group(1)  # the braces balance on the line
            if line.strip():
                previous = line
            continue
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


def stored_vector(text, next_line):
    """(bytes, what) of the largest SIMD vector a member declaration stores (0 when none or not stored)."""
    match = DECLARATION.match(text)
    if match and not re.search(r"\bstatic\b|\bclass\s+(let|var)\b", text.split(match.group(1))[0]):
        if "@StoredAsDoubles" in text or "@OptionalStoredAsDoubles" in text:
            return 0, ""
        rest = match.group(2)
        braced = "{" in rest and "=" not in rest.split("{", 1)[0]
        observed = re.search(r"\b(didSet|willSet)\b", rest + " " + next_line)
        if braced and not observed:
            return 0, ""  # computed
        declared = rest.split("=", 1)[0].split("{", 1)[0]
        if ":" not in declared and "=" in rest:  # the type inferred: `var x = SIMD3<Double>(…)`
            declared = rest.split("=", 1)[1].split("(", 1)[0]
        return vector_bytes(declared), "stored property"
    case = CASE.match(text)
    if case and "(" in case.group(1):
        return vector_bytes(case.group(1).split("(", 1)[1]), "enum case's associated value"
    return 0, ""


files = []
for a in sys.argv[1:]:
    if os.path.isdir(a):
        for root, _, names in os.walk(a):
            files += [os.path.join(root, n) for n in names if n.endswith(".swift")]
    else:
        files.append(a)
sources = {}  # path -> (its lines, its lines as code), each file read once
for f in sorted(files):
    raws = open(f, encoding="utf-8").read().split("\n")
    sources[f] = (raws, code_lines(raws))
    for line in sources[f][1]:
        alias = ALIAS.match(line)
        if alias:
            aliases[alias.group(1)] = alias.group(2)
problems = [p for f, (raws, lines) in sources.items() for p in check(f, raws, lines)]
for p in problems:
    print(p)
if problems:
    print(f"{len(problems)} stored properties of 32-byte vectors: store them with @StoredAsDoubles", file=sys.stderr)
sys.exit(1 if problems else 0)
