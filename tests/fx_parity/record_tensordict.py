#!/usr/bin/env python3
"""Records what the real tensordict 0.1.2's symbolic_trace prints on the TensorDict cases of
td_cases.py (the FX parity corpus's torchvision cases, the fuzz grammar's TensorDict cases of
td_cases.FUZZ_SEEDS and tests/fx_fuzz/regressions/, the TensorDict fixtures), into
tests/fx_parity/tensordict_0.1.2/GROUP.jsonl.xz; check_td_reference.py (CI) diffs td_reference.py
against them.

    /usr/bin/python3 record_tensordict.py --tensordict DIR [--groups tvtd,tvseq,fuzz,fixture]

DIR is a source tree of tensordict's tag v0.1.2 (pure Python; it is imported from there, nothing
of it is copied): e.g.
    git clone --branch v0.1.2 --depth 1 https://github.com/pytorch/tensordict /tmp/td
Never run in CI. Per case it records the graph (`print(gm.graph)`), the code (`gm.code`) and the
out keys of the TDGraphModule symbolic_trace returns, or the error it raises; a fuzz case also its
file text (so the check does not depend on grammar.py staying the same), a torchvision or fixture
case a fingerprint of its modules and keys. The files are xz-compressed JSON lines (the text
itself is 20 MB, mostly the torchvision graphs); check_td_reference.py --dump DIR writes them out
as text files.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import td_cases  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tensordict", required=True, help="a source tree of tensordict v0.1.2")
    parser.add_argument("--groups", default=",".join(td_cases.GROUP_FILES))
    parser.add_argument("--out", default=td_cases.RECORDINGS)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    td_dir = os.path.abspath(args.tensordict)
    with open(os.path.join(td_dir, "version.txt")) as f:
        version = f.read().strip()
    if version != "0.1.2":
        sys.exit(f"{td_dir} is tensordict {version}, not 0.1.2")
    sys.path.insert(0, td_dir)
    import torch
    import torchvision
    import tensordict
    from tensordict.nn import TensorDictModule, TensorDictSequential
    from tensordict.prototype.fx import symbolic_trace
    if os.path.dirname(os.path.abspath(tensordict.__file__)) != os.path.join(td_dir, "tensordict"):
        sys.exit(f"imported tensordict from {tensordict.__file__}, not from {td_dir}")

    class Real:
        Module = TensorDictModule
        Sequential = TensorDictSequential

    os.makedirs(args.out, exist_ok=True)
    started = time.time()
    work = tempfile.mkdtemp(prefix="tdfx-td-record-")
    groups = args.groups.split(",")
    for group in groups:
        cases = td_cases.all_cases(work, [group])
        records, errors = [], 0
        for case in cases:
            record = {"name": case.name}
            try:
                obj = td_cases.quietly(case.build, Real)
            except Exception as e:  # noqa: BLE001 - a case the real classes cannot be built of
                sys.exit(f"{case.name}: building it of tensordict's classes failed: {td_cases.error_text(e)}")
            if case.source is not None:
                record["source"] = case.source
            else:
                record["fingerprint"] = td_cases.fingerprint(obj)
            try:
                tgm = td_cases.quietly(symbolic_trace, obj)
                record.update(td_cases.traced(tgm._gm, tgm.out_keys))
            except Exception as e:  # noqa: BLE001 - recorded: td_reference must fail the same way
                record["error"] = td_cases.error_text(e)
                errors += 1
            records.append(record)
        header = {"recorded_by": "tests/fx_parity/record_tensordict.py", "tensordict": version,
                  "torch": torch.__version__, "torchvision": torchvision.__version__, "group": group,
                  "cases": len(records)}
        path = os.path.join(args.out, td_cases.GROUP_FILES[group])
        td_cases.write_recordings(path, header, records)
        print(f"{group}: {len(records)} cases ({errors} that tensordict cannot trace) -> {path} "
              f"({os.path.getsize(path)} bytes)", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    print(f"recorded in {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
