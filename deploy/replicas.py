"""N replicas of the app behind nginx on one machine, each browser kept on its replica.

``python -m deploy.replicas --replicas 2 --listen 0.0.0.0:8501`` (``make serve-replicas
N=2``) starts N ``streamlit run app.py`` servers on free loopback ports (``launch.py``),
writes ``deploy/nginx.conf`` filled in for them into a temporary folder (its pid, logs and
buffers too) and runs Debian's nginx on it until Ctrl+C or SIGTERM. A browser's first
request draws a replica at random; a cookie (``attnviz_replica``) keeps its page, its
websocket and its uploads on that replica: a session, and an upload, lives in one
server's memory. A replica that stops answering is skipped by nginx: its students move to
a live one, the cookie with them, and the page says so (``ui.reconnect``). A replica that
exits is started again on its port, and so is nginx (``deploy/supervise.py``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from deploy.launch import START_TIMEOUT_S, Server, free_port, spawn, stop, wait_healthy
from deploy.supervise import Child, Supervisor

TEMPLATE = Path(__file__).with_name("nginx.conf")
COOKIE = "attnviz_replica"
FAIL_TIMEOUT_S = 5  # nginx skips a replica that failed for this long, then tries it again


def nginx_binary() -> str:
    """Debian's nginx (``/usr/sbin`` is not on an unprivileged user's PATH).

    Raises:
        FileNotFoundError: naming the package to install (``make nginx`` does).
    """
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    if not found:
        raise FileNotFoundError("nginx is not installed: `make nginx` (Debian package nginx)")
    return found


def replica_name(i: int) -> str:
    """The cookie's value and the upstream's name of replica ``i``: r0, r1, ..."""
    return f"r{i}"


def _upstream(i: int, ports: list[int]) -> str:
    """Upstream ``r<i>``: replica i, then every other replica as a backup."""
    own = f"        server 127.0.0.1:{ports[i]} max_fails=1 fail_timeout={FAIL_TIMEOUT_S}s;"
    backups = [
        f"        server 127.0.0.1:{p} backup max_fails=1 fail_timeout={FAIL_TIMEOUT_S}s;"
        for j, p in enumerate(ports)
        if j != i
    ]
    return "\n".join([f"    upstream {replica_name(i)} {{", own, *backups, "    }"])


def nginx_config(ports: list[int], listen: str, workdir: Path) -> str:
    """``deploy/nginx.conf`` for replicas on 127.0.0.1:``ports``, nginx on ``listen``
    (``host:port``), every file nginx writes under ``workdir``."""
    names = [replica_name(i) for i in range(len(ports))]
    share = f"{10_000 // len(ports) / 100:.2f}"  # nginx takes two decimals; the last: the rest
    split = [f"        {share}% {n};" for n in names[:-1]] + [f"        * {names[-1]};"]
    # $upstream_addr lists every server tried ("a, b"): the last one answered.
    served = [
        f'        "~(^|\\s){re.escape(f"127.0.0.1:{p}")}$" {n};'
        for n, p in zip(names, ports, strict=True)
    ]
    # Run as root (a container), nginx would hand its workers to "nobody", who cannot
    # write into the temporary folder: they stay the user who started it.
    user = "user root;" if os.geteuid() == 0 else ""
    fields = {
        "@USER@": user,
        "@WORKDIR@": str(workdir),
        "@LISTEN@": listen,
        "@SPLIT@": "\n".join(split),
        "@KNOWN@": "\n".join(f"        {n} {n};" for n in names),
        "@SERVED@": "\n".join(served),
        "@UPSTREAMS@": "\n".join(_upstream(i, ports) for i in range(len(ports))),
    }
    text = TEMPLATE.read_text()
    for key, value in fields.items():
        text = text.replace(key, value)
    return text


@dataclass
class Replicas:
    """Running replicas: ``url`` (nginx), ``servers`` (replica i is ``servers[i]``,
    cookie value ``replica_name(i)``; a restarted replica's new process replaces it),
    nginx's folder (``access.log``) and the supervisor's ``children`` (their restarts)."""

    url: str
    servers: list[Server]
    workdir: Path
    children: list[Child]

    @property
    def ws_url(self) -> str:
        return self.url.replace("http://", "ws://", 1) + "/_stcore/stream"

    def access_log(self) -> list[dict[str, str]]:
        """nginx's access log so far, one dict per request: ``served`` (the replica that
        answered), ``status``, ``method``, ``path``, ``asked`` (the cookie's or the
        drawn replica) and ``upstream`` (the servers tried, ``"a, b"`` when moved)."""
        path = self.workdir / "access.log"
        lines = path.read_text().splitlines() if path.exists() else []
        keys = ("served", "status", "method", "path", "asked", "upstream")
        return [dict(zip(keys, line.split(" ", 5), strict=False)) for line in lines]


def _nginx(binary: str, workdir: Path) -> subprocess.Popen:
    conf, log = workdir / "nginx.conf", workdir / "error.log"
    cmd = [binary, "-p", str(workdir), "-c", str(conf), "-e", str(log), "-g", "daemon off;"]
    return subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True
    )


def _replica_child(i: int, servers: list[Server], folder: Path | None) -> Child:
    """Replica ``i`` as a supervised child: each start replaces ``servers[i]``, same port."""

    def start() -> subprocess.Popen:
        old = servers[i] if i < len(servers) else None
        server, proc = spawn(folder=folder, port=old.port if old else None, detach=True)
        if old is not None:
            old._log.close()
            servers[i] = server
        else:
            servers.append(server)
        return proc

    return Child(f"replica {replica_name(i)}", start)


@contextmanager
def replicas(
    n: int,
    listen: str | None = None,
    folder: Path | None = None,
    timeout_s: float = START_TIMEOUT_S,
    say=None,
) -> Iterator[Replicas]:
    """``n`` app servers and nginx in front of them, supervised, until the block ends;
    then every process is stopped and the temporary folder removed.

    Args:
        n: replicas (app servers), each its own process.
        listen: nginx's ``host:port``; None: a free port on 127.0.0.1.
        folder: the shipped models' folder of every replica (None: ``exported/``).
        timeout_s: seconds each server, and then nginx, may take to answer.
        say: receives the supervisor's one line per exit (None: printed).

    Raises:
        FileNotFoundError: no nginx; RuntimeError: a server or nginx did not start
            (with its output).
    """
    if n < 1:
        raise ValueError(f"replicas: {n}; at least 1")
    binary = nginx_binary()
    listen = listen or f"127.0.0.1:{free_port()}"
    servers: list[Server] = []
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="attnviz-nginx-")))
        children = [_replica_child(i, servers, folder) for i in range(n)]
        stack.callback(lambda: [s._log.close() for s in servers])
        stack.callback(lambda: [stop(c.proc) for c in children if c.proc is not None])
        for child in children:  # all at once: they start in parallel
            child.proc, child.started = child.start(), time.monotonic()
        for child, server in zip(children, servers, strict=True):
            wait_healthy(server.url, timeout_s, child.proc, server.log)
        (workdir / "nginx.conf").write_text(
            nginx_config([s.port for s in servers], listen, workdir)
        )
        log = workdir / "error.log"
        proxy = Child("nginx", lambda: _nginx(binary, workdir))
        proxy.proc, proxy.started = proxy.start(), time.monotonic()
        stack.callback(lambda: stop(proxy.proc))
        host, port = listen.rsplit(":", 1)
        url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '*') else host}:{port}"
        wait_healthy(url, timeout_s, proxy.proc, lambda: log.read_text() if log.exists() else "")
        supervisor = Supervisor([*children, proxy], say).start()
        stack.callback(supervisor.close)  # first out: no restart while the rest stop
        yield Replicas(url, servers, workdir, children)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt  # SIGTERM (a process manager) stops everything as Ctrl+C does


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=2, help="app servers (default 2)")
    parser.add_argument("--listen", default="0.0.0.0:8501", help="nginx's host:port")
    parser.add_argument("--models", type=Path, default=None, help="the shipped models' folder")
    args = parser.parse_args(argv)
    for signum in (signal.SIGINT, signal.SIGTERM):  # SIGINT too: a shell's `cmd &` ignores it
        signal.signal(signum, _interrupt)
    try:
        with replicas(args.replicas, args.listen, args.models) as running:
            ports = ", ".join(f"{replica_name(i)} :{s.port}" for i, s in enumerate(running.servers))
            print(f"serving {running.url} through nginx ({args.listen}); replicas {ports}")
            print(
                f"nginx's config and logs: {running.workdir}; Ctrl+C stops everything", flush=True
            )
            threading.Event().wait()  # until Ctrl+C or SIGTERM; the supervisor restarts
    except KeyboardInterrupt:
        print("stopped: every replica and nginx", flush=True)


if __name__ == "__main__":
    main()
