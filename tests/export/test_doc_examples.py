"""Every Python code block of README.md and docs/python.md runs as pasted, and shows what it says.

Issue 37: each block runs as written, against the real tdfx-cli and tdfx. Issue 58: a user pastes
a block whole, into one Jupyter cell, on a desktop or on a server without a display; each block
then ends on what it shows (the drawing, the verify table, the diff), and `show` is guarded.

Two ways, both with the page's blocks whole and in order (later blocks use what earlier ones made):
- as scripts, one file per block sharing one namespace, the value of a block's last expression kept
  as Jupyter keeps it (what it would display);
- in a real Jupyter kernel, one cell per block, once with no display at all (DISPLAY, WAYLAND_DISPLAY
  and QT_QPA_PLATFORM unset) and once on an Xvfb server, checking each cell's outputs.

tensordict is not packaged for Debian: where it cannot be imported, `tensordict.nn` is the
repository's stand-ins (tests/fixtures/standins.py, which have tensordict's constructor and
attributes); with the real tensordict 0.1.2 on PYTHONPATH the blocks run against it unchanged.
Windows the blocks open with tdfx.show are checked to be open, then closed.
"""
import ast
import contextlib
import io
import os
import re
import runpy
import shutil
import subprocess
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

DISPLAY_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")


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


def split_last_expression(code: str):
    """(the block without its last statement, that statement's expression) when the block ends on
    an expression, as Jupyter displays it; else (code, None)."""
    tree = ast.parse(code)
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return code, None
    last = tree.body[-1]
    lines = code.splitlines(keepends=True)
    return "".join(lines[:last.lineno - 1]), ast.get_source_segment(code, last)


# What each block of a page shows, by a piece of its code: a check of the value of its last
# expression (what Jupyter displays), or of what it printed.
def shows_svg(value, printed):
    return hasattr(value, "_repr_svg_") and "<svg" in value._repr_svg_()


def shows_passed_table(value, printed):
    return hasattr(value, "_repr_html_") and "<table" in value._repr_html_() and "PASSED" in value._repr_html_()


def shows_changed_weight(value, printed):
    return value is not None and "parameter 0.weight: values differ" in str(value)


def prints_code(value, printed):
    return "def forward(self, tensordict):" in printed


EXPECTED = {
    "README.md": [("tdfx.draw(td_module)", shows_svg)],
    "docs/python.md": [("tdfx.draw(policy)", shows_svg), ("print(tdfx.trace(policy).code)", prints_code),
                       ("tdfx.verify(policy, inputs)", shows_passed_table), ('tdfx.diff("before.pt"', shows_changed_weight),
                       ("tdfx.show(policy)", None)],
}


def set_environment(values):
    """Sets each of `values` in os.environ (None: removes it)."""
    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@contextlib.contextmanager
def environment(**values):
    """os.environ with `values` set (None: removed), restored afterwards."""
    saved = {k: os.environ.get(k) for k in values}
    try:
        set_environment(values)
        yield
    finally:
        set_environment(saved)


def run_notebook(cells, allow_errors=True):
    """Runs `cells` (sources) in a fresh python3 Jupyter kernel, in a temporary folder; the notebook."""
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    with tempfile.TemporaryDirectory(prefix="tdfx-nb-") as work:
        NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=allow_errors,
                       resources={"metadata": {"path": work}}).execute()
    return nb


