"""The upload worker: one child process per uploaded model, fenced in by the OS.

Started by ``upload/client.py`` as ``python -I upload/worker.py MEMORY_BYTES IDLE_S
FILE_BYTES [idle|normal]``, or, for an upload's conversion or an export, forked by the server's
zygote (``upload/zygote.py``, which has imported torch) to run :func:`serve` alike.
Before it imports anything that parses, the server's worker (``idle``, the default) puts
itself in the SCHED_IDLE scheduling class (it runs only on CPU time the server's own
threads leave free; an unprivileged process cannot leave that class again, so it keeps
it for life); the command line's (``normal``) keeps its normal priority, since on its
user's own computer it competes with their other work, not with a classroom. Either
limits itself with stdlib ``resource``:
address space (RLIMIT_AS), no file larger than FILE_BYTES written (RLIMIT_FSIZE: 1 MiB
for a reader of user bytes, which reads everything from memory and writes only its
stderr log; more for the exporter, which writes graphs), no core dumps, and CPU seconds
(RLIMIT_CPU: the soft limit is each request's budget, the hard one a lifetime's). The
server keeps a deadline on every request (the worker's CPU time, up to three times that
on the wall clock: ``upload.deadline.Deadline``) and kills the worker past it. It imports torch,
onnx or onnxruntime only when a request needs them. All parsing of a
user's bytes happens here: unpickling, safetensors headers, tokenizer JSON, ONNX
protobuf, checks, trial runs, and every run of an uploaded ONNX graph.

Requests and replies are ``upload/protocol.py`` messages on stdin and on a private copy
of stdout (fd 1 itself is pointed at stderr, so a library's print cannot corrupt the
protocol). A request's header has ``op`` (``convert``, ``open``, ``inspect``, ``logits``,
``recurrent``, ``generate``, ``export`` for checked weights, and for the command line's
files, read by path: ``convert_local`` (checkpoint files), ``convert_folder`` (a
Hugging Face folder) and ``fold_onnx`` (an .onnx and its external data)) and ``cpu_s``;
the reply is ``{"ok": true, ...}`` with arrays, or ``{"ok": false, "error": "one
line"}``. Any exception, ``BaseException`` from native code included (the tokenizers
library's ``PanicException``), becomes such a line. After a
request in ``ONE_SHOT`` (the conversions and ``export``) the worker exits; after ``open``
it serves analyses until stdin closes or it has been idle for IDLE_S seconds.
"""

import os
import resource
import select
import sys
from pathlib import Path

LIFETIME_CPU_S = 3600  # hard CPU limit of one worker; past it, the next request starts a new one
# a user's checkpoint -> weights; the command line's .onnx -> one self-contained graph
CONVERSIONS = ("convert", "convert_local", "convert_folder", "fold_onnx")
READS = (*CONVERSIONS, "open")  # requests that read a user's files
ONE_SHOT = (*CONVERSIONS, "export")  # the worker exits after answering one


def _yield_cpu() -> None:
    """SCHED_IDLE (weight 3 against a normal thread's 1024, preempted by any waking one):
    the classroom's own requests come first. Where that class does not exist, nice 19.
    ``ATTNVIZ_WORKER_PRIORITY=normal`` keeps the normal priority: on a machine whose CPU
    other jobs hold (a shared test host), an idle-class worker would wait for them all."""
    if os.environ.get("ATTNVIZ_WORKER_PRIORITY") == "normal":
        return
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        os.nice(19)


def _limit(memory_bytes: int, file_bytes: int, priority: str = "idle") -> None:
    if priority != "normal":
        _yield_cpu()
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (LIFETIME_CPU_S, LIFETIME_CPU_S))


