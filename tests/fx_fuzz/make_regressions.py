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
