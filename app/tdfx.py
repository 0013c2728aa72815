"""tdfx from Python: show, draw, trace, verify and diff a TensorDict module without leaving Python.

    import tdfx
    tdfx.draw(td_module)        # renders inline in Jupyter; .save("model.svg")
    tdfx.show(td_module)        # opens the desktop app, returns at once

Every call takes a TensorDictModule, a TensorDictSequential (tensordict's, or anything with their
attributes), a plain torch.nn.Module (one that will not script is traced from the call's `inputs`), or
the path of a TorchScript archive (.pt). A module is saved with tdfx_export into a private
temporary file first; the tracing itself is done by the installed `tdfx-cli` (and `tdfx` for
show), as it is on the command line, so the text is the same bytes.

Errors are TdfxError (a subclass for each cause: NotInstalledError, ScriptError, WorkerLimitError)
with tdfx-cli's one-line message. Only torch is needed (docs/python.md).
"""
from __future__ import annotations

import contextlib
import html
import itertools
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Mapping, NoReturn, Optional, Sequence, Tuple, Union

import tdfx_saved
import tdfx_server

__version__ = "0.1.0"  # the project's version (CMakeLists.txt); test_api checks they agree

__all__ = ["show", "can_show", "draw", "trace", "verify", "diff", "set_limits", "Drawing", "Trace", "VerifyResult", "Diff", "Window",
           "TdfxError", "NotInstalledError", "ScriptError", "WorkerLimitError"]

ModuleOrPath = Union[str, "os.PathLike[str]", Any]
Inputs = Any  # None, a tensor (the one input), a tuple of tensors, or {key: tensor}


class TdfxError(Exception):
    """tdfx could not do what was asked; the message is tdfx-cli's one-line cause."""


class NotInstalledError(TdfxError):
    """tdfx-cli (or tdfx, for show) is not installed or not on PATH."""


class ScriptError(TdfxError):
    """The module could not be saved as TorchScript (torch.jit.script failed, tracing had no inputs)."""


class WorkerLimitError(TdfxError):
    """The model worker ran past its time or memory limit and was stopped."""


# ---- Running tdfx-cli ---------------------------------------------------------------------------

def _program(name: str, env_var: str) -> str:
    package = "tdfx" if name == "tdfx" else "tdfx-cli"
    chosen = os.environ.get(env_var)
    if chosen:
        # A wrong $TDFX_CLI raised FileNotFoundError or PermissionError from subprocess (issue 35,
        # finding 10): said here, as what it is.
        if not os.path.isfile(chosen) or not os.access(chosen, os.X_OK):
            what = "no such file" if not os.path.exists(chosen) else "not an executable file"
            raise NotInstalledError(f"${env_var} is {chosen}: {what}; point it at {name}, or unset it to use "
                                    f"the {package} package's")
        return chosen
    path = shutil.which(name)
    if not path:
        raise NotInstalledError(f"{name} is not installed (not on PATH, and ${env_var} is not set): "
                                f"install the {package} package")
    return path


