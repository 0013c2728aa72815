#!/usr/bin/env python3
"""Generates fx_tables.cpp: what torch.fx 1.13 records for each Python spelling of a torch call.

Run with Debian's interpreter from the repository root:
    /usr/bin/python3 core/src/ir/make_fx_tables.py > core/src/ir/fx_tables.cpp
The CTest case `fx_tables.current` checks that the committed file is what this script prints.

Everything comes from torch's own definitions, nothing is typed by hand:
- the callables of torch, torch.nn.functional, torch.special, torch.linalg, torch.fft,
  torch.functional and math, with the target FX prints for each (torch.fx.node._get_qualified_name);
- how FX records a call of each: a C builtin as written; a Python function that hands itself to
  `handle_torch_function(f, relevant, *args, **kwargs)` with exactly those args and kwargs (read
  from the function's source with `ast`); any other Python function is traced through;
- torch.jit._builtins._builtin_ops: which aten operator TorchScript compiles each callable to;
- the functions registered with torch.fx.wrap by torch and torchvision (FX records a call of one
  as one call_function node, as written, where TorchScript would have it inlined);
- the Tensor methods (FX records any method call on a proxy as call_method);
- each torch.nn module class's `__constants__`, in the order FxGraphDrawer prints them;
- torch.fx.graph.magic_methods (how FX's code prints a call of each operator function, `{} + {}`),
  the Tensor method FX records for each with a plain tensor on the left (`c / x` is `c.div(x)`),
  and the aten operator TorchScript emits for each Python operator on tensors and scalars
  (compiled here with torch.jit.script), so `1 - x` is known to be rsub.
"""
import ast
import inspect
import math  # noqa: F401 - one of the namespaces
import operator
import sys
import textwrap
import types
import warnings

import torch
import torch.fx.graph as fx_graph
import torch.nn.functional as F
from torch.fx.node import _get_qualified_name

NAMESPACES = ["torch", "torch.nn.functional", "torch.special", "torch.linalg", "torch.fft", "torch.functional", "math"]


def qualified(fn):
    try:
        return _get_qualified_name(fn)
    except Exception:  # noqa: BLE001 - objects FX could not print are left out
        return None


