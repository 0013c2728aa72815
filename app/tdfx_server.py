"""The warm `tdfx-cli serve` process behind `import tdfx`: one per session, started at the first
call, sent every tdfx-cli command as a JSON line (docs/cli.md, "serve").

A call pays LibTorch's start once per session instead of once per call, and a model the server
opened for one command is still open for the next (draw, then verify, of the same module).
Each command gives what `tdfx-cli ARGS...` would: its exit status, stdout and stderr bytes.

The server is started again when it ended (killed, or an interrupted call stopped it), when
$TDFX_CLI names another program, or when the working directory changed (its workers read
relative paths from the directory it started in). TDFX_SERVE=0 runs one tdfx-cli per command.
"""
from __future__ import annotations

import atexit
import base64
import itertools
import json
import os
import subprocess
import tempfile
import threading
from typing import Any, Dict, List, Optional, Sequence


class ServerError(Exception):
    """The server ended or answered with something other than a reply."""


def _field(reply: Dict[str, Any], name: str) -> bytes:
    if name + "_base64" in reply:  # output that is not UTF-8, as bytes
        return base64.b64decode(reply[name + "_base64"])
    return str(reply.get(name, "")).encode("utf-8")


def _completed(args: Sequence[str], result: Dict[str, Any]) -> subprocess.CompletedProcess:
    return subprocess.CompletedProcess(list(args), int(result.get("status", 2)), _field(result, "stdout"),
                                       _field(result, "stderr"))


class Server:
    """One `tdfx-cli serve` process, and the lock that keeps one request at a time on its pipes."""

    def __init__(self, program: str) -> None:
        self.program, self.cwd = program, os.getcwd()
        # A session of its own: Ctrl+C in a terminal interrupts the Python call (which then stops
        # the server), not the server in the middle of a reply.
        # Its stderr (what models print, and why it ended, if it does) in a file: a pipe nobody reads
        # would fill and stop it.
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen([program, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.stderr, start_new_session=True)
        self.ids = itertools.count(1)

    def alive(self) -> bool:
        return self.process.poll() is None

    def request(self, commands: Sequence[Sequence[str]]) -> List[Dict[str, Any]]:
        """The results of `commands`, run one after the other by the server in one request, up to
        the first that fails."""
        number = next(self.ids)
        line = json.dumps({"id": number, "commands": [list(c) for c in commands]}) + "\n"
        try:
            assert self.process.stdin is not None and self.process.stdout is not None
            self.process.stdin.write(line.encode("utf-8"))
            self.process.stdin.flush()
            answer = self.process.stdout.readline()
            reply = json.loads(answer.decode("utf-8")) if answer else None
        except (OSError, ValueError) as e:  # a broken pipe (it ended), a reply that is not JSON
            try:
                self.process.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
            message = self._ended() if self.process.poll() is not None else f"tdfx-cli serve: {e}{self._said()}"
            self.stop()
            raise ServerError(message) from None
        except BaseException:
            # Interrupted (KeyboardInterrupt): the server may be half way through a reply, so it is
            # stopped; the next call starts another.
            self.stop()
            raise
        if reply is None:
            self.process.wait()
            raise ServerError(self._ended())
        if not isinstance(reply, dict) or reply.get("id") != number or "error" in reply:
            self.stop()
            what = reply.get("error") if isinstance(reply, dict) else None
            raise ServerError(f"tdfx-cli serve: {what or 'a reply to another request'}")
        return list(reply["results"])

    def _ended(self) -> str:
        code = self.process.returncode
        how = f"signal {-code}" if code < 0 else f"exit status {code}"
        return f"tdfx-cli serve ended ({how}) before it answered{self._said()}"

    def _said(self) -> str:
        """The end of what the server wrote on stderr, for an error about it."""
        try:
            self.stderr.seek(0, os.SEEK_END)
            size = self.stderr.tell()
            self.stderr.seek(max(0, size - 400))
            tail = self.stderr.read().decode("utf-8", "replace").strip().splitlines()
        except (OSError, ValueError):
            return ""
        return f": {tail[-1]}" if tail else ""

    def stop(self) -> None:
        try:
            if self.process.stdin:
                self.process.stdin.close()  # the end of input ends the server
            self.process.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()
        self.stderr.close()


_server: Optional[Server] = None
_lock = threading.Lock()


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:  # os.fsdecode's surrogates for bytes that are not UTF-8
        return False


def run(program: str, commands: Sequence[Sequence[str]]) -> List[subprocess.CompletedProcess]:
    """Runs each command as `program ARGS...` would, on the session's server (one started when
    needed), up to the first that fails (its status not 0): the results of those run.
    TDFX_SERVE=0: one process per command."""
    if os.environ.get("TDFX_SERVE", "1") == "0" or not all(_utf8(a) for c in commands for a in c):
        # One process per command (asked for, or an argument JSON cannot carry: a path of bytes
        # that are not UTF-8), with the server's rule: none after one that failed.
        results: List[subprocess.CompletedProcess] = []
        for c in commands:
            results.append(subprocess.run([program, *c], capture_output=True))
            if results[-1].returncode != 0:
                break
        return results
    global _server
    with _lock:
        for attempt in (1, 2):
            if _server is None or not _server.alive() or _server.program != program or _server.cwd != os.getcwd():
                if _server is not None:
                    _server.stop()
                _server = Server(program)
            try:
                results = _server.request(commands)
                return [_completed(c, r) for c, r in zip(commands, results)]
            except ServerError:
                # The server itself ended (a model's worker ending never ends it): once more on a
                # fresh one, so one lost process costs a restart, not the call.
                _server.stop()
                _server = None
                if attempt == 2:
                    raise
    raise AssertionError("unreachable")


def stop() -> None:
    """Stops the session's server, if one runs (at exit, and for tests)."""
    global _server
    with _lock:
        if _server is not None:
            _server.stop()
            _server = None


def pid() -> Optional[int]:
    """The server's process id, or None when none runs."""
    return _server.process.pid if _server is not None and _server.alive() else None


atexit.register(stop)
