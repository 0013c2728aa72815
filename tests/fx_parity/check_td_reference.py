#!/usr/bin/env python3
"""Checks td_reference.py against the real tensordict 0.1.2: td_reference's graph, code and out
keys must equal what tensordict's symbolic_trace printed, as record_tensordict.py recorded it in
tensordict_0.1.2/, on every recorded TensorDict case (td_cases.py: the parity corpus's torchvision
cases, the fuzz grammar's TensorDict cases, the TensorDict fixtures); where tensordict raised,
td_reference must raise the same error. td_reference is run copying tensordict's fault 2
(`fault2=True`), as fuzz.py --tensordict does; the cases where that flag changes the output are
counted. Needs torch and torchvision, not tensordict (CI: CTest fx_parity.td_reference_vs_tensordict).

    /usr/bin/python3 check_td_reference.py [--groups tvtd,tvseq,fuzz,fixture] [--name NAME ...]
    /usr/bin/python3 check_td_reference.py --dump DIR     (the recordings as text: NAME.graph.txt, ...)

Fails on a difference, and on a stale recording: a torchvision or fixture case whose modules or
keys (td_cases.fingerprint) are no longer the recorded ones, or that is not recorded, or a torch
or torchvision other than the recorded one. Then re-record (record_tensordict.py --tensordict DIR).
A fuzz case is rebuilt from its recorded file text, and that text must be what grammar.py makes
of its seed now (or the regression file's text): a fuzz case the grammar makes otherwise, or one
of td_cases.FUZZ_SEEDS (which holds the seeds CI fuzzes) or of the regressions that is not recorded,
is stale too.
"""
import argparse
import difflib
import os
import shutil
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import td_cases  # noqa: E402

RERECORD = ("re-record: /usr/bin/python3 tests/fx_parity/record_tensordict.py --tensordict DIR "
            "(a source tree of tensordict v0.1.2)")


def reference(obj, fault2=True):
    """td_reference's graph, code and out keys for a stand-in object, as tensordict's would be."""
    import torch.fx as fx
    import td_reference as ref
    graph = ref.trace_graph(obj, fault2=fault2)
    gm = fx.GraphModule(ref.root_of(obj), graph)
    out_keys = graph.td_out_keys if ref._is_sequential(obj) else ref.keys_of(obj)[1]
    return td_cases.traced(gm, out_keys)


def difference(recorded, got, limit=60):
    """'' when equal, else a unified diff (at most `limit` lines) of what differs."""
    if "error" in recorded or "error" in got:
        if recorded.get("error") == got.get("error"):
            return ""
        return (f"tensordict 0.1.2: {recorded.get('error', 'traces it')}\n"
                f"td_reference:     {got.get('error', 'traces it')}")
    out = []
    for part in ("graph", "code"):
        if recorded[part] != got[part]:
            diff = list(difflib.unified_diff(recorded[part].splitlines(True), got[part].splitlines(True),
                                             f"tensordict 0.1.2 {part}", f"td_reference {part}"))
            if len(diff) > limit:
                diff = diff[:limit] + [f"... ({len(diff) - limit} more diff lines)\n"]
            out.append("".join(line if line.endswith("\n") else line + "\n" for line in diff))
    if recorded["out_keys"] != got["out_keys"]:
        out.append(f"out keys: tensordict 0.1.2 {recorded['out_keys']}, td_reference {got['out_keys']}\n")
    return "".join(out)


