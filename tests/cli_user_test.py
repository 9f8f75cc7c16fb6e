#!/usr/bin/env python3
"""cli_user_test.py — what a user reads from neurowarp-cli (issue 15): the usage in the
user's UTF-8 locale says "[OPTION…]", not "[OPTION?]".

Usage: cli_user_test.py /path/to/neurowarp-cli
"""
import os
import subprocess
import sys
import unittest

CLI = None


def run(*args, env=None):
    full = dict(os.environ)
    full.update(env or {})
    p = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120, env=full)
    return p.returncode, p.stdout, p.stderr


class UsageTest(unittest.TestCase):
    def test_usage_in_utf8_locale(self):
        for sub in ("info", "smooth", "demons"):
            rc, out, _ = run(sub, "--help", env={"LC_ALL": "C.UTF-8"})
            self.assertEqual(rc, 0, sub)
            self.assertIn(f"neurowarp-cli {sub} [OPTION…]", out)
            self.assertNotIn("[OPTION?]", out)


if __name__ == "__main__":
    CLI = sys.argv.pop(1)
    unittest.main(verbosity=2)
