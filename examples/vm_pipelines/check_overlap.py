#!/usr/bin/env python3
"""Checks that a trace of weft-example-vm-pipelines shows pipelines overlapping.

    check_overlap.py TRACE.json PIPELINES

Reads the queue ops of the trace (src/base/trace.h: category "queue", each
op's zone named after its kind and every event carrying args.id) and takes
each op's execution as [its zone's begin, its "signal" instant] (for file
I/O, which completes on another thread, that is the whole transfer). Each
pipeline has exactly one queue_read, one queue_dispatch and one queue_write,
and its three ops are ordered by fences, so two ops of the same kind that
run at the same time belong to two different pipelines: the check passes
when such a pair exists. It also checks that the trace holds PIPELINES ops
of each kind, every one signalled (value 1).

Prints the largest number of ops of one kind running at once and exits 0
when the check passes, 1 with the reason otherwise.
"""

import json
import sys

KINDS = ("queue_read", "queue_dispatch", "queue_write")


def load_ops(path):
    """Returns {op id: {"kind", "begin", "signal", "value"}} from |path|."""
    with open(path, encoding="utf-8") as stream:
        trace = json.load(stream)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    ops = {}
    for event in events:
        if event.get("cat") != "queue":
            continue
        args = event.get("args") or {}
        if "id" not in args:
            continue
        op = ops.setdefault(args["id"], {})
        name = event.get("name", "")
        if event.get("ph") == "B" and name.startswith("queue_"):
            op["kind"] = name
            op["begin"] = float(event["ts"])
        elif event.get("ph") == "i" and name == "signal":
            op["signal"] = float(event["ts"])
            op["value"] = args.get("value")
    return ops


def most_at_once(intervals):
    """The largest number of [begin, end] intervals that share a moment."""
    points = []
    for begin, end in intervals:
        points.append((begin, 1))
        points.append((end, -1))
    # At equal times, ends before begins: touching is not overlapping.
    points.sort(key=lambda point: (point[0], point[1]))
    best = current = 0
    for _, step in points:
        current += step
        best = max(best, current)
    return best


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    path, pipelines = argv[1], int(argv[2])
    ops = load_ops(path)
    problems = []
    peaks = {}
    for kind in KINDS:
        of_kind = [op for op in ops.values() if op.get("kind") == kind]
        if len(of_kind) != pipelines:
            problems.append(f"{len(of_kind)} {kind} ops, expected {pipelines}")
        unsignalled = [op for op in of_kind if op.get("value") != 1]
        if unsignalled:
            problems.append(f"{len(unsignalled)} {kind} ops without a "
                            "successful signal")
        peaks[kind] = most_at_once(
            (op["begin"], op["signal"]) for op in of_kind
            if "begin" in op and "signal" in op)
    print("most ops running at once: " +
          ", ".join(f"{kind} {peaks[kind]}" for kind in KINDS))
    if max(peaks.values()) < 2:
        problems.append("no two ops of one kind ran at the same time: the "
                        "pipelines did not overlap")
    if problems:
        for problem in problems:
            print(f"check_overlap: {path}: {problem}", file=sys.stderr)
        return 1
    print(f"OK: {pipelines} pipelines, ops of different pipelines overlap")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
