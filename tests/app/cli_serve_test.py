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
import subprocess
import sys
import unittest

CLI, FIXTURES, WORK = sys.argv[1:4]
del sys.argv[1:4]


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
        for i in (1, 2):  # the second from the model kept open
            reply = self.server.run("trace", model, id=i)
            self.assertEqual(reply["status"], 0)
            self.assertEqual(text(reply, "stdout"), expected.stdout)
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

    def test_a_model_that_prints_does_not_write_into_the_replies(self):
        for i in (1, 2):
            reply = self.server.run("verify", fixture("chatty.pt"), id=i)
            self.assertEqual(reply["status"], 0, reply)
            self.assertNotIn("hello from the model", reply["stdout"])
        self.assertEqual(self.server.run("trace", fixture("seed_module.pt"), id=3)["status"], 0)

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


if __name__ == "__main__":
    unittest.main()
