"""tdfx-cli serve, as `import tdfx` uses it: replies equal to the one-shot commands' output, a
model kept open between commands and opened afresh when its file is replaced, a worker killed at
its limit or a printing model never ending or corrupting the server, bad requests answered with
their line number, output that is not UTF-8 given as base64.

Usage: cli_serve_test.py TDFX_CLI FIXTURES_DIR WORK_DIR
"""
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

CLI, FIXTURES, WORK = sys.argv[1:4]
del sys.argv[1:4]


def children(pid):
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(c) for c in f.read().split()]
        except OSError:
            continue
    return found


def descendants(pid):
    """The processes below `pid` (the zygote and the model workers under serve)."""
    found = []
    for child in children(pid):
        found += [child] + descendants(child)
    return found


def workers(server_pid):
    """The model workers: the zygote's children."""
    return sorted(set(descendants(server_pid)) - set(children(server_pid)))


def fixture(name):
    return os.path.join(FIXTURES, name)


def one_shot(*args):
    return subprocess.run([CLI, *args], capture_output=True)


class Server:
    def __init__(self, *flags):
        self.process = subprocess.Popen([CLI, "serve", *flags], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE)

    def send_line(self, line):
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise AssertionError(f"the server ended: {self.process.wait()}, stderr: {self.process.stderr.read()[-2000:]}")
        return json.loads(answer)

    def run(self, *args, id=1):
        reply = self.send_line(json.dumps({"id": id, "argv": list(args)}))
        self.check_id(reply, id)
        return reply

    @staticmethod
    def check_id(reply, id):
        if reply.get("id") != id:
            raise AssertionError(f"reply to another request: {reply}")

    def close(self):
        self.process.stdin.close()
        rc = self.process.wait(timeout=30)
        self.process.stderr.close()
        self.process.stdout.close()
        return rc


def untimed(report):
    """A verify report without its times (they differ from run to run)."""
    if isinstance(report, dict):
        return {k: untimed(v) for k, v in report.items() if not k.endswith("seconds")}
    if isinstance(report, list):
        return [untimed(v) for v in report]
    return report


def text(reply, field):
    if field + "_base64" in reply:
        return base64.b64decode(reply[field + "_base64"])
    return reply[field].encode()


