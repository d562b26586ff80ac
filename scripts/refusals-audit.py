#!/usr/bin/env python3
"""Checks that every place Shale refuses a call with NotSupported has a row in docs/refusals.md.

A refusal site is, in the non-test code of crates/*/src:
  - a call `not_supported(` (Error::not_supported, options_load's not_supported helper),
  - `Error::new(ErrorKind::NotSupported, ...)`,
  - a refusal recorded for later: `unsupported.push(`, `unsupported_if(`, `ts_unsupported(`,
  - a message written out with NotSupported's prefix: a string literal starting with
    `Not implemented: ` (the CLI's ldb and sst_dump failures).
A site is named by its file, the function it is in, and its message: the first string literal
of the call (a `format!` string included), or the argument text when the message is a variable.
Line numbers are left out so that an edit elsewhere in a file does not break the table.

A second table, under docs/refusals.md's heading "## InvalidArgument refusals of the option and
open layer", has one row per InvalidArgument site of the option and open layer (IA_FILES below:
the facade's options*.rs, db/dyn_options.rs, db/open_api.rs, the engine's db/open.rs and
config*.rs): a call `invalid_argument(` or `Error::new(ErrorKind::InvalidArgument, ...)`. Every
call is a site (a helper that builds the error, as options_table's `bad_value`, is one site).

docs/refusals.md holds one table row per site:
  | `file` | `function` | `` message `` | RocksDB 11.8.1's counterpart | note |
The check fails when a site has no row, or a row names no site (a stale row), counting rows and
sites with the same name as a multiset.

  python3 scripts/refusals-audit.py          check (exit 1 and the differences when they differ)
  python3 scripts/refusals-audit.py --list   print one skeleton row per site found in the code
  python3 scripts/refusals-audit.py --list-ia   the same for the InvalidArgument sites
"""
import os
import re
import sys
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "refusals.md")

IA_SITE = re.compile(
    r"(?<![A-Za-z0-9_])invalid_argument\(|"
    r"Error::new\((?:crate::)?(?:error::)?ErrorKind::InvalidArgument\s*,"
)
IA_HEADING = "## InvalidArgument refusals of the option and open layer"


def ia_file(rel):
    """Whether `rel` is a file of the option and open layer audited for InvalidArgument."""
    d, f = os.path.split(rel)
    if d == "crates/shale/src":
        return (f.startswith("options") and f.endswith(".rs")) or f == "options_table.rs"
    if d == "crates/shale/src/db":
        return f in ("dyn_options.rs", "open_api.rs")
    if d == "crates/shale-engine/src/db":
        return f == "open.rs"
    if d == "crates/shale-engine/src":
        return f.startswith("config") and f.endswith(".rs")
    return False


SITE = re.compile(
    r'"Not implemented: (?!")|'
    r"(?<![A-Za-z0-9_])(?:not_supported|ts_unsupported|unsupported_if|unsupported\.push)\(|"
    r"Error::new\((?:crate::)?(?:error::)?ErrorKind::NotSupported\s*,"
)
# Helpers that build a refusal for their caller: the calls are the sites, not their bodies.
WRAPPERS = {"not_supported", "ts_unsupported", "unsupported_if"}
FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:unsafe\s+)?fn\s+([A-Za-z0-9_]+)")


def strip_tests(lines):
    """Blanks `#[cfg(test)]` modules (rustfmt puts their closing brace at the `mod` line's indent)."""
    out = list(lines)
    i = 0
    while i < len(out):
        if out[i].strip() == "#[cfg(test)]" and i + 1 < len(out):
            m = re.match(r"^(\s*)(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{\s*$", out[i + 1])
            if m:
                close = m.group(1) + "}"
                j = i + 1
                while j < len(out) and out[j].rstrip() != close:
                    j += 1
                for k in range(i, min(j + 1, len(out))):
                    out[k] = ""
                i = j
        i += 1
    return out


def read_literal(s, i):
    """The Rust string literal starting at s[i] == '"', with line continuations joined."""
    j = i + 1
    buf = []
    while j < len(s):
        c = s[j]
        if c == "\\":
            if s[j + 1] == "\n":
                j += 2
                while j < len(s) and s[j] in " \t\n":
                    j += 1
                continue
            buf.append(s[j : j + 2])
            j += 2
            continue
        if c == '"':
            break
        buf.append(c)
        j += 1
    return "".join(buf)


def argument_text(s, i):
    """The call's argument text from s[i] (just after its open paren) to the matching close."""
    depth = 0
    j = i
    while j < len(s):
        c = s[j]
        if c == '"':
            read = read_literal(s, j)
            j += len(read) + 2
            while j < len(s) and s[j - 1] != '"':
                j += 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                break
            depth -= 1
        j += 1
    return " ".join(s[i:j].split())


