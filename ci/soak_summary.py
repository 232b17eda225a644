#!/usr/bin/env python3
"""The table of a soak (ci/soak.sh): per kernel, runs, tests, and each test
that failed in any run with its count and distinct first message lines.

    ci/soak_summary.py DIR KERNEL...   (reads DIR/<kernel>/<i>.xml)
"""
import collections
import pathlib
import sys
import xml.etree.ElementTree as ET


def cases(path):
    """(name, state, message) of every test case in one JUnit file."""
    root = ET.parse(path).getroot()
    for case in root.iter("testcase"):
        name = f"{case.get('classname')}.{case.get('name')}"
        failure = case.find("failure")
        if failure is not None:
            # The text has where and what; the message attribute only its first line.
            text = (failure.text or failure.get("message") or "").strip()
            # The first lines say where and what ("file:line", "Value of: ...").
            yield name, "fail", " / ".join(text.splitlines()[:4])[:300]
        elif case.find("skipped") is not None or case.get("result") == "skipped":
            yield name, "skip", ""
        else:
            yield name, "pass", ""


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out = pathlib.Path(argv[1])
    print("| kernel | runs | tests per run | passed | skipped | failed | tests that failed |")
    print("|---|---|---|---|---|---|---|")
    details = []
    for kernel in argv[2:]:
        files = sorted((out / kernel).glob("*.xml"), key=lambda p: int(p.stem) if p.stem.isdigit() else 0)
        totals = collections.Counter()
        failed = collections.defaultdict(list)
        per_run = set()
        unreadable = []
        for f in files:
            try:
                seen = list(cases(f))
            except (ET.ParseError, OSError) as e:
                unreadable.append(f"{f.name}: {e}")
                continue
            per_run.add(len(seen))
            for name, state, message in seen:
                totals[state] += 1
                if state == "fail":
                    failed[name].append(f"run {f.stem}: {message}")
        tests = "/".join(str(n) for n in sorted(per_run)) or "0"
        print(f"| {kernel} | {len(files)} | {tests} | {totals['pass']} | {totals['skip']} | {totals['fail']} "
              f"| {len(failed)} |")
        for name in sorted(failed):
            details.append(f"- {kernel} {name}: failed {len(failed[name])} of {len(files)}")
            for m in dict.fromkeys(failed[name]):
                details.append(f"  - {m}")
        for u in unreadable:
            details.append(f"- {kernel}: unreadable report {u}")
    if details:
        print()
        print("\n".join(details))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
