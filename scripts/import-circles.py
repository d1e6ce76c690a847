#!/usr/bin/env python3
"""Import circles of more than two files in any crate (docs/architecture.md,
"Rules of the house"): files of one crate that reach each other through
`crate::` paths, comments and unit tests left out. Prints each such circle and
exits 1 when there is one; two files that use each other are allowed.

    scripts/import-circles.py [CRATE_SRC ...]   (default: every crate and module)
"""
import glob
import os
import re
import sys


def modules_of(src):
    mods = {}
    for path in glob.glob(os.path.join(src, "**", "*.rs"), recursive=True):
        rel = os.path.relpath(path, src)[:-3]
        name = rel.replace(os.sep + "mod", "").replace(os.sep, "::")
        if name in ("lib", "main"):
            continue
        text = open(path, encoding="utf-8").read()
        text = re.sub(r"#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", text, flags=re.S)
        text = "\n".join(l for l in text.split("\n") if not l.lstrip().startswith("//"))
        mods[name] = text
    return mods


def graph_of(mods):
    graph = {m: set() for m in mods}
    for m, text in mods.items():
        refs = re.findall(r"crate::([a-z_][a-z0-9_]*(?:::[a-z_][a-z0-9_]*)*)", text)
        for group in re.findall(r"use crate::\{([^}]*)\}", text):
            refs += [item.strip() for item in group.split(",")]
        for ref in refs:
            parts = ref.split("::")
            for k in range(len(parts), 0, -1):
                target = "::".join(parts[:k])
                if target in mods:
                    if target != m:
                        graph[m].add(target)
                    break
    return graph


def long_circles(graph):
    """Simple cycles of three or more files (each reported once)."""
    found = set()

    def walk(start, node, path):
        for nxt in graph[node]:
            if nxt == start and len(path) > 2:
                found.add(tuple(path[path.index(min(path)):] + path[: path.index(min(path))]))
            elif nxt not in path and nxt > start and len(path) < 8:
                walk(start, nxt, path + [nxt])

    for start in sorted(graph):
        walk(start, start, [start])
    return sorted(found)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    srcs = sys.argv[1:] or sorted(
        glob.glob(os.path.join(root, "crates", "*", "src")) + glob.glob(os.path.join(root, "modules", "*", "src"))
    )
    bad = 0
    for src in srcs:
        for circle in long_circles(graph_of(modules_of(src))):
            bad += 1
            print(f"{os.path.relpath(src, root)}: {' -> '.join(circle)} -> {circle[0]}")
    if bad:
        print(f"{bad} import circle(s) of more than two files")
        return 1
    print("no import circle of more than two files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
