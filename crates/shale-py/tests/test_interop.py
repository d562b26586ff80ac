"""Interop both ways between Shale's `rocksdict` module and PyPI's rocksdict 0.3.29.

Each scenario's database is written by one implementation and read by both; the readers
check every entry against the scenario's data and must print the same contents in the same
order. `ROCKSDICT_REAL_PYTHON` names the interpreter of a virtual environment with
`pip install rocksdict==0.3.29`; `SHALE_PYTHON` the one with Shale's wheel (default: this
interpreter). Without the first the test fails: it never skips.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interop_helper.py")
SCENARIOS = ["typed", "cf", "entities", "raw", "checkpoint"]


def interpreters():
    real = os.environ.get("ROCKSDICT_REAL_PYTHON")
    if not real:
        raise RuntimeError("set ROCKSDICT_REAL_PYTHON to a python with `pip install rocksdict==0.3.29`")
    return {"shale": os.environ.get("SHALE_PYTHON", sys.executable), "rocksdict": real}


def run(python, action, scenario, path, cwd, explicit=False):
    # -I: the helper's directory stays off sys.path, `import rocksdict` finds the installed one.
    env = dict(os.environ, INTEROP_EXPLICIT="1" if explicit else "0")
    p = subprocess.run(
        [python, "-I", HELPER, action, scenario, path],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
        env=env,
    )
    if p.returncode != 0:
        raise AssertionError(f"{python} {action} {scenario} failed:\n{p.stdout}\n{p.stderr}")
    return p.stdout


class TestInterop(unittest.TestCase):
    def setUp(self):
        self.pythons = interpreters()
        self.tmp = tempfile.mkdtemp(prefix="shale-interop-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def check_implementations_are_what_they_claim(self):
        probe = "import rocksdict, os; print(os.path.dirname(rocksdict.__file__))"
        dirs = {}
        for name, py in self.pythons.items():
            dirs[name] = subprocess.run([py, "-I", "-c", probe], capture_output=True, text=True, check=True).stdout
        self.assertNotEqual(dirs["shale"], dirs["rocksdict"], "both interpreters load the same module")

    def test_both_ways(self):
        self.check_implementations_are_what_they_claim()
        for writer in ["rocksdict", "shale"]:
            for scenario in SCENARIOS:
                with self.subTest(writer=writer, scenario=scenario):
                    path = os.path.join(self.tmp, f"{writer}-{scenario}")
                    run(self.pythons[writer], "write", scenario, path, self.tmp)
                    seen = {}
                    # rocksdict reads first what it wrote: a read-write open by Shale
                    # rewrites the OPTIONS file in RocksDB 11.8.1's form (see
                    # interop_helper.EXPLICIT for what rocksdict 0.3.29 needs then).
                    readers = ["rocksdict", "shale"] if writer == "rocksdict" else ["shale", "rocksdict"]
                    for reader in readers:
                        explicit = writer == "shale" and reader == "rocksdict"
                        seen[reader] = run(self.pythons[reader], "read", scenario, path, self.tmp, explicit)
                    self.assertEqual(seen["shale"], seen["rocksdict"], f"{scenario}: readers disagree")
                    self.assertTrue(seen["shale"].startswith("["), seen["shale"][:200])


if __name__ == "__main__":
    unittest.main()