def _cause(stderr: str) -> str:
    """tdfx-cli's one-line cause: its `tdfx-cli: error: ...` line without the prefix. When a
    TorchScript traceback follows, its exception line replaces the traceback's header, and the
    limit the worker reports ("(the model worker may use at most ...)") is kept."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    first = next((i for i, line in enumerate(lines) if line.startswith("tdfx-cli: error: ")), None)
    if first is None:
        return lines[-1] if lines else "tdfx-cli failed without a message"
    cause = lines[first][len("tdfx-cli: error: "):]
    rest = lines[first + 1:]
    header = "The following operation failed in the TorchScript interpreter."
    if rest and header in cause:
        exception = next((line for line in reversed(rest) if re.match(r"^[A-Za-z_.]*(Error|Exception): ", line)), None)
        cause = cause.replace(header, exception or rest[-1]).strip()
        note = next((line for line in rest if line.startswith("(the model worker may use at most")), None)
        if note:
            cause += " " + note
    return cause


class _Spinner:
    """Progress for calls that take over a second: a spinner on a terminal's stderr, removed when
    the call ends, or one quiet line in a notebook's output, which then says how long it took.

    In a notebook a cell has one such line at most: the calls of a loop update it in place
    ("tdfx: verifying... done in 0.3 s, call 12 of this cell") instead of adding one line each."""

    # The cell whose line is shown: (execution count, display handle, calls in that cell).
    _cell: Tuple[Optional[int], Any, int] = (None, None, 0)

    def __init__(self, what: str) -> None:
        self.what, self.stop = what, threading.Event()
        self.thread: Optional[threading.Thread] = None
        self.handle: Any = None
        self.call = 1

    def __enter__(self) -> "_Spinner":
        self.started = time.monotonic()
        terminal = sys.stderr is not None and hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
        if terminal:
            self.thread = threading.Thread(target=self._spin, daemon=True)
        elif "ipykernel" in sys.modules:
            self._count_call()
            self.thread = threading.Thread(target=self._note, daemon=True)
        if self.thread:
            self.thread.start()
        return self

    def _spin(self) -> None:
        if self.stop.wait(1.0):
            return
        for ch in itertools.cycle("|/-\\"):
            sys.stderr.write(f"\r{self.what} {ch}")
            sys.stderr.flush()
            if self.stop.wait(0.2):
                sys.stderr.write("\r" + " " * (len(self.what) + 2) + "\r")
                sys.stderr.flush()
                return

    def _count_call(self) -> None:
        try:
            from IPython import get_ipython
            shell = get_ipython()
            cell = shell.execution_count if shell is not None else None
        except Exception:  # noqa: BLE001 - progress is optional
            cell = None
        shown_in, handle, calls = _Spinner._cell
        if cell is not None and cell == shown_in:
            self.call, self.handle = calls + 1, handle
        _Spinner._cell = (cell, self.handle, self.call)

    def _text(self, state: str) -> str:
        return f"{self.what}..." + (f" {state}" if state else "") + (f", call {self.call} of this cell" if self.call > 1 else "")

    def _note(self) -> None:
        if self.stop.wait(1.0):
            return
        try:
            if self.handle is not None:  # this cell's line, updated in place
                self.handle.update({"text/plain": self._text("")}, raw=True)
                return
            from IPython.display import display
            self.handle = display({"text/plain": self._text("")}, raw=True, display_id=True)
            cell, _, calls = _Spinner._cell
            _Spinner._cell = (cell, self.handle, calls)
        except Exception:  # noqa: BLE001 - progress is optional
            self.handle = None

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread:
            self.thread.join()
        if self.handle is not None:
            # As tqdm leaves a finished bar: Jupyter cannot take one output away (an update to
            # nothing left an empty output in the cell), so the line says how it ended.
            try:
                seconds = time.monotonic() - self.started
                ended = "failed" if exc and exc[0] is not None else "done"
                self.handle.update({"text/plain": self._text(f"{ended} in {seconds:.1f} s")}, raw=True)
            except Exception:  # noqa: BLE001
                pass


def _write_atomically(path: str, data: bytes) -> None:
    """Writes `data` to `path` as tdfx-cli's exports do: into a new temporary file beside it (created
    exclusively, so a link planted at any name is never written through), then renamed over
    `path`. An existing regular file keeps its mode; a new file gets the umask's."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        existing = os.stat(path)
        mode = stat.S_IMODE(existing.st_mode) if stat.S_ISREG(existing.st_mode) else 0o666 & ~_umask()
    except OSError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=".tdfx-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            os.fchmod(f.fileno(), mode)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    """The process's umask, read without changing it (os.umask would, for every thread)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def _cli_all(commands: Sequence[Sequence[str]], what: str) -> List[subprocess.CompletedProcess]:
    """Runs tdfx-cli commands in one request to the session's warm `tdfx-cli serve`, each with the
    worker limits (set_limits); each result is what `tdfx-cli ARGS...` would give."""
    cli = _program("tdfx-cli", "TDFX_CLI")
    try:
        with _Spinner(what):
            return tdfx_server.run(cli, [[*c, *_limit_flags()] for c in commands])
    except tdfx_server.ServerError as e:
        raise TdfxError(str(e)) from None


