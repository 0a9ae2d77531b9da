"""tally.py: the pass/fail count the Python suites share. t = Tally("name");
t.check(ok, what, detail) counts one check and prints "name: FAIL: what:
detail" when it failed; t.done() prints "name: N passed, N failed" and
exits 1 on a failure."""
import sys


class Tally:
    def __init__(self, name):
        self.name, self.passed, self.failed = name, 0, 0

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("%s: FAIL: %s%s" % (self.name, what, (": " + str(detail)[:400]) if detail else ""))
        return ok

    def done(self):
        print("%s: %d passed, %d failed" % (self.name, self.passed, self.failed))
        sys.exit(1 if self.failed else 0)
