"""The version tables are filled once, and a thread that needs them while another thread
is filling them waits instead of reading half-filled tables.

A fresh ``kiln serve`` validates its first templates in worker threads at once; before
the fix, one of them sometimes answered "Template version was not provided" for a valid
CFN template (a different corpus case on each run). Run in a fresh interpreter, where
nothing has imported the tables yet: thread A's import of the CFN package is held back
until thread B's lookup has returned (or a generous bound has passed, which is how the
fixed code lets A go on while B waits), so B's lookup always meets the half-filled
state and must not fail.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import importlib.abc
    import sys
    import threading

    a_in_import = threading.Event()
    b_done = threading.Event()

    class HoldCfn(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "kiln.template.cfn":
                a_in_import.set()
                b_done.wait(5)   # the fixed code: B is waiting on A, which goes on
            return None

    sys.meta_path.insert(0, HoldCfn())
    from kiln.template import versions
    assert "kiln.template.cfn" not in sys.modules

    outcome = {}

    def b():
        try:
            outcome["b"] = versions.REGISTRY.get("AWSTemplateFormatVersion",
                                                 "2010-09-09").key
        except Exception as exc:
            outcome["b"] = f"failed: {exc}"
        b_done.set()

    ta = threading.Thread(target=versions.ensure_loaded)
    ta.start()
    assert a_in_import.wait(120)
    tb = threading.Thread(target=b)
    tb.start()
    ta.join(120)
    tb.join(120)
    print(outcome["b"])
""")



def test_a_lookup_during_the_first_load_waits_for_the_tables() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "AWSTemplateFormatVersion"
