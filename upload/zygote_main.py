"""The upload workers' zygote process: ``python -I upload/zygote_main.py FD``, started by
``upload/zygote.py`` (the server's side, which never imports this module: it forks
workers, which run ``upload.worker``). Preloads ``PRELOAD``, says it is ready on the
socket FD, then forks one worker per request and reports each one's exit status.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path[0] = str(Path(__file__).resolve().parents[1])  # the project, not upload/

from upload.zygote import IDLE_S, MESSAGE_BYTES, PRELOAD, STATUS  # noqa: E402


def _child(ask: dict, fds: list[int], sock: socket.socket, children: dict) -> None:
    """In the forked worker: its own process group, the request's stdin, stdout, stderr,
    working folder and environment, none of the zygote's descriptors; then ``serve``."""
    code = 1
    try:
        os.setpgid(0, 0)
        sock.close()
        for pidfd, (_, status_w) in children.items():
            os.close(pidfd)
            os.close(status_w)
        os.close(fds[3])
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(ask["cwd"])
        os.environ.clear()
        os.environ.update(ask["env"])
        from upload import worker

        worker.serve(
            int(ask["args"][0]), float(ask["args"][1]), int(ask["args"][2]), *ask["args"][3:4]
        )
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - the worker's last words go to its stderr
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def main(sock_fd: int) -> None:
    """Preload, say "ready", then fork a worker per request and report each one's exit
    status, until the server closes the socket or ``IDLE_S`` pass without a worker."""
    import importlib

    sock = socket.socket(fileno=sock_fd)
    for name in PRELOAD:
        importlib.import_module(name)
    if "onnxruntime" in sys.modules or len(os.listdir("/proc/self/task")) > 1:
        raise SystemExit("upload zygote: a second thread after the preload (not fork-safe)")
    sock.send(b'{"ready": true}')
    children: dict[int, tuple[int, int]] = {}  # pidfd -> (pid, status pipe's write end)
    while True:
        readable = select.select([sock, *children], [], [], IDLE_S)[0]
        if not readable and not children:
            return
        for fd in readable:
            if fd in children:  # a worker exited: reap it and say how
                pid, status_w = children.pop(fd)
                code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
                with contextlib.suppress(OSError):
                    os.write(status_w, STATUS.pack(code))
                os.close(status_w)
                os.close(fd)
                continue
            data, fds, _, _ = socket.recv_fds(sock, MESSAGE_BYTES, 4)
            if not data:  # the server is gone
                return
            ask = json.loads(data)
            pid = os.fork()
            if pid == 0:
                _child(ask, fds, sock, children)
            pidfd = os.pidfd_open(pid)
            children[pidfd] = (pid, fds[3])
            for fd in fds[:3]:
                os.close(fd)
            socket.send_fds(sock, [json.dumps({"pid": pid}).encode()], [pidfd])


if __name__ == "__main__":
    main(int(sys.argv[1]))
