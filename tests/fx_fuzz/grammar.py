"""The fuzzer's grammar: random PyTorch modules built from idioms of real model code.

A program is a list of statements over tensors of one shape, (2, 4, 8). Each statement reads
earlier values (or the forward's parameters), defines one new value, and brings along the
submodules, parameters, buffers and helper methods it needs, so any subset of the statements
renders to a complete module: that is what the shrinker removes statements from. A value whose
statement was removed is replaced by `x`.

The idioms are the classes of failure seen on code nobody wrote for the tests (issue 21): lists
grown with append in loops, methods of bracketed expressions, named-tuple fields, slices with
expression bounds and shape slices, ModuleList / ModuleDict loops with zip and enumerate, attention
by hand, helper methods, leaf modules (Linear, LayerNorm, GRU, MultiheadAttention, Conv1d),
parameters and buffers, Optional and default forward parameters, `torch.no_grad`, tuples and dicts.
Issue 34 added the forms of public model code (timm, torchrl) the tracer got wrong: module attributes
as slice bounds after method chains and as scalars passed on, f-strings in asserts, tensor
properties read as values, list concatenation, slicing, insert, extend, pop and reverse,
comprehensions followed by keyword arguments, torch.split, and buffers on the left of operators.
Issue 54 added the statements FX records because it runs the source: assignments overwritten later
and reads never used (reads, operations and calls, expressions alone as statements), a ModuleList loop's update the last iteration
never reads (a WaveNet stack), literals in every spelling TorchScript accepts, keyword arguments holding
dtypes, devices and layouts, tuple results read in any order (items read into names too, alone or unpacked), helper functions and staticmethods
(work on constants in them folded), and buffers shared between submodules.
Programs are wrapped as plain modules, TensorDictModules or (nested) TensorDictSequentials.
"""
import random
import re
from dataclasses import dataclass, field
from typing import List, Optional

D = 8  # the feature size; every value has shape (2, 4, D)


@dataclass
class Stmt:
    lines: List[str]                 # forward body lines, indented relative to the body
    defines: str                     # the value it defines
    uses: List[str]                  # values it reads
    members: List[str] = field(default_factory=list)  # __init__ lines
    helpers: List[str] = field(default_factory=list)  # method definitions
    params: List[str] = field(default_factory=list)   # extra forward parameters it needs: y, mask, scale
    idiom: str = ""
    # Lines whose value nobody reads (a read never used, an assignment overwritten): TorchScript
    # drops them, FX records them. They keep no value alive: a value read only there is returned.
    dead: List[int] = field(default_factory=list)


@dataclass
class Program:
    stmts: List[Stmt]
    outputs: int = 1                 # values returned: the last, or the last two

    def render(self, cls: str, keep: Optional[List[int]] = None) -> str:
        """The module class as source; keep: indices of the statements to keep (default all)."""
        kept = [s for i, s in enumerate(self.stmts) if keep is None or i in keep]
        defined = {"x"}
        removed = {s.defines for s in self.stmts} - {s.defines for s in kept}
        members, helpers, params, body = [], [], set(), []
        # The default parameter of program i > 0 is scale{i}: a sequential's children share one
        # forward, where two parameters named `scale` are a SyntaxError (in FX and tensordict alike),
        # which made the case invalid.
        scale = "scale" if cls == "P0" else f"scale{cls[1:]}"
        for s in kept:
            for line in s.lines:
                for name in removed:
                    line = re.sub(rf"\b{name}\b", "x", line)
                if "scale" in s.params:
                    line = re.sub(r"\bscale\b", scale, line)
                body.append(line)
            defined.add(s.defines)
            members += s.members
            helpers += s.helpers
            params.update(s.params)
        values = [s.defines for s in kept] or ["x"]
        outs = values[-self.outputs:] if len(values) >= self.outputs else values[-1:]
        # TorchScript drops dead code when it compiles, and FX records it: no archive keeps a value
        # nobody reads, so every value is read, added into the first output.
        def read_later(i):
            later = "\n".join(line for s in kept[i + 1:] for j, line in enumerate(s.lines) if j not in s.dead)
            return re.search(rf"(?<![.\w]){kept[i].defines}\b", later) is not None
        dead = [s.defines for i, s in enumerate(kept[:-len(outs)]) if not read_later(i)]
        if dead:
            outs = [" + ".join([outs[0]] + dead)] + outs[1:]
        sig = ["self", "x"]
        if "y" in params:
            sig.append("y")
        if "mask" in params:
            sig.append("mask: Optional[torch.Tensor] = None")
        if "scale" in params:
            sig.append(f"{scale}: float = 2.0")
        src = [f"class {cls}(nn.Module):", "    def __init__(self):", "        super().__init__()"]
        src += ["        " + m for m in members]
        for h in helpers:
            src.append("")
            src += ["    " + line for line in h.splitlines()]
        src.append("")
        src.append(f"    def forward({', '.join(sig)}):")
        src += ["        " + line for line in body]
        src.append(f"        return {', '.join(outs)}" if len(outs) > 1 else f"        return {outs[0]}")
        return "\n".join(src) + "\n"

    def signature(self, keep=None):
        """The forward's tensor inputs that take keys, in order (x, then y when used)."""
        kept = [s for i, s in enumerate(self.stmts) if keep is None or i in keep]
        return ["x"] + (["y"] if any("y" in s.params for s in kept) else [])

    def output_count(self, keep=None):
        n = len([i for i in range(len(self.stmts)) if keep is None or i in keep])
        return min(self.outputs, max(n, 1))


