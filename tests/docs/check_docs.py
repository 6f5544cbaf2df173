#!/usr/bin/env python3
"""check_docs: the documents name only flags, metrics and annotations that
kube-batchd has.

Usage: check_docs.py KUBE_BATCHD METRICS_SAMPLE SOURCE_ROOT

Reads README.md and docs/*.md under SOURCE_ROOT and checks three things,
each against the program or the source, never against a list typed here:

  flags        every flag on a command line that runs kube-batchd (in a code
               block or an inline code span: `kube-batchd top jobs --x`) is
               printed by that command's --help (KUBE_BATCHD is run for
               `--help`, `simulate --help`, `check-config --help`, `top
               --help`, `explain --help`, `simulate --from-cluster --help`);
               and every long flag standing alone in an inline span
               (`--schedule-delay`, `--kube-api-qps 0`) is printed by one of
               them, unless the span, its line or its section heading names
               the other program it belongs to (FOREIGN below:
               tests/cluster/up, kubectl, an operator, Arena...);
  metrics      every kube_batchd_* name is a series METRICS_SAMPLE prints
               (the daemon's own formatter on a populated view,
               tests/grafana/metrics_sample.c), a histogram's _bucket/_sum/
               _count, or, written NAME_* or NAME* or ending in _, a prefix
               of one;
  annotations  every kube-batchd.io/... key (also sim.kube-batchd.io/...)
               occurs in a .c or .h file of the layers (base/ ... cmd/).

Exit 0 when all hold; 1 with one line per finding (file:line: what), the
file and line of the document.
"""
import glob
import os
import re
import subprocess
import sys

LAYERS = ["base", "api", "queue", "cache", "scheduler", "plugins", "kube", "daemon", "cmd"]
HELPS = {
    "daemon": ["--help"],
    "simulate": ["simulate", "--help"],
    "check-config": ["check-config", "--help"],
    "top": ["top", "--help"],
    "explain": ["explain", "--help"],
    "from-cluster": ["simulate", "--from-cluster", "--help"],
}
LONG = re.compile(r"(?<![\w-])--([a-zA-Z][a-zA-Z0-9_-]*)")
SHORT = re.compile(r"(?<![\w-])-([a-zA-Z])(?![\w-])")
METRIC = re.compile(r"\bkube_batchd_[a-z0-9_]*\*?")
ANNOTATION = re.compile(r"\b(?:sim\.)?kube-batchd\.io/[A-Za-z0-9._-]*[A-Za-z0-9]")
SPAN = re.compile(r"`([^`\n]+)`")
# A command that runs kube-batchd: optional prompt, a path ending in
# kube-batchd, then its arguments.
COMMAND = re.compile(r"^\s*(?:\$\s+)?(?:[\w./-]*/)?kube-batchd(?=\s|$)(.*)$")
# Words that say a flag on the same line or in the same span belongs to
# another program. Only these are exempt, and only for flags standing alone.
FOREIGN = re.compile(
    r"tests/cluster/up|\bup --|kubectl|helm|training-operator|mpi-operator|--gang-scheduler-name"
    r"|--gang-scheduling|--enable-scheme|bench/run|meson|ninja|kube-apiserver|"
    r"kube-controller-manager|\bgo (?:mod|build|list)|curl|arena|kwok|--feature-gates|"
    r"--runtime-config|tests/e2e/|faults\.sh|scripts/|operator\b", re.IGNORECASE)


def helps(program):
    """{command: (long flags, short flags)} from each command's --help."""
    out = {}
    for cmd, args in HELPS.items():
        r = subprocess.run([program] + args, capture_output=True, text=True, check=False)
        text = r.stdout + r.stderr
        if r.returncode != 0 or "usage:" not in text:
            sys.exit(f"check_docs: `kube-batchd {' '.join(args)}` did not print a usage "
                     f"(exit {r.returncode})")
        # --help itself is every command's, printed or not (as test_cli has it)
        out[cmd] = ({m.replace("_", "-") for m in LONG.findall(text)} | {"help"},
                    set(SHORT.findall(text)) | {"h"})
    return out


def command_of(args):
    words = args.split()
    if "--from-cluster" in words:
        return ["from-cluster", "simulate"]
    for w in words:
        if w.startswith("-"):
            continue
        return [w] if w in HELPS else ["daemon"]
    return ["daemon"]


def exported(program):
    out = subprocess.run([program], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        if line and not line.startswith("#"):
            names.add(re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0))
    return names


