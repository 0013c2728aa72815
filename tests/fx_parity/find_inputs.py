"""Inputs for verifying the FX parity corpus: one `tdfx-cli trace --from` line per archive.

The corpus archives carry no example inputs (a case's forward takes x, y, w, idx of whatever shapes
its one call needs). tdfx-cli draws an input from its `--input KEY=SHAPE:DTYPE` alone, with one
generator seeded by --seed, input after input in the order given: floats from randn, bool from
randint(0, 2), other integers from randint(0, 10). This script draws exactly what tdfx-cli will
draw (`draw_inputs`, seed SEED), so the eager run it checks here is the eager run tdfx verifies.

Types come from the forward's TorchScript graph, not from the parameters' names: every forward
parameter that is a Tensor without a default (its schema type) needs an input, and how the inlined
graph uses it gives its dtype (`parameter_roles`):
  index   int64 -- it reaches an operator argument that holds indices: one the aten schema names
          `index` or `indices` (gather, index_select, embedding, Tensor indexing x[idx], ...), or one
          of INDEX_OPERANDS (class targets of the classification losses, one_hot's input); directly,
          in a list, as the result of an if, or through a view of it (`idx.contiguous()`). tdfx draws its values anywhere in [0, 10), so a
          shape set is taken only if the eager module accepts the indices all 0 and all 9 as well
          as the draw: every index the draw can hold is in range, whatever the seed.
  int     a 0-dim int64 -- it is read as a Python int (aten::IntImplicit, e.g. `3 // x`).
  scalar  a 0-dim float32 -- it is read as a Python float or number (FloatImplicit, ScalarImplicit).
  mask    bool -- an argument named `mask`.
  float   float32 otherwise; when no shape set fits, int64 (the bitwise operators).
Shapes are searched: every float parameter one shape of FLOAT_SHAPES (index parameters one of
INT_SHAPES), then one parameter (a weight, a bias, a grid) of another shape, or all but the first
(running statistics) of another; the first set the eager module accepts is written as
`PATH --input x=2x4:float32 ...`. Chosen inputs (verify_expected.txt's hand-chosen lines) replace
the search for their case and are checked the same way.
TensorDict archives of the corpus wrap torchvision models reading ('input', 'image'), and tv_
archives are torchvision models: they get a 224x224 image (tdfx's eager pass is their check).
An archive that no candidate fits is listed as skipped with the last error, and not verified.

Usage: find_inputs.py --corpus DIR --out LIST [--skipped FILE]
"""
import argparse
import glob
import os
import sys

import torch

# The seed tdfx-cli draws with (its --seed default; verify_corpus.py passes it explicitly).
SEED = 0
# tdfx-cli's integer draw: randint(0, INT_HIGH).
INT_HIGH = 10

FLOAT_SHAPES = [(2, 4), (1, 2, 4, 4), (2, 4, 4), (1, 1, 4, 4, 4), (4,), (4, 4), (2, 2), (1, 4, 8, 8), (4, 4, 4, 4),
                (1, 3, 16, 16),
                # Shapes that index parameters fit (a dimension of INT_HIGH classes, rows or columns),
                # then affine matrices, sampling grids, embeddings of 8 and a one-channel image.
                (2, INT_HIGH), (INT_HIGH, 4), (2, 3), (1, 2, 3), (1, 4, 4, 2), (2, 8), (4, 2, 8), (1, 1, 28, 28)]
INT_SHAPES = [(2, 4), (4,), (2, 2), (1, 4), (2,), (2, INT_HIGH)]

# What aten's schemas name the arguments that hold indices, and the (operator, argument) pairs that
# hold indices though aten names them otherwise (class targets; one_hot's input).
INDEX_ARGUMENT_NAMES = ("index", "indices")
INDEX_OPERANDS = {
    ("aten::one_hot", "self"),
    ("aten::cross_entropy_loss", "target"), ("aten::nll_loss", "target"), ("aten::nll_loss_nd", "target"),
    ("aten::nll_loss2d", "target"), ("aten::multi_margin_loss", "target"), ("aten::multilabel_margin_loss", "target"),
}
# A Tensor read as a Python number: 0-dim, of the number's type.
IMPLICIT_SCALARS = {"aten::IntImplicit": "int", "aten::FloatImplicit": "scalar", "aten::ScalarImplicit": "scalar"}
ROLE_ORDER = ("index", "int", "scalar", "mask", "float")  # a parameter used several ways takes the first


