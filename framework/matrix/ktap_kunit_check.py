#!/usr/bin/env python3
"""Reads KTAP with the kernel's own parser (tools/testing/kunit/kunit_parser.py,
the one kunit.py uses) and prints what it made of it, one line each:

    status STATUS
    counts passed failed crashed skipped errors
    suite NAME STATUS
    case SUITE NAME STATUS [SKIP REASON]

Usage: ktap_kunit_check.py KUNIT_DIR KTAP_FILE
"""
import inspect
import os
import re
import sys


def parse(kunit_parser, kunit_printer, lines):
    """The Test kunit_parser makes of lines, its own printing silenced.
    6.13 on take a Printer; 6.12 and before print to kunit_printer.stdout."""
    if len(inspect.signature(kunit_parser.parse_run_tests).parameters) >= 2:
        return kunit_parser.parse_run_tests(lines, kunit_printer.Printer(print=False))
    kunit_printer.stdout._output = open(os.devnull, 'w', encoding='utf-8')  # pylint: disable=protected-access
    return kunit_parser.parse_run_tests(lines)


def skip_reason(case, suite, lines):
    """The case's SKIP reason: kunit_parser's own where it keeps one
    (6.13 on), else the directive on the case's result line."""
    if hasattr(case, 'skip_reason'):
        return case.skip_reason
    if case.status.name != 'SKIPPED':
        return None
    in_suite = False
    for line in lines:
        if re.match(r'^\s*# Subtest: ' + re.escape(suite.name) + r'\s*$', line):
            in_suite = True
        m = re.match(r'^\s+ok \d+ ' + re.escape(case.name) + r'\s*#\s*SKIP\s*(.*?)\s*$', line)
        if in_suite and m:
            return m.group(1) or None
    return None


def main() -> int:
    kunit_dir, path = sys.argv[1], sys.argv[2]
    sys.path.insert(0, kunit_dir)
    import kunit_parser  # pylint: disable=import-outside-toplevel
    import kunit_printer  # pylint: disable=import-outside-toplevel

    with open(path, encoding='utf-8') as f:
        lines = f.readlines()
    test = parse(kunit_parser, kunit_printer, lines)
    c = test.counts
    print(f'status {test.status.name}')
    print(f'counts {c.passed} {c.failed} {c.crashed} {c.skipped} {c.errors}')
    for suite in test.subtests:
        print(f'suite {suite.name} {suite.status.name}')
        for case in suite.subtests:
            why = skip_reason(case, suite, lines)
            reason = f' {why}' if why else ''
            print(f'case {suite.name} {case.name} {case.status.name}{reason}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