def metric_known(name, names):
    if name.endswith("*") or name.endswith("_"):
        prefix = name.rstrip("*")
        return any(n.startswith(prefix) for n in names)
    if name in names:
        return True
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and name[: -len(suffix)] + "_bucket" in names:
            return True
    # a histogram named without suffix
    return name + "_bucket" in names


def source_text(root):
    parts = []
    for layer in LAYERS:
        for path in glob.glob(os.path.join(root, layer, "**", "*.[ch]"), recursive=True):
            with open(path, encoding="utf-8", errors="replace") as f:
                parts.append(f.read())
    if not parts:
        sys.exit(f"check_docs: no source under {root}")
    return "\n".join(parts)


def command_lines(lines):
    """Yields (lineno, argument text) of every kube-batchd command: lines of
    code blocks (with their continuation lines: a trailing backslash, or the
    indented option lines of a usage block), and inline spans."""
    in_block = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            in_block = not in_block
            i += 1
            continue
        if in_block:
            m = COMMAND.match(line)
            if m:
                args, start = m.group(1), i
                while (args.rstrip().endswith("\\") or
                       (i + 1 < len(lines) and re.match(r"^\s+\[", lines[i + 1]))):
                    i += 1
                    if i >= len(lines) or lines[i].lstrip().startswith("```"):
                        break
                    args += " " + lines[i]
                yield start + 1, args.replace("\\", " ")
        else:
            for span in SPAN.findall(line):
                m = COMMAND.match(span)
                if m:
                    yield i + 1, m.group(1)
        i += 1


def check_doc(path, text, flags, all_long, names, source, counts):
    problems = []
    lines = text.splitlines()
    rel = path
    for lineno, args in command_lines(lines):
        cmds = command_of(args)
        longs = set().union(*(flags[c][0] for c in cmds))
        shorts = set().union(*(flags[c][1] for c in cmds))
        counts["command lines"] += 1
        for fl in LONG.findall(args):
            counts["flags"] += 1
            if fl.replace("_", "-") not in longs:
                problems.append(f"{rel}:{lineno}: --{fl} is not a flag of `kube-batchd "
                                f"{' '.join(c for c in cmds[:1] if c != 'daemon')}`".rstrip() +
                                " (its --help does not print it)")
        for fl in SHORT.findall(args):
            counts["flags"] += 1
            if fl not in shorts:
                problems.append(f"{rel}:{lineno}: -{fl} is not a flag of `kube-batchd "
                                f"{cmds[0] if cmds[0] != 'daemon' else ''}`".replace(" `", "`")
                                + " (its --help does not print it)")
    in_block = False
    heading = ""
    for lineno, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            in_block = not in_block
        if not in_block and line.startswith("#"):
            heading = line
        if not in_block:
            for span in SPAN.findall(line):
                if (COMMAND.match(span) or FOREIGN.search(span) or FOREIGN.search(line) or
                        FOREIGN.search(heading)):
                    continue
                m = re.match(r"^--([a-zA-Z][a-zA-Z0-9_-]*)", span.strip())
                counts["flags"] += bool(m)
                if m and m.group(1).replace("_", "-") not in all_long:
                    problems.append(f"{rel}:{lineno}: `--{m.group(1)}` is a flag of no "
                                    "kube-batchd command (no --help prints it)")
        for name in METRIC.findall(line):
            counts["metrics"] += 1
            if not metric_known(name, names):
                problems.append(f"{rel}:{lineno}: metric {name} is not exported "
                                "(daemon/metrics.c prints no such series)")
        for key in ANNOTATION.findall(line):
            counts["annotations"] += 1
            if key not in source:
                problems.append(f"{rel}:{lineno}: {key} occurs in no source file")
    return problems


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    program, sample, root = sys.argv[1:]
    flags = helps(program)
    all_long = set().union(*(f[0] for f in flags.values()))
    names = exported(sample)
    source = source_text(root)
    docs = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    problems = []
    counts = dict.fromkeys(["command lines", "flags", "metrics", "annotations"], 0)
    for path in docs:
        with open(path, encoding="utf-8") as f:
            problems += check_doc(os.path.relpath(path, root), f.read(), flags, all_long, names,
                                  source, counts)
    for p in problems:
        print(p)
    print(f"check_docs: {len(docs)} documents; checked " +
          ", ".join(f"{n} {k}" for k, n in counts.items()) + f"; {len(problems)} finding(s)")
    if counts["flags"] == 0 or counts["metrics"] == 0 or counts["annotations"] == 0:
        print("check_docs: nothing of some kind was found to check: the patterns are wrong")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
