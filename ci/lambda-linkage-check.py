#!/usr/bin/env python3
"""Every function that a tracked header defines with a KOKKOS_LAMBDA in its
body is marked SP_UNIT_LOCAL (scaleproof/kokkos_compat.hpp says why: under
nvcc an unmarked one can launch a kernel through another translation unit's
null closure-copy pointer). A function's definition starts at column 0 and
its body is indented, so the nearest column-0 line above a lambda that is not
a template head, namespace, type, directive, comment or brace is the start of
the function that holds it.

  ci/lambda-linkage-check.py [FILE...]   default: every tracked *.hpp
Prints each unmarked function; exit 1 if any."""
import re
import subprocess
import sys

NOT_A_FUNCTION = re.compile(r"^(template|namespace|struct|class|union|using|enum|typedef|#|//|/\*|\}|\{)")


def unmarked(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    found = []
    for i, line in enumerate(lines):
        code = line.split("//", 1)[0]
        if "KOKKOS_LAMBDA" not in code and "KOKKOS_CLASS_LAMBDA" not in code:
            continue
        for j in range(i, -1, -1):
            s = lines[j]
            if s[:1].isalpha() or s[:1] == "_":
                if NOT_A_FUNCTION.match(s):
                    continue
                if not s.startswith("SP_UNIT_LOCAL ") and (j + 1, s) not in found:
                    found.append((j + 1, s))
                break
    return found


def main(argv):
    files = argv[1:] or subprocess.check_output(["git", "ls-files", "*.hpp"], text=True).split()
    bad = 0
    for f in files:
        for line_no, text in unmarked(f):
            print(f"{f}:{line_no}: a function holding a KOKKOS_LAMBDA is not SP_UNIT_LOCAL: {text.strip()[:90]}")
            bad += 1
    print(f"lambda-linkage-check: {len(files)} headers, {bad} unmarked function(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
