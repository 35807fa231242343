#!/usr/bin/env python3
"""gpuscope's Python shim (python/gpuscope_shim) end to end, without PyTorch (CTest label `python`).

Each test writes a small program, runs it in a fresh interpreter with the shim's folder first on
PYTHONPATH (as `gpuscope trace` runs a command) and the stand-in `torch` of fake_torch/ after it,
and reads the NVTX calls the program recorded (its last line of output: torch.cuda.nvtx.calls as
JSON). Where the shim must change nothing, the same program runs without the shim too and the two
outputs are compared byte for byte. Standard library only: `python3 shim_test.py`.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SHIM_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python", "gpuscope_shim")
FAKE_TORCH_DIR = os.path.join(HERE, "fake_torch")

MARK = ["mark", "gpuscope.step"]
EXPECTED = ["mark", "gpuscope.steps_expected"]
PUSH = ["push", "gpuscope.data_wait"]
POP = ["pop"]
NEXT = ["next"]

# Ends every program that imports torch: the NVTX calls it made, as the last line of stdout.
PRINT_CALLS = "\nimport json, torch\nprint(json.dumps(torch.cuda.nvtx.calls))\n"


class ShimCase(unittest.TestCase):
    """Runs programs under the shim (helpers only; the tests are in the classes below)."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpuscope-shim-test-")
        self.addCleanup(shutil.rmtree, self.dir)

    def write(self, relative_path, text):
        path = os.path.join(self.dir, relative_path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path

    def run_program(self, source, shim=True, paths=(), env=None, shim_dirs=None,
                    print_calls=False):
        """Runs `source` as a script; returns the CompletedProcess (text, stdout and stderr).

        print_calls: end the program with PRINT_CALLS.
        """
        source = textwrap.dedent(source) + (PRINT_CALLS if print_calls else "")
        program = self.write("program.py", source)
        if shim_dirs is None:
            shim_dirs = [SHIM_DIR] if shim else []
        child_env = {
            k: v
            for k, v in os.environ.items()
            if k != "PYTHONPATH" and not k.startswith(("GPUSCOPE_", "FAKE_", "PYTHON"))
        }
        child_env["PYTHONPATH"] = os.pathsep.join(list(shim_dirs) + list(paths) + [FAKE_TORCH_DIR])
        child_env.update(env or {})
        return subprocess.run(
            [sys.executable, program],
            cwd=self.dir,
            env=child_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            universal_newlines=True,
            timeout=120,
        )

    def calls_of(self, source, keep_expected=False, **kwargs):
        """Runs a program that ends with PRINT_CALLS; returns its NVTX calls (lists), less the
        steps-expected mark unless keep_expected (its own tests look at it)."""
        result = self.run_program(source, print_calls=True, **kwargs)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, "")
        calls = json.loads(result.stdout.splitlines()[-1])
        return calls if keep_expected else [c for c in calls if c != EXPECTED]

    def assert_same_with_and_without_shim(self, source, **kwargs):
        without = self.run_program(source, shim=False, **kwargs)
        with_shim = self.run_program(source, shim=True, **kwargs)
        self.assertEqual(with_shim.stdout, without.stdout)
        self.assertEqual(with_shim.stderr, without.stderr)
        self.assertEqual(with_shim.returncode, without.returncode)
        return with_shim