def handled_call(fn):
    """(handled function, [positional param names], [keyword param names]) of the first
    handle_torch_function call in fn's source, or None."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    params = set(inspect.signature(fn).parameters)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "handle_torch_function":
            if len(node.args) < 2 or not isinstance(node.args[0], ast.Name):
                return None
            target = fn.__globals__.get(node.args[0].id)
            positional = []
            for a in node.args[2:]:
                if not isinstance(a, ast.Name) or a.id not in params:
                    return None  # *args or an expression: not a plain mapping of parameters
                positional.append(a.id)
            keywords = []
            for k in node.keywords:
                if k.arg is None or not isinstance(k.value, ast.Name) or k.value.id not in params:
                    return None
                keywords.append(k.arg)
            return target, positional, keywords
    return None


def python_functions(fn):
    """The Python functions behind a callable: itself, or both branches of a boolean_dispatch."""
    if not isinstance(fn, types.FunctionType):
        return []
    closure = inspect.getclosurevars(fn).nonlocals
    if "if_true" in closure and "if_false" in closure:
        return [closure["if_true"], closure["if_false"]]
    return [fn]


def callables():
    aten_of = {}
    for fn, name in torch.jit._builtins._builtin_ops:
        aten_of.setdefault(id(fn), name)
    rows = {}
    for ns in NAMESPACES:
        module = eval(ns)  # noqa: S307 - one of the fixed names above
        for name in sorted(dir(module)):
            if name.startswith("__"):
                continue
            fn = getattr(module, name)
            if isinstance(fn, (type, types.ModuleType)) or not callable(fn):
                continue
            spelling = f"{ns}.{name}"
            aten = aten_of.get(id(fn), "")
            funcs = python_functions(fn)
            if not funcs:
                target = qualified(fn)
                if target:
                    rows[spelling] = (target, aten, "AsWritten", [], [], [])
                continue
            for py in funcs:
                handled = handled_call(py)
                key = f"{py.__module__}.{py.__name__}" if py is not fn else spelling
                if handled and handled[0] is not None and qualified(handled[0]):
                    rows.setdefault(key, (qualified(handled[0]), aten, "Handled", handled[1], handled[2],
                                          defaults(py)))
                else:
                    rows.setdefault(key, ("", aten, "TracedThrough", [], [], []))
            if funcs[0] is not fn:  # boolean_dispatch: the public spelling records like its default branch
                default = closure_default(fn)
                rows.setdefault(spelling, rows[f"{default.__module__}.{default.__name__}"])
    return rows


def defaults(fn):
    """name=repr(default) for each parameter with a default: what FX records when it is not written."""
    return [f"{name}={p.default!r}" for name, p in inspect.signature(fn).parameters.items()
            if p.default is not inspect.Parameter.empty]


def wrapped_functions():
    """Functions torch.fx.wrap registered while torch and torchvision were imported."""
    import torchvision  # noqa: F401 - imported for the functions it registers
    import torchvision.ops  # noqa: F401
    import torch.fx._symbolic_trace as symbolic_trace
    rows = {}
    for globals_, name in symbolic_trace._wrapped_fns_to_patch:
        spelling = f"{globals_['__name__']}.{name}"
        rows[spelling] = (spelling, "", "AsWritten", [], [], [])
    return rows


def closure_default(fn):
    # boolean_dispatch calls if_true only when the flag argument is given and true.
    return inspect.getclosurevars(fn).nonlocals["if_false"]


def operator_lowering():
    """(python operator, operand kinds, aten kind, swapped) for every FX magic method on tensors."""
    rows = []
    samples = {"Tensor": "torch.Tensor", "float": "float", "int": "int", "List": "List[int]"}
    for name, fmt in fx_graph.magic_methods.items():
        if name == "div":
            continue
        unary = fmt.count("{}") == 1
        combos = [("Tensor",)] if unary else [("Tensor", "Tensor"), ("Tensor", "float"), ("float", "Tensor"),
                                              ("Tensor", "int"), ("int", "Tensor")]
        if name == "getitem":
            combos = [("List", "int")]  # a tensor subscript is aten::select / slice / index: see expression groups
        for combo in combos:
            params = ", ".join(f"{chr(97 + i)}: {samples[t]}" for i, t in enumerate(combo))
            expr = fmt.format(*[chr(97 + i) for i in range(len(combo))])
            src = f"def f({params}):\n    return {expr}\n"
            scope = {"torch": torch, "List": __import__("typing").List}
            try:
                exec(src, scope)  # noqa: S102 - fixed templates
                graph = torch.jit.CompilationUnit(src).f.graph
            except Exception:  # noqa: BLE001 - an operator TorchScript does not define for these types
                continue
            nodes = [n for n in graph.nodes() if n.kind() != "prim::Constant"]
            if len(nodes) != 1:
                continue
            node = nodes[0]
            inputs = [i.debugName().split(".")[0] for i in node.inputs()]
            swapped = len(combo) == 2 and inputs[:2] == ["b", "a"]
            rows.append((name, "".join(t[0] for t in combo), node.kind(), swapped))
    return rows


def tensor_methods():
    return sorted(n for n in dir(torch.Tensor) if not n.startswith("__") and callable(getattr(torch.Tensor, n, None)))


def module_constants():
    rows = {}
    for name in dir(torch.nn):
        cls = getattr(torch.nn, name)
        if isinstance(cls, type) and issubclass(cls, torch.nn.Module) and getattr(cls, "__constants__", None):
            rows[f"{cls.__module__}.{cls.__qualname__}"] = list(cls.__constants__)
    return rows


def concrete_left_method(name, fmt):
    """The Tensor method FX records for `c OP proxy` where `c` is a plain tensor (a buffer): Tensor's
    slot for OP hands itself to __torch_function__ as that method; "" for unary operators and
    operators without one."""
    op = getattr(operator, name, None)
    if op is None or fmt.count("{}") != 2:
        return ""
    dtype = torch.int64 if name in ("and_", "or_", "xor", "lshift", "rshift") else torch.float

    class ConcreteLeft(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("c", torch.ones(2, 2, dtype=dtype))

        def forward(self, x):
            return op(self.c, x)

    graph = torch.fx.symbolic_trace(ConcreteLeft()).graph
    calls = [n for n in graph.nodes if n.op in ("call_method", "call_function")]
    return calls[0].target if calls and calls[0].op == "call_method" else ""


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t").replace("\n", "\\n") + '"'


def main():
    warnings.filterwarnings("ignore")
    out = [
        "// Generated by make_fx_tables.py from torch " + torch.__version__ + ": do not edit.",
        "// What torch.fx records for each Python spelling of a torch call (see the script's docstring).",
        '#include "tdfx/ir/fx_tables.h"',
        "",
        "namespace tdfx::fx::generated {",
        "",
        "const CallableSpelling kCallables[] = {",
    ]
    rows = callables()
    rows.update(wrapped_functions())
    for spelling, (target, aten, kind, args, kwargs, defs) in sorted(rows.items()):
        out.append(f"    {{{c_string(spelling)}, {c_string(target)}, {c_string(aten)}, CallKind::{kind}, "
                   f"{c_string(','.join(args))}, {c_string(','.join(kwargs))}, {c_string(chr(9).join(defs))}}},")
    out += ["};", "const size_t kNumCallables = sizeof(kCallables) / sizeof(kCallables[0]);", ""]
    out.append("const OperatorLowering kOperators[] = {")
    for name, operands, aten, swapped in operator_lowering():
        fmt = fx_graph.magic_methods[name]
        out.append(f"    {{{c_string(name)}, {c_string(fmt)}, {c_string(operands)}, {c_string(aten)}, "
                   f"{'true' if swapped else 'false'}}},")
    out += ["};", "const size_t kNumOperators = sizeof(kOperators) / sizeof(kOperators[0]);", ""]
    out.append("const MagicMethod kMagicMethods[] = {")
    for name, fmt in fx_graph.magic_methods.items():
        out.append(f"    {{{c_string(name)}, {c_string(fmt)}, {c_string(concrete_left_method(name, fmt))}}},")
    out += ["};", "const size_t kNumMagicMethods = sizeof(kMagicMethods) / sizeof(kMagicMethods[0]);", ""]
    out.append("const ModuleConstants kModuleConstants[] = {")
    for cls, names in sorted(module_constants().items()):
        out.append(f"    {{{c_string(cls)}, {c_string(','.join(names))}}},")
    out += ["};", "const size_t kNumModuleConstants = sizeof(kModuleConstants) / sizeof(kModuleConstants[0]);", ""]
    out.append("const char* const kTensorMethods[] = {")
    methods = tensor_methods()
    for i in range(0, len(methods), 6):
        out.append("    " + " ".join(c_string(m) + "," for m in methods[i:i + 6]))
    out += ["};", "const size_t kNumTensorMethods = sizeof(kTensorMethods) / sizeof(kTensorMethods[0]);", "",
            "}  // namespace tdfx::fx::generated", ""]
    sys.stdout.write("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