def _argument_uses(value, seen=None):
    """(operator, argument name) for every use of `value` in an inlined graph: through list and
    tuple constructions (aten::index takes a list of indices), the results of the if blocks that
    yield it, and views of it (an argument whose alias set the operator returns, as contiguous,
    view, reshape)."""
    seen = set() if seen is None else seen
    if value.debugName() in seen:
        return []
    seen.add(value.debugName())
    uses = []
    for use in value.uses():
        node = use.user
        kind = node.kind()
        if kind in ("prim::ListConstruct", "prim::TupleConstruct"):
            uses += _argument_uses(node.output(), seen)
            continue
        if kind == "prim::Return":  # a block's result: the If (or Loop) that owns the block yields it
            owner = node.owningBlock().owningNode()
            if owner is not None and owner.kind() == "prim::If":
                uses += _argument_uses(list(owner.outputs())[use.offset], seen)
            continue
        try:
            schema = torch._C.parse_schema(node.schema())
        except RuntimeError:  # no schema: prim::Return, prim::If, ...
            uses.append((kind, None))
            continue
        if use.offset >= len(schema.arguments):
            uses.append((kind, None))
            continue
        argument = schema.arguments[use.offset]
        uses.append((kind, argument.name))
        alias = argument.alias_info
        if alias is not None and not alias.is_write:
            for out, ret in zip(node.outputs(), schema.returns):
                if ret.alias_info is not None and ret.alias_info.before_set & alias.before_set:
                    uses += _argument_uses(out, seen)
    return uses


def _role(uses):
    roles = set()
    for kind, name in uses:
        if name in INDEX_ARGUMENT_NAMES or (kind, name) in INDEX_OPERANDS:
            roles.add("index")
        elif kind in IMPLICIT_SCALARS:
            roles.add(IMPLICIT_SCALARS[kind])
        elif name == "mask":
            roles.add("mask")
    return next((r for r in ROLE_ORDER if r in roles), "float")


def parameter_roles(module, params):
    """{parameter: role} from how the forward's inlined TorchScript graph uses each parameter."""
    graph = module.forward.inlined_graph
    inputs = {v.debugName().split(".")[0]: v for v in list(graph.inputs())[1:]}
    return {p: _role(_argument_uses(inputs[p])) if p in inputs else "float" for p in params}


def draw_inputs(chosen, seed=SEED):
    """The tensors tdfx-cli draws for `chosen` ({name: (shape, dtype)}, in --input order)."""
    g = torch.Generator()
    g.manual_seed(seed)
    out = {}
    for name, (shape, dtype) in chosen.items():
        dt = getattr(torch, dtype)
        if dt == torch.bool:
            out[name] = torch.randint(0, 2, shape, generator=g, dtype=torch.long).to(torch.bool)
        elif dt.is_floating_point:
            out[name] = torch.randn(shape, generator=g, dtype=torch.float32).to(dt)
        else:
            out[name] = torch.randint(0, INT_HIGH, shape, generator=g, dtype=dt)
    return out


def candidates(params, roles):
    """Shape sets ({name: (shape, dtype)}) to try, by the parameters' roles."""
    fixed = {p: (((), "int64") if roles[p] == "int" else ((), "float32")) for p in params if roles[p] in ("int", "scalar")}
    index = [p for p in params if roles[p] == "index"]
    masks = [p for p in params if roles[p] == "mask"]
    floats = [p for p in params if roles[p] == "float"]

    def shape_set(float_shapes, ishape, dtype="float32"):
        s = dict(fixed)
        s.update({p: (ishape, "int64") for p in index})
        s.update({p: (float_shapes[p], dtype) for p in floats})
        s.update({p: (float_shapes[floats[0]] if floats else ishape, "bool") for p in masks})
        return {p: s[p] for p in params}

    int_shapes = INT_SHAPES if index or (masks and not floats) else [None]
    # 1. every float parameter one shape
    for fs in FLOAT_SHAPES:
        for ishape in int_shapes:
            yield shape_set({p: fs for p in floats}, ishape)
    # 2. one float parameter of another shape, or every one but the first (running statistics)
    if len(floats) > 1:
        for fs in FLOAT_SHAPES:
            for other in FLOAT_SHAPES:
                if other == fs:
                    continue
                for ishape in int_shapes:
                    for p in floats[1:]:
                        yield shape_set({q: other if q == p else fs for q in floats}, ishape)
                    if len(floats) > 2:
                        yield shape_set({q: other if q != floats[0] else fs for q in floats}, ishape)
    # 3. no float fits: integers (the bitwise operators)
    if floats:
        for fs in INT_SHAPES:
            yield shape_set({p: fs for p in floats}, int_shapes[0] or fs, "int64")


