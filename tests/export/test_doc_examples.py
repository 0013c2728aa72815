"""Every Python code block of README.md and docs/python.md runs as written (issue 37).

Each block is taken from the page, written to a file and run as a script, in a temporary working
directory, against the real tdfx-cli and tdfx (offscreen): a block that names an undefined module,
a file nobody made or an argument that changed fails here. tensordict is not packaged for Debian:
where it cannot be imported, `tensordict.nn` is the repository's stand-ins (tests/fixtures/
standins.py, which have tensordict's constructor and attributes); with the real tensordict 0.1.2 on
PYTHONPATH the blocks run against it unchanged. Windows the blocks open with tdfx.show are closed
at the end, after checking they are still open (a window that died at once is a failure).
"""
import contextlib
import io
import os
import re
import runpy
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "app"))
sys.path.insert(0, HERE)
from built_programs import locate  # noqa: E402

locate("TDFX_CLI")
locate("TDFX_APP")


def python_blocks(page: str):
    """The ```python blocks of `page` (relative to the repository root), with their first line."""
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        text = f.read()
    blocks = []
    for m in re.finditer(r"^```python\n(.*?)^```$", text, re.S | re.M):
        blocks.append((text.count("\n", 0, m.start()) + 2, m.group(1)))
    return blocks


def stand_in_tensordict(folder: str) -> None:
    """Makes `import tensordict.nn` give the stand-ins, unless tensordict itself is importable."""
    try:
        import tensordict.nn  # noqa: F401
        return
    except ImportError:
        pass
    package = os.path.join(folder, "tensordict")
    os.makedirs(package)
    with open(os.path.join(package, "__init__.py"), "w") as f:
        f.write("")
    with open(os.path.join(package, "nn.py"), "w") as f:
        f.write("from standins import TDModule as TensorDictModule, TDSequential as TensorDictSequential\n")
    sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures"))
    sys.path.insert(0, folder)


class DocExamplesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.shim = tempfile.TemporaryDirectory(prefix="tdfx-doc-shim-")
        stand_in_tensordict(cls.shim.name)

    @classmethod
    def tearDownClass(cls):
        cls.shim.cleanup()

    def run_page(self, page: str, expected_blocks: int):
        import tdfx
        blocks = python_blocks(page)
        self.assertEqual(len(blocks), expected_blocks, f"{page}: the Python blocks this test knows")
        for line, code in blocks:
            with self.subTest(page=page, line=line), tempfile.TemporaryDirectory(prefix="tdfx-doc-") as work:
                before = set(tdfx._windows)
                cwd = os.getcwd()
                os.chdir(work)
                out = io.StringIO()
                try:
                    with contextlib.redirect_stdout(out):
                        # From a file, as a user's script runs: torch.jit.script reads a class's source.
                        script = os.path.join(work, "example.py")
                        with open(script, "w", encoding="utf-8") as f:
                            f.write(code)
                        runpy.run_path(script, run_name="__main__")
                finally:
                    os.chdir(cwd)
                opened = [w for k, w in tdfx._windows.items() if k not in before]
                time.sleep(1.0 if opened else 0)
                for window in opened:
                    self.assertTrue(window.is_open(), f"{page}:{line}: the window tdfx.show opened died")
                    window.close()
                self.check_output(page, out.getvalue())

    def check_output(self, page: str, printed: str):
        if page == "docs/python.md":
            self.assertIn("def forward(self, tensordict):", printed)  # trace(policy).code
            self.assertIn("PASSED", printed)  # verify on the given tensors
            self.assertIn("parameter 0.weight: values differ", printed)  # the diff names the changed weight

    def test_notebook_uses_every_call_on_a_pipeline_and_a_torchvision_model(self):
        """docs/python.md's block, one call per cell, then torchvision's resnet18, in a real
        Jupyter kernel: no cell has an error output, and each shows what Jupyter users see."""
        import nbformat
        from nbclient import NotebookClient
        code = python_blocks("docs/python.md")[0][1]
        setup, calls = code.split("\ntdfx.draw(policy)", 1)
        calls = "tdfx.draw(policy)" + calls
        cells = [f"import sys\nsys.path[:0] = {[os.path.join(ROOT, 'app')] + sys.path[:2]!r}\n" + setup]
        cells += [c for c in calls.split("\n\n") if c.strip()]
        cells[1:2] = [line for line in cells[1].splitlines() if line.strip()]  # draw, show, trace, verify
        cells[1:5] = [c.replace("print(tdfx.verify(policy, inputs))", "tdfx.verify(policy, inputs)") for c in cells[1:5]]
        cells += ["import torchvision\nresnet = torchvision.models.resnet18().eval()",
                  "tdfx.draw(resnet, depth=1)",
                  "print(tdfx.trace(resnet).code[:200])",
                  "tdfx.verify(resnet, torch.randn(1, 3, 224, 224))",
                  "tuned_resnet = copy.deepcopy(resnet)\nwith torch.no_grad():\n    tuned_resnet.fc.bias[0] += 1\n"
                  "tdfx.diff(resnet, tuned_resnet)",
                  "for w in tdfx._windows.values():\n    assert w.is_open(), 'the window tdfx.show opened died'\n    w.close()"]
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
        with tempfile.TemporaryDirectory(prefix="tdfx-nb-") as work:
            NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                           resources={"metadata": {"path": work}}).execute()
        for cell in nb.cells:
            errors = [o for o in cell.outputs if o.get("output_type") == "error"]
            self.assertEqual(errors, [], f"cell {cell.source!r}: {errors[:1]}")
            for o in cell.outputs:  # the spinner's line says how the call ended: nothing empty is left behind
                if o.get("output_type") in ("display_data", "execute_result"):
                    self.assertTrue(any(str(v).strip() for v in o.get("data", {}).values()), f"cell {cell.source!r}: an empty output")

        def shown(source_start, kind):
            cell = next(c for c in nb.cells if c.source.startswith(source_start))
            return [o["data"][kind] for o in cell.outputs if kind in o.get("data", {})]
        self.assertTrue(shown("tdfx.draw(policy)", "image/svg+xml"), "the pipeline's picture, inline")
        self.assertTrue(shown("tdfx.draw(resnet", "image/svg+xml"), "resnet18's picture, inline")
        self.assertIn("PASSED", "".join(shown("tdfx.verify(policy", "text/html")))
        self.assertIn("PASSED", "".join(shown("tdfx.verify(resnet", "text/html")))
        self.assertIn("fc.bias", "".join(shown("tuned_resnet", "text/html")) + "".join(shown("tuned_resnet", "text/plain")))

    def test_readme(self):
        self.run_page("README.md", 1)

    def test_python_page(self):
        self.run_page("docs/python.md", 1)


if __name__ == "__main__":
    unittest.main()
