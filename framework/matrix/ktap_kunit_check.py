#!/usr/bin/env python3
"""Reads KTAP with the kernel's own parser (tools/testing/kunit/kunit_parser.py,
the one kunit.py uses) and prints what it made of it, one line each:

    status STATUS
    counts passed failed crashed skipped errors
    suite NAME STATUS
    case SUITE NAME STATUS [SKIP REASON]

Usage: ktap_kunit_check.py KUNIT_DIR KTAP_FILE
"""
import sys


def main() -> int:
    kunit_dir, path = sys.argv[1], sys.argv[2]
    sys.path.insert(0, kunit_dir)
    import kunit_parser  # pylint: disable=import-outside-toplevel
    import kunit_printer  # pylint: disable=import-outside-toplevel

    with open(path, encoding='utf-8') as f:
        lines = f.readlines()
    printer = kunit_printer.Printer(print=False)
    test = kunit_parser.parse_run_tests(lines, printer)
    c = test.counts
    print(f'status {test.status.name}')
    print(f'counts {c.passed} {c.failed} {c.crashed} {c.skipped} {c.errors}')
    for suite in test.subtests:
        print(f'suite {suite.name} {suite.status.name}')
        for case in suite.subtests:
            reason = f' {case.skip_reason}' if case.skip_reason else ''
            print(f'case {suite.name} {case.name} {case.status.name}{reason}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
