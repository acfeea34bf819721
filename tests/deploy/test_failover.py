"""A replica dies mid-class (issue #49): ``make serve-replicas``'s own command, two
replicas, browser pages on both; one replica's server is killed. Every page on it reaches
the live replica within 10 s and says in one line that its session was lost; twenty new
students are all answered by the live one (none 502); the dead replica is started again
within 30 s and drawn again; SIGTERM then stops everything, leaving nothing behind."""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest

from bench.stclient import Session
from deploy.launch import ROOT, free_port
from deploy.replicas import COOKIE
from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS, wait_idle
from ui.reconnect import NOTICE

START_S = 240  # both replicas and nginx answer (a loaded 2-core machine)
MOVED_S = 10  # a page on the dead replica reaches the live one (the figure)
RESTART_S = 30  # the dead replica answers again, on its port
NEW_STUDENTS = 20


def visit(url: str, cookie: str = "") -> tuple[int, str]:
    """GET ``url`` (with ``cookie``): (status, the replica that answered)."""
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            return r.status, r.headers.get("X-Replica", "")
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("X-Replica", "")


def healthy(port: int) -> bool:
    """The app server on 127.0.0.1:``port`` answers its health check."""
    try:
        return visit(f"http://127.0.0.1:{port}/_stcore/health")[0] == 200
    except OSError:  # refused: not (yet) listening
        return False


def start(port: int, out: Path) -> tuple[subprocess.Popen, str, dict[str, int], Path]:
    """``python -m deploy.replicas`` (what ``make serve-replicas N=2`` runs) on ``port``:
    (process, url, replica -> its server's port, nginx's folder)."""
    cmd = [sys.executable, "-m", "deploy.replicas", "--replicas", "2"]
    cmd += ["--listen", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out.open("w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + START_S
    while "Ctrl+C" not in out.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, out.read_text()
        time.sleep(0.5)
    text = out.read_text()
    ports = {name: int(p) for name, p in re.findall(r"(r\d) :(\d+)", text)}
    workdir = Path(re.search(r"logs: (\S+);", text).group(1))
    return proc, f"http://127.0.0.1:{port}", ports, workdir


def server_of(main: psutil.Process, port: int) -> psutil.Process:
    """The app server on ``port`` among ``main``'s children."""
    return next(
        c for c in main.children() if f"--server.port\x00{port}" in "\x00".join(c.cmdline())
    )


def browse(url: str, ports: dict[str, int], main: psutil.Process) -> dict:
    """Pages on both replicas (two on r0); kill r0's server; each of its pages must
    reach r1 within MOVED_S with the notice, r1's pages must not show it."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        pages: dict[str, list] = {"r0": [], "r1": []}
        while (len(pages["r0"]) < 2 or not pages["r1"]) and sum(map(len, pages.values())) < 12:
            context = browser.new_context(viewport={"width": 1300, "height": 900})
            context.set_default_timeout(TIMEOUT_MS)
            page = context.new_page()
            page.goto(url + "/complexity")  # a light page: no model run on the first draw
            wait_idle(page)
            pages[cookie_of(context)].append(page)
        dead, live = "r0", "r1"
        killed = server_of(main, ports[dead])
        killed.kill()
        t0 = time.monotonic()
        moved = []
        for page in pages[dead]:
            left_ms = max(1, (t0 + MOVED_S - time.monotonic()) * 1000)
            page.get_by_text(NOTICE).wait_for(timeout=left_ms)
            moved.append((time.monotonic() - t0, cookie_of(page.context)))
        stayed = [page.get_by_text(NOTICE).count() for page in pages[live]]
        browser.close()
    return {"dead": dead, "live": live, "killed": killed.pid, "t0": t0, "moved": moved,
            "stayed": stayed, "on": {k: len(v) for k, v in pages.items()}}  # fmt: skip


def cookie_of(context) -> str:
    return next(c["value"] for c in context.cookies() if c["name"] == COOKIE)


async def new_students(url: str, ws_url: str) -> list[tuple[int, str, int]]:
    """Twenty new students at once: the page (status, replica), then a session's first
    run over the websocket with the cookie it got (its exceptions)."""

    async def one() -> tuple[int, str, int]:
        status, replica = await asyncio.to_thread(visit, url)
        cookie = f"{COOKIE}={replica}"
        async with Session(ws_url, {"view": "stats"}, headers={"Cookie": cookie}) as s:
            run = await s.open()
        return status, replica, len(run.exceptions())

    return await asyncio.gather(*(one() for _ in range(NEW_STUDENTS)))


@pytest.mark.slow
def test_a_dead_replica_costs_its_students_one_reconnect(tmp_path):
    out = tmp_path / "replicas.out"
    proc, url, ports, workdir = start(free_port(), out)
    try:
        main = psutil.Process(proc.pid)
        with ThreadPoolExecutor(1) as thread:  # its own event loop (see test_replicas)
            seen = thread.submit(browse, url, ports, main).result()
            assert seen["on"]["r0"] >= 2 and seen["on"]["r1"], seen
            assert len(seen["moved"]) == seen["on"]["r0"], seen
            assert all(s < MOVED_S and c == "r1" for s, c in seen["moved"]), seen
            assert seen["stayed"] == [0] * seen["on"]["r1"], seen  # the live ones: no notice
            ws_url = url.replace("http://", "ws://") + "/_stcore/stream"
            answers = thread.submit(asyncio.run, new_students(url, ws_url)).result()
        assert all(a == (200, "r1", 0) for a in answers), answers  # none 502, none on r0
        # Started again on its port, within RESTART_S of the kill; then drawn again.
        while not healthy(ports["r0"]):
            assert time.monotonic() - seen["t0"] < RESTART_S, out.read_text()
            time.sleep(0.2)
        assert server_of(main, ports["r0"]).pid != seen["killed"]
        lines = [line for line in out.read_text().splitlines() if "exited" in line]
        assert len(lines) == 1 and f"replica r0 (pid {seen['killed']}) exited" in lines[0], lines
        drawn = []
        while "r0" not in drawn:
            assert time.monotonic() - seen["t0"] < RESTART_S + 15, drawn
            drawn.append(visit(url)[1])
            time.sleep(0.1)
        assert visit(url, f"{COOKIE}=r1") == (200, "r1")  # the moved students stay put
        everyone = [main, *main.children(recursive=True)]
    finally:
        proc.send_signal(signal.SIGTERM)  # what a process manager sends
        proc.wait(timeout=60)
    time.sleep(0.5)
    assert [p.pid for p in everyone if p.is_running() and p.status() != "zombie"] == []
    assert not workdir.exists()
    assert "stopped: every replica and nginx" in out.read_text()