def _cpu_budget(seconds: float) -> None:
    """Allow ``seconds`` more CPU time from now: the soft limit moves (SIGXCPU ends the
    worker past it); the hard limit, which an unprivileged process cannot raise, stays."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    soft = min(int(used + seconds) + 1, LIFETIME_CPU_S)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, LIFETIME_CPU_S))


def _one_line(exc: BaseException, op: object) -> tuple[str, str]:
    """The reply's one line for an exception raised while handling ``op``, and the
    library's own text for the server's log ("" when the line is all there is): a
    library's message (onnxruntime's names its C++ source files) never reaches the page."""
    from upload.errors import LibraryRefusal, UploadError, library_of, library_text

    runtime = sys.modules.get("inference.sessions")  # imported only if a graph was opened
    detail = exc.detail if isinstance(exc, LibraryRefusal) else ""
    if isinstance(exc, UploadError) or (runtime and isinstance(exc, runtime.ModelRunError)):
        text = str(exc)
    elif isinstance(exc, MemoryError):
        text = "refused: it needed more memory than an upload may use"
    elif isinstance(exc, RecursionError):
        text = "refused: it is nested too deeply to read"
    elif op not in READS and isinstance(exc, ValueError):
        text = str(exc)
    elif "bad_alloc" in str(exc) or "Failed to allocate" in str(exc):
        text, detail = "refused: it needed more memory than an upload may use", library_text(exc)
    else:
        text = (
            f"could not be read: {library_of(exc)} raised {type(exc).__name__} on it (its "
            "message is in the server's log); check that the file opens on your computer, "
            "or export it again"
        )
        detail = library_text(exc)
    if "bad_alloc" in text or "Failed to allocate" in text:
        text = f"it needed more memory than an upload may use ({text})"
    return " ".join(text.split())[:600], detail


def serve(memory_bytes: int, idle_s: float, file_bytes: int, priority: str = "idle") -> None:
    """Answer requests until stdin closes, ``convert`` is done, or ``idle_s`` pass idle;
    ``priority`` "normal" (the command line) skips SCHED_IDLE."""
    reply_fd = os.dup(1)
    os.dup2(2, 1)  # a library's print goes to stderr, never into the protocol
    _limit(memory_bytes, file_bytes, priority)
    sys.path[0] = str(Path(__file__).resolve().parents[1])  # the project, not upload/
    from upload import export_handler, handlers, local_handlers, protocol
    from upload.limits import MAX_HEADER_BYTES, MAX_REPLY_BYTES

    model = None
    while True:
        if not select.select([0], [], [], idle_s)[0]:
            return
        try:
            header = protocol.read_header(0, None, MAX_HEADER_BYTES)
            arrays, blobs = protocol.read_payload(0, header, None, MAX_REPLY_BYTES)
        except Exception:  # the server closed the pipe or sent garbage: nothing to answer
            return
        op = header.get("op")
        _cpu_budget(float(header.get("cpu_s", 10)))
        try:
            if op == "convert":
                reply, out = handlers.convert(blobs)
            elif op == "convert_local":  # the command line: files by path, never the app
                reply, out = local_handlers.convert_local(header)
            elif op == "convert_folder":  # the command line: a folder by path, never the app
                reply, out = local_handlers.convert_folder(header)
            elif op == "fold_onnx":  # the command line: an .onnx by path, never the app
                reply, out = local_handlers.fold_onnx(header)
            elif op == "export":
                reply, out = export_handler.export(header, arrays)
            elif op == "open":
                reply, model = handlers.open_graphs(blobs)
                out = {}
            elif model is None:
                raise ValueError("no graph is open")
            else:
                reply, out = handlers.analyse(model, op, header)
            reply = {"ok": True, **reply}
        except BaseException as exc:  # noqa: BLE001 - PanicException is a BaseException
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            line, detail = _one_line(exc, op)
            names = list(blobs) or list(header.get("paths") or {})
            if not names and header.get("folder"):
                names = [f"{Path(str(header['folder'])).name}/"]
            if op in READS and not any(line.startswith(str(n)) for n in names):
                line = f"{' + '.join(map(str, names))}: {line}"  # name the file
            reply, out = {"ok": False, "error": line[:600], "detail": detail[:4000]}, {}
        del arrays, blobs
        protocol.write(reply_fd, reply, out)
        if op in ONE_SHOT or (op == "open" and not reply["ok"]):
            return


if __name__ == "__main__":
    serve(int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:5])
