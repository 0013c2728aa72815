"""tdfx-cli diff on torchvision models nobody wrote for tdfx (made by make_diff_models.py):
a file against itself is identical, a fine-tuned copy differs only in its changed weights (their
nodes named), resnet18 against a grown resnet34 only by the added blocks; exit status 0/1/2 as
diff(1)'s; --json parses and says the same.

Usage: cli_diff_test.py TDFX_CLI MODEL_CACHE_DIR
"""
import json
import os
import re
import subprocess
import sys

cli, cache = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
subprocess.run([sys.executable, os.path.join(here, "make_diff_models.py"), cache], check=True)
r18, tuned, r34 = (os.path.join(cache, n) for n in ("resnet18.pt", "resnet18_finetuned.pt", "resnet34_grown.pt"))
failures = []


def diff(*args):
    p = subprocess.run([cli, "diff", *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        failures.append(what)


# A file against itself.
rc, out, err = diff(r18, r18)
check(rc == 0, f"self: exit {rc}, expected 0\n{out}{err}")
check(out.endswith("0 node(s) removed, 0 added, 0 changed; 122 of 122 parameters and buffers equal\nidentical\n"), f"self:\n{out}")
rc, out, _ = diff(r18, r18, "--json")
doc = json.loads(out)
check(rc == 0 and doc["identical"] is True, f"self --json: exit {rc}\n{out[:400]}")
check(all(p["status"] == "equal" for p in doc["parameters"]) and len(doc["parameters"]) == 122, "self --json: parameters")

# A fine-tuned copy: exactly the two changed tensors, a parameter and a buffer, with their nodes.
rc, out, _ = diff(r18, tuned)
lines = [l for l in out.splitlines() if l[:1] in "+-~?" and not l.startswith(("---", "+++"))]
check(rc == 1, f"fine-tuned: exit {rc}, expected 1")
check(lines == ["~ parameter layer2.1.conv2.weight: values differ, max |delta| 0.25 (node layer2_1_conv2)",
                "~ buffer layer3.0.bn1.running_mean: values differ, max |delta| 0.5 (node layer3_0_bn1)"],
      "fine-tuned:\n" + out)
doc = json.loads(diff(r18, tuned, "--json")[1])
check(doc["marks"]["a"]["weights"] == ["layer2_1_conv2", "layer3_0_bn1"], f"fine-tuned marks: {doc['marks']}")
check(doc["nodes"] == {"removed": [], "added": [], "changed": []}, f"fine-tuned nodes: {doc['nodes']}")
changed = [p for p in doc["parameters"] if p["status"] != "equal"]
check([(p["name"], p["kind"], round(p["max_abs_delta"], 6)) for p in changed] ==
      [("layer2.1.conv2.weight", "parameter", 0.25), ("layer3.0.bn1.running_mean", "buffer", 0.5)], f"{changed}")

# resnet18 against resnet34 holding its weights: only the added blocks (1, 2, 4 and 1 of them).
rc, out, _ = diff(r18, r34)
check(rc == 1, f"grown: exit {rc}")
added = [l for l in out.splitlines() if l.startswith("+ node ")]
others = [l for l in out.splitlines() if l[:1] in "-~?" and not l.startswith("---")]
check(others == [], "grown: more than additions:\n" + "\n".join(others))
blocks = sorted({m.group(1) for l in added for m in [re.search(r"\(module (layer\d\.\d+)\.", l)] if m})
check(blocks == ["layer1.2", "layer2.2", "layer2.3", "layer3.2", "layer3.3", "layer3.4", "layer3.5", "layer4.2"],
      f"grown: added blocks {blocks}")
check(len(added) == 8 * 7, f"grown: {len(added)} added nodes, expected 8 blocks of 7")
added_params = [l for l in out.splitlines() if l.startswith(("+ parameter ", "+ buffer "))]
check(all(re.match(r"\+ (parameter|buffer) (layer1\.2|layer2\.[23]|layer3\.[2-5]|layer4\.2)\.", l) for l in added_params)
      and len(added_params) == 96, f"grown: added parameters {len(added_params)}")

# Models a diff once called identical (issue 35, finding 4): values are compared exactly (int64
# 2^53 + 1 is not 2^53), complex values are read, and a parameter literally named "a.b" is not
# merged with submodule a's b.
big, big1, cplx, dot2, dot10 = (os.path.join(cache, n) for n in (
    "int64_2p53.pt", "int64_2p53_plus1.pt", "complex.pt", "dotted_2.pt", "dotted_10.pt"))
rc, out, err = diff(big, big1)
check(rc == 1 and "~ buffer offset: values differ, max |delta| 1 " in out, f"int64 2^53: exit {rc}\n{out}{err}")
rc, out, err = diff(cplx, cplx)
check(rc == 0 and out.endswith("identical\n") and "not read" not in out, f"complex self-diff: exit {rc}\n{out}{err}")
# Floating values cross the worker's socket as float32, float64 ones as they are: one ulp of 1.0 in
# float64 (2^-52, nothing in float32) differs, and a float16 step of 2^-10 is read exactly.
one, one_ulp, half_a, half_b = (os.path.join(cache, n) for n in (
    "float64_one.pt", "float64_one_ulp.pt", "float16_a.pt", "float16_b.pt"))
rc, out, err = diff(one, one_ulp)
check(rc == 1 and "~ buffer offset: values differ, max |delta| 2.22045e-16" in out, f"float64 ulp: exit {rc}\n{out}{err}")
rc, out, err = diff(half_a, half_b)
check(rc == 1 and "~ parameter scale: values differ, max |delta| 0.000976562" in out, f"float16 step: exit {rc}\n{out}{err}")
# A quantized model's weights are packed objects, not parameters: read through their state.
q0, q1 = (os.path.join(cache, n) for n in ("qlstm_0.pt", "qlstm_1.pt"))
rc, out, err = diff(q0, q1)
check(rc == 1 and "~ parameter fc._packed_params._packed_params.0: values differ" in out
      and "~ parameter lstm._all_weight_values.0.param." in out and "(node lstm)" in out,
      f"quantized: exit {rc}\n{out}{err}")
rc, out, err = diff(q0, q0)
check(rc == 0 and out.endswith("identical\n"), f"quantized self-diff: exit {rc}\n{out}{err}")
rc, out, err = diff(dot2, dot10)
check(rc == 1 and "~ parameter ['a.b']: values differ, max |delta| 8" in out and "parameter a.b:" not in out,
      f"dotted name: exit {rc}\n{out}{err}")
rc, out, err = diff(dot2, dot2)
check(rc == 0 and "2 of 2 parameters and buffers equal" in out, f"dotted self-diff: exit {rc}\n{out}{err}")

# Trouble is 2: a missing file, a file that is not a model, a usage error.
notmodel = os.path.join(cache, "not_a_model.pt")
with open(notmodel, "w") as f:
    f.write("not a zip archive\n")
for args, what in (([r18, os.path.join(cache, "missing.pt")], "no such file"), ([r18, notmodel], "not_a_model.pt"),
                   ([r18], "B is required"), ([r18, r18, "--bogus"], "--bogus")):
    rc, out, err = diff(*args)
    check(rc == 2 and what in err, f"{args}: exit {rc}, stderr {err!r}")
# --exit-code is accepted and changes nothing.
check(diff(r18, r18, "--exit-code")[0] == 0 and diff(r18, tuned, "--exit-code")[0] == 1, "--exit-code")

if failures:
    print("\n\n".join(failures))
    sys.exit(1)
print("diff: all cases hold")
