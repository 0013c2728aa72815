"""Inputs for verifying the FX parity corpus: one `tdfx-cli trace --from` line per archive.

The corpus archives carry no example inputs (a case's forward takes x, y, w, idx of whatever shapes
its one call needs). For every plain archive this loads the TorchScript module and runs it on a few
candidate shape sets, drawn as tdfx draws inputs (floats from randn, ints from randint(0, 10));
the first set the eager module accepts is written as `PATH --input x=2x4:float32 ...`. TensorDict
archives of the corpus wrap torchvision models reading ('input', 'image'), and tv_ archives are
torchvision models: they get a 224x224 image (tdfx's eager pass is their check).
An archive that no candidate fits is listed in --skipped with the error, and not verified.

Usage: find_inputs.py --corpus DIR --out LIST [--skipped FILE]
"""
import argparse
import glob
import os
import sys

import torch

FLOAT_SHAPES = [(2, 4), (1, 2, 4, 4), (2, 4, 4), (1, 1, 4, 4, 4), (4,), (4, 4), (2, 2), (1, 4, 8, 8), (4, 4, 4, 4)]
INT_SHAPES = [(2, 4), (4,), (2, 2), (1, 4)]


def candidates(params):
    """Shape sets to try: every float parameter one shape, ints one of theirs, weights (w) too."""
    floats = [p for p in params if p not in ("idx",)]
    for fs in FLOAT_SHAPES:
        for ws in [fs] + [s for s in FLOAT_SHAPES if s != fs]:
            for ishape in INT_SHAPES:
                yield {p: ((ishape, "int64") if p == "idx" else ((ws if p == "w" else fs), "float32")) for p in params}
            if "w" not in floats:
                break
    yield {p: ((2, 4), "int64") for p in params}  # bitwise operators
    yield {p: ((1, 3, 16, 16), "float32") for p in params}  # three channels


def draw(shape, dtype):
    if dtype == "int64":
        return torch.randint(0, 10, shape)
    return torch.randn(shape)


def spec(name, shape, dtype):
    return f"--input {name}={'x'.join(str(d) for d in shape) if shape else ''}:{dtype}"


def find(path):
    extra = {"tensordict.json": ""}
    module = torch.jit.load(path, _extra_files=extra)
    if extra["tensordict.json"]:
        return [spec("input.image", (1, 3, 224, 224), "float32")], None
    if os.path.basename(path).startswith("tv_"):  # a torchvision classifier
        return [spec("x", (1, 3, 224, 224), "float32")], None
    params = [a.name for a in module.forward.schema.arguments[1:]
              if a.type.kind() in ("TensorType", "OptionalType") and a.default_value is None]
    if not params:
        return [], None
    error = None
    for chosen in candidates(params):
        try:
            with torch.no_grad():
                module(*[draw(*chosen[p]) for p in params])
        except Exception as e:  # the eager module rejects these shapes: try the next set
            error = f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"
            continue
        return [spec(p, *chosen[p]) for p in params], None
    return None, error


def corpus_lines(paths):
    """(lines, skipped): a `PATH --input ...` line per archive some input set fits, and
    `NAME: error` for the others."""
    torch.manual_seed(0)
    lines, skipped = [], []
    for path in paths:
        try:
            inputs, error = find(path)
        except Exception as e:
            inputs, error = None, f"cannot load: {e}"
        if inputs is None:
            skipped.append(f"{os.path.basename(path)}: {error}")
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