UNARY = ["{a}.relu()", "torch.tanh({a})", "F.gelu({a})", "{a}.sigmoid()", "torch.relu({a})", "-{a}",
         "{a}.abs()", "F.silu({a})", "{a}.exp().log1p()", "torch.clamp({a}, min=-1.0, max=1.0)",
         "{a}.clamp(-1, 1)", "{a} * 0.5 + 1", "2 * {a}", "{a} / 2", "{a} ** 2", "F.softmax({a}, dim=-1)",
         "{a}.softmax(-1)", "F.layer_norm({a}, [8])", "F.dropout({a}, p=0.1, training=self.training)"]
BINARY = ["{a} + {b}", "{a} * {b}", "{a} - {b}", "torch.add({a}, {b})", "torch.mul({a}, {b})",
          "{a}.add({b})", "torch.maximum({a}, {b})", "{a}.mul({b}).add({a})"]


class Generator:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.n = 0
        self.allow_mask = True

    def pick(self, seq):
        return self.rng.choice(seq)

    def new(self, idiom):
        self.n += 1
        return f"v{self.n}", self.n

    # Each idiom returns a Stmt reading `a` (and maybe `b`).
    def unary(self, a, b):
        v, _ = self.new("unary")
        return Stmt([f"{v} = " + self.pick(UNARY).format(a=a)], v, [a], idiom="unary")

    def binary(self, a, b):
        v, _ = self.new("binary")
        return Stmt([f"{v} = " + self.pick(BINARY).format(a=a, b=b)], v, [a, b], idiom="binary")

    def bracketed_method(self, a, b):
        v, _ = self.new("bracketed")
        form = self.pick(["({a} + {b}).transpose(1, 2).transpose(1, 2)", "({a} * {b}).mean(dim=-1, keepdim=True) + {a}",
                          "(({a} - {b}) * 2).sum(-1, keepdim=True) * {b}", "({a} + 1).relu()",
                          "({a} * {b}).reshape({a}.size(0), -1).reshape({a}.shape)"])
        return Stmt([f"{v} = " + form.format(a=a, b=b)], v, [a, b], idiom="bracketed_method")

    def leaf(self, a, b):
        v, k = self.new("leaf")
        kind = self.pick(["linear", "norm", "gru", "mha", "conv", "seq", "dropout"])
        name = f"{kind}{k}"
        init, call = {
            "linear": (f"self.{name} = nn.Linear({D}, {D})", f"self.{name}({a})"),
            "norm": (f"self.{name} = nn.LayerNorm({D})", f"self.{name}({a})"),
            "gru": (f"self.{name} = nn.GRU({D}, {D}, batch_first=True)", f"self.{name}({a})[0]"),
            "mha": (f"self.{name} = nn.MultiheadAttention({D}, 2, batch_first=True)", f"self.{name}({a}, {a}, {a})[0]"),
            "conv": (f"self.{name} = nn.Conv1d({D}, {D}, 3, padding=1)",
                     f"self.{name}({a}.transpose(1, 2)).transpose(1, 2)"),
            "seq": (f"self.{name} = nn.Sequential(nn.Linear({D}, {D}), nn.ReLU(), nn.Linear({D}, {D}))",
                    f"self.{name}({a})"),
            "dropout": (f"self.{name} = nn.Dropout(0.2)", f"self.{name}({a})"),
        }[kind]
        return Stmt([f"{v} = {call}"], v, [a], members=[init], idiom="leaf_" + kind)

    def named_tuple(self, a, b):
        v, _ = self.new("named_tuple")
        form = self.pick(["{a} - {a}.max(dim=-1, keepdim=True).values", "{a}.min(dim=-1, keepdim=True).values * {a}",
                          "torch.sort({a}, dim=-1).values", "{a}.sort(dim=-1, descending=True).values",
                          "{a}.topk(8, dim=-1).values", "{a}.gather(-1, {a}.sort(dim=-1).indices)",
                          "{a} - {a}.max(dim=-1, keepdim=True)[0]", "torch.max({a}, -1, True).values + {a}"])
        return Stmt([f"{v} = " + form.format(a=a)], v, [a], idiom="named_tuple")

    def slice_(self, a, b):
        v, _ = self.new("slice")
        form = self.pick([
            ["n{v} = {a}.size(1)", "{v} = torch.cat([{a}[:, : n{v} - 1], {a}[:, n{v} - 1 :]], dim=1)"],
            ["{v} = torch.cat([{a}[:, :, : {a}.shape[-1] // 2], {a}[:, :, {a}.shape[-1] // 2 :]], dim=-1)"],
            ["{v} = {a}.flatten(1).reshape({a}.shape[-3:])"],
            ["{v} = {a}.reshape(-1, {a}.shape[-1]).reshape({a}.size(0), {a}.size(1), {a}.size(2))"],
            ["s{v} = {a}.shape[-2:]", "{v} = {a}.reshape({a}.size(0), s{v}[0] * s{v}[1]).view({a}.shape)"],
            ["{v} = {a}[:, : {a}.size(1)] * {b}[:, -{b}.size(1) :]"],
            ["{v} = {a}[..., :4].repeat(1, 1, 2) + {a}[:, 1:].mean(1, keepdim=True)"],
        ])
        return Stmt([line.format(a=a, b=b, v=v) for line in form], v, [a, b], idiom="slice")

    def list_loop(self, a, b):
        v, k = self.new("list")
        m = self.rng.randint(1, 3)
        name = f"blocks{k}"
        members = [f"self.{name} = nn.ModuleList([nn.Linear({D}, {D}) for _ in range({m})])"]
        form = self.pick(["append_stack", "append_last", "append_cat", "chain", "enumerate", "zip", "dict", "nonempty",
                          "carried"])
        if form == "append_stack":
            reduce = self.pick(["torch.stack(outs{v}, 0).sum(0)", "torch.stack(outs{v}, dim=0).mean(dim=0)",
                                "outs{v}[-1]", "outs{v}[0] + outs{v}[-1]"])
            lines = ["outs{v} = []", "for layer in self." + name + ":", "    outs{v}.append(layer({a}))",
                     "{v} = " + reduce]
        elif form == "append_last":
            lines = ["outs{v} = []", "h{v} = {a}", "for layer in self." + name + ":",
                     "    h{v} = layer(h{v}).relu()", "    outs{v}.append(h{v})", "{v} = outs{v}[-1] + {a}"]
        elif form == "append_cat":
            lines = ["outs{v} = []", "for layer in self." + name + ":", "    outs{v}.append(layer({a}))",
                     "{v} = torch.cat(outs{v}, -1)[..., :8]"]
        elif form == "nonempty":
            lines = ["feats{v} = [{a}]", "for layer in self." + name + ":", "    feats{v}.append(layer(feats{v}[-1]))",
                     "{v} = torch.stack(feats{v}, 0).sum(0)"]
        elif form == "carried":
            # A WaveNet stack: the last iteration's `h = h + layer(o)` is never read after the loop;
            # TorchScript keeps the call and drops the add, FX records both.
            lines = ["h{v} = {a}", "o{v} = {a} * 0.5", "for layer in self." + name + ":",
                     "    o{v} = o{v} + torch.tanh(h{v})", "    h{v} = h{v} + layer(o{v})", "{v} = o{v}"]
        elif form == "chain":
            lines = ["h{v} = {a}", "for layer in self." + name + ":", "    h{v} = layer(h{v}) + h{v}", "{v} = h{v}"]
        elif form == "enumerate":
            lines = ["h{v} = {a}", "for i, layer in enumerate(self." + name + "):", "    h{v} = h{v} + layer(h{v}) * (i + 1)",
                     "{v} = h{v}"]
        elif form == "zip":
            other = f"gates{k}"
            members.append(f"self.{other} = nn.ModuleList([nn.Linear({D}, {D}) for _ in range({m})])")
            lines = ["h{v} = {a}", "for f, g in zip(self." + name + ", self." + other + "):",
                     "    h{v} = f(h{v}) * torch.sigmoid(g(h{v}))", "{v} = h{v}"]
        else:
            members = [f"self.{name} = nn.ModuleDict({{'proj': nn.Linear({D}, {D}), 'act': nn.GELU()}})"]
            lines = ["h{v} = {a}", "for key, layer in self." + name + ".items():", "    h{v} = layer(h{v})", "{v} = h{v}"]
        return Stmt([line.format(a=a, v=v) for line in lines], v, [a], members=members, idiom="list_" + form)

    def attention(self, a, b):
        v, k = self.new("attention")
        members = [f"self.q{k} = nn.Linear({D}, {D})", f"self.k{k} = nn.Linear({D}, {D})",
                   f"self.v{k} = nn.Linear({D}, {D})"]
        if self.rng.random() < 0.5:
            lines = ["w{v} = self.q{k}({a}) @ self.k{k}({a}).transpose(-2, -1) / math.sqrt(8)",
                     "w{v} = w{v}.softmax(dim=-1)", "{v} = w{v} @ self.v{k}({a})"]
        else:
            lines = ["B{v}, T{v} = {a}.size(0), {a}.size(1)",
                     "q{v} = self.q{k}({a}).view(B{v}, T{v}, 2, 4).transpose(1, 2)",
                     "k{v} = self.k{k}({a}).view(B{v}, T{v}, 2, 4).transpose(1, 2)",
                     "val{v} = self.v{k}({a}).view(B{v}, T{v}, 2, 4).transpose(1, 2)",
                     "att{v} = F.softmax(torch.matmul(q{v}, k{v}.transpose(-2, -1)) * (1.0 / math.sqrt(4)), dim=-1)",
                     "{v} = (att{v} @ val{v}).transpose(1, 2).contiguous().view(B{v}, T{v}, 8)"]
        return Stmt([line.format(a=a, v=v, k=k) for line in lines], v, [a], members=members, idiom="attention")

    def helper(self, a, b):
        v, k = self.new("helper")
        body = self.pick([
            ["return self.lin{k}(t).relu() + t"],
            ["h = self.lin{k}(t)", "return h * torch.sigmoid(h)"],
            ["return self._inner{k}(self.lin{k}(t)) - t"],
        ])
        helpers = [f"def _block{k}(self, t):\n" + "\n".join("    " + line.format(k=k) for line in body)]
        if any("_inner" in line for line in body):
            helpers.append(f"def _inner{k}(self, t):\n    return t.tanh() * 2")
        return Stmt([f"{v} = self._block{k}({a})"], v, [a], members=[f"self.lin{k} = nn.Linear({D}, {D})"],
                    helpers=helpers, idiom="helper")

    def weights(self, a, b):
        v, k = self.new("weights")
        return Stmt([f"{v} = {a} * self.w{k} + self.b{k}"], v, [a],
                    members=[f"self.w{k} = nn.Parameter(torch.randn({D}))",
                             f"self.register_buffer('b{k}', torch.randn({D}))"], idiom="weights")

    def gated(self, a, b):
        v, k = self.new("gated")
        return Stmt([f"{v} = {a} + torch.sigmoid(self.g{k}({a})) * self.l{k}({a})"], v, [a],
                    members=[f"self.g{k} = nn.Linear({D}, {D})", f"self.l{k} = nn.Linear({D}, {D})"], idiom="gated")

    def optional(self, a, b):
        v, _ = self.new("optional")
        # A TensorDictModule calls forward with its in keys only: `mask` is then None in eager, while
        # FX (and tensordict) take the `is not None` branch for the placeholder, a graph that cannot
        # run without it. That is tensordict's behaviour, which tdfx prints; verify then fails, rightly.
        form = self.pick(["mask", "scale", "y"] if self.allow_mask else ["scale", "y"])
        if form == "mask":
            return Stmt([f"{v} = {a}", "if mask is not None:", f"    {v} = {v} * mask"], v, [a], params=["mask"],
                        idiom="optional_mask")
        if form == "scale":
            return Stmt([f"{v} = {a} * scale"], v, [a], params=["scale"], idiom="default_scale")
        return Stmt([f"{v} = {a} + y"], v, [a], params=["y"], idiom="second_input")

    def no_grad(self, a, b):
        v, _ = self.new("no_grad")
        return Stmt(["with torch.no_grad():", f"    {v} = {a} * 2 + 1"], v, [a], idiom="no_grad")

    def containers(self, a, b):
        v, _ = self.new("containers")
        form = self.pick([["t{v} = ({a}, {b})", "{v} = t{v}[0] * t{v}[1]"],
                          ["d{v} = {{'p': {a}, 'q': {b}}}", "{v} = d{v}['p'] + d{v}['q']"],
                          ["l{v} = [{a}, {b}, {a}]", "{v} = torch.stack(l{v}, dim=1).sum(1)"]])
        return Stmt([line.format(a=a, b=b, v=v) for line in form], v, [a, b], idiom="containers")

    def functional(self, a, b):
        v, k = self.new("functional")
        # Calls through the module aliases people import (F, fn, torch.nn.functional): the callee is
        # what TorchScript resolved, whatever the alias (class 10 of issue 21).
        alias = self.pick(["F", "fn", "torch.nn.functional"])
        form = self.pick([
            ("{f}.linear({a}, self.w{k}, self.b{k})", [f"self.w{k} = nn.Parameter(torch.randn({D}, {D}))",
                                                      f"self.b{k} = nn.Parameter(torch.randn({D}))"]),
            ("{f}.linear({a}, self.w{k})", [f"self.w{k} = nn.Parameter(torch.randn({D}, {D}))"]),
            ("{f}.conv1d({a}.transpose(1, 2), self.w{k}, padding=1).transpose(1, 2)",
             [f"self.w{k} = nn.Parameter(torch.randn({D}, {D}, 3))"]),
            ("{f}.normalize({a}, dim=-1) + {f}.relu({b})", []),
            ("{f}.pad({a}, (1, 1))[..., 1:-1] * {f}.sigmoid({b})", []),
            ("{f}.leaky_relu({a}, 0.2) + {f}.elu({b})", []),
        ])
        return Stmt([f"{v} = " + form[0].format(f=alias, a=a, b=b, k=k)], v, [a, b], members=form[1],
                    idiom="functional_" + alias)

    # Forms of public model code the tracer once got wrong (issue 34): module attributes as
    # concrete values inside subscripts and calls, f-strings, tensor properties read as values,
    # Python list operations, comprehensions as arguments, buffers on the left of operators.
    def attribute_bounds(self, a, b):
        v, k = self.new("attribute_bounds")
        cut = self.rng.randint(1, D - 1)
        form = self.pick([
            ["{v} = torch.cat([{a}.abs()[:, :, : self.k{k}], {a}.relu()[:, :, self.k{k} :]], dim=-1)"],
            ["{v} = torch.cat([{a}.exp().neg()[..., -self.k{k} :], {b}[..., : -self.k{k}]], dim=-1)"],
            ["{v} = {a}.sigmoid().mul(2).sub(1)[:, :, self.ks{k}[0] :].sum(-1, keepdim=True) + {b}"],
            ["acc{v} = {a}", "for s in self.ks{k}:", "    acc{v} = acc{v} + F.adaptive_avg_pool1d({a}, s).mean(-1, keepdim=True)",
             "{v} = acc{v}"],
        ])
        members = [f"self.k{k} = {cut}", f"self.ks{k} = [{cut}, {self.rng.randint(1, D - 1)}]"]
        return Stmt([line.format(a=a, b=b, v=v, k=k) for line in form], v, [a, b], members=members,
                    idiom="attribute_bounds")

    def traced_text(self, a, b):
        v, _ = self.new("traced_text")
        form = self.pick([
            ["torch._assert({a}.ndim == 3, f'expected 3D input (got {{{a}.ndim}}D input)')", "{v} = {a} + 1"],
            ["d{v} = {a}.dtype", "{v} = {b}.abs().to(d{v}) * 2"],
            ["{v} = {a}.to({b}.dtype) - {b}.mean(-1, keepdim=True)"],
        ])
        return Stmt([line.format(a=a, b=b, v=v) for line in form], v, [a, b], idiom="traced_text")

    def list_ops(self, a, b):
        v, k = self.new("list_ops")
        form = self.pick([
            ["l{v} = [{a}] + [{b}, {a} * 2]", "{v} = torch.stack(l{v}[::-1], dim=0).sum(0)"],
            ["l{v} = [{a}, {b}]", "l{v}.insert(0, {b} - 1)", "l{v}.extend([{a} + 1])", "last{v} = l{v}.pop()",
             "{v} = torch.cat(l{v}, dim=-1)[..., :8] + last{v}"],
            ["l{v} = [{a}, {b}]", "l{v}.reverse()", "{v} = l{v}[0] * l{v}[-1]"],
            ["{v} = torch.stack([f({a}) for f in self.fcs{k}], dim=1).sum(1)"],
            ["{v} = torch.cat([{a} * i for i in range(2)], dim=-1)[..., :8]"],
            ["s{v} = torch.split({a}, 4, -1)", "{v} = torch.cat([s{v}[1], s{v}[0]], dim=-1)"],
        ])
        members = [f"self.fcs{k} = nn.ModuleList([nn.Linear({D}, {D}) for _ in range(2)])"] \
            if any("fcs" in line for line in form) else []
        return Stmt([line.format(a=a, b=b, v=v, k=k) for line in form], v, [a, b], members=members, idiom="list_ops")

    def buffer_operand(self, a, b):
        v, k = self.new("buffer_operand")
        form = self.pick(["{v} = self.s{k} * {a} + ({a} - self.s{k})", "{v} = (self.s{k} > {a}).float() * {b}",
                          "{v} = self.s{k} / ({a}.abs() + 1) + self.s{k}[{a}.argmax(-1)].unsqueeze(-1)"])
        return Stmt([form.format(a=a, b=b, v=v, k=k)], v, [a, b],
                    members=[f"self.register_buffer('s{k}', torch.randn({D}))"], idiom="buffer_operand")

    # Statements of issue 54: what FX records because it runs the forward's source, where
    # TorchScript's compiled graph holds it in another form or not at all.
    def overwritten(self, a, b):
        v, _ = self.new("overwritten")
        form, dead = self.pick([
            (["c{v} = {a}.shape[1]", "c{v} = {a}.shape[-1]", "{v} = {a} * c{v}"], [0]),  # overwritten before a read
            (["u{v} = {a}[0]", "{v} = {a} + {b}"], [0]),                                # a read never used
            (["u{v} = {b}.shape[0]", "{v} = {a}.relu()"], [0]),
            # Dead statements that are not reads: an operation overwritten, a call never read.
            (["h{v} = {a} * 2.5 + {b}", "h{v} = torch.sigmoid({b}) - {a}", "{v} = h{v}.abs()"], [0]),
            (["s{v} = {a}.reshape(-1).sum(0, keepdim=True)", "n{v} = -{b}.mean(dim=-1)", "{v} = {a} + {b}"], [0, 1]),
            # Expressions alone as statements, also starting with a bracket or an operator, and
            # an item of a tuple target never read (it reads `a`, which the live item reads too:
            # a value that only dead statements read is dead itself, and FX records the statement
            # that made it wherever it stands, a `with` block included, which tdfx does not yet).
            (["{a}.abs().sum(-1)", "torch.tanh({b})", "{v} = {a} - {b}"], [0, 1]),
            (["({a} + {b})", "-{a}.abs()", "{v}, d{v} = {a} * 2, {a}.sum(dim=(0, 1))"], [0, 1]),
        ])
        return Stmt([line.format(a=a, b=b, v=v) for line in form], v, [a, b], idiom="overwritten", dead=dead)

    def literals(self, a, b):
        v, _ = self.new("literals")
        form = self.pick(["{a} * 2.5e3 + 1e-3", "({a} > 1e-3).float() * {b}", "{a} * 1E3 - 2.", "{a} * .5 + 2.5E+2",
                          "{a} / 1e-6 * 1e-6", "{a} * -1.5e-2 + {b}", "torch.clamp({a}, min=-1e-1, max=1E1)",
                          "{a} + 0x10", "{a} * 1e10 / 1e10", "F.layer_norm({a}, [8], eps=1e-06)"])
        return Stmt([f"{v} = " + form.format(a=a, b=b)], v, [a, b], idiom="literals")

    def dtype_kwargs(self, a, b):
        v, _ = self.new("dtype_kwargs")
        form = self.pick(["F.softmax({a}, dim=-1, dtype=torch.float32)",
                          "{a}.sum(-1, keepdim=True, dtype=torch.float64).float() + {b}",
                          "torch.zeros_like({a}, dtype=torch.float32) + {a}",
                          "torch.ones_like({a}, dtype=torch.float32, layout=torch.strided) * {b}",
                          "{a}.to(dtype=torch.float64, device='cpu').float()",
                          "torch.full_like({a}, 2.0, device=torch.device('cpu')) * {b}",
                          "{a}.cumsum(dim=1, dtype=torch.float32)"])
        return Stmt([f"{v} = " + form.format(a=a, b=b)], v, [a, b], idiom="dtype_kwargs")

    def tuple_order(self, a, b):
        v, _ = self.new("tuple_order")
        form = self.pick([
            ["vm{v} = torch.var_mean({a}, -1, keepdim=True)", "{v} = ({a} - vm{v}[1]) / torch.sqrt(vm{v}[0] + 1e-5)"],
            ["mx{v} = {a}.max(-1)", "{v} = {b} * mx{v}[1].unsqueeze(-1).float() + mx{v}[0].unsqueeze(-1)"],
            ["s{v} = {a}.sort(-1)", "{v} = s{v}.indices.float() + s{v}.values"],
            ["p{v} = torch.chunk({a}, 2, -1)", "{v} = torch.cat([p{v}[1], p{v}[0]], -1)"],
            # Items read and assigned to names (no TorchScript node for either statement).
            ["t{v} = {a}.topk(2, dim=-1)", "w{v}, i{v} = t{v}[0], t{v}.indices",
             "{v} = {b} * w{v}.sum(-1, keepdim=True) + i{v}.float().mean(-1, keepdim=True)"],
            ["vm{v} = torch.var_mean({a}, -1, keepdim=True)", "m{v} = vm{v}[1]", "{v} = ({b} - m{v}) * vm{v}[0]"],
            ["mx{v} = {a}.max(-1)", "i{v}, m{v} = mx{v}.indices, mx{v}[0]",
             "{v} = {b} * m{v}.unsqueeze(-1) + i{v}.unsqueeze(-1).float()"],
        ])
        return Stmt([line.format(a=a, b=b, v=v) for line in form], v, [a, b], idiom="tuple_order")

    def static_helper(self, a, b):
        v, k = self.new("static_helper")
        form = self.pick(["self._st{k}({a}, 2)", "_fz_affine({a}, 3) - {b}", "self._st{k}(_fz_affine({a}, 2), 1)",
                          "{a} + self._ramp{k}({D})"])
        helpers = [f"@staticmethod\ndef _st{k}(t, n: int):\n    return t * n + 1",
                   f"@staticmethod\ndef _ramp{k}(n: int):\n    return torch.arange(n).float() / n"]
        return Stmt([f"{v} = " + form.format(a=a, b=b, k=k, D=D)], v, [a, b], helpers=helpers, idiom="static_helper")

    def shared_buffer(self, a, b):
        v, k = self.new("shared_buffer")
        members = [f"m{k} = torch.randn({D})", f"self.sa{k} = _FzScale(m{k})", f"self.sb{k} = _FzScale(m{k})"]
        return Stmt([f"{v} = self.sa{k}({a}) + self.sb{k}({b})"], v, [a, b], members=members, idiom="shared_buffer")

    IDIOMS = ["unary", "binary", "bracketed_method", "leaf", "named_tuple", "slice_", "list_loop", "attention",
              "helper", "weights", "gated", "optional", "no_grad", "containers", "shadowing", "functional",
              "attribute_bounds", "traced_text", "list_ops", "buffer_operand",
              "overwritten", "literals", "dtype_kwargs", "tuple_order", "static_helper", "shared_buffer"]

    def shadowing(self, a, b):
        v, _ = self.new("shadowing")
        # An attribute named like a forward parameter: FX's graph names its get_attr x_1, and
        # tensordict copies that name (class 5 of issue 21).
        return Stmt([f"{v} = {a} * self.x"], v, [a], members=["self.x = nn.Parameter(torch.randn(8))"],
                    idiom="shadowing")

    def program(self, size=None) -> Program:
        # Every program counts its names from 1, so the children of a sequential share attribute
        # names (lin1, w2): tensordict's naming of the copies is what class 5 is about.
        self.n = 0
        size = size or self.rng.randint(1, 6)
        values, stmts = ["x"], []
        for _ in range(size):
            idiom = getattr(self, self.pick(self.IDIOMS))
            a = self.pick(values[-3:])
            b = self.pick(values)
            s = idiom(a, b)
            stmts.append(s)
            values.append(s.defines)
        return Program(stmts, outputs=2 if size > 1 and self.rng.random() < 0.2 else 1)