class ServeTest(unittest.TestCase):
    def setUp(self):
        self.server = Server()
        os.makedirs(WORK, exist_ok=True)

    def tearDown(self):
        self.assertEqual(self.server.close(), 0, "serve ends with status 0 at the end of its input")

    def test_replies_are_the_commands_output_byte_for_byte_twice(self):
        model = fixture("seed_sequential.pt")
        expected = one_shot("trace", model)
        for i in (1, 2):  # the second from the model kept open: no other worker
            reply = self.server.run("trace", model, id=i)
            self.assertEqual(reply["status"], 0)
            self.assertEqual(text(reply, "stdout"), expected.stdout)
            if i == 1:
                first_workers = workers(self.server.process.pid)
                self.assertEqual(len(first_workers), 1)
        self.assertEqual(workers(self.server.process.pid), first_workers)
        verify = one_shot("verify", model, "--json")
        reply = self.server.run("verify", model, "--json", id=3)
        self.assertEqual(reply["status"], verify.returncode)
        self.assertEqual(untimed(json.loads(text(reply, "stdout"))), untimed(json.loads(verify.stdout)))
        failed = one_shot("trace", fixture("no-such-model.pt"))
        reply = self.server.run("trace", fixture("no-such-model.pt"), id=4)
        self.assertEqual((reply["status"], text(reply, "stderr")), (failed.returncode, failed.stderr))
        self.assertNotEqual(reply["status"], 0)

    def test_commands_in_one_request_draw_and_trace(self):
        svg = os.path.join(WORK, "drawn.svg")
        if os.path.exists(svg):
            os.unlink(svg)
        model = fixture("seed_sequential.pt")
        reply = self.server.send_line(json.dumps({"id": "d", "commands": [["export", model, "-o", svg],
                                                                          ["trace", model, "--code"]]}))
        self.server.check_id(reply, "d")
        exported, traced = reply["results"]
        self.assertEqual(exported["status"], 0, exported)
        self.assertTrue(exported["stdout"].startswith("wrote " + svg), exported)
        with open(svg) as f:
            self.assertIn("<svg", f.read())
        self.assertEqual(text(traced, "stdout"), one_shot("trace", model, "--code").stdout)

    def test_a_replaced_file_is_opened_afresh(self):
        path = os.path.join(WORK, "replaced.pt")
        shutil.copyfile(fixture("seed_module.pt"), path)
        first = self.server.run("trace", path, "--graph", id=1)
        self.assertEqual(text(first, "stdout"), one_shot("trace", fixture("seed_module.pt"), "--graph").stdout)
        # Replaced as tdfx.py saves a module again: a new file renamed over the old one.
        shutil.copyfile(fixture("seed_sequential.pt"), path + ".new")
        os.replace(path + ".new", path)
        second = self.server.run("trace", path, "--graph", id=2)
        self.assertEqual(text(second, "stdout"), one_shot("trace", fixture("seed_sequential.pt"), "--graph").stdout)
        self.assertNotEqual(text(first, "stdout"), text(second, "stdout"))

    def test_a_file_rewritten_in_place_with_its_mtime_put_back_is_opened_afresh(self):
        import io
        import torch

        class AddOne(torch.nn.Module):
            def forward(self, x):
                return x + 1.5

        class AddTwo(torch.nn.Module):
            def forward(self, x):
                return x + 2.5

        def archive(module):
            buffer = io.BytesIO()
            torch.jit.save(torch.jit.script(module), buffer)
            return buffer.getvalue()

        one, two = archive(AddOne()), archive(AddTwo())
        self.assertEqual(len(one), len(two), "the two archives must be the same size for this test")
        path = os.path.join(WORK, "rewritten.pt")
        with open(path, "wb") as f:
            f.write(one)
        before = os.stat(path)
        first = self.server.run("trace", path, "--code", id=1)
        self.assertIn(b"1.5", text(first, "stdout"))
        # The same inode, the same size, and the old mtime put back as `touch -r` does: only the
        # ctime tells the versions apart.
        with open(path, "r+b") as f:
            f.write(two)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = os.stat(path)
        self.assertEqual((after.st_ino, after.st_size, after.st_mtime_ns), (before.st_ino, before.st_size, before.st_mtime_ns))
        second = self.server.run("trace", path, "--code", id=2)
        self.assertIn(b"2.5", text(second, "stdout"))
        self.assertNotIn(b"1.5", text(second, "stdout"))

    def test_a_worker_killed_at_its_limit_leaves_the_server_serving(self):
        reply = self.server.run("verify", fixture("endless.pt"), "--timeout", "2", id=1)
        self.assertEqual(reply["status"], 1, reply)
        self.assertIn("time limit", reply["stderr"])
        # The same model again: its worker was killed, so it is opened afresh, and stopped again.
        reply = self.server.run("verify", fixture("endless.pt"), "--timeout", "2", id=2)
        self.assertIn("time limit", reply["stderr"])
        reply = self.server.run("verify", fixture("allocation_bomb.pt"), "--memory-limit", "0.5", id=3)
        self.assertNotEqual(reply["status"], 0, reply)
        reply = self.server.run("trace", fixture("seed_module.pt"), id=4)
        self.assertEqual(reply["status"], 0, reply)

    def test_workers_cannot_reach_the_requests_or_the_replies(self):
        for i in (1, 2):
            reply = self.server.run("verify", fixture("chatty.pt"), id=i)
            self.assertEqual(reply["status"], 0, reply)
            self.assertNotIn("hello from the model", reply["stdout"])
        # The pipes this test talks to the server by: no worker holds either, at any descriptor.
        ours = {f"pipe:[{os.fstat(f.fileno()).st_ino}]" for f in (self.server.process.stdin, self.server.process.stdout)}
        running = workers(self.server.process.pid)
        self.assertTrue(running)
        for pid in running:
            held = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
            self.assertFalse(held & ours, f"worker {pid} holds {held & ours}")
        self.assertEqual(self.server.run("trace", fixture("seed_module.pt"), id=3)["status"], 0)

    def test_a_worker_killed_while_idle_is_replaced(self):
        model = fixture("seed_sequential.pt")
        self.assertEqual(self.server.run("trace", model, id=1)["status"], 0)
        [worker] = workers(self.server.process.pid)
        os.kill(worker, signal.SIGKILL)  # as the OOM killer would, between two commands
        for _ in range(100):  # until the zygote has reaped it
            if worker not in workers(self.server.process.pid):
                break
            time.sleep(0.05)
        reply = self.server.run("verify", model, id=2)
        self.assertEqual(reply["status"], 0, reply)
        self.assertNotIn(worker, workers(self.server.process.pid))

    def test_a_command_that_ran_the_model_leaves_it_to_be_opened_afresh(self):
        # A run (--shapes) may leave state behind in the worker (batch norm statistics, counters):
        # the next command opens the model again, as a one-shot tdfx-cli would.
        model = fixture("seed_sequential.pt")
        self.assertEqual(self.server.run("trace", model, id=1)["status"], 0)
        before = workers(self.server.process.pid)
        self.assertEqual(self.server.run("trace", model, "--shapes", id=2)["status"], 0)
        self.assertEqual(self.server.run("trace", model, id=3)["status"], 0)
        self.assertNotEqual(workers(self.server.process.pid), before)

    def test_the_commands_of_a_request_stop_at_the_first_that_fails(self):
        reply = self.server.send_line(json.dumps({"id": 1, "commands": [["trace", fixture("no-such.pt")],
                                                                        ["trace", fixture("seed_module.pt")]]}))
        self.assertEqual(len(reply["results"]), 1, reply)
        self.assertEqual(reply["results"][0]["status"], 1)

    def test_output_that_is_not_utf8_comes_as_base64(self):
        model = fixture("non_utf8_constant.pt")
        expected = one_shot("trace", model).stdout
        with self.assertRaises(UnicodeDecodeError):
            expected.decode("utf-8")
        reply = self.server.run("trace", model)
        self.assertIn("stdout_base64", reply)
        self.assertEqual(text(reply, "stdout"), expected)

    def test_bad_requests_are_answered_with_their_line_and_the_server_goes_on(self):
        reply = self.server.send_line("not json")
        self.assertIsNone(reply["id"])
        self.assertTrue(reply["error"].startswith("request on line 1: "), reply)
        reply = self.server.send_line(json.dumps({"id": 7, "args": ["trace"]}))
        self.assertEqual(reply, {"id": 7, "error": 'request on line 2: a request has "argv" (one command) or '
                                                   '"commands" (an array of them)'})
        reply = self.server.send_line(json.dumps({"id": 8, "argv": ["trace", 5]}))
        self.assertIn("arguments are strings", reply["error"])
        reply = self.server.send_line(json.dumps({"id": 9, "argv": ["--timeout", "5", "serve"]}))
        self.assertIn("serve is not a command serve runs", reply["error"])
        # A model named "serve" is a path like any other.
        reply = self.server.run("trace", "serve", id=10)
        self.assertEqual(reply["status"], 1)
        self.assertIn("serve", reply["stderr"])
        reply = self.server.run("trace", "--bogus", id=11)
        self.assertEqual(reply["status"], one_shot("trace", "--bogus").returncode)
        self.assertEqual(self.server.run("trace", fixture("seed_module.pt"), id=12)["status"], 0)
        # 100,000 levels of nesting in 200 KB (it overflowed the server's stack): refused, and the
        # server goes on.
        for deep in ('{"id": ' + "[" * 100000 + "]" * 100000 + ', "argv": ["--version"]}',
                     '{"id": 13, "argv": ["trace", ' + "[" * 100000 + "]" * 100000 + "]}"):
            reply = self.server.send_line(deep)
            self.assertIsNone(reply["id"])
            self.assertIn("nest deeper than 64 levels", reply["error"])
        self.assertEqual(self.server.run("--version", id=14)["status"], 0)
        # A string holding brackets is not nesting.
        self.assertEqual(self.server.run("trace", "[" * 100 + "{" * 100, id=15)["status"], 1)


class ServeOptionsTest(unittest.TestCase):
    def test_limits_go_with_each_command_and_version_is_printed(self):
        run = subprocess.run([CLI, "--timeout", "5", "serve"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
        self.assertEqual((run.returncode, run.stderr), (1, "tdfx-cli: error: serve: --timeout and --memory-limit go "
                                                           "with each request's command, not with serve\n"))
        run = subprocess.run([CLI, "serve", "--version"], capture_output=True, text=True)
        self.assertEqual(run.returncode, 0)
        self.assertTrue(run.stdout.startswith("tdfx-cli "), run.stdout)


if __name__ == "__main__":
    unittest.main()
