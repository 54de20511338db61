#!/usr/bin/env python3
"""Tests of scripts/layout_order.py's callgrind reading (ctest LayoutOrderScript).

Callgrind names a function or object once per run, at its first use, which may be a call
(cfn=/cob=) and may be in an earlier dump; later uses are the bare id.
"""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layout_order  # noqa: E402

DUMP1 = """# callgrind format
version: 1
events: Ir

ob=(1) /tmp/x/gpudoctor-profiled
fl=(1) ???
fn=(1) main
0 10
cob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6
cfn=(2) malloc
calls=1 0
0 5
cob=(1)
cfn=(3) _ZN9gpudoctor5SetupEv
calls=1 0
0 7

ob=(1)
fn=(3)
0 7
cfn=(4) _ZN9gpudoctor4TickEv
calls=1 0
0 3

ob=(2)
fn=(2)
0 5
"""

DUMP2 = """# callgrind format
version: 1
events: Ir

ob=(1)
fl=(1)
fn=(4)
0 30
cob=(2)
cfn=(2)
calls=3 0
0 9
fn=(5) _ZN9gpudoctor4TickEv'2
0 4
fn=(6) 0x0000000000401000
0 1
fn=(7) (below main)
0 1
"""


class FunctionsOfTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.paths = []
        for i, text in enumerate([DUMP1, DUMP2]):
            path = os.path.join(self.dir.name, f"cg.out.{i + 1}")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            self.paths.append(path)

    def tearDown(self):
        self.dir.cleanup()

    def test_names_carry_across_dumps_and_only_the_object_counts(self):
        names, objects = {}, {}
        startup = layout_order.functions_of(self.paths[0], "/gpudoctor-profiled", names, objects)
        steady = layout_order.functions_of(self.paths[1], "/gpudoctor-profiled", names, objects)
        # Tick is named by a call (cfn=) in dump 1 and ran in dump 2 only; malloc is libc's.
        self.assertEqual(startup, {"main", "_ZN9gpudoctor5SetupEv"})
        # Recursion suffix stripped; addresses and callgrind's own entries dropped.
        self.assertEqual(steady, {"_ZN9gpudoctor4TickEv"})

    def test_a_later_dump_alone_names_nothing_it_needs(self):
        with self.assertRaises(SystemExit) as e:
            layout_order.functions_of(self.paths[1], "/gpudoctor-profiled", {}, {})
        self.assertIn("fn=(4) has no name", str(e.exception))


if __name__ == "__main__":
    unittest.main()
