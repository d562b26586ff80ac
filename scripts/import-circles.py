#!/usr/bin/env python3
"""The import picture of each crate: fails when a circle of module imports spans two folders.

Issue 36's rule: inside a crate, modules may import each other in a circle only within one
folder (`compaction/`'s pickers, `version/`'s manifest and replay); a circle across folders
means a lower layer names a higher one. For every crate under crates/, this reads each
`src/**/*.rs` (its `#[cfg(test)]` tail and `tests` folders left out), takes every
`crate::a::b` path and every `super::` path as an edge to the longest module it names, finds
the strongly connected components (Tarjan) and prints each circle with its folders.

    scripts/import-circles.py            # every crate; exit 1 if a circle spans two folders
    scripts/import-circles.py -v         # also the circles inside one folder, and the edges
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates")
PATH = re.compile(r"\b(crate|super)((?:::\w+)+)")
GROUP = re.compile(r"\b(crate|super)((?:::\w+)*)::\{([^}]*)\}")


def module_of(rel):
    m = rel[:-3]
    if m.endswith("/mod"):
        m = m[:-4]
    if m in ("lib", "main"):
        m = ""
    return tuple(p for p in m.split("/") if p)


def read_crate(src):
    mods = {}
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = [d for d in dirnames if d != "tests"]
        for f in filenames:
            if not f.endswith(".rs") or f.endswith("tests.rs"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, src)
            text = open(path, encoding="utf-8").read()
            cut = text.find("#[cfg(test)]")
            mods[module_of(rel)] = (rel, text if cut < 0 else text[:cut])
    return mods


def edges(mods):
    def resolve(base, parts):
        for i in range(len(parts), 0, -1):
            if tuple(base + parts[:i]) in mods:
                return tuple(base + parts[:i])
        return None

    g = {m: set() for m in mods}
    for m, (rel, text) in mods.items():
        # `super` from a file module `a/b.rs` is `a`; from `a/b/mod.rs` it is `a` too.
        parent = list(m[:-1])
        found = []
        for kind, rest in PATH.findall(text):
            found.append((kind, [p for p in rest.split("::") if p]))
        for kind, rest, inner in GROUP.findall(text):
            head = [p for p in rest.split("::") if p]
            for item in inner.split(","):
                item = item.strip().split(" ")[0].split("::")
                if item and item[0] and item[0] != "self":
                    found.append((kind, head + item))
        for kind, parts in found:
            base = [] if kind == "crate" else parent
            while parts and parts[0] == "super":
                base, parts = base[:-1], parts[1:]
            t = resolve(base, parts)
            if t is not None and t != m:
                g[m].add(t)
    return g


def circles(g):
    sys.setrecursionlimit(100000)
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def main():
    verbose = "-v" in sys.argv
    bad = 0
    for crate in sorted(os.listdir(ROOT)):
        src = os.path.join(ROOT, crate, "src")
        if not os.path.isdir(src):
            continue
        mods = read_crate(src)
        g = edges(mods)
        for comp in circles(g):
            folders = sorted({os.path.dirname(mods[m][0]) or "." for m in comp})
            names = ["::".join(m) or "crate" for m in comp]
            spans = len(folders) > 1
            bad += spans
            if spans or verbose:
                print(f"{crate}: circle of {len(comp)} modules over {folders}: {', '.join(names)}")
                if verbose or spans:
                    for m in comp:
                        for t in sorted(g[m] & set(comp)):
                            print(f"    {'::'.join(m) or 'crate'} -> {'::'.join(t) or 'crate'}")
    if bad:
        print(f"{bad} circle(s) span more than one folder")
        return 1
    print("no import circle spans more than one folder")
    return 0


if __name__ == "__main__":
    sys.exit(main())
