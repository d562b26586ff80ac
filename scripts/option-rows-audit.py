#!/usr/bin/env python3
"""Lists the DB and CF option names RocksDB registers that Shale's option table has no row for.

Usage: option-rows-audit.py ROCKSDB_CHECKOUT [SHALE_CHECKOUT]

ROCKSDB_CHECKOUT is a RocksDB source tree (or a bare git directory, read at the ref named by
$ROCKSDB_REF, default v11.8.1). The names are the top-level keys of the type_info maps in
options/db_options.cc and options/cf_options.cc (`{"name", ...` entries opening a map line,
excluding enum-value maps and struct members such as compaction_options_fifo's fields).
Shale's rows are the first string argument of each `opt(`, `deprecated(` or `tbl(` call in
crates/shale/src/options_table.rs. Exit status 1 when any name lacks a row.
"""
import os
import re
import subprocess
import sys


def read(checkout, path):
    if os.path.isdir(os.path.join(checkout, "options")):
        with open(os.path.join(checkout, path), encoding="utf-8") as f:
            return f.read()
    ref = os.environ.get("ROCKSDB_REF", "v11.8.1")
    return subprocess.run(["git", "--git-dir", checkout, "show", f"{ref}:{path}"],
                          check=True, capture_output=True, text=True).stdout


# The maps whose keys are option names (not enum values or struct fields).
MAPS = {
    "options/db_options.cc": ["db_mutable_options_type_info", "db_immutable_options_type_info"],
    "options/cf_options.cc": ["cf_mutable_options_type_info", "cf_immutable_options_type_info"],
}


def map_names(text, map_name):
    start = text.find(f"{map_name} =")
    if start < 0:
        raise SystemExit(f"map {map_name} not found")
    # The map's body: from its opening brace to the matching closing one.
    i = text.index("{", start)
    depth = 0
    for j in range(i, len(text)):
        c = text[j]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                break
    body = text[i + 1:j]
    names = []
    depth = 0
    k = 0
    # Top-level entries are `{"name", OptionTypeInfo...}` at depth 0 of the body.
    while k < len(body):
        c = body[k]
        if c == "{":
            if depth == 0:
                m = re.match(r'\{\s*"([A-Za-z0-9_]+)"', body[k:])
                if m:
                    names.append(m.group(1))
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == '"':
            k = body.index('"', k + 1)
        elif body.startswith("//", k):
            k = body.index("\n", k)
        k += 1
    return names


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    rocks = sys.argv[1]
    shale = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(shale, "crates/shale/src/options_table.rs"), encoding="utf-8") as f:
        table = f.read()
    have = set(re.findall(r'\b(?:opt|deprecated|tbl)\(\s*"([A-Za-z0-9_]+)"', table))
    missing = []
    for path, maps in MAPS.items():
        text = read(rocks, path)
        for m in maps:
            for n in map_names(text, m):
                if n not in have:
                    missing.append((m, n))
    for m, n in missing:
        print(f"{m}\t{n}")
    print(f"{len(missing)} names without a row", file=sys.stderr)
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