class ShimTest(ShimCase):
    # --- step marks -------------------------------------------------------------------------

    def test_one_mark_per_step_with_one_optimizer(self):
        calls = self.calls_of(
            """
            import torch
            opt = torch.optim.SGD()
            for _ in range(5):
                opt.step()
            """
        )
        self.assertEqual(calls, [MARK] * 5)

    def test_two_optimizers_give_one_mark_per_iteration_after_the_first_ones_step(self):
        calls = self.calls_of(
            """
            import torch
            d, g = torch.optim.SGD("d"), torch.optim.SGD("g")
            for _ in range(4):
                d.step()
                torch.cuda.nvtx.calls.append(["stepped", "d"])
                g.step()
                torch.cuda.nvtx.calls.append(["stepped", "g"])
            """
        )
        self.assertEqual(calls, [MARK, ["stepped", "d"], ["stepped", "g"]] * 4)

    def test_the_next_optimizer_paces_the_steps_once_the_first_one_is_gone(self):
        calls = self.calls_of(
            """
            import gc, torch
            warmup = torch.optim.SGD("warmup")
            warmup.step()
            del warmup
            gc.collect()
            main = torch.optim.SGD("main")
            for _ in range(3):
                main.step()
            """
        )
        self.assertEqual(calls, [MARK] * 4)

    def test_a_step_the_grad_scaler_skips_still_counts(self):
        calls = self.calls_of(
            """
            import torch
            opt = torch.optim.SGD()
            scaler = torch.amp.GradScaler()
            for i in range(5):
                scaler.found_inf = i in (0, 2)  # the first iteration too: the usual case
                scaler.step(opt)
                scaler.update()
            assert opt.updates == 3, opt.updates
            """
        )
        self.assertEqual(calls, [MARK] * 5)

    def test_two_optimizers_under_a_grad_scaler_give_one_mark_per_iteration(self):
        calls = self.calls_of(
            """
            import torch
            d, g = torch.optim.SGD("d"), torch.optim.SGD("g")
            scaler = torch.amp.GradScaler()
            for i in range(6):
                scaler.found_inf = i % 3 == 0
                scaler.step(d)
                scaler.step(g)
                scaler.update()
            """
        )
        self.assertEqual(calls, [MARK] * 6)

    def test_a_disabled_grad_scaler_counts_each_step_once(self):
        calls = self.calls_of(
            """
            import torch
            opt = torch.optim.SGD()
            scaler = torch.amp.GradScaler(enabled=False)
            for _ in range(3):
                scaler.step(opt)
            """
        )
        self.assertEqual(calls, [MARK] * 3)

    def test_a_dataloader_worker_emits_no_step_mark(self):
        calls = self.calls_of(
            """
            import torch
            torch.utils.data._worker_info = object()  # as inside a DataLoader worker
            torch.optim.SGD().step()
            """,
            keep_expected=True,
        )
        self.assertEqual(calls, [])

    # --- steps expected ---------------------------------------------------------------------

    def test_the_first_optimizer_made_says_once_that_steps_will_come(self):
        calls = self.calls_of(
            """
            import torch

            class Custom(torch.optim.Optimizer):
                def __init__(self):
                    super().__init__("custom")

            opt = torch.optim.SGD()
            torch.cuda.nvtx.mark("made")
            other, custom = torch.optim.SGD("g"), Custom()
            for _ in range(2):
                opt.step()
                custom.step()
            """,
            keep_expected=True,
        )
        self.assertEqual(calls, [EXPECTED, ["mark", "made"], MARK, MARK])

    def test_no_optimizer_says_nothing(self):
        calls = self.calls_of(
            """
            import torch
            for _ in torch.utils.data.DataLoader([1, 2]):
                pass
            """,
            keep_expected=True,
        )
        self.assertEqual(calls, [PUSH, NEXT, POP] * 3)

    # --- data_wait ranges -------------------------------------------------------------------

    def test_data_wait_ranges_enclose_each_next_and_balance_at_stop_iteration(self):
        calls = self.calls_of(
            """
            import torch
            seen = [x for x in torch.utils.data.DataLoader([1, 2, 3])]
            assert seen == [1, 2, 3], seen
            name = torch.utils.data.dataloader._BaseDataLoaderIter.__next__.__name__
            assert name == "__next__", name
            """
        )
        self.assertEqual(calls, [PUSH, NEXT, POP] * 4)  # three items, then StopIteration

    def test_data_wait_ranges_balance_when_next_raises_and_the_exception_is_unchanged(self):
        result = self.run_program(
            """
            import torch
            it = iter(torch.utils.data.DataLoader([1, 2, 3], fail_at=1))
            print(next(it))
            try:
                next(it)
            except ValueError as e:
                print("caught", type(e).__name__, e)
            print(next(it))
            """,
            print_calls=True,
        )
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertEqual(lines[:3], ["1", "caught ValueError bad sample", "3"])
        self.assertEqual(json.loads(lines[-1]), [PUSH, NEXT, POP] * 3)

    def test_hooks_are_installed_once_when_the_shim_is_on_the_path_twice(self):
        copy = os.path.join(self.dir, "another_gpuscope", "gpuscope_shim")
        shutil.copytree(SHIM_DIR, copy)
        calls = self.calls_of(
            """
            import torch
            for _ in torch.utils.data.DataLoader([1]):
                torch.optim.SGD().step()
            """,
            shim_dirs=[SHIM_DIR, copy, SHIM_DIR],
        )
        self.assertEqual(calls, [PUSH, NEXT, POP, MARK, PUSH, NEXT, POP])

    # --- when torch is imported -------------------------------------------------------------

    def test_torch_imported_late_inside_a_function(self):
        calls = self.calls_of(
            """
            import sys
            assert "torch" not in sys.modules
            def main():
                import torch.optim
                torch.optim.SGD().step()
            main()
            """
        )
        self.assertEqual(calls, [MARK])

    def test_torch_looked_up_before_it_is_imported(self):
        # As transformers, accelerate and others do to see whether torch is installed.
        calls = self.calls_of(
            """
            import importlib.util
            assert importlib.util.find_spec("torch") is not None
            assert importlib.util.find_spec("torch").origin.endswith("__init__.py")
            import torch
            torch.optim.SGD().step()
            """
        )
        self.assertEqual(calls, [MARK])

    def test_torch_imported_in_a_subprocess_and_a_spawned_process(self):
        result = self.run_program(
            """
            import json, multiprocessing, subprocess, sys

            def child(queue):
                import torch
                torch.optim.SGD().step()
                queue.put(torch.cuda.nvtx.calls)

            if __name__ == "__main__":
                code = "import torch; torch.optim.SGD().step(); print(torch.cuda.nvtx.calls)"
                print(subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                     universal_newlines=True, check=True).stdout.strip())
                context = multiprocessing.get_context("spawn")
                queue = context.Queue()
                process = context.Process(target=child, args=(queue,))
                process.start()
                print(queue.get())
                process.join()
                print("parent imported torch:", "torch" in sys.modules)
            """
        )
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, "")
        self.assertEqual(
            result.stdout.splitlines(),
            [
                "[('mark', 'gpuscope.steps_expected'), ('mark', 'gpuscope.step')]",
                "[('mark', 'gpuscope.steps_expected'), ('mark', 'gpuscope.step')]",
                "parent imported torch: False",
            ],
        )

    # --- changing nothing else --------------------------------------------------------------

    def test_a_program_without_torch_is_untouched(self):
        result = self.assert_same_with_and_without_shim(
            """
            import json, sys
            print(json.dumps({"sum": sum(range(100)), "argv": sys.argv[1:]}))
            print("torch imported:", "torch" in sys.modules)
            print("hooks imported:", "_gpuscope_torch_hooks" in sys.modules)
            sys.stderr.write("done\\n")
            """
        )
        self.assertEqual(
            result.stdout.splitlines()[1:], ["torch imported: False", "hooks imported: False"]
        )

    def test_gpuscope_shim_0_turns_it_off(self):
        self.write("site_dir/sitecustomize.py", "import builtins\nbuiltins.chained_runs = 1\n")
        result = self.run_program(
            """
            import builtins, sys, torch
            torch.optim.SGD().step()
            for _ in torch.utils.data.DataLoader([1]):
                pass
            print("hooks imported:", "_gpuscope_torch_hooks" in sys.modules)
            print("chained:", getattr(builtins, "chained_runs", 0))
            """,
            print_calls=True,
            paths=[os.path.join(self.dir, "site_dir")],
            env={"GPUSCOPE_SHIM": "0"},
        )
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(
            result.stdout.splitlines(),
            ["hooks imported: False", "chained: 1", json.dumps([NEXT, NEXT])],
        )

    def test_a_cpu_only_torch_build_is_left_alone_quietly(self):
        source = """
            import torch
            torch.optim.SGD().step()
            print([x for x in torch.utils.data.DataLoader([1, 2])])
            """
        result = self.assert_same_with_and_without_shim(source, env={"FAKE_TORCH_CPU_ONLY": "1"})
        self.assertEqual(result.stdout, "[1, 2]\n")

    def test_an_error_inside_the_shim_disables_it_with_one_line(self):
        result = self.run_program(
            """
            import torch
            opt = torch.optim.SGD()
            for _ in torch.utils.data.DataLoader([1, 2, 3]):
                opt.step()
            print("done", opt.updates)
            """,
            print_calls=True,
            env={"FAKE_NVTX_FAIL_AFTER": "5"},  # the second range push fails
        )
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.splitlines()[0], "done 3")
        calls = json.loads(result.stdout.splitlines()[-1])
        self.assertEqual(calls, [EXPECTED, PUSH, NEXT, POP, MARK, NEXT, NEXT, NEXT])
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertTrue(lines[0].startswith("gpuscope-shim: "), lines[0])
        self.assertIn("RuntimeError: fake NVTX failure", lines[0])

    def test_debug_messages_go_to_stderr_only(self):
        chained = self.write("site_dir/sitecustomize.py", "")
        source = "import torch\ntorch.optim.SGD().step()\n"
        paths = [os.path.dirname(chained)]
        quiet = self.run_program(source, print_calls=True, paths=paths)
        debug = self.run_program(
            source, print_calls=True, paths=paths, env={"GPUSCOPE_SHIM_DEBUG": "1"}
        )
        self.assertEqual(debug.stdout, quiet.stdout)
        self.assertEqual(quiet.stderr, "")
        lines = debug.stderr.splitlines()
        self.assertEqual(len(lines), 2, debug.stderr)
        self.assertTrue(all(line.startswith("gpuscope-shim: ") for line in lines), lines)
        self.assertIn("running the next sitecustomize, " + chained, debug.stderr)
        self.assertIn("step marks after optimizer steps", debug.stderr)

    # --- an existing sitecustomize ----------------------------------------------------------

    def test_an_existing_sitecustomize_runs_once_after_the_shim(self):
        site_dir = os.path.join(self.dir, "site_dir")
        self.write(
            "site_dir/sitecustomize.py",
            """
            import builtins
            builtins.chained_runs = getattr(builtins, "chained_runs", 0) + 1
            """,
        )
        source = """
            import builtins, os, sys
            print("runs:", builtins.chained_runs)
            print("module:", os.path.relpath(sys.modules["sitecustomize"].__file__))
            """
        result = self.assert_same_with_and_without_shim(source, paths=[site_dir])
        self.assertEqual(
            result.stdout.splitlines(),
            ["runs: 1", "module: " + os.path.join("site_dir", "sitecustomize.py")],
        )
        calls = self.calls_of("import torch\ntorch.optim.SGD().step()\n", paths=[site_dir])
        self.assertEqual(calls, [MARK])

    def test_an_existing_sitecustomize_that_fails_is_reported_as_python_does(self):
        site_dir = os.path.join(self.dir, "site_dir")
        source = "print('program ran')\n"
        for body in ("raise ValueError('broken site')\n", "import no_such_module_xyz\n"):
            with self.subTest(body=body):
                self.write("site_dir/sitecustomize.py", body)
                result = self.assert_same_with_and_without_shim(source, paths=[site_dir])
                self.assertEqual(result.stdout, "program ran\n")
                self.assertTrue(result.stderr.startswith("Error in sitecustomize"), result.stderr)
        # The shim's own hooks are installed before the chained sitecustomize fails.
        result = self.run_program(
            "import torch\ntorch.optim.SGD().step()\n", paths=[site_dir], print_calls=True
        )
        self.assertEqual(json.loads(result.stdout.splitlines()[-1]), [EXPECTED, MARK])