@dataclass
class Case:
    """One fuzz case: programs and how they are wrapped.

    wrap: "plain" (the module itself), "td" (a TensorDictModule) or "seq" (a TensorDictSequential
    of the programs, optionally with the second child a nested sequential of two).
    """
    programs: List[Program]
    wrap: str
    keys: List[dict]                 # per program: {"in": [...], "out": [...]} (nested keys as lists)
    nested: bool = False
    quantize: bool = False           # dynamically quantized (Linear, GRU) before scripting: class 11


KEY_NAMES = [["x"], ["input", "x"], ["obs", "pixels"], ["hidden"], ["agent", "state"]]


def generate_case(seed: int) -> Case:
    g = Generator(seed)
    wrap = g.pick(["plain", "plain", "td", "seq", "seq"])
    count = 1 if wrap != "seq" else g.rng.randint(2, 3)
    g.allow_mask = wrap == "plain"
    programs = [g.program() for _ in range(count)]
    keys, written = [], []
    for i, p in enumerate(programs):
        ins = []
        for _name in p.signature():
            # A later child reads a key written earlier (or an input); the first reads inputs.
            if written and g.rng.random() < 0.7:
                ins.append(g.pick(written))
            else:
                ins.append(list(g.pick(KEY_NAMES)))
        outs = []
        for j in range(p.outputs):
            r = g.rng.random()
            if r < 0.1:
                outs.append(["_"])
            elif r < 0.25 and ins:
                outs.append(list(ins[0]))  # a key rewritten in place
            else:
                outs.append(["out", f"k{i}_{j}"])
        keys.append({"in": ins, "out": outs})
        written += [o for o in outs if o != ["_"]]
    nested = wrap == "seq" and count == 3 and g.rng.random() < 0.5
    quantize = g.rng.random() < 0.1
    return Case(programs, wrap, keys, nested, quantize)