def message(s, i):
    """The message of the call whose arguments start at s[i]."""
    j = i
    while j < len(s) and s[j] in " \t\n":
        j += 1
    if s.startswith("format!(", j):
        j += len("format!(")
        while j < len(s) and s[j] in " \t\n":
            j += 1
    if j < len(s) and s[j] == '"':
        return read_literal(s, j)
    return argument_text(s, i)


def sites(pattern=SITE, wanted=None, wrappers=WRAPPERS):
    """The sites `pattern` finds in the non-test code of crates/*/src (only files `wanted` keeps)."""
    found = []
    crates = os.path.join(ROOT, "crates")
    for crate in sorted(os.listdir(crates)):
        src = os.path.join(crates, crate, "src")
        for dirpath, dirnames, filenames in os.walk(src):
            dirnames[:] = sorted(d for d in dirnames if d != "tests")
            for f in sorted(filenames):
                if not f.endswith(".rs") or f == "tests.rs" or f.endswith("_tests.rs"):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, ROOT)
                if wanted is not None and not wanted(rel):
                    continue
                with open(path, encoding="utf-8") as fh:
                    lines = strip_tests(fh.read().split("\n"))
                text = "\n".join(lines)
                starts = [0]
                for ln in lines:
                    starts.append(starts[-1] + len(ln) + 1)
                for m in pattern.finditer(text):
                    line_no = next(k for k in range(len(starts)) if starts[k + 1] > m.start())
                    if re.match(r"^\s*(?:pub(?:\([^)]*\))?\s+)?fn\s", lines[line_no]):
                        continue
                    func = "-"
                    for k in range(line_no, -1, -1):
                        fm = FN.match(lines[k])
                        if fm:
                            func = fm.group(1)
                            break
                    if func in wrappers:
                        continue  # a helper's body; each call of the helper is a site
                    if m.group(0).startswith('"'):
                        msg = read_literal(text, m.start())
                    else:
                        msg = message(text, m.end())
                    found.append((rel, func, msg, line_no + 1))
    return found


ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*`([^`]+)`\s*\|\s*`` (.*?) ``\s*\|(.*)\|\s*$")


def rows():
    """The rows of the NotSupported table and of the InvalidArgument table (after IA_HEADING)."""
    out = {"ns": [], "ia": []}
    table = "ns"
    with open(DOC, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.startswith("## "):
                table = "ia" if line.strip() == IA_HEADING else "other"
                continue
            m = ROW.match(line.rstrip("\n"))
            if m:
                if table == "other":
                    print(f"{DOC}:{n}: a refusal row outside the two audited tables", file=sys.stderr)
                    sys.exit(1)
                rest = [c.strip() for c in m.group(4).split("|")]
                if len(rest) < 2 or not rest[0]:
                    print(f"{DOC}:{n}: a row without a RocksDB counterpart or reason", file=sys.stderr)
                    sys.exit(1)
                out[table].append((m.group(1), m.group(2), m.group(3).replace("\\|", "|")))
    return out


def compare(kind, found, doc_rows):
    """Prints the sites of `found` without a row and the rows naming no site; the count of both."""
    have = Counter((r, f, m) for r, f, m, _ in found)
    doc = Counter(doc_rows)
    missing = have - doc
    stale = doc - have
    for (r, f, m), n in sorted(missing.items()):
        line = next(ln for rr, ff, mm, ln in found if (rr, ff, mm) == (r, f, m))
        print(f"no {kind} row in docs/refusals.md for {r}:{line} ({f}): {m!r} (x{n})")
    for (r, f, m), n in sorted(stale.items()):
        print(f"a {kind} row of docs/refusals.md names no refusal in the code: {r} ({f}): {m!r} (x{n})")
    return sum(missing.values()), sum(stale.values()), sum(have.values())


def main():
    found = sites()
    ia_found = sites(IA_SITE, ia_file, set())
    if "--list" in sys.argv or "--list-ia" in sys.argv:
        for rel, func, msg, line in found if "--list" in sys.argv else ia_found:
            print(f"| `{rel}` | `{func}` | `` {msg.replace('|', chr(92) + '|')} `` | ? | line {line} |")
        return 0
    doc = rows()
    missing, stale, total = compare("NotSupported", found, doc["ns"])
    ia_missing, ia_stale, ia_total = compare("InvalidArgument", ia_found, doc["ia"])
    if missing or stale or ia_missing or ia_stale:
        print(
            f"refusals-audit: {missing + ia_missing} site(s) without a row, {stale + ia_stale} stale row(s)"
        )
        return 1
    print(
        f"refusals-audit: {total} NotSupported sites and {ia_total} InvalidArgument sites of the option "
        "and open layer, each with its row in docs/refusals.md"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
