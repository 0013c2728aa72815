#!/usr/bin/env python3
"""Writes regressions/: one single-statement program of the fuzz grammar per class of failure of
issue 21 that tdfx printed differently from torch.fx (list appends, named-tuple fields, slices with
expression bounds, shape slices and properties, Optional masks, torch.no_grad, dicts read back).
Run with /usr/bin/python3; fuzz.py --regressions runs them."""
import os
import sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import grammar  # noqa: E402
import fuzz  # noqa: E402
# One single-statement program per class of issue 21 that the fuzzer's grammar found failing.
picks = {
  "class2_bracketed_transpose": ("bracketed_method", ".transpose(1, 2)"),
  "class2_bracketed_mean_keepdim": ("bracketed_method", ".mean(dim=-1, keepdim=True)"),
  "class10_alias_conv1d": ("functional", "fn.conv1d"),
  "class10_alias_linear": ("functional", "fn.linear"),
  "class1_list_append_stack": ("list_loop", "torch.stack(outs"),
  "class1_list_append_cat": ("list_loop", "torch.cat(outs"),
  "class3_named_tuple_values": ("named_tuple", ".values"),
  "class3_named_tuple_indices": ("named_tuple", ".indices"),
  "class4_slice_expression_bound": ("slice_", ": n"),
  "class4_shape_slice": ("slice_", "shape[-2:]"),
  "class4_shape_property": ("bracketed_method", "reshape({a}.shape)".replace("{a}", "x")),
  "class9_optional_mask": ("optional", "mask"),
  "class9_no_grad": ("no_grad", "no_grad"),
  "dict_read_back": ("containers", "['p']"),
}
for name, (idiom, needle) in picks.items():
    for s in range(400):
        g = grammar.Generator(s)
        st = getattr(g, idiom)("x", "x")
        text = "\n".join(st.lines)
        if needle in text or needle in " ".join(st.params):
            case = grammar.Case([grammar.Program([st])], "plain", [{"in": [["x"]], "out": [["out"]]}])
            src = fuzz.case_source(case)
            open(os.path.join(HERE, "regressions", f"{name}.py"), "w").write(
                f"# Regression (issue 21): a one-statement program of the fuzz grammar's `{idiom}` idiom, which tdfx printed\n# differently from torch.fx before this change. Run by fuzz.py --regressions.\n" + src)
            break
    else:
        print("no program for", name)


def program(idioms, seed=0):
    """A program of the given idioms in order, each reading the previous value."""
    g = grammar.Generator(seed)
    g.n = 0
    stmts, value = [], "x"
    for idiom in idioms:
        st = getattr(g, idiom)(value, "x")
        stmts.append(st)
        value = st.defines
    return grammar.Program(stmts)


# The TensorDict classes (5 to 8 of issue 21, and fault 2 of fx-format.md), checked against
# tensordict 0.1.2 with fuzz.py --tensordict.
TD_CASES = {
    # class 5: two children with the same attribute names, one shadowing a forward parameter.
    "class5_sequential_shared_names": grammar.Case(
        [program(["weights", "shadowing"]), program(["weights", "shadowing"])], "seq",
        [{"in": [["input", "x"]], "out": [["hidden"]]}, {"in": [["hidden"]], "out": [["out", "y"]]}]),
    # class 6: a nested sequential reads all its keys first.
    "class6_nested_reads_first": grammar.Case(
        [program(["leaf"], 1), program(["gated"], 2), program(["weights"], 3)], "seq",
        [{"in": [["a"]], "out": [["h"]]}, {"in": [["h"]], "out": [["g"]]}, {"in": [["b"]], "out": [["out"]]}],
        nested=True),
    # class 7: a forward parameter past the in keys stays a placeholder with its default.
    "class7_default_parameter": grammar.Case(
        [grammar.Program([grammar.Stmt(["v1 = x * scale"], "v1", ["x"], params=["scale"])])], "td",
        [{"in": [["input", "x"]], "out": [["out"]]}]),
    # class 8: the "_" key's value is among the outputs.
    "class8_discard_key_returned": grammar.Case(
        [program(["unary", "binary"], 4), program(["leaf"], 5)], "seq",
        [{"in": [["x"]], "out": [["_"]]}, {"in": [["x"]], "out": [["y"]]}]),
    # fault 2: a key rewritten inside a nested sequential keeps its own value (eager's).
    "fault2_nested_rewritten_key": grammar.Case(
        [program(["unary"], 6), program(["gated"], 7), grammar.Program(program(["unary", "leaf"], 8).stmts, outputs=2)],
        "seq",
        [{"in": [["hidden"]], "out": [["out", "a"]]}, {"in": [["out", "a"]], "out": [["out", "a"]]},
         {"in": [["out", "a"]], "out": [["out", "b"], ["out", "a"]]}], nested=True),
}
for name, case in TD_CASES.items():
    with open(os.path.join(HERE, "regressions", f"{name}.py"), "w") as f:
        f.write(f"# Regression (issue 21): {name.replace('_', ' ')}; tensordict 0.1.2's naming and order.\n"
                "# Written by make_regressions.py; run by fuzz.py --regressions.\n" + fuzz.case_source(case))


def stmt(lines, members=()):
    return grammar.Stmt(lines, lines[-1].split(" = ")[0], ["x"], members=list(members))


# Cases no single idiom makes: quantized leaves (class 11) and a size-bounded slice in a sequential's
# first child (class 12, a dangling node reference once).
OTHER_CASES = {
    "class11_quantized_linear_gru": ("dynamically quantized Linear and GRU leaves, call_module as in FX", grammar.Case(
        [grammar.Program([stmt(["v1 = self.linear1(x)"], ["self.linear1 = nn.Linear(8, 8)"]),
                          stmt(["v2 = self.gru2(v1)[0]"], ["self.gru2 = nn.GRU(8, 8, batch_first=True)"])])],
        "plain", [{"in": [["x"]], "out": [["out"]]}], quantize=True)),
    "class11_quantized_in_sequential": ("a quantized child of a TensorDictSequential", grammar.Case(
        [program(["gated"], 9), program(["leaf", "unary"], 10)], "seq",
        [{"in": [["input", "x"]], "out": [["hidden"]]}, {"in": [["hidden"]], "out": [["out"]]}], quantize=True)),
    "class12_size_slice_then_child": ("`n = x.size(1); x[:, :n]` in a first child, then a second", grammar.Case(
        [grammar.Program([stmt(["n1 = x.size(1)", "v1 = x[:, :n1]"])]), program(["gated"], 11)], "seq",
        [{"in": [["x"]], "out": [["h"]]}, {"in": [["h"]], "out": [["y"]]}])),
}
for name, (what, case) in OTHER_CASES.items():
    with open(os.path.join(HERE, "regressions", f"{name}.py"), "w") as f:
        f.write(f"# Regression (issue 21): {what}.\n"
                "# Written by make_regressions.py; run by fuzz.py --regressions.\n" + fuzz.case_source(case))
