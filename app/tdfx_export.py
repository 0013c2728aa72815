"""tdfx-export: save a tensordict module (or any nn.Module) as a tdfx model file.

A tdfx model file is a TorchScript archive with a `tensordict.json` extra file that names the
TensorDict modules inside it and their keys (docs/model-format.md). This module needs only torch:
tensordict's classes are recognised by their attributes, not imported.

    from tdfx_export import export
    export(td_module, "model.pt", example_inputs=td)   # TensorDictModule / TensorDictSequential
    export(net, "net.pt", example_inputs={"x": torch.randn(2, 8)})   # a plain nn.Module

Command line:  tdfx-export FACTORY -o OUT.pt [--input KEY=SHAPE[:DTYPE]]... [--batch-size N...]
FACTORY is `file.py:name` or `package.module:name`; `name` is a module object, or a callable that
returns one when called without arguments.
"""
import argparse
import importlib
import importlib.util
import inspect
import io
import contextlib
import json
import os
import sys
import tempfile
import zipfile

import torch
import torch.nn as nn

FORMAT = "tdfx.tensordict"
VERSION = 1
DTYPES = {
    "float32": torch.float32, "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16,
    "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8,
    "bool": torch.bool,
}


class ExportError(Exception):
    """A module or input that cannot be exported; the message says what and why."""


class UnsupportedModule(ExportError):
    """A kind of module tdfx cannot save, whatever its inputs (a probabilistic module)."""


# --- Recognising tensordict's modules by duck typing -------------------------------------------

def _is_td_sequential(obj):
    mods = getattr(obj, "module", None)
    return isinstance(mods, (list, tuple, nn.ModuleList)) and len(mods) > 0 and all(
        _is_td_module(m) or _is_td_sequential(m) for m in mods)


def _is_td_module(obj):
    return (isinstance(getattr(obj, "module", None), nn.Module) and not isinstance(obj.module, nn.ModuleList)
            and hasattr(obj, "in_keys") and hasattr(obj, "out_keys"))


def _key(k):
    if isinstance(k, str):
        return k
    if isinstance(k, tuple) and k and all(isinstance(p, str) for p in k):
        return k[0] if len(k) == 1 else list(k)
    raise ExportError(f"key {k!r} is neither a string nor a tuple of strings")


def _key_tuple(k):
    return (k,) if isinstance(k, str) else tuple(k)


class _Holder(nn.Module):
    """Gives a wrapped module the attribute path tensordict uses: `<i>.module`."""

    def __init__(self, module):
        super().__init__()
        self.module = module


class _Numbered(nn.Module):
    def __init__(self, modules):
        super().__init__()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)


# --- Example inputs ----------------------------------------------------------------------------

def _flatten_inputs(inputs, prefix=()):
    """{key tuple: tensor} from a dict with string/tuple keys or a (nested) TensorDict."""
    if inputs is None:
        return {}
    out = {}
    for k, v in inputs.items():
        key = prefix + _key_tuple(k)
        if isinstance(v, torch.Tensor):
            out[key] = v
        elif hasattr(v, "items"):
            out.update(_flatten_inputs(v, key))
        else:
            raise ExportError(f"example input {key!r} is a {type(v).__name__}, expected a tensor")
    return out


def _run_eager(obj, values):
    """Runs a TD module tree on {key tuple: tensor}; returns {path: [inputs]} for every TD module."""
    calls = {}

    def run(o, path):
        if _is_td_sequential(o):
            for i, child in enumerate(o.module):
                run(child, f"{path}.{i}.module" if path else f"{i}.module")
            return
        try:
            args = [values[_key_tuple(k)] for k in o.in_keys]
        except KeyError as e:
            raise ExportError(f"module at '{path}' reads {e.args[0]!r}, which the example inputs do not have") from None
        calls[path] = args
        with torch.no_grad():
            result = o.module(*args)
        results = list(result) if isinstance(result, tuple) else [result]
        out_keys = o.out_keys if o.out_keys is not None else _output_keys(len(results))
        if len(results) != len(out_keys):
            raise ExportError(f"module at '{path}' returned {len(results)} values for out_keys {list(out_keys)}")
        for k, r in zip(out_keys, results):
            if k != "_":
                values[_key_tuple(k)] = r

    run(obj, "")
    return calls


