#!/usr/bin/env python3
"""The diagnose example programs (bench/diagnose_examples) run on the CPU, flawed and fixed.

A smoke test of their logic with the real PyTorch wheel (`--device cpu`: tiny sizes, the
CUDA-only parts left out), in one interpreter (torch is imported once): each program must
print its JSON line last on stdout with the right variant and step count. Their speed is
measured on the GPU machine (bench/diagnose_device.sh), not here.

  GPUSCOPE_DIAGNOSE_TEST_TORCH=/path/to/unpacked/torch python3 tests/python/diagnose_examples_test.py
"""
import contextlib
import io
import json
import os
import runpy
import sys
import unittest
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "bench", "diagnose_examples")
TORCH = os.environ.get("GPUSCOPE_DIAGNOSE_TEST_TORCH")
if TORCH:
    sys.path.insert(0, TORCH)
sys.path.insert(0, EXAMPLES)

PROGRAMS = {
    # program: extra arguments of the CPU run
    "healthy": [],
    "input_bound": ["--workers", "2"],
    "pageable_copies": [],
    "sync_every_step": ["--log-every", "2"],
    "launch_bound": [],
    "no_tensor_cores": [],
    "small_batch": ["--fixed-batch", "4"],
    "cudnn_defaults": [],
    "unfused_optimizer": ["--layers", "2"],
    "shared_gpu": [],
}


def run(program, args):
    """Runs the program as __main__ with args; returns its stdout."""
    sys.stderr.write("running %s %s\n" % (program, " ".join(args)))
    out = io.StringIO()
    saved = sys.argv
    sys.argv = [program + ".py"] + args
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runpy.run_path(os.path.join(EXAMPLES, program + ".py"), run_name="__main__")
    finally:
        sys.argv = saved
    return out.getvalue()


def last_json(stdout):
    lines = [line for line in stdout.splitlines() if line.strip()]
    return json.loads(lines[-1])


@unittest.skipUnless(TORCH, "GPUSCOPE_DIAGNOSE_TEST_TORCH (an unpacked torch wheel) not set")
class DiagnoseExamplesOnCpu(unittest.TestCase):
    def test_every_example_has_a_fixed_twin_documented(self):
        for program in PROGRAMS:
            with open(os.path.join(EXAMPLES, program + ".py")) as f:
                text = f.read()
            self.assertIn("--fixed", text, program)

    def test_flawed_and_fixed_runs_print_their_json_line_last(self):
        common = ["--device", "cpu", "--batch", "2", "--warmup", "1", "--steps", "3"]
        for program, extra in PROGRAMS.items():
            for fixed in (False, True):
                with self.subTest(program=program, fixed=fixed):
                    args = common + extra + (["--fixed"] if fixed else [])
                    result = last_json(run(program, args))
                    self.assertEqual(result["program"], program)
                    expected = "control" if program == "healthy" else ("fixed" if fixed else "flawed")
                    self.assertEqual(result["variant"], expected)
                    self.assertEqual(result["steps"], 3)
                    self.assertGreater(result["step_time_s_median"], 0)
                    self.assertGreater(result["samples_per_s"], 0)

    def test_the_time_limit_ends_the_timed_loop(self):
        args = ["--device", "cpu", "--batch", "2", "--warmup", "0", "--steps", "1000",
                "--max-seconds", "0.001"]
        result = last_json(run("launch_bound", args))
        self.assertEqual(result["steps"], 2)  # at least two intervals, then the limit


if __name__ == "__main__":
    unittest.main()