def dump(records, directory):
    os.makedirs(directory, exist_ok=True)
    for name, r in records.items():
        parts = {"graph.txt": r.get("graph"), "code.txt": r.get("code"), "error.txt": r.get("error"),
                 "case.py": r.get("source"),
                 "out_keys.txt": None if "out_keys" not in r else "\n".join(map(repr, r["out_keys"])) + "\n"}
        for ext, text in parts.items():
            if text is not None:
                with open(os.path.join(directory, f"{name}.{ext}"), "w", encoding="utf-8") as f:
                    f.write(text)
    print(f"wrote {len(records)} recorded cases into {directory}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", default=",".join(td_cases.GROUP_FILES))
    parser.add_argument("--name", action="append", help="only this case (repeatable)")
    parser.add_argument("--recordings", default=td_cases.RECORDINGS)
    parser.add_argument("--dump", help="write the recordings out as text files into this folder, and exit")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    groups = args.groups.split(",")
    headers, records = td_cases.read_recordings(args.recordings, groups)
    if args.dump:
        dump(records, args.dump)
        return 0
    import fuzz
    import torch
    import torchvision
    problems, stale = [], []
    for group in groups:
        h = headers.get(group)
        if h is None:
            stale.append(f"{group}: no recording ({td_cases.GROUP_FILES[group]})")
        elif (h["torch"], h["torchvision"]) != (torch.__version__, torchvision.__version__):
            stale.append(f"{group}: recorded with torch {h['torch']} / torchvision {h['torchvision']}, "
                         f"this is {torch.__version__} / {torchvision.__version__}")
    work = tempfile.mkdtemp(prefix="tdfx-td-check-")
    # The cases as the sources define them now: torchvision and fixtures are checked as they are
    # now (their fingerprint must be the recorded one); fuzz cases as recorded, the grammar compared.
    current = {c.name: c for c in td_cases.all_cases(work, [g for g in groups if g != "fuzz"])}
    if "fuzz" in groups:
        now = {c.name: c.source for c in td_cases.fuzz_cases(work)}
        # Every TensorDict program the fuzz test runs (its seeds and the regressions) must be
        # recorded as grammar.py makes it now: a program recorded otherwise, or not at all, is one
        # td_reference would be trusted on without tensordict's word.
        for name, source in now.items():
            if name not in records:
                stale.append(f"{name}: a fuzz case that is not recorded")
            elif records[name]["source"] != source:
                stale.append(f"{name}: recorded as another program than grammar.py now makes of it")
        for name, r in records.items():
            if name.startswith("fuzz_") and name in now:
                current[name] = td_cases.fuzz_case(name, r["source"], work)
    for name, case in current.items():
        if name not in records:
            stale.append(f"{name}: a {case.group} case that is not recorded")
    names = [n for n in records if not args.name or n in args.name]
    checked = matched = 0
    fault2_cases = []
    per_group = {}
    for name in names:
        r = records[name]
        case = current.get(name)
        if case is None:
            stale.append(f"{name}: recorded, but no such case now")
            continue
        obj = td_cases.quietly(case.build, fuzz.Standins)
        if "fingerprint" in r and td_cases.fingerprint(obj) != r["fingerprint"]:
            stale.append(f"{name}: its modules or keys changed since it was recorded")
            continue
        try:
            got = td_cases.quietly(reference, obj)
        except Exception as e:  # noqa: BLE001 - compared with what tensordict raised
            got = {"error": td_cases.error_text(e)}
        checked += 1
        g = per_group.setdefault(case.group, [0, 0])
        g[0] += 1
        diff = difference(r, got)
        if diff:
            problems.append(f"=== {name}: td_reference differs from tensordict 0.1.2\n{diff}")
            continue
        matched += 1
        g[1] += 1
        # Fault 2 concerns sequentials only; a fresh build, as a trace changes the modules it traces.
        if "error" not in got and isinstance(obj.module, list) and \
                td_cases.quietly(reference, td_cases.quietly(case.build, fuzz.Standins), False) != got:
            fault2_cases.append(name)
    for p in problems:
        print(p)
    for s in stale:
        print(f"STALE {s}")
    if stale:
        print(RERECORD)
    groups_text = ", ".join(f"{g} {m}/{n}" for g, (n, m) in per_group.items())
    extra = ""
    print(f"td_reference vs tensordict 0.1.2: {matched} of {checked} recorded cases match ({groups_text}), "
          f"{len(problems)} differ, {len(stale)} stale; {len(fault2_cases)} where td_reference's fault-2 fix "
          f"changes the output ({', '.join(fault2_cases)}){extra}")
    shutil.rmtree(work, ignore_errors=True)
    return 1 if problems or stale or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