def _has_lazy_modules(module):
    lazy = getattr(nn.modules.lazy, "LazyModuleMixin", None)
    return lazy is not None and any(isinstance(m, lazy) and m.has_uninitialized_params() for m in module.modules())


# --- Building the archive ----------------------------------------------------------------------

def _script(module, path):  # noqa: ARG001 - the convert callback's signature
    """torch.jit.script of the module's class forward.

    tensordict 0.1.x's TensorDictModule calls make_functional(module, keep_params=True), which sets
    an instance attribute `forward` (a types.MethodType wrapper) on the module and every child and
    records them in `__dict__["_decorated_funs"]`; torch.jit.script would compile the wrapper and
    fail ("undefined value F"). Those instance attributes are set aside while scripting (no copy
    of the weights is made) and put back afterwards.
    """
    saved = []
    for m in module.modules():
        for key in ("forward", "_decorated_funs"):
            if key in m.__dict__:
                saved.append((m, key, m.__dict__.pop(key)))
    _forget_half_compiled_types()  # a user's own failed torch.jit.script(module) left some too
    try:
        return torch.jit.script(module)
    except Exception:
        _forget_half_compiled_types()
        raise
    finally:
        for m, key, value in saved:
            m.__dict__[key] = value


def _forget_half_compiled_types():
    """Drops the module types whose methods TorchScript never finished compiling.

    A failed torch.jit.script leaves the types it began in TorchScript's type store with half their
    methods defined, and every later script of the module then fails with "Can't redefine method:
    forward" instead of the real cause. A type whose methods were compiled is in methods_compiled.
    """
    store = torch.jit._recursive.concrete_type_store
    for cls in list(store.type_store):
        store.type_store[cls] = [t for t in store.type_store[cls] if t in store.methods_compiled]
        if not store.type_store[cls]:
            del store.type_store[cls]


def script_error_summary(error):
    """TorchScript's compile error in one line: its message and where in the model's source.

    torch.jit.script's messages start with a newline and put the cause on the first line that has
    text, then `File "PATH", line N` and the source with a caret; the rest is the call stack.
    """
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    message = lines[0].rstrip(":").rstrip(".") if len(lines) > 1 else lines[0]
    for line in lines[1:]:
        if line.startswith('File "') and '", line ' in line:
            path, _, number = line[len('File "'):].partition('", line ')
            return f"{message} ({path}:{number.split()[0]})"
    return message


def _spec_and_modules(obj, path, convert):
    """Returns (nn.Module to place at `path`, spec); `convert(module, path)` scripts or traces leaves."""
    if _is_td_sequential(obj):
        holders, specs = [], []
        for i, child in enumerate(obj.module):
            child_path = f"{path}.{i}.module" if path else f"{i}.module"
            module, spec = _spec_and_modules(child, child_path, convert)
            holders.append(_Holder(module))
            specs.append(spec)
        spec = {"kind": "sequential", "modules": specs}
        selected = getattr(obj, "selected_out_keys", None)
        if selected:
            spec["out_keys"] = [_key(k) for k in selected]
        return _Numbered(holders), spec
    converted = convert(obj.module, path)
    out_keys = obj.out_keys_of(converted) if hasattr(obj, "out_keys_of") else obj.out_keys
    return converted, {
        "kind": "module", "path": path,
        "in_keys": [_key(k) for k in obj.in_keys], "out_keys": [_key(k) for k in out_keys],
    }


