#!/usr/bin/env python3
"""tdfx-cli export MODEL -o traced.pt, loaded in Python: the saved forward computes what the model does.

For each archive: `tdfx-cli export` writes the traced graph as TorchScript; Python's torch.jit.load
reads it and runs it on random inputs, and the model file itself runs eagerly on the same inputs.
- a tdfx model file (TensorDict modules): the saved forward takes and returns a Dict[str, Tensor]
  of flattened keys; the eager side runs the file's modules in order on a dict, as tensordict does,
  from its tensordict.json (the key reads, the module calls, the key writes);
- a plain archive: both take the forward's parameters (`--input NAME=SHAPE` gives their shapes).
Outputs must be equal (bitwise; a float tolerance only with --rtol). Exit 1 on any difference.

usage: torchscript_test.py --cli tdfx-cli --work DIR [--input x=1x3x224x224] [--rtol R] MODEL.pt...
"""
import argparse
import json
import os
import subprocess
import sys

import torch


def key_tuple(k):
    return (k,) if isinstance(k, str) else tuple(k)


def flat(k):
    return ".".join(key_tuple(k))


def draw(shape, dtype):
    dtype = getattr(torch, dtype)
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype)
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randint(0, 4, shape, dtype=dtype)


def run_spec(root, spec, values):
    """Runs the file's modules on {key tuple: tensor}, as TensorDictModule / Sequential do."""
    if spec["kind"] == "sequential":
        for child in spec["modules"]:
            run_spec(root, child, values)
        return
    module = root
    for part in spec["path"].split(".") if spec["path"] else []:
        module = getattr(module, part)
    result = module(*[values[key_tuple(k)] for k in spec["in_keys"]])
    results = list(result) if isinstance(result, tuple) else [result]
    for k, r in zip(spec["out_keys"], results):
        if k != "_" and r is not None:
            values[key_tuple(k)] = r


def same(a, b, rtol):
    if a is None or b is None:  # an optional output (GoogLeNet's aux logits in eval mode)
        return a is None and b is None
    if rtol:
        return a.shape == b.shape and torch.allclose(a, b, rtol=rtol, atol=rtol)
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b)


def check(path, traced_path, shapes, rtol):
    extra = {"tensordict.json": ""}
    eager = torch.jit.load(path, _extra_files=extra)
    saved = torch.jit.load(traced_path)
    torch.manual_seed(0)
    if extra["tensordict.json"]:
        meta = json.loads(extra["tensordict.json"])
        values = {key_tuple(i["key"]): draw(i["shape"], i["dtype"]) for i in meta.get("example_inputs", [])}
        if not values:
            return "FAILED: the file has no example inputs to run it on"
        out = saved({flat(k): v for k, v in values.items()})
        expected = dict(values)
        run_spec(eager, meta["module"], expected)
        written = [k for k in expected if k not in values]
        if not written:
            return "FAILED: the eager modules wrote nothing"
        for k in expected:
            if flat(k) not in out:
                return f"FAILED: the saved forward's result lacks {flat(k)!r}"
            if not same(out[flat(k)], expected[k], rtol):
                return f"FAILED: {flat(k)!r} differs"
        return f"ok ({len(written)} keys written)"
    params = [a.name for a in eager.forward.schema.arguments[1:] if a.default_value is None]
    missing = [p for p in params if p not in shapes]
    if missing:
        return f"FAILED: no --input for {', '.join(missing)}"
    args = [torch.randn(shapes[p]) for p in params]
    expected = eager(*args)
    out = saved(*args)
    expected = list(expected) if isinstance(expected, tuple) else [expected]
    out = list(out) if isinstance(out, tuple) else [out]
    if len(out) != len(expected):
        return f"FAILED: {len(out)} outputs, eager has {len(expected)}"
    for i, (o, e) in enumerate(zip(out, expected)):
        if not same(o, e, rtol):
            diff = "" if o is None or e is None else f" (max abs difference {(o - e).abs().max().item():.3g})"
            return f"FAILED: output {i} differs{diff}"
    return "ok"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--input", action="append", default=[], help="NAME=SHAPE, e.g. x=1x3x224x224")
    ap.add_argument("--rtol", type=float, default=0.0)
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    shapes = {}
    for spec in a.input:
        name, shape = spec.split("=", 1)
        shapes[name] = [int(d) for d in shape.split("x")]
    os.makedirs(a.work, exist_ok=True)
    torch.set_grad_enabled(False)
    failed = 0
    for path in a.models:
        name = os.path.splitext(os.path.basename(path))[0]
        traced = os.path.join(a.work, name + ".traced.pt")
        run = subprocess.run([a.cli, "export", path, "-o", traced], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"{name}: FAILED: tdfx-cli export exited {run.returncode}: {run.stderr.strip()}")
            failed += 1
            continue
        try:
            result = check(path, traced, shapes, a.rtol)
        except Exception as e:  # noqa: BLE001 - a load or run failure is this model's result
            result = f"FAILED: {type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"
        failed += result.startswith("FAILED")
        print(f"{name}: {result}", flush=True)
    print(f"{len(a.models) - failed} of {len(a.models)} saved archives load in Python and match")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
