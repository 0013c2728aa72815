"""Reference output for TensorDict-wrapped modules: tensordict 0.1.x's symbolic_trace, rebuilt on
torch.fx from the rules in shared/reference/fx-format.md (tensordict is not packaged for Debian).

A TensorDictModule: FX traces the wrapped module; a new graph gets one `tensordict` placeholder,
each forward placeholder becomes `tensordict[key]` (one read per distinct key), and every other
node is copied across with Graph.node_copy. A TensorDictSequential copies its children's graphs
into one: keys written earlier are wired directly, call_module / get_attr nodes of child i get
target `{i}.module.{target}` and name `_{i}_{name}` (the name node_copy gave them), and the output
is a tuple of the last value written to each key, in first-write order.
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


def _td_module_graph(module, in_keys):
    inner = fx.Tracer().trace(module)
    graph = fx.Graph()
    td = graph.placeholder("tensordict")
    env, reads, i = {}, {}, 0
    for node in inner.nodes:
        if node.op == "placeholder":
            key = _key(in_keys[i])
            if key not in reads:
                reads[key] = graph.call_function(operator.getitem, (td, key))
            env[node] = reads[key]
            i += 1
    for node in inner.nodes:
        if node.op != "placeholder":
            env[node] = graph.node_copy(node, lambda n: env[n])
    return graph


def td_module_reference(module, in_keys, out_keys, name):
    graph = _td_module_graph(module, in_keys)
    gm = fx.GraphModule(module, graph)
    return str(gm.graph), gm.code, FxGraphDrawer(gm, name).get_dot_graph().to_string()


def td_sequential_reference(children, name):
    """children: (module, in_keys, out_keys) per TensorDictModule."""
    graph = fx.Graph()
    td = graph.placeholder("tensordict")
    root = nn.Module()
    written, reads = {}, {}
    for i, (module, in_keys, out_keys) in enumerate(children):
        setattr(root, str(i), _Wrapper(module))
        sub = _td_module_graph(module, in_keys)
        env = {}
        for node in sub.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "call_function" and node.target is operator.getitem and node.args[0].op == "placeholder":
                key = node.args[1]
                if key in written:
                    env[node] = written[key]
                else:
                    if key not in reads:
                        reads[key] = graph.call_function(operator.getitem, (td, key))
                    env[node] = reads[key]
                continue
            if node.op == "output":
                value = node.args[0]
                values = list(value) if isinstance(value, (tuple, list)) else [value]
                for key, v in zip(out_keys, values):
                    key = _key(key)
                    if key != "_":
                        written[key] = env[v]  # a dict keeps the position of the first write
                continue
            new = graph.node_copy(node, lambda n: env[n])
            if node.op in ("call_module", "get_attr"):
                new.target = f"{i}.module.{node.target}"
                new.name = f"_{i}_{new.name}"
            env[node] = new
    graph.output(tuple(written.values()))
    gm = fx.GraphModule(root, graph)
    return str(gm.graph), gm.code, FxGraphDrawer(gm, name).get_dot_graph().to_string()