def plain_in_keys(module):
    """A plain nn.Module's in keys: its forward's parameters without a default."""
    # Its class's forward (without self): a TensorDictModule around it replaces the instance's.
    parameters = list(inspect.signature(type(module).forward).parameters.values())[1:]
    return [p.name for p in parameters
            if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _plain_as_td_module(module):
    """A plain nn.Module as a TensorDictModule: keys from the forward signature."""

    class Plain:
        pass

    plain = Plain()
    plain.module, plain.in_keys = module, plain_in_keys(module)

    def out_keys_of(converted):
        # One key per value the TorchScript forward returns: a tuple's elements, else one.
        returns = converted.forward.schema.returns
        tuple_type = len(returns) == 1 and isinstance(returns[0].type, torch.TupleType)
        return _output_keys(len(returns[0].type.elements()) if tuple_type else 1)

    plain.out_keys = None  # known once the module is scripted or traced: out_keys_of
    plain.out_keys_of = out_keys_of
    return plain


def is_plain_module(obj):
    """Whether `obj` is a torch.nn.Module that is not a TensorDictModule or TensorDictSequential."""
    return isinstance(obj, nn.Module) and not (_is_td_module(obj) or _is_td_sequential(obj))


@contextlib.contextmanager
def _class_forwards(obj):
    """Every module of `obj` runs, and is scripted, through its class's forward meanwhile.

    Wrapping a module in tensordict's TensorDictModule replaces `forward` on the instance (and on
    its submodules) by a functional one, `forward(params=None)`: its keys and its code are its
    class's. The instance attributes are put back afterwards."""
    if isinstance(obj, nn.Module):
        trees = [obj]
    elif _is_td_module(obj) or _is_td_sequential(obj):
        trees = [m.module for m in _leaves(obj)]
    else:  # not a module: export says so
        trees = []
    taken = []
    for tree in trees:
        for m in tree.modules():
            if "forward" in m.__dict__:
                taken.append((m, m.__dict__.pop("forward")))
    try:
        yield
    finally:
        for m, forward in taken:
            m.__dict__["forward"] = forward


def export_plain(module, path, inputs_name="example_inputs"):
    """Saves a plain nn.Module as plain TorchScript (torch.jit.script, no tensordict.json): tdfx
    traces it as torch.fx.symbolic_trace does, `forward(self, x)`. Raises what scripting raises."""
    _refuse_probabilistic(module)
    if _has_lazy_modules(module):
        raise ExportError(f"the module has lazy layers (e.g. LazyLinear): give {inputs_name} to materialise them")
    module.eval()
    with _class_forwards(module):
        _save_atomically(_script(module, ""), path, None, False)


def _output_keys(count):
    """A plain module's out keys: `output`, or `output_<i>` for each of several values."""
    return ["output"] if count == 1 else [f"output_{i}" for i in range(count)]


def export(obj, path, example_inputs=None, batch_size=None, strip_debug_info=False, method="auto",
           inputs_name="example_inputs"):
    """Saves `obj` to `path` as a tdfx model file and returns the tensordict.json it wrote; see _export.
    inputs_name: what the caller calls the example inputs, in messages (`import tdfx` says `inputs`)."""
    _refuse_probabilistic(obj)
    with _class_forwards(obj):
        return _export(obj, path, example_inputs, batch_size, strip_debug_info, method, inputs_name)


def _refuse_probabilistic(obj):
    """tensordict's probabilistic modules, said in one line: what is not supported, and what is."""
    parts = list(obj.modules()) if isinstance(obj, nn.Module) else [obj] + list(_leaves(obj))
    for o in parts:
        name = type(o).__name__
        # tensordict's (and torchrl's) classes only: a user's ProbabilisticUNet is a module like any other.
        if any(t.__name__.startswith("Probabilistic") and t.__module__.split(".")[0] in ("tensordict", "torchrl")
               for t in type(o).__mro__):
            raise UnsupportedModule(
                f"{name} is not supported: it samples from a torch.distributions object, which TorchScript "
                "cannot hold; draw, trace or verify the TensorDictModule that computes the distribution's "
                "parameters (a ProbabilisticTensorDictSequential's module[0]) instead")


def _export(obj, path, example_inputs=None, batch_size=None, strip_debug_info=False, method="auto",
            inputs_name="example_inputs"):
    """Saves `obj` to `path` as a tdfx model file and returns the tensordict.json it wrote.

    obj: a TensorDictModule / TensorDictSequential (or anything with their attributes), or a plain
        nn.Module (keys: its forward's parameter names; outputs `output` or `output_<i>`).
    example_inputs: {key: tensor} or a TensorDict. Recorded as the file's example inputs, used to
        materialise lazy modules and, when scripting fails, to trace.
    method: "auto" (script, trace if scripting fails), "script" or "trace".
    """
    if method not in ("auto", "script", "trace"):
        raise ExportError(f"method must be auto, script or trace, not {method!r}")
    if not (_is_td_module(obj) or _is_td_sequential(obj)):
        if not isinstance(obj, nn.Module):
            raise ExportError(f"cannot export a {type(obj).__name__}: expected a TensorDictModule, "
                              "TensorDictSequential or torch.nn.Module")
        obj = _plain_as_td_module(obj)
    if batch_size is None and hasattr(example_inputs, "batch_size"):
        batch_size = list(example_inputs.batch_size)
    flat = _flatten_inputs(example_inputs)

    root_modules = [m.module for m in _leaves(obj)]
    if any(_has_lazy_modules(m) for m in root_modules):
        if not flat:
            raise ExportError(f"the module has lazy layers (e.g. LazyLinear): give {inputs_name} to materialise them")
        _run_eager(obj, dict(flat))
    for m in root_modules:
        m.eval()

    used = "torch.jit.script"
    try:
        if method == "trace":
            raise RuntimeError("tracing was requested")
        built, spec = _spec_and_modules(obj, "", _script)
    except Exception as script_error:  # noqa: BLE001 - any scripting failure falls back to tracing
        if method == "script":
            raise ExportError(f"torch.jit.script failed: {script_error_summary(script_error)}") from script_error
        if not flat:
            raise ExportError(f"torch.jit.script failed and tracing needs {inputs_name}: "
                              f"{script_error_summary(script_error)}") from script_error
        calls = _run_eager(obj, dict(flat))
        built, spec = _spec_and_modules(obj, "", lambda m, p: torch.jit.trace(m, tuple(calls[p]), check_trace=False))
        used = "torch.jit.trace"
        print(f"tdfx-export: warning: torch.jit.script failed ({script_error_summary(script_error)}); "
              "saved with torch.jit.trace instead. A traced archive keeps the operations run on the example "
              "inputs, not the Python calls: tdfx's graph shows approximate call forms (no keyword arguments, "
              "no methods, no operators as written) and control flow taken on these inputs only.",
              file=sys.stderr)

    root = built if _is_td_sequential(obj) else _Holder(built)
    if not _is_td_sequential(obj):
        spec["path"] = "module"
    meta = {"format": FORMAT, "version": VERSION, "module": spec, "exported_with": used}
    if batch_size is not None:
        meta["batch_size"] = [int(d) for d in batch_size]
    if flat:
        meta["example_inputs"] = [
            {"key": _key(k), "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
            for k, t in flat.items()]
    scripted = torch.jit.script(root)
    _save_atomically(scripted, path, json.dumps(meta, ensure_ascii=False), strip_debug_info)
    return meta


def _leaves(obj):
    if _is_td_sequential(obj):
        return [leaf for child in obj.module for leaf in _leaves(child)]
    return [obj]


def _save_atomically(scripted, path, metadata, strip_debug_info):
    # torch.jit.save names the archive's top folder after the file, so the temporary file gets the
    # final name, inside a temporary folder beside the target (same file system: os.replace is atomic).
    directory = os.path.dirname(os.path.abspath(path))
    staging = tempfile.mkdtemp(prefix=".tdfx-export-", dir=directory)
    tmp = os.path.join(staging, os.path.basename(path))
    try:
        torch.jit.save(scripted, tmp, _extra_files={"tensordict.json": metadata} if metadata is not None else {})
        if strip_debug_info:
            _strip_debug_info(tmp)
        os.replace(tmp, path)  # never a half-written file at `path`
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
        os.rmdir(staging)


def _strip_debug_info(path):
    """Removes the *.debug_pkl records, as archives saved without debug info look."""
    with open(path, "rb") as f:
        src = zipfile.ZipFile(io.BytesIO(f.read()))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            if not info.filename.endswith(".debug_pkl"):
                dst.writestr(info, src.read(info.filename))


# --- Command line ------------------------------------------------------------------------------

def _parse_input(text):
    key, sep, rest = text.partition("=")
    if not sep or not key:
        raise ExportError(f"--input {text!r}: expected KEY=SHAPE[:DTYPE], e.g. input.x=32x100:float32")
    shape_text, _, dtype_text = rest.partition(":")
    dtype = DTYPES.get(dtype_text or "float32")
    if dtype is None:
        raise ExportError(f"--input {text!r}: unknown dtype {dtype_text!r}; expected one of {', '.join(DTYPES)}")
    try:
        shape = [int(d) for d in shape_text.split("x")] if shape_text else []
    except ValueError:
        raise ExportError(f"--input {text!r}: shape must be dimensions separated by 'x', e.g. 2x3x224x224") from None
    parts = tuple(key.split("."))
    if dtype.is_floating_point:
        value = torch.randn(shape, dtype=dtype)
    elif dtype == torch.bool:
        value = torch.randint(0, 2, shape).bool()
    else:
        value = torch.randint(0, 10, shape, dtype=dtype)
    return parts if len(parts) > 1 else parts[0], value


def _load_factory(spec):
    target, sep, name = spec.rpartition(":")
    if not sep or not target or not name:
        raise ExportError(f"{spec!r}: expected FILE.py:NAME or package.module:NAME")
    if target.endswith(".py"):
        if not os.path.isfile(target):
            raise ExportError(f"{target}: no such file")
        module_spec = importlib.util.spec_from_file_location("tdfx_export_factory", target)
        module = importlib.util.module_from_spec(module_spec)
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    if not hasattr(module, name):
        raise ExportError(f"{target} has no attribute {name!r}")
    obj = getattr(module, name)
    if isinstance(obj, nn.Module) or _is_td_module(obj) or _is_td_sequential(obj):
        return obj
    if callable(obj):
        return obj()
    raise ExportError(f"{spec}: {name} is neither a module nor a callable that returns one")


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="tdfx-export", description="Save a tensordict module or nn.Module as a tdfx model file (.pt).")
    parser.add_argument("factory", metavar="FACTORY", help="FILE.py:NAME or package.module:NAME")
    parser.add_argument("-o", "--output", required=True, help="the .pt file to write")
    parser.add_argument("--input", action="append", default=[], metavar="KEY=SHAPE[:DTYPE]",
                        help="an example input (key parts joined by '.'), e.g. input.x=32x100:float32")
    parser.add_argument("--batch-size", type=int, nargs="+", help="the TensorDict batch size, e.g. 32")
    parser.add_argument("--method", choices=["auto", "script", "trace"], default="auto")
    parser.add_argument("--no-debug-info", action="store_true", help="leave out TorchScript's source ranges")
    args = parser.parse_args(argv)
    try:
        obj = _load_factory(args.factory)
        inputs = dict(_parse_input(t) for t in args.input)
        meta = export(obj, args.output, inputs or None, args.batch_size, args.no_debug_info, args.method)
    except ExportError as e:
        print(f"tdfx-export: error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {args.output} ({meta['exported_with']}; module kind {meta['module']['kind']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
