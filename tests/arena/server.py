"""Start ``python -m wfeval.arena`` as a real server on 127.0.0.1 (a free port) and talk to it."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.conftest import cli_env

TIMEOUT = 10.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(sweep: Path, port: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "wfeval.arena", str(sweep), "--no-browser", "--port", str(port)],
                            env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the arena exited: {proc.stdout.read()}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/ratings", timeout=2).read()
            return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("the arena did not answer within 60 s")


def request(url: str, body: dict | None = None) -> tuple[int, dict | str]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            text = r.read().decode()
            status = r.status
    except urllib.error.HTTPError as exc:
        text, status = exc.read().decode(), exc.code
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def session(base: str) -> str:
    _, page = request(base + "/")
    return re.search(r'name="arena-token" content="([^"]+)"', page).group(1)


def cast(base: str, token: str, rater: str, choice: str = "a") -> str | None:
    """One vote on the next pair; the vote id when the server said it was committed, else None."""
    from urllib.parse import urlencode

    status, answer = request(f"{base}/api/next?" + urlencode({"session": token, "rater": rater}))
    if status != 200 or not answer.get("pair"):
        return None
    pair_id = answer["pair"]["id"]
    status, answer = request(base + "/api/vote", {"session": token, "pair_id": pair_id, "choice": choice})
    return pair_id if status == 200 else None
