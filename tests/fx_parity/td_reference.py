"""Reference output for TensorDict-wrapped modules: tensordict 0.1.2's symbolic_trace, rebuilt on
torch.fx (tensordict is not packaged for Debian; tests/fx_fuzz/fuzz.py --tensordict checks this
file against the real one, outside CI).

A TensorDictModule: FX traces the wrapped module; a new graph gets one `tensordict` placeholder,
each forward placeholder becomes `tensordict[key]` (one read per distinct key), and every other
node is copied across with Graph.node_copy, named after its name in the module's own graph (where
the forward's parameters took their names first). A TensorDictSequential copies its children's
graphs into one: keys written earlier are wired directly, call_module / get_attr nodes of child i
get target `{i}.module.{target}` and name `_{i}_{name}` (renamed after node_copy, so the graph's
namespace keeps the unprefixed name), a nested sequential's key reads are all made first (zipped
with its in_keys), and the output is a tuple of the last value written to each key, `_` included,
in first-write order.
"""
import operator

import torch
import torch.fx as fx
import torch.nn as nn
from torch.fx.passes.graph_drawer import FxGraphDrawer


class SoftmaxHead(nn.Module):
    """The second child of the wrapped torchvision sequentials."""

    def forward(self, logits):
        return logits.softmax(-1)


def _key(k):
    return k if isinstance(k, str) else (k[0] if len(k) == 1 else tuple(k))


class _Wrapper(nn.Module):
    """What tensordict's TensorDictModule looks like to FX targets: `.module` is the wrapped module."""

    def __init__(self, module):
        super().__init__()
        self.module = module


def _is_sequential(obj):
    return isinstance(getattr(obj, "module", None), (list, tuple))


def keys_of(obj):
    """(in_keys, out_keys) as tensordict 0.1.2 computes them; a sequential's: TensorDictSequential.
    _compute_in_and_out_keys (in keys not produced earlier; out keys deduplicated keeping the last)."""
    if not _is_sequential(obj):
        return [_key(k) for k in obj.in_keys], [_key(k) for k in obj.out_keys]
    in_keys, out_keys = [], []
    for child in obj.module:
        child_in, child_out = keys_of(child)
        for k in child_in:
            if k not in out_keys + in_keys:
                in_keys.append(k)
        out_keys += child_out
    out_keys = [k for i, k in enumerate(out_keys) if k not in out_keys[i + 1:]]
    return in_keys, out_keys


def root_of(obj):
    """The nn.Module tensordict hands GraphModule: the wrapped module, or a sequential's ModuleList."""
    if not _is_sequential(obj):
        return obj.module
    return nn.ModuleList([_Wrapper(root_of(c)) for c in obj.module])


def _parse_input_nodes(in_keys, nodes, td, inputs, env):
    for in_key, node in zip(in_keys, nodes):
        if in_key not in inputs:
            inputs[in_key] = operator.getitem(td, in_key).node
        env[node.name] = inputs[in_key]


def trace_graph(obj, fault2=False):
    """The fx.Graph tensordict 0.1.2's symbolic_trace builds for a (stand-in) TensorDictModule or
    TensorDictSequential: the algorithm of tensordict/prototype/fx.py, on the stand-ins, but for
    the fault shared/reference/fx-format.md tells tdfx not to copy (fault 2): tensordict zips a
    nested sequential's outputs, which come in first-write order, with its out_keys, which keep each
    key's last occurrence, so a key rewritten inside it gets another key's value. Here each output
    keeps its own key, as eager does; fault2=True copies tensordict (to check this file against it)."""
    new_graph = fx.Graph()
    td = fx.Proxy(new_graph.placeholder("tensordict"))
    env = {}
    if not _is_sequential(obj):
        node_iter = iter(fx.Tracer().trace(obj.module).nodes)
        _parse_input_nodes(keys_of(obj)[0], node_iter, td, {}, env)
        for node in node_iter:
            env[node.name] = new_graph.node_copy(node, lambda x: env[x.name])
        return new_graph
    inputs, outputs = {}, {}
    for i, child in enumerate(obj.module):
        child_in, child_out = keys_of(child)
        if _is_sequential(child):
            inner = trace_graph(child, fault2)
            if not fault2:
                child_out = inner.td_out_keys
            nodes = list(inner.nodes)
            placeholder = nodes[0]
            reads = [n for n in nodes[1:] if n.op == "call_function" and n.target is operator.getitem
                     and n.args[0] is placeholder]
            node_iter = [n for n in nodes[1:] if n not in reads]
            _parse_input_nodes(child_in, reads, td, inputs, env)
        else:
            node_iter = iter(fx.Tracer().trace(child.module).nodes)
            _parse_input_nodes(child_in, node_iter, td, inputs, env)
        for node in node_iter:
            if node.op == "output":
                args = node.args[0] if _is_sequential(child) else node.args
                args = args[0] if isinstance(args[0], tuple) else args
                for out_key, arg in zip(child_out, args):
                    outputs[out_key] = env[arg.name]
                    inputs[out_key] = env[arg.name]
                continue
            new_node = new_graph.node_copy(node, lambda x: env[x.name])
            if new_node.op in ("call_module", "get_attr"):
                new_node.target = f"{i}.module.{new_node.target}"
                new_node.name = f"_{i}_{new_node.name}"
            env[node.name] = new_node
    new_graph.output(tuple(outputs.values()))
    new_graph.td_out_keys = list(outputs.keys())
    return new_graph


def reference(obj, name):
    """(graph text, code, FxGraphDrawer DOT) for a stand-in TensorDictModule or TensorDictSequential."""
    gm = fx.GraphModule(root_of(obj), trace_graph(obj))
    return str(gm.graph), gm.code, FxGraphDrawer(gm, name).get_dot_graph().to_string()


class _Module:
    def __init__(self, module, in_keys, out_keys):
        self.module, self.in_keys, self.out_keys = module, list(in_keys), list(out_keys)


class _Sequential:
    def __init__(self, *modules):
        self.module = list(modules)


def td_module_reference(module, in_keys, out_keys, name):
    return reference(_Module(module, in_keys, out_keys), name)


def td_sequential_reference(children, name):
    """children: (module, in_keys, out_keys) per TensorDictModule."""
    return reference(_Sequential(*[_Module(*c) for c in children]), name)