# The real PyTorch (CPU is enough), when GPUSCOPE_SHIM_TEST_TORCH names the folder that holds it
# (CTest passes the wheel that scripts/setup-deps.sh unpacks): the hooks against torch's own
# optimizer, GradScaler and DataLoader. NVTX calls are recorded by replacing the object that
# torch.cuda.nvtx's functions call into.
REAL_TORCH_DIR = os.environ.get("GPUSCOPE_SHIM_TEST_TORCH", "")
REAL_TORCH_FITS = bool(
    glob.glob(os.path.join(REAL_TORCH_DIR, "torch", "_C.cpython-%d%d*" % sys.version_info[:2]))
)

REAL_TORCH_PROGRAM = """
import json, sys, torch

calls = []

class Recorder:
    def rangePushA(self, message):
        calls.append(["push", message])
        return 0

    def rangePop(self):
        calls.append(["pop"])
        return 0

    def markA(self, message):
        calls.append(["mark", message])

torch.cuda.nvtx._nvtx = Recorder()

class Samples(torch.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.full((4,), float(i)), i % 2

def train(workers):
    # Two optimizers under a GradScaler, the second iteration's gradients infinite.
    del calls[:]
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    first = torch.optim.SGD(model.parameters(), lr=0.1)
    second = torch.optim.AdamW(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    loader = torch.utils.data.DataLoader(Samples(), batch_size=2, num_workers=workers)
    scales = []
    for n, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        if n == 1:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
        scaler.step(first)
        scaler.step(second)
        scaler.update()
        scales.append(scaler.get_scale())
        first.zero_grad()
        second.zero_grad()
    return {"iterations": n + 1, "scale_halved_once": scales[1] == scales[0] / 2,
            "calls": calls[:]}

if __name__ == "__main__":
    print(json.dumps({
        "loader": type(torch.__spec__.loader).__name__,
        "hooks": "_gpuscope_torch_hooks" in sys.modules,
        "workers0": train(0),
        "workers2": train(2),
    }))
"""