@contextlib.contextmanager
def xvfb():
    """A private Xvfb server; yields its DISPLAY."""
    server = shutil.which("Xvfb")
    if not server:
        raise AssertionError("Xvfb is not installed (packaging/install-deps.sh installs xvfb)")
    read, write = os.pipe()
    process = subprocess.Popen([server, "-displayfd", str(write), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                               pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    try:
        with os.fdopen(read) as f:
            number = f.readline().strip()
        if not number:
            raise AssertionError("Xvfb did not start")
        yield ":" + number
    finally:
        process.terminate()
        process.wait()


class DocExamplesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.shim = tempfile.TemporaryDirectory(prefix="tdfx-doc-shim-")
        stand_in_tensordict(cls.shim.name)

    @classmethod
    def tearDownClass(cls):
        cls.shim.cleanup()

    def expected(self, page, blocks):
        """Each block's check, found by its code (the page's blocks in the order this test knows)."""
        expected = EXPECTED[page]
        self.assertEqual(len(blocks), len(expected), f"{page}: the Python blocks this test knows")
        for (line, code), (piece, _) in zip(blocks, expected):
            self.assertIn(piece, code, f"{page}:{line}: not the block this test knows")
        return [check for _, check in expected]

    def run_page_as_scripts(self, page: str):
        import tdfx
        blocks = python_blocks(page)
        checks = self.expected(page, blocks)
        before = set(tdfx._windows)
        names = {}
        with tempfile.TemporaryDirectory(prefix="tdfx-doc-") as work:
            cwd = os.getcwd()
            os.chdir(work)
            try:
                for (line, code), check in zip(blocks, checks):
                    body, last = split_last_expression(code)
                    # From a file, as a user's script runs: torch.jit.script reads a class's source.
                    script = os.path.join(work, f"block_{line}.py")
                    with open(script, "w", encoding="utf-8") as f:
                        f.write(body)
                    out = io.StringIO()
                    with contextlib.redirect_stdout(out):
                        names = runpy.run_path(script, init_globals=names, run_name="__main__")
                        value = eval(compile(last, script, "eval"), names) if last else None
                    if check:
                        self.assertTrue(check(value, out.getvalue()),
                                        f"{page}:{line} does not show what it should: {check.__name__}; value "
                                        f"{type(value).__name__}, printed {out.getvalue()[:300]!r}")
            finally:
                os.chdir(cwd)
        opened = [w for k, w in tdfx._windows.items() if k not in before]
        self.assertEqual(bool(opened), tdfx.can_show(), f"{page}: show ran where there is a display, only there")
        time.sleep(1.0 if opened else 0)
        for window in opened:
            self.assertTrue(window.is_open(), f"{page}: the window tdfx.show opened died")
            window.close()

    def run_page_in_jupyter(self, page: str, display):
        """The page's blocks, one whole block per cell, in a kernel started with `display` (None: no
        display at all); asserts each cell's outputs."""
        blocks = python_blocks(page)
        checks = self.expected(page, blocks)
        path = [os.path.join(ROOT, "app")] + [p for p in sys.path if p.startswith(self.shim.name) or "fixtures" in p]
        cells = [f"import sys\nsys.path[:0] = {path!r}"] + [code for _, code in blocks]
        cells += ["import tdfx\nopened = [w for w in tdfx._windows.values()]\n"
                  "print('windows', len(opened), sum(w.is_open() for w in opened))\nfor w in opened:\n    w.close()"]
        with environment(**{v: None for v in DISPLAY_VARIABLES}), environment(DISPLAY=display):
            nb = run_notebook(cells)
        where = f"{page} in Jupyter ({'display ' + display if display else 'no display'})"
        for cell in nb.cells:
            errors = [o for o in cell.outputs if o.get("output_type") == "error"]
            self.assertEqual(errors, [], f"{where}: cell {cell.source[:60]!r}: {errors[:1]}")

        def outputs(cell, kind):
            return "".join(str(o["data"][kind]) for o in cell.outputs if kind in o.get("data", {}))

        def printed(cell):
            return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")

        for cell, check in zip(nb.cells[1:], checks):
            if check is shows_svg:
                self.assertIn("<svg", outputs(cell, "image/svg+xml"), f"{where}: {cell.source[:60]!r} shows no picture")
            elif check is shows_passed_table:
                self.assertIn("<table", outputs(cell, "text/html"), f"{where}: {cell.source[:60]!r} shows no table")
                self.assertIn("PASSED", outputs(cell, "text/html"))
            elif check is shows_changed_weight:
                self.assertIn("0.weight", outputs(cell, "text/html") + outputs(cell, "text/plain"),
                              f"{where}: {cell.source[:60]!r} shows no diff")
            elif check is prints_code:
                self.assertIn("def forward(self, tensordict):", printed(cell), f"{where}: no code printed")
        if page == "docs/python.md":
            windows = printed(nb.cells[-1]).split()
            self.assertEqual(windows, ["windows", "1", "1"] if display else ["windows", "0", "0"],
                             f"{where}: the guarded show")

    def test_readme(self):
        self.run_page_as_scripts("README.md")

    def test_python_page(self):
        self.run_page_as_scripts("docs/python.md")

    def test_python_page_without_a_display_in_one_cell_per_block(self):
        self.run_page_in_jupyter("docs/python.md", None)

    def test_python_page_on_a_display_in_one_cell_per_block(self):
        with xvfb() as display:
            self.run_page_in_jupyter("docs/python.md", display)

    def test_readme_without_a_display_in_one_cell(self):
        self.run_page_in_jupyter("README.md", None)

    def test_progress_of_a_loop_is_one_line_updated_in_place(self):
        """Issue 58, 8: "tdfx: verifying... done in 2.2 s" piled up, one line per call of a loop."""
        cells = [f"import sys, time\nsys.path[:0] = {[os.path.join(ROOT, 'app')]!r}\nimport tdfx",
                 "for _ in range(3):\n    with tdfx._Spinner('tdfx: working'):\n        time.sleep(1.3)",
                 "with tdfx._Spinner('tdfx: once'):\n    time.sleep(1.3)"]
        nb = run_notebook(cells, allow_errors=False)
        loop = [o["data"]["text/plain"] for o in nb.cells[1].outputs if "text/plain" in o.get("data", {})]
        self.assertEqual(len(loop), 1, f"one line for the loop: {loop}")
        self.assertRegex(loop[0], r"^tdfx: working\.\.\. done in 1\.\d s, call 3 of this cell$")
        once = [o["data"]["text/plain"] for o in nb.cells[2].outputs if "text/plain" in o.get("data", {})]
        self.assertEqual(len(once), 1)
        self.assertRegex(once[0], r"^tdfx: once\.\.\. done in 1\.\d s$", "a new cell has its own line")

    def test_notebook_draws_verifies_and_diffs_a_torchvision_model(self):
        """torchvision's resnet18 after the page's first block, one call per cell: what Jupyter users see."""
        path = [os.path.join(ROOT, "app")] + [p for p in sys.path if p.startswith(self.shim.name) or "fixtures" in p]
        cells = [f"import sys\nsys.path[:0] = {path!r}\nimport copy\nimport torch\nimport tdfx",
                 "import torchvision\nresnet = torchvision.models.resnet18().eval()",
                 "tdfx.draw(resnet, depth=1)",
                 "print(tdfx.trace(resnet).code[:200])",
                 "tdfx.verify(resnet, torch.randn(1, 3, 224, 224))",
                 "tuned_resnet = copy.deepcopy(resnet)\nwith torch.no_grad():\n    tuned_resnet.fc.bias[0] += 1\n"
                 "tdfx.diff(resnet, tuned_resnet)"]
        nb = run_notebook(cells)
        for cell in nb.cells:
            errors = [o for o in cell.outputs if o.get("output_type") == "error"]
            self.assertEqual(errors, [], f"cell {cell.source!r}: {errors[:1]}")
            for o in cell.outputs:  # the spinner's line says how the call ended: nothing empty is left behind
                if o.get("output_type") in ("display_data", "execute_result"):
                    self.assertTrue(any(str(v).strip() for v in o.get("data", {}).values()), f"cell {cell.source!r}: an empty output")

        def shown(source_start, kind):
            cell = next(c for c in nb.cells if c.source.startswith(source_start))
            return [o["data"][kind] for o in cell.outputs if kind in o.get("data", {})]
        self.assertTrue(shown("tdfx.draw(resnet", "image/svg+xml"), "resnet18's picture, inline")
        self.assertIn("PASSED", "".join(shown("tdfx.verify(resnet", "text/html")))
        self.assertIn("fc.bias", "".join(shown("tuned_resnet", "text/html")) + "".join(shown("tuned_resnet", "text/plain")))


if __name__ == "__main__":
    unittest.main()