def _cli(args: Sequence[str], what: str, ok: Tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
    run = _cli_all([args], what)[0]
    if run.returncode not in ok:
        _fail(run)
    return run


def _fail(run: subprocess.CompletedProcess) -> NoReturn:
    """Raises the exception for tdfx-cli's error: WorkerLimitError past a limit, else TdfxError."""
    cause = _cause(run.stderr.decode("utf-8", "replace"))
    limited = "(the time limit; --timeout)" in cause or "; --memory-limit)" in cause
    raise (WorkerLimitError if limited else TdfxError)(cause)


_limits: Dict[str, Optional[float]] = {"timeout": None, "memory_limit": None}


def set_limits(timeout: Optional[float] = None, memory_limit: Optional[float] = None) -> None:
    """Limits of the model worker for the calls from now on (None: tdfx-cli's defaults).

    timeout: seconds a model may take to load and trace, or to run (tdfx-cli --timeout).
    memory_limit: GiB of memory the model worker may use (tdfx-cli --memory-limit).
    A call past a limit raises WorkerLimitError.
    """
    _limits["timeout"], _limits["memory_limit"] = timeout, memory_limit


def _limit_flags() -> List[str]:
    flags: List[str] = []
    if _limits["timeout"] is not None:
        flags += ["--timeout", repr(float(_limits["timeout"]))]
    if _limits["memory_limit"] is not None:
        flags += ["--memory-limit", repr(float(_limits["memory_limit"]))]
    return flags


# ---- Modules to files ---------------------------------------------------------------------------

_private_dir: Optional[str] = None


def _private_file(name: str) -> str:
    global _private_dir
    if _private_dir is None:
        _private_dir = tempfile.mkdtemp(prefix="tdfx-")  # 0700: only this user reads the models
        weakref.finalize(sys.modules[__name__], shutil.rmtree, _private_dir, True)
    return os.path.join(_private_dir, name)


def _remove_quietly(path: str) -> None:
    _saved.pop(path, None)
    try:
        os.unlink(path)
    except OSError:
        pass


_module_files: Dict[str, Any] = {}  # a module's file -> the finalizer that removes it
_saved: Dict[str, Any] = {}  # a module's file -> the fingerprint of what it holds (tdfx_saved)


def _exporter() -> Any:
    """tdfx_export, imported when a module is first saved: it imports torch, which calls on files
    do not need (a virtual environment with the wheel and no torch traces .pt files)."""
    import tdfx_export
    return tdfx_export


def _module_file(obj: Any, suffix: str) -> str:
    """The private file `obj` is saved to: one per module object (and form), written again by a
    call when the module changed (tdfx_saved), and removed when the object is collected, not only
    when Python exits (three resnet18s left 135 MB in /tmp until the kernel ended)."""
    target = _private_file(f"{type(obj).__name__}-{id(obj):x}{suffix}")
    if target not in _module_files or not _module_files[target].alive:
        try:
            _module_files[target] = weakref.finalize(obj, _remove_quietly, target)
        except TypeError:  # an object without weak references: removed when Python exits
            pass
    return target


def _up_to_date(target: str, fingerprint: Any) -> bool:
    """Whether `target` holds what a module of this fingerprint would be saved as."""
    return fingerprint is not None and _saved.get(target) == fingerprint and os.path.isfile(target)


@contextlib.contextmanager
def _modes_kept(obj: Any) -> Iterator[None]:
    """tdfx_export saves a module in eval mode (the graph torch.fx and tdfx trace) and leaves it in
    it; the caller's module is given back in the modes it had, so a training loop that draws its
    model goes on training (dropout and batch norm as they were)."""
    modes = [(m, m.training) for m in obj.modules()] if callable(getattr(obj, "modules", None)) else []
    try:
        yield
    finally:
        for m, training in modes:
            m.training = training


def _not_a_flag(path: str) -> str:
    """`path` as tdfx-cli must get it: a name starting with a dash (`--help`, `-o.pt`) would be read
    as an option, so it is passed as `./--help` (issue 35, finding 9)."""
    return os.path.join(".", path) if path.startswith("-") else path


def _model_file(obj: ModuleOrPath, example_inputs: Inputs = None, path: Optional[str] = None,
                plain: bool = False) -> str:
    """The .pt file of `obj`: its path, or a private file it is saved to with tdfx_export.

    plain: a plain nn.Module is saved as plain TorchScript (torch.jit.script, no tensordict.json),
    so that its graph and code are torch.fx's own (`forward(self, x)`), not those of the
    TensorDictModule it is otherwise wrapped in; one that does not script is wrapped as before.
    """
    if isinstance(obj, (str, os.PathLike)):
        p = os.fspath(obj)
        if not os.path.isfile(p):
            raise TdfxError(f"{p}: no such file")
        return _not_a_flag(p)
    tdfx_export = _exporter()
    if plain and tdfx_export.is_plain_module(obj):
        target = path or _module_file(obj, ".plain.pt")
        saved = tdfx_saved.fingerprint(obj)
        if path is None and saved is not None and _saved.get(target) == ("unscriptable", saved):
            pass  # it did not script as it is, and has not changed since
        elif path is None and _up_to_date(target, saved):
            return target
        else:
            _saved.pop(target, None)
            try:
                with _Spinner("tdfx: saving the module"), _modes_kept(obj):
                    tdfx_export.export_plain(obj, target, inputs_name="inputs")
                _saved[target] = tdfx_saved.fingerprint(obj)  # as saved (scripting adds attributes)
                return target
            except tdfx_export.UnsupportedModule as e:  # no other way to save it either
                raise ScriptError(str(e)) from None
            except Exception:  # noqa: BLE001 - not scriptable as it is: the export below says why, or traces it
                _saved[target] = ("unscriptable", saved)
    target = path or _module_file(obj, ".pt")
    example_inputs = _keyed(obj, example_inputs, "example_inputs")  # a tensor: the module's one input
    saved = tdfx_saved.fingerprint(obj, example_inputs)
    if path is None and _up_to_date(target, saved):
        return target
    _saved.pop(target, None)
    try:
        with _Spinner("tdfx: saving the module"), _modes_kept(obj):
            tdfx_export.export(obj, target, example_inputs=example_inputs, inputs_name="inputs")
        _saved[target] = tdfx_saved.fingerprint(obj, example_inputs)  # as saved
    except tdfx_export.ExportError as e:
        raise ScriptError(str(e)) from None
    except Exception as e:  # noqa: BLE001 - torch's own errors name the cause on their last line
        last = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
        raise ScriptError(f"the module cannot be saved as TorchScript: {last}") from None
    return target


def _input_keys(obj: ModuleOrPath) -> List[str]:
    """The in keys of a module, as --input writes them (parts joined by '.'): a TensorDict
    module's in_keys, a plain module's forward parameters (tdfx_export's keys for it)."""
    if isinstance(obj, (str, os.PathLike)):
        raise TdfxError("inputs: a tensor without its key is for a module; for a file, give "
                        "inputs={key: tensor}")
    keys = getattr(obj, "in_keys", None)
    if keys is None and _exporter().is_plain_module(obj):
        keys = _exporter().plain_in_keys(obj)
    if keys is None:
        raise TdfxError(f"inputs: {type(obj).__name__} does not say its in_keys: give inputs={{key: tensor}}")
    return list(keys)


def _is_tensor(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype") and hasattr(value, "detach")


def _shape(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in value)


def _leaves(inputs: Any) -> Any:
    """A TensorDict as {key: tensor}, one entry per leaf (a nested key as a tuple): what a TensorDict
    module reads. Anything else as it is."""
    if hasattr(inputs, "batch_size") and callable(getattr(inputs, "keys", None)) and callable(getattr(inputs, "get", None)):
        return {k: inputs.get(k) for k in inputs.keys(include_nested=True, leaves_only=True)}
    return inputs


def _saved_model(obj: ModuleOrPath, inputs: Any, example_inputs: Inputs, call: str, **where: Any) -> str:
    """_model_file for a call given `inputs`: a module that will not script is traced from them
    (tensors as they are, shapes drawn at random); `example_inputs` is their former name."""
    if example_inputs is not None:
        warnings.warn(f"tdfx.{call}(example_inputs=...) is deprecated: give inputs=...", DeprecationWarning, stacklevel=3)
        return _model_file(obj, example_inputs, **where)
    # A module that needed its inputs last time, and has not changed since, goes to them at once:
    # its failed torch.jit.script is not tried again on every call.
    # (A module that scripts pays nothing more: the lookup is by the object.)
    try:
        last = _needs_inputs.get(obj) if inputs is not None else None
    except TypeError:  # a path, or an object without weak references
        last = None
    tensors = None
    if last is None or last != tdfx_saved.fingerprint(obj):
        try:
            return _model_file(obj, None, **where)
        except ScriptError:
            tensors = _tensors_to_trace(obj, inputs)
            if tensors is None:
                raise
    path = _model_file(obj, tensors if tensors is not None else _tensors_to_trace(obj, inputs), **where)
    fingerprint = tdfx_saved.fingerprint(obj)
    if fingerprint is not None:
        with contextlib.suppress(TypeError):
            _needs_inputs[obj] = fingerprint
    return path


# The modules last saved from their inputs because they do not script, with their fingerprint then.
_needs_inputs: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


def _tensors_to_trace(obj: ModuleOrPath, inputs: Any) -> Optional[Dict[Any, Any]]:
    """`inputs` as {key: tensor} for tracing: shapes become tensors drawn from a fixed seed (the
    trace records operations, not values); None without inputs."""
    if inputs is None or isinstance(obj, (str, os.PathLike)):
        return None
    keyed = _keyed(obj, inputs, "inputs")
    if not isinstance(keyed, Mapping):
        return None
    import torch
    generator = torch.Generator().manual_seed(0)
    tensors: Dict[Any, Any] = {}
    for key, value in keyed.items():
        if _is_tensor(value):
            tensors[key] = value
            continue
        dtype = torch.float32
        if isinstance(value, tuple) and len(value) == 2 and type(value[1]).__name__ == "dtype":
            value, dtype = value
        if not _shape(value):
            raise TdfxError(f"inputs[{key!r}]: expected a tensor, a shape (a tuple of ints >= 0) or (shape, dtype), "
                            f"got {type(value).__name__}")
        drawn = torch.randn(tuple(value), generator=generator)
        tensors[key] = drawn.to(dtype) if dtype.is_floating_point else torch.zeros(tuple(value), dtype=dtype)
    return tensors


def _keyed(obj: ModuleOrPath, inputs: Any, argument: str) -> Any:
    """A tensor (the module's one input) or a tuple of tensors (its inputs in order) as
    {key: tensor}, by the module's in keys; a TensorDict as its leaves; anything else as it is."""
    inputs = _leaves(inputs)
    if isinstance(inputs, Mapping):
        return inputs
    if not (_is_tensor(inputs) or (isinstance(inputs, tuple) and inputs and all(_is_tensor(t) for t in inputs))):
        return inputs
    given = (inputs,) if _is_tensor(inputs) else inputs
    keys = _input_keys(obj)
    if len(keys) != len(given):
        names = ", ".join(".".join(k) if isinstance(k, tuple) else str(k) for k in keys) or "none"
        raise TdfxError(f"{argument}: {len(given)} tensor(s) given, but {type(obj).__name__} takes {len(keys)} "
                        f"input(s) ({names}): give {argument}={{key: tensor}}")
    return dict(zip(keys, given))


def _input_args(obj: ModuleOrPath, inputs: Any) -> List[str]:
    """tdfx-cli's flags for `inputs`: a tensor (the module's one input), a tuple of tensors (its
    inputs in order), or a dict {key: tensor | shape | (shape, dtype)}. Tensors are used as they
    are, values included (saved with torch.save, --input-values); shapes are drawn from the seed
    (--input KEY=SHAPE:DTYPE)."""
    if inputs is None:
        return []
    inputs = _keyed(obj, inputs, "inputs")
    if not isinstance(inputs, Mapping):
        raise TdfxError(f"inputs: expected a tensor, a tuple of tensors or a dict {{key: tensor or shape}}, "
                        f"got {type(inputs).__name__}")
    flags: List[str] = []
    values: List[Tuple[Any, Any]] = []
    for key, value in inputs.items():
        name = ".".join(key) if isinstance(key, tuple) else str(key)
        if _is_tensor(value):
            # Saved with its key as given: a tuple stays a tuple, so a part holding "." stays one part.
            saved_key = tuple(str(p) for p in key) if isinstance(key, tuple) else str(key)
            values.append((saved_key, value.detach().cpu().clone()))  # its own storage: a view saves only itself
            continue
        dtype = "float32"
        if (isinstance(value, tuple) and len(value) == 2 and _shape(value[0]) and value[0] != ()
                and type(value[1]).__name__ == "dtype"):
            value, dtype = value[0], str(value[1]).replace("torch.", "")
        if not (_shape(value) and value):
            # A TypeError from list(5) before (issue 35, finding 10): said as what was expected.
            got = f"{type(value).__name__} {value!r}"
            raise TdfxError(f"inputs[{key!r}]: expected a tensor, a shape (a tuple of ints >= 0) or (shape, dtype), "
                            f"got {got if len(got) <= 60 else got[:57] + '...'}")
        flags += ["--input", f"{name}={'x'.join(str(d) for d in value)}:{dtype}"]
    if values:
        import torch  # only when tensors are given: they are torch's
        path = _private_file(f"inputs-{next(_counter)}.pt")
        # A tuple of pairs: LibTorch 1.13 cannot read a dict of one item as torch.save writes it.
        torch.save(tuple(values), path)
        flags += ["--input-values", path]
    return flags


_counter = itertools.count()


def _remove_values_file(flags: List[str]) -> None:
    """Removes the file _input_args saved the tensors in, once tdfx-cli has read it."""
    if "--input-values" in flags:
        try:
            os.unlink(flags[flags.index("--input-values") + 1])
        except OSError:
            pass


# ---- trace --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Trace:
    """What `tdfx-cli trace` prints: `print(gm.graph)` then `gm.code`, the same bytes."""

    text: str

    # The text is `print(gm.graph)`, then `gm.code`, which starts "\n\n\ndef forward" or, when
    # functions are wrapped, "\ntorch.fx._symbolic_trace.wrap(": the graph ends where one of those
    # follows its newline (a graph line may itself hold a string constant with empty lines).

    def _split(self) -> int:
        ends = [i for i in (self.text.find("\n\n\n\ndef "), self.text.find("\n\ntorch.fx._symbolic_trace.wrap("))
                if i >= 0]
        return min(ends) if ends else -1

    @property
    def graph(self) -> str:
        """The FX graph, as `str(graph_module.graph)` is."""
        end = self._split()
        return self.text if end < 0 else self.text[:end]

    @property
    def code(self) -> str:
        """The generated Python code, as `graph_module.code` is, its leading newlines included."""
        end = self._split()
        return "" if end < 0 else self.text[end + 1:]

    def __str__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        """In Jupyter: the code, highlighted as Python (pygments, which IPython brings), and the FX
        graph folded under it."""
        code = self.code.lstrip("\n")
        try:
            from pygments import highlight
            from pygments.formatters import HtmlFormatter
            from pygments.lexers import PythonLexer
            shown = highlight(code, PythonLexer(), HtmlFormatter(noclasses=True, nobackground=True))
        except ImportError:
            shown = f"<pre>{html.escape(code)}</pre>"
        return (f"{shown}<details><summary>FX graph</summary><pre>{html.escape(self.graph)}</pre></details>")


def trace(module_or_path: ModuleOrPath, inputs: Any = None, example_inputs: Inputs = None) -> Trace:
    """Traces the module into an FX graph and its code: the same bytes as `tdfx-cli trace`.

    inputs: as verify's; a module that will not script is traced from them.
    example_inputs: the former name of inputs (deprecated).
    """
    _program("tdfx-cli", "TDFX_CLI")  # before the module is saved: a missing tdfx-cli is said first
    path = _saved_model(module_or_path, inputs, example_inputs, "trace", plain=True)
    # A string constant of the model need not be UTF-8 (a crafted archive): its bytes are shown as
    # \xff escapes, never a UnicodeDecodeError (issue 35, finding 10).
    return Trace(_cli(["trace", path], "tdfx: tracing").stdout.decode("utf-8", "backslashreplace"))


# ---- draw ---------------------------------------------------------------------------------------

class Drawing:
    """The traced graph as a picture. Renders inline in Jupyter (SVG; PNG too with png=True)."""

    def __init__(self, path: str, options: List[str], svg: str, traced: Trace, png: bool) -> None:
        self._path, self._options, self.svg, self._trace, self._png = path, options, svg, traced, png

    @property
    def graph(self) -> str:
        """The FX graph text of the drawn model."""
        return self._trace.graph

    @property
    def code(self) -> str:
        """The generated Python code of the drawn model."""
        return self._trace.code

    def save(self, path: Union[str, "os.PathLike[str]"]) -> str:
        """Writes the picture to `path`: .svg, .png, .pdf, .dot or .gv (from the extension), atomically.
        Returns the path."""
        out = os.fspath(path)
        if out.lower().endswith(".svg"):
            _write_atomically(out, self.svg.encode("utf-8"))
        else:
            _cli(["export", self._path, "-o", _not_a_flag(out), *self._options], "tdfx: drawing")
        return out

    def _repr_svg_(self) -> str:
        return self.svg

    def _repr_png_(self) -> Optional[bytes]:
        if not self._png:
            return None
        png = _private_file(f"drawing-{id(self):x}.png")
        _cli(["export", self._path, "-o", png, *self._options], "tdfx: drawing")
        with open(png, "rb") as f:
            return f.read()

    def __repr__(self) -> str:
        nodes = self.svg.count('class="node"')
        return f"<tdfx.Drawing of {os.path.basename(self._path)}: {nodes} nodes>"


def _too_large(error: TdfxError) -> Optional[str]:
    """tdfx-cli's --max-nodes refusal said in draw's arguments; None for another error."""
    m = re.match(r"^the drawing has (\d+) nodes, over --max-nodes (\d+); (.*) \(\.json and \.pt outputs have no limit\)$",
                 str(error))
    if not m:
        return None
    hint = m.group(3).replace("that --depth could", "that depth= could").replace("--depth ", "depth=")
    return (f"the drawing has {m.group(1)} nodes, over max_nodes={m.group(2)}; {hint}. max_nodes=None draws it "
            "all: Graphviz takes minutes at that size, and Drawing.save('graph.png') keeps a PNG of it")


def draw(module_or_path: ModuleOrPath, style: str = "tdfx", depth: Optional[int] = None, shapes: bool = False,
         checks: bool = False, example_inputs: Inputs = None, png: bool = False,
         max_nodes: Optional[int] = 2000, inputs: Any = None, seed: int = 0,
         shape_arithmetic: bool = False) -> Drawing:
    """Draws the traced graph as `tdfx-cli export` does and returns it as a Drawing.

    style: "tdfx" (keys as nodes, modules as clusters) or "fx" (torch.fx's FxGraphDrawer picture).
    depth: expand module scopes down to this depth (None: at most about 300 nodes shown).
    shapes: run the model once on its example inputs and label edges with shapes and dtypes.
    inputs, seed: as verify's: the inputs of that run ({key: tensor or shape}); giving them implies
        shapes=True.
    checks: draw input checks (torch._assert) instead of folding them into a badge.
    shape_arithmetic: draw size computations (x.shape, getitem, //, * on sizes) as nodes instead of
        one "shape" node per use.
    png: also offer a PNG rendering to Jupyter (_repr_png_), for front ends without SVG.
    max_nodes: a picture of more nodes is refused with TdfxError naming the depth that fits, before
        any layout (Graphviz takes minutes on tens of thousands of nodes); None: no limit.
    """
    if style not in ("tdfx", "fx"):
        raise TdfxError(f"style must be 'tdfx' or 'fx', not {style!r}")
    _program("tdfx-cli", "TDFX_CLI")
    given = _input_args(module_or_path, inputs)  # a wrong input is said before the module is saved
    # The tensors' file lives as long as the drawing, which exports again from it (save as PNG, PDF):
    # removed with the drawing, or at once when the call fails (inputs-N.pt files piled up).
    try:
        path = _saved_model(module_or_path, inputs, example_inputs, "draw")
        options = ["--style", style]
        if depth is not None:
            options += ["--depth", str(int(depth))]
        if shapes or inputs is not None:
            options += ["--shapes", "--seed", str(int(seed)), *given]
        if checks:
            options.append("--checks")
        if shape_arithmetic:
            options.append("--shape-arithmetic")
        if max_nodes is not None:
            if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
                raise TdfxError(f"max_nodes: expected an int >= 1 or None, got {max_nodes!r}")
            options += ["--max-nodes", str(max_nodes)]
        svg_path = _private_file(f"drawing-{os.path.basename(path)}-{id(options):x}.svg")
        # One request: the picture, then the code of the model the server still has open.
        runs = _cli_all([["export", path, "-o", svg_path, *options], ["trace", path]], "tdfx: drawing")
        try:
            if runs[0].returncode != 0:  # then trace was not run
                _fail(runs[0])
        except TdfxError as e:
            message = _too_large(e)
            if message is None:
                raise
            raise TdfxError(message) from None
        traced = runs[1]
        if traced.returncode != 0:
            _fail(traced)
        with open(svg_path, encoding="utf-8", errors="backslashreplace") as f:
            svg = f.read()
        os.unlink(svg_path)
        drawing = Drawing(path, options, svg, Trace(traced.stdout.decode("utf-8", "backslashreplace")), png)
    except BaseException:
        _remove_values_file(given)
        raise
    weakref.finalize(drawing, _remove_values_file, list(given))
    drawing._module = module_or_path  # its file is removed with the module: kept while the drawing is
    return drawing


# ---- verify -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class VerifyResult:
    """tdfx-cli verify's report: the traced graph run against the eager model, key by key.

    verdict is "PASSED" (every out key and every node proven), "NOT PROVEN" (nothing differs, but
    some node has no proof: `unproven` says which and why) or "FAILED". passed is verdict == "PASSED".
    """

    passed: bool
    rows: List[Dict[str, Any]]
    first_divergence: Optional[Dict[str, Any]]
    report: Dict[str, Any] = field(repr=False)
    verdict: str = "FAILED"

    @property
    def unproven(self) -> List[Dict[str, str]]:
        """The nodes left without proof: [{"node": name, "reason": why}]."""
        return list((self.report.get("nodes") or {}).get("unproven") or [])

    def __bool__(self) -> bool:
        return self.passed

    def _summary(self) -> Tuple[str, str, List[Tuple[str, str, str, str, str]]]:
        """The verdict, the node counts and one (key, shape, dtype, max abs diff, result) per key."""
        rows = []
        for r in self.rows:
            key = ".".join(r["key"]) if isinstance(r["key"], list) else str(r["key"])
            result = "bitwise equal" if r.get("bitwise_equal") else ("matches" if r.get("matches") else
                                                                       r.get("problem") or "differs")
            rows.append((key, str(r.get("shape")), str(r.get("dtype")), f"{r.get('max_abs_diff', 0):.3g}", result))
        verdict = self.verdict
        if verdict == "NOT PROVEN":
            problem = (self.report.get("nodes") or {}).get("problem")
            verdict += (f": the nodes were not compared ({problem})" if problem else
                        ": no proof for " + ", ".join(f"{u['node']} ({u['reason']})" for u in self.unproven[:8]))
        d = self.first_divergence
        if d:
            verdict += f": first diverging node {d.get('node')}"
            if d.get("problem"):
                verdict += f" ({d['problem']}: eager {d.get('eager')}, traced {d.get('traced')})"
        nodes = self.report.get("nodes") or {}
        excused = sum(int(n) for n in (nodes.get("excused") or {}).values())
        counts = (f"{int(nodes.get('compared', 0))} nodes compared with their eager values, {excused} excused, "
                  f"{len(nodes.get('unproven') or [])} not proven") if nodes else ""
        return verdict, counts, rows

    def __str__(self) -> str:
        verdict, counts, rows = self._summary()
        table = [("key", "shape", "dtype", "max abs diff", "result")] + rows
        widths = [max(len(row[i]) for row in table) for i in range(5)]
        lines = [verdict] + ([counts] if counts else [])
        lines += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        verdict, counts, rows = self._summary()
        head = "<tr><th>key</th><th>shape</th><th>dtype</th><th>max abs diff</th><th>result</th></tr>"
        body = "".join("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in rows)
        counts = f"<p>{html.escape(counts)}</p>" if counts else ""
        return f"<p><b>{html.escape(verdict)}</b></p>{counts}<table>{head}{body}</table>"


def verify(module_or_path: ModuleOrPath, inputs: Any = None, seed: int = 0, atol: float = 0.0,
           rtol: float = 0.0, example_inputs: Inputs = None) -> VerifyResult:
    """Runs the traced graph and the eager model on the same inputs and compares every out key.

    inputs: a tensor (the module's one input), a tuple of tensors (its inputs in order), or a dict
        {key: tensor | shape | (shape, dtype)}; a tuple key's parts are joined by '.'. Tensors are
        used as they are, values included; shapes are drawn at random from `seed`. Default: the
        file's example inputs.
    atol, rtol: tolerances (0: bitwise).
    """
    _program("tdfx-cli", "TDFX_CLI")
    given = _input_args(module_or_path, inputs)  # a wrong input is said before the module is saved
    try:
        path = _saved_model(module_or_path, inputs, example_inputs, "verify")
        args = ["verify", path, "--json", "--seed", str(int(seed)), "--atol", repr(float(atol)), "--rtol",
                repr(float(rtol)), *given]
        # 0: PASSED, 3: FAILED, 4: NOT PROVEN (results, not errors); anything else is an error.
        run = _cli(args, "tdfx: verifying", ok=(0, 3, 4))
    finally:
        _remove_values_file(given)
    try:
        report = json.loads(run.stdout.decode("utf-8"))
    except ValueError:
        _fail(run)
    return VerifyResult(bool(report["passed"]), list(report["keys"]), report.get("first_divergence"), report,
                        str(report.get("verdict", "PASSED" if report["passed"] else "FAILED")))


# ---- diff ---------------------------------------------------------------------------------------

class Diff:
    """tdfx-cli diff's comparison: the JSON report's fields as attributes (`.identical`, `.nodes`,
    `.parameters`; `.equal` is `.identical`); str() is the CLI's text rendering, and Jupyter shows
    the differences as a table."""

    def __init__(self, a: str, b: str, report: Dict[str, Any]) -> None:
        self._a, self._b, self.report = a, b, report
        self._text: Optional[str] = None

    def __getattr__(self, name: str) -> Any:
        report = self.__dict__.get("report", {})
        if name in report:
            return report[name]
        raise AttributeError(name)

    @property
    def equal(self) -> bool:
        """Whether no node, parameter or buffer differs (the report's `identical`)."""
        return bool(self.report.get("identical"))

    def rows(self) -> List[Tuple[str, str, str]]:
        """One (what, name, how) per difference, in the CLI's order: nodes removed, added and
        changed, then the parameters and buffers that differ."""
        out: List[Tuple[str, str, str]] = []
        nodes = self.report.get("nodes") or {}
        for n in nodes.get("removed", []):
            out.append(("- node", str(n.get("name")), "only in the first model"))
        for n in nodes.get("added", []):
            out.append(("+ node", str(n.get("name")), "only in the second model"))
        for c in nodes.get("changed", []):
            for d in c.get("changes", []):
                out.append(("~ node", str(c.get("a", {}).get("name")), f"{d.get('what')}: {d.get('a')} -> {d.get('b')}"))
        for p in self.report.get("parameters", []):
            if p.get("status") == "equal":
                continue
            status = str(p.get("status"))
            how = status.replace("_", " ")
            delta = p.get("max_abs_delta")
            if delta is not None:
                how += f", max |delta| {delta:.6g}" if isinstance(delta, (int, float)) else f", max |delta| {delta}"
            if p.get("detail"):
                how += f": {p['detail']}"
            sign = {"added": "+", "removed": "-", "not_compared": "?"}.get(status, "~")
            out.append((f"{sign} {p.get('kind', 'parameter')}", str(p.get("name")), how))
        return out

    def _repr_html_(self) -> str:
        names = f"{html.escape(os.path.basename(self._a))} vs {html.escape(os.path.basename(self._b))}"
        rows = self.rows()
        if not rows:
            return f"<p><b>identical</b>: {names}</p>"
        body = "".join(f"<tr><td>{html.escape(w)}</td><td>{html.escape(n)}</td><td>{html.escape(h)}</td></tr>"
                       for w, n, h in rows)
        return (f"<p><b>{len(rows)} difference(s)</b>: {names}</p>"
                f"<table><tr><th>what</th><th>name</th><th>how</th></tr>{body}</table>")

    def __str__(self) -> str:
        # The CLI's text came with the report (it ran tdfx-cli again, 1.1 s; issue 58, 8).
        if self._text is None:
            self._text = self.report.get("text")
        if self._text is None:
            self._text = _cli(["diff", self._a, self._b], "tdfx: comparing", ok=(0, 1)).stdout.decode("utf-8")
        return self._text

    def __repr__(self) -> str:
        verdict = "identical" if self.equal else f"{len(self.rows())} difference(s)"
        return f"<tdfx.Diff {os.path.basename(self._a)} vs {os.path.basename(self._b)}: {verdict}>"


def diff(a: ModuleOrPath, b: ModuleOrPath, inputs: Any = None) -> Diff:
    """Compares two models: nodes added, removed and changed, and every parameter's values.

    inputs: as verify's; a module that will not script is traced from them.
    """
    _program("tdfx-cli", "TDFX_CLI")
    pa, pb = _saved_model(a, inputs, None, "diff"), _saved_model(b, inputs, None, "diff")
    run = _cli(["diff", pa, pb, "--json"], "tdfx: comparing", ok=(0, 1))
    result = Diff(pa, pb, json.loads(run.stdout.decode("utf-8")))
    result._modules = (a, b)  # str(result) runs tdfx-cli on their files again: kept while it is
    return result


# ---- show ---------------------------------------------------------------------------------------

@dataclass
class Window:
    """A desktop window show() opened: its process and the file it follows."""

    path: str
    process: subprocess.Popen
    # The module shown: its private file is removed when it is collected, so the window keeps it.
    module: Any = field(default=None, repr=False, compare=False)

    def is_open(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        if self.is_open():
            self.process.terminate()
            self.process.wait()


_windows: Dict[int, Window] = {}


def can_show() -> bool:
    """Whether show() has a display to open the desktop app on (DISPLAY, WAYLAND_DISPLAY or a Qt
    platform is set). On a server or in a container it is False: draw() is the picture there."""
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("QT_QPA_PLATFORM"))


def _need_a_display() -> None:
    """Without a display the app's process dies at once (Qt cannot connect to X): said before it
    starts, in one line, instead of returning a Window whose process is already gone."""
    if can_show():
        return
    raise TdfxError("show() needs a display: neither DISPLAY nor WAYLAND_DISPLAY is set (a server or a "
                    "container?); tdfx.draw(m) shows the picture inline in Jupyter, or run under xvfb-run")


def show(module_or_path: ModuleOrPath, inputs: Any = None, example_inputs: Inputs = None) -> Window:
    """Opens the desktop app (tdfx) on the module and returns at once.

    inputs: as verify's; a module that will not script is traced from them.

    Called again with the same module while its window is open, it saves the module again into the
    file that window follows (View > Follow file changes), so the window shows the new version.
    """
    app = _program("tdfx", "TDFX_APP")
    _need_a_display()
    key = id(module_or_path) if not isinstance(module_or_path, (str, os.PathLike)) else hash(os.fspath(module_or_path))
    window = _windows.get(key)
    if window and window.is_open():
        if not isinstance(module_or_path, (str, os.PathLike)):
            _saved_model(module_or_path, inputs, example_inputs, "show", path=window.path)  # saved atomically: the window reloads
        return window
    path = _saved_model(module_or_path, inputs, example_inputs, "show")
    command = [app, "--follow", path]
    if not isinstance(module_or_path, (str, os.PathLike)):
        # The window is titled with the module's class, not the temporary file's name, and the file
        # (deleted when this session ends) is kept out of the app's Open Recent.
        command[1:1] = ["--model-name", type(module_or_path).__name__]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    window = Window(path, process, module_or_path)  # the module kept: its file goes with it
    _windows[key] = window
    return window