@unittest.skipUnless(REAL_TORCH_DIR, "GPUSCOPE_SHIM_TEST_TORCH names no folder with torch")
@unittest.skipUnless(REAL_TORCH_FITS, "that torch was built for another Python version")
class RealTorchTest(ShimCase):
    def test_hooks_on_the_real_torch(self):
        result = self.run_program(
            REAL_TORCH_PROGRAM, paths=[REAL_TORCH_DIR], env={"PYTHONDONTWRITEBYTECODE": "1"}
        )
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn("gpuscope-shim", result.stderr)
        out = json.loads(result.stdout.splitlines()[-1])
        self.assertEqual(out["loader"], "SourceFileLoader")  # torch sees its own loader
        self.assertTrue(out["hooks"])
        # The first optimizer made says that steps will come, once in the process.
        self.assertEqual(out["workers0"]["calls"][0], EXPECTED)
        self.assertNotIn(EXPECTED, out["workers0"]["calls"][1:] + out["workers2"]["calls"])
        for workers in ("workers0", "workers2"):
            run = out[workers]
            self.assertEqual(run["iterations"], 4)
            self.assertTrue(run["scale_halved_once"])  # the GradScaler did skip a step
            batch = [PUSH, POP]
            calls = [c for c in run["calls"] if c != EXPECTED]
            self.assertEqual(calls, (batch + [MARK]) * 4 + batch, workers)


if __name__ == "__main__":
    unittest.main(verbosity=2)
