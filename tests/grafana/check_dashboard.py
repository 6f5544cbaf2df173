#!/usr/bin/env python3
"""check_dashboard: every PromQL expression of a Grafana dashboard names only
metrics that kube-batchd exports.

Usage: check_dashboard.py DASHBOARD.json METRICS_SAMPLE

METRICS_SAMPLE is a program that prints /metrics text formatted by the
daemon's own code for a populated view (tests/grafana/metrics_sample.c); the
series names in its output are the names accepted. Nothing is typed by hand
here: a metric the daemon stops exporting fails this check.
"""
import json
import re
import subprocess
import sys

# PromQL words that are not metric names.
KEYWORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "offset",
    "bool", "and", "or", "unless", "inf", "nan", "le",
}
IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def exported_names(program):
    out = subprocess.run([program], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        if not line or line.startswith("#"):
            continue
        m = IDENT.match(line)
        if m:
            names.add(m.group(0))
    return names


def expressions(node, where="dashboard"):
    """Yields (where, expr) for every target's expr and every query
    variable's query, however deep the panels nest."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "expr" and isinstance(value, str):
                yield where, value
            elif key == "query" and isinstance(value, str) and "(" in value:
                yield where, value
            elif key == "query" and isinstance(value, dict) and isinstance(value.get("query"), str):
                yield where, value["query"]
            else:
                title = node.get("title") if isinstance(node.get("title"), str) else None
                yield from expressions(value, f"{where} / {title}" if title else where)
    elif isinstance(node, list):
        for item in node:
            yield from expressions(item, where)


def metric_names(expr):
    """The metric names an expression reads: identifiers that are not
    functions (followed by '('), not label names or values (inside {} or
    the parentheses of by/without/on/ignoring), not durations ([5m]), not
    Grafana variables ($x) and not keywords."""
    # Grafana's label_values(metric{...}, label): only the metric is one.
    e = re.sub(r"label_values\(\s*([^,]*?)\s*,\s*\w+\s*\)", r"\1", expr)
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', e)             # strings
    e = re.sub(r"\{[^}]*\}", "", e)                          # label matchers
    e = re.sub(r"\[[^\]]*\]", "", e)                         # ranges
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", e)
    e = re.sub(r"\$\{?\w+\}?", "", e)                        # Grafana variables
    names = []
    for m in IDENT.finditer(e):
        word = m.group(0)
        rest = e[m.end():].lstrip()
        if rest.startswith("("):
            continue  # a function or aggregation
        start = m.start()
        if start > 0 and (e[start - 1].isdigit() or e[start - 1] == "."):
            continue  # a number's exponent or unit
        if word.lower() in KEYWORDS:
            continue
        names.append(word)
    return names


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        dashboard = json.load(f)
    exported = exported_names(sys.argv[2])
    if not exported:
        print("check_dashboard: the sample program printed no metrics", file=sys.stderr)
        return 1
    exprs = list(expressions(dashboard))
    if not exprs:
        print(f"check_dashboard: {sys.argv[1]}: no PromQL expression found", file=sys.stderr)
        return 1
    bad = 0
    for where, expr in exprs:
        names = metric_names(expr)
        if not names:
            print(f"{sys.argv[1]}: {where}: no metric name in {expr!r}", file=sys.stderr)
            bad += 1
        for name in names:
            if name not in exported:
                print(f"{sys.argv[1]}: {where}: {name!r} is not exported by kube-batchd "
                      f"(in {expr!r})", file=sys.stderr)
                bad += 1
    print(f"check_dashboard: {len(exprs)} expressions, {len(exported)} exported series names, "
          f"{bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
