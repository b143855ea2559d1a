#!/usr/bin/env python3
"""A long Kineto trace made of a real one's events repeated, for measuring a trace's memory and
speed at sizes the shared data does not have (issue 17, part 3: 100 MB-1 GB per rank).

Usage: bench/long_trace.py SRC.json[.gz] OUT.json REPEATS

Copy k of the events has every "ts" moved on by k times the source's span (plus 1 ms) and every
"correlation" and "External id" by k * 10^8, so that copies do not overlap in time and kernels
still link to their own launches. The text around the events array is the source's.
"""
import gzip
import re
import sys


def main():
    src, out, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rt", encoding="utf-8") as f:
        text = f.read()
    key = text.index('"traceEvents"')
    open_at = text.index("[", key)
    close_at = text.rindex("]")  # the events array is the source's last one (Kineto's layout)
    head, events, tail = text[: open_at + 1], text[open_at + 1 : close_at].rstrip().rstrip(","), text[close_at:]
    stamps = [int(m) for m in re.findall(r'"ts": ?(\d+)', events)]
    span = max(stamps) - min(stamps) + 1000
    number = re.compile(r'("ts": ?|"correlation": ?|"External id": ?)(\d+)')
    with open(out, "w", encoding="utf-8") as f:
        f.write(head)
        for k in range(repeats):
            if k:
                f.write(",")
            shift = {'"ts"': k * span, '"correlation"': k * 10**8, '"External id"': k * 10**8}
            f.write(number.sub(lambda m: m.group(1) + str(int(m.group(2)) + shift[m.group(1).split(":")[0]]), events) if k else events)
        f.write("\n" + tail)


if __name__ == "__main__":
    main()
