"""`tdfx-cli export -o graph.json` writes the graph document (docs/graph-format.md) that a script
reads with Python's json alone: the same nodes, targets and code that `tdfx-cli trace` prints.

usage: graph_json_test.py TDFX_CLI FIXTURES_DIR WORK_DIR
"""
import json
import os
import re
import subprocess
import sys


def run(*args):
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit {done.returncode}\n{done.stderr}")
    return done.stdout


def check(cli, model, work):
    out = os.path.join(work, os.path.basename(model) + ".json")
    run(cli, "export", model, "-o", out, "--shapes")
    with open(out, encoding="utf-8") as f:
        doc = json.load(f)
    assert doc["format"] == "tdfx.graph" and doc["version"] == 1, (doc["format"], doc["version"])
    nodes = doc["graph"]["nodes"]
    printed = run(cli, "trace", "--graph", model).splitlines()[1:]
    # One printed line per node but the output (printed as `return ...`).
    lines = [line for line in printed if line.strip().startswith("%")]
    assert len(lines) == len(nodes) - 1, (len(lines), len(nodes))
    for line, node in zip(lines, nodes):
        m = re.match(r"\s*%(\S+) : .*= (\w+)\[target=([^\]]+)\]", line)
        assert m, line
        assert m.group(1) == node["name"], (line, node["name"])
        assert m.group(2) == node["op"], (line, node["op"])
        assert m.group(3) == node["target"], (line, node["target"])
    assert nodes[-1]["op"] == "output"
    assert doc["code"]["text"] == run(cli, "trace", "--code", model)
    by_name = {n["name"]: n for n in nodes}
    for node in nodes:
        for user in node["users"]:
            assert user in by_name, user
    # --shapes: every call node has its recorded outputs.
    for node in nodes:
        if node["op"].startswith("call_"):
            assert node.get("meta", {}).get("outputs"), node["name"]
    return doc


def main(cli, fixtures, work):
    os.makedirs(work, exist_ok=True)
    doc = check(cli, os.path.join(fixtures, "seed_sequential.pt"), work)
    fc1 = next(n for n in doc["graph"]["nodes"] if n["name"] == "_0_fc1")
    assert fc1["meta"]["outputs"] == [{"shape": [32, 50], "dtype": "float32"}], fc1["meta"]
    assert fc1["args"] == [{"node": "getitem"}], fc1["args"]
    assert doc["model"]["in_keys"] == [["input", "x"], ["input", "mask"]], doc["model"]["in_keys"]
    assert doc["model"]["batch_size"] == [32], doc["model"]
    doc = check(cli, os.path.join(fixtures, "ops.pt"), work)
    # Tagged arguments: a slice or a tuple somewhere in ops.pt's graph reads back as JSON objects.
    kinds = set()

    def walk(a):
        if isinstance(a, dict):
            kinds.update(a.keys())
            for v in a.values():
                walk(v)
        elif isinstance(a, list):
            for v in a:
                walk(v)

    for n in doc["graph"]["nodes"]:
        walk(n["args"])
        walk(n["kwargs"])
    assert "node" in kinds, kinds
    print("graph_json: ok")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