def _runs(module, tensors):
    with torch.no_grad():
        module(*tensors)


def accepts(module, params, chosen, roles):
    """None when the eager module runs on what tdfx-cli draws for `chosen` (and, for index
    parameters, on their bounds 0 and INT_HIGH - 1 too), else the error."""
    drawn = draw_inputs(chosen)
    index = [p for p in params if roles.get(p) == "index"]
    tries = [{p: (torch.full_like(t, bound) if p in index else t.clone()) for p, t in drawn.items()}
             for bound in ((0, INT_HIGH - 1) if index else ())]
    tries.insert(0, drawn)  # the draw itself first (the module may write to its inputs: the bounds get copies)
    try:
        for values in tries:
            _runs(module, [values[p] for p in params])
    except Exception as e:  # noqa: BLE001 - the eager module rejects these inputs
        text = str(e).strip()
        return f"{type(e).__name__}: {text.splitlines()[-1] if text else ''}"
    return None


def spec(name, shape, dtype):
    return f"--input {name}={'x'.join(str(d) for d in shape) if shape else 'scalar'}:{dtype}"


def parse_spec(text):
    """`NAME=2x4:float32` (an --input value) as (name, (shape, dtype))."""
    name, _, rest = text.partition("=")
    shape, _, dtype = rest.partition(":")
    dims = () if shape in ("", "scalar") else tuple(int(d) for d in shape.split("x"))
    return name, (dims, dtype or "float32")


def tensor_parameters(module):
    return [a.name for a in module.forward.schema.arguments[1:]
            if a.type.kind() in ("TensorType", "OptionalType") and a.default_value is None]


def find(path, chosen=None):
    """(specs, None) for the archive at `path`, or (None, error). `chosen`: hand-chosen --input
    values (`x=2x8x9:float32`) that replace the search."""
    extra = {"tensordict.json": ""}
    module = torch.jit.load(path, _extra_files=extra)
    if extra["tensordict.json"]:
        return [spec("input.image", (1, 3, 224, 224), "float32")], None
    if os.path.basename(path).startswith("tv_"):  # a torchvision classifier
        return [spec("x", (1, 3, 224, 224), "float32")], None
    params = tensor_parameters(module)
    if not params and not chosen:
        return [], None
    roles = parameter_roles(module, params)
    if chosen:
        given = dict(parse_spec(c) for c in chosen)
        if sorted(given) != sorted(params):
            return None, f"the chosen inputs name {sorted(given)}, the forward takes {params}"
        given = {p: given[p] for p in params}
        error = accepts(module, params, given, roles)
        return (None, "the chosen inputs: " + error) if error else ([spec(p, *given[p]) for p in params], None)
    error = None
    for shapes in candidates(params, roles):
        error = accepts(module, params, shapes, roles)
        if error is None:
            return [spec(p, *shapes[p]) for p in params], None
    return None, error


def corpus_lines(paths, chosen=None):
    """(lines, skipped): a `PATH --input ...` line per archive some input set fits, and
    `NAME: error` for the others. `chosen`: {case name: [--input values]} used instead of a search."""
    chosen = chosen or {}
    lines, skipped = [], []
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        try:
            inputs, error = find(path, chosen.get(name))
        except Exception as e:  # noqa: BLE001
            inputs, error = None, f"cannot load: {e}"
        if inputs is None:
            skipped.append(f"{name}: {error}")
        else:
            lines.append(" ".join([path] + inputs))
    return lines, skipped


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--skipped")
    args = ap.parse_args()
    lines, skipped = corpus_lines(sorted(glob.glob(os.path.join(args.corpus, "*.pt"))))
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    if args.skipped:
        with open(args.skipped, "w") as f:
            f.write("\n".join(skipped) + ("\n" if skipped else ""))
    print(f"{len(lines)} archives with inputs, {len(skipped)} without", file=sys.stderr)


if __name__ == "__main__":
    main()
