"""N replicas of the app behind nginx on one machine, each browser kept on its replica.

``python -m deploy.replicas --replicas 2 --listen 0.0.0.0:8501`` (``make serve-replicas
N=2``) starts N ``streamlit run app.py`` servers on free loopback ports (``launch.py``),
writes ``deploy/nginx.conf`` filled in for them into a temporary folder (its pid, logs and
buffers too) and runs Debian's nginx on it in the foreground until Ctrl+C. A browser's
first request draws a replica at random; a cookie (``attnviz_replica``) keeps its page,
its websocket and its uploads on that replica: a session, and an upload, lives in one
server's memory.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from deploy.launch import START_TIMEOUT_S, Server, free_port, serve, stop, wait_healthy

TEMPLATE = Path(__file__).with_name("nginx.conf")
COOKIE = "attnviz_replica"


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


def nginx_config(ports: list[int], listen: str, workdir: Path) -> str:
    """``deploy/nginx.conf`` for replicas on 127.0.0.1:``ports``, nginx on ``listen``
    (``host:port``), every file nginx writes under ``workdir``."""
    names = [replica_name(i) for i in range(len(ports))]
    share = f"{10_000 // len(ports) / 100:.2f}"  # nginx takes two decimals; the last: the rest
    split = [f"        {share}% {n};" for n in names[:-1]] + [f"        * {names[-1]};"]
    upstreams = [
        f"    upstream {n} {{\n        server 127.0.0.1:{p};\n    }}"
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
        "@UPSTREAMS@": "\n".join(upstreams),
    }
    text = TEMPLATE.read_text()
    for key, value in fields.items():
        text = text.replace(key, value)
    return text


@dataclass
class Replicas:
    """Running replicas: ``url`` (nginx), ``servers`` (replica i is ``servers[i]``,
    cookie value ``replica_name(i)``) and nginx's folder (``access.log``: one line per
    request, ``<replica> <upstream address> <status> <method> <path>``)."""

    url: str
    servers: list[Server]
    workdir: Path

    @property
    def ws_url(self) -> str:
        return self.url.replace("http://", "ws://", 1) + "/_stcore/stream"

    def access_log(self) -> list[list[str]]:
        """nginx's access log so far, one list of fields per request."""
        path = self.workdir / "access.log"
        return [line.split() for line in path.read_text().splitlines()] if path.exists() else []


@contextmanager
def replicas(
    n: int,
    listen: str | None = None,
    folder: Path | None = None,
    timeout_s: float = START_TIMEOUT_S,
) -> Iterator[Replicas]:
    """``n`` app servers and nginx in front of them until the block ends.

    Args:
        n: replicas (app servers), each its own process.
        listen: nginx's ``host:port``; None: a free port on 127.0.0.1.
        folder: the shipped models' folder of every replica (None: ``exported/``).
        timeout_s: seconds each server, and then nginx, may take to answer.

    Raises:
        FileNotFoundError: no nginx; RuntimeError: a server or nginx did not start
            (with its output).
    """
    if n < 1:
        raise ValueError(f"replicas: {n}; at least 1")
    binary = nginx_binary()
    listen = listen or f"127.0.0.1:{free_port()}"
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="attnviz-nginx-")))
        servers = [stack.enter_context(serve(folder=folder, timeout_s=timeout_s)) for _ in range(n)]
        conf = workdir / "nginx.conf"
        conf.write_text(nginx_config([s.port for s in servers], listen, workdir))
        log = workdir / "error.log"
        cmd = [binary, "-p", str(workdir), "-c", str(conf), "-e", str(log), "-g", "daemon off;"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        stack.callback(stop, proc)
        host, port = listen.rsplit(":", 1)
        url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '*') else host}:{port}"
        wait_healthy(url, timeout_s, proc, lambda: log.read_text() if log.exists() else "")
        yield Replicas(url, servers, workdir)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=2, help="app servers (default 2)")
    parser.add_argument("--listen", default="0.0.0.0:8501", help="nginx's host:port")
    parser.add_argument("--models", type=Path, default=None, help="the shipped models' folder")
    args = parser.parse_args(argv)
    with replicas(args.replicas, args.listen, args.models) as running:
        ports = ", ".join(f"{replica_name(i)} :{s.port}" for i, s in enumerate(running.servers))
        print(f"serving {running.url} through nginx ({args.listen}); replicas {ports}")
        print(f"nginx's config and logs: {running.workdir}; Ctrl+C stops everything")
        try:
            running.servers[0].process.wait()  # until Ctrl+C (or the first replica ends)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
