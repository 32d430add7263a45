"""A tiny test runner for MicroPython (no pytest there): runs a module's check_* functions.

Prints `ok NAME` or `FAIL NAME: error` per check and `RESULT passed failed`; exits 1 if
any check failed. tests/firmware/test_micropython.py reads this output.
"""

import sys


def run(module_globals):
    passed = failed = 0
    for name in sorted(module_globals):
        if not name.startswith("check_"):
            continue
        try:
            module_globals[name]()
        except Exception as exc:  # report every failure, then go on
            failed += 1
            print("FAIL %s: %s %s" % (name, type(exc).__name__, exc))
            sys.print_exception(exc)
        else:
            passed += 1
            print("ok " + name)
    print("RESULT %d %d" % (passed, failed))
    sys.exit(1 if failed else 0)


def raises(kind, func, *args):
    """Call func(*args) and return the exception of type `kind` it raised."""
    try:
        func(*args)
    except kind as exc:
        return exc
    raise AssertionError("%s did not raise %s" % (func, kind.__name__))
