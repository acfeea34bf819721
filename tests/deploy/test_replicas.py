"""Two replicas of the app behind nginx (``deploy/replicas.py``, ``make serve-replicas``):
twenty students at once, each kept on one replica by its cookie, each seeing its own
sentence's attention, and both replicas serving some of them."""

from __future__ import annotations

import asyncio
import subprocess
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from bench.common import shipped
from bench.concurrency import is_right
from bench.stclient import Session
from deploy.replicas import COOKIE, nginx_binary, nginx_config, replica_name, replicas
from inference.analysis import analyze
from models.config import SHIPPED_KINDS

STUDENTS = 20
TEXTS = [
    "the cat sat on the mat",
    "a dog ran to the old park",
    "mary gave a drink to john",
    "the keys to the cabinet are on the table",
    "the old man walked home",
]


def visit(url: str, cookie: str = "") -> tuple[str, str]:
    """GET ``url`` as a browser would (with its cookie, if any): (the cookie nginx set,
    the replica that answered)."""
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    with urllib.request.urlopen(request, timeout=60) as r:
        assert r.status == 200
        return r.headers["Set-Cookie"].split(";")[0], r.headers["X-Replica"]


def link(i: int) -> dict:
    """Student ``i``'s link: models alternate, a sentence, layer and head of its own."""
    return {
        "model": SHIPPED_KINDS[i % len(SHIPPED_KINDS)],
        "text": TEXTS[i % len(TEXTS)],
        "layer": i % 2,
        "head": i % 3,
        "view": "attention",
    }


@pytest.fixture(scope="module")
def attention():
    """(kind, text) -> attention (L, H, T, T) of a direct analysis."""
    models = {k: shipped(k) for k in SHIPPED_KINDS}
    return {(k, t): analyze(models[k], t).outputs["attn"] for k in models for t in TEXTS}


def test_the_config_names_every_replica_once_and_the_others_as_its_backups(tmp_path):
    ports = [8601, 8602, 8603]
    text = nginx_config(ports, "127.0.0.1:8600", tmp_path)
    for i, port in enumerate(ports):
        block = text.split(f"upstream {replica_name(i)} {{\n")[1].split("}")[0]
        servers = [line.split()[1] for line in block.strip().splitlines()]
        assert servers[0] == f"127.0.0.1:{port}" and "backup" not in block.splitlines()[0]
        assert sorted(servers[1:]) == sorted(f"127.0.0.1:{p}" for p in ports if p != port)
        assert block.count("backup") == len(ports) - 1 and block.count("max_fails=1") == 3
        assert f'"~(^|\\s)127\\.0\\.0\\.1:{port}$" {replica_name(i)};' in text  # $served_by
    assert "33.33% r0;" in text and "* r2;" in text and "@" not in text
    assert f"$cookie_{COOKIE}" in text and str(tmp_path) in text
    # The cookie names the replica that answered, and only a successful answer sets it.
    (cookie,) = [line for line in text.splitlines() if "Set-Cookie" in line]
    assert "=$served_by;" in cookie and "always" not in cookie
    assert "proxy_next_upstream error timeout http_502 http_503;" in text


def test_nginx_accepts_the_config(tmp_path):
    """``nginx -t`` on the filled-in config: every directive and map is valid."""
    conf = tmp_path / "nginx.conf"
    conf.write_text(nginx_config([8601, 8602], "127.0.0.1:8600", tmp_path))
    cmd = [nginx_binary(), "-t", "-p", str(tmp_path), "-c", str(conf), "-e", str(tmp_path / "e")]
    checked = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr


@pytest.mark.slow
def test_twenty_sessions_stay_on_their_replica_and_see_their_own_answers(attention):
    async def student(url: str, ws_url: str, i: int) -> str:
        cookie, replica = await asyncio.to_thread(visit, url)  # the page: a replica drawn
        query = link(i)
        async with Session(ws_url, query, headers={"Cookie": cookie}) as s:
            run = await s.open()
            want = attention[query["model"], query["text"]]
            assert is_right(run, want[query["layer"], query["head"]]), (i, run.exceptions())
            run = await s.set(("Head", "head"), "3")  # a click: the same session answers
            assert is_right(run, want[query["layer"], 3]), (i, run.exceptions())
        assert await asyncio.to_thread(visit, url, cookie) == (cookie, replica)  # still there
        return replica

    with replicas(2) as running:

        async def everyone():
            return await asyncio.gather(
                *(student(running.url, running.ws_url, i) for i in range(STUDENTS))
            )

        # its own thread: on a worker whose browser tests hold a sync Playwright (an
        # event loop in this thread), asyncio.run here would refuse to start
        with ThreadPoolExecutor(1) as thread:
            served = thread.submit(asyncio.run, everyone()).result()
        log = running.access_log()
        ports = {replica_name(i): f"127.0.0.1:{s.port}" for i, s in enumerate(running.servers)}
    assert sorted(set(served)) == ["r0", "r1"], served  # both replicas served students
    sockets = [entry for entry in log if entry["path"] == "/_stcore/stream"]
    assert len(sockets) == STUDENTS and {e["status"] for e in sockets} == {"101"}, sockets
    assert sorted(e["served"] for e in sockets) == sorted(served)  # each on its cookie's replica
    assert all(ports[e["served"]] == e["upstream"] for e in log), log  # where its cookie says
    assert all(e["asked"] == e["served"] for e in log), log  # nobody moved: all alive


def test_the_websocket_is_limited_per_address(tmp_path):
    """Issue #50: per client address, websockets at once and new ones a second are
    limited (``limit_conn`` / ``limit_req`` keyed on the address for /_stcore/stream
    only); ``test_nginx_accepts_the_config`` runs ``nginx -t`` on the same config."""
    text = nginx_config([8601, 8602], "127.0.0.1:8600", tmp_path)
    assert "/_stcore/stream $binary_remote_addr;" in text
    assert "limit_conn attnviz_ws_conn" in text and "limit_req zone=attnviz_ws_new" in text
