#!/usr/bin/env python3
"""`import tdfx` in one session against torch.fx in the same run (issue 37's warm targets).

    /usr/bin/python3 tests/benchmarks/python_warm.py [--cli build/app/tdfx-cli] [--model resnet18]
        [--repeat 5]

For one torchvision model (weights=None, eval mode) and one input of 1x3x224x224, the median of
`--repeat` calls of each, after one call that starts the session's `tdfx-cli serve`:
- warm: the same module again (the server is running, the saved file and the open model reused);
- changed: the module changed in place before each call (a parameter + 0), so each call saves it
  again and the server opens the new file: what a call costs after an optimizer step;
- one process per call: TDFX_SERVE=0, the module unchanged (its saved file reused): each call
  starts tdfx-cli, as every call did before the warm process;
- torch.fx in this process: symbolic_trace(m).code; FxGraphDrawer's picture as SVG; the traced
  GraphModule run against the module on the input (what verify compares).
Prints a Markdown table (docs/benchmarks.md) and the first call's time.
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "app"))


def median_time(call, repeat, before=None):
    times = []
    for _ in range(repeat):
        if before:
            before()
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", default=os.path.join(HERE, "..", "..", "build", "app", "tdfx-cli"))
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ["TDFX_CLI"] = os.path.abspath(args.cli)
    import torch
    import torch.fx
    import torchvision
    from torch.fx.passes.graph_drawer import FxGraphDrawer
    import tdfx

    torch.manual_seed(0)
    model = getattr(torchvision.models, args.model)(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)

    start = time.perf_counter()
    tdfx.trace(model)
    first = time.perf_counter() - start

    first_parameter = next(model.parameters())

    def change():
        with torch.no_grad():
            first_parameter.add_(0.0)  # in place: its version counter moves, so the module is saved again

    tdfx_calls = {
        "trace": lambda: tdfx.trace(model),
        "draw": lambda: tdfx.draw(model),
        "verify": lambda: tdfx.verify(model, x),
    }

    def fx_verify():
        gm = torch.fx.symbolic_trace(model)
        with torch.no_grad():
            assert torch.equal(gm(x), model(x))

    fx_calls = {
        "trace": lambda: torch.fx.symbolic_trace(model).code,
        "draw": lambda: FxGraphDrawer(torch.fx.symbolic_trace(model), args.model).get_dot_graph().create_svg(),
        "verify": fx_verify,
    }
    targets = {"trace": 0.15, "draw": 0.35, "verify": 0.3}
    rows = []
    for name in ("trace", "draw", "verify"):
        tdfx_calls[name]()  # its first call (draw's layout, verify's run) is not the warm one
        warm = median_time(tdfx_calls[name], args.repeat)
        changed = median_time(tdfx_calls[name], args.repeat, before=change)
        os.environ["TDFX_SERVE"] = "0"
        cold = median_time(tdfx_calls[name], args.repeat)
        del os.environ["TDFX_SERVE"]
        fx = median_time(fx_calls[name], args.repeat)
        rows.append((name, warm, changed, cold, fx, targets[name]))
    print(f"{args.model}, 1x3x224x224, median of {args.repeat}; first call of the session (server start, "
          f"module saved): {first:.2f} s\n")
    print("| call | tdfx warm (s) | tdfx, module changed in place (s) | tdfx, one process per call (s) "
          "| torch.fx in-process (s) | target warm (s) |")
    print("|---|---|---|---|---|---|")
    for name, warm, changed, cold, fx, target in rows:
        print(f"| {name} | {warm:.3f} | {changed:.3f} | {cold:.3f} | {fx:.3f} | <= {target} |")


if __name__ == "__main__":
    main()
