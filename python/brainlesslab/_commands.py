"""check, run, inspect and decode: the CLI's own commands, run in-process.

Each call builds the command line the CLI would get and hands it to
``bl_cli_embed_run`` (src/cli/embed.h) in libbrainlesslab.so: the same
parser, defaults, validation, execution and error lines as ``brainlesslab``,
with stdout and stderr captured instead of printed. A failure raises the
exception the error line names (``brainlesslab: <Kind>: <message>``) with
the line's message; a bad option value, which the CLI's parser refuses
with exit code 2, raises ValueError with the parser's message.

Stop requests: the C call runs in a worker thread while the calling (main)
thread waits, so Python's own SIGINT handling goes on. On Ctrl-C the waiting
thread asks the command to stop (``bl_cli_embed_interrupt``: a run fails
its record and ends at the next tick), waits for it, and raises
KeyboardInterrupt. cffi releases the GIL around the call, so other Python
threads run meanwhile.
"""

import collections
import json
import os
import re
import signal
import threading

from ._native import open_library

_ffi, _lib = open_library("""
typedef struct bl_cli_embed_result {
    int exit_code;
    char *out;
    size_t out_len;
    char *err;
    size_t err_len;
} bl_cli_embed_result;
int bl_cli_embed_run(int argc, char **argv, bl_cli_embed_result *res);
void bl_cli_embed_interrupt(int sig);
void bl_cli_embed_free(void *p);
""")

# The exception classes of the error kinds (src/core/status.c,
# spec/platform.md): Python's built-ins of the same names.
_KINDS = {
    "ValueError": ValueError,
    "TypeError": TypeError,
    "KeyError": KeyError,
    "MemoryError": MemoryError,
    "FileExistsError": FileExistsError,
    "FileNotFoundError": FileNotFoundError,
    "IsADirectoryError": IsADirectoryError,
    "OSError": OSError,
    "RuntimeError": RuntimeError,
    "KeyboardInterrupt": KeyboardInterrupt,
    "SystemExit": SystemExit,
}

_ERROR_LINE = re.compile(r"^brainlesslab: (\w+): (.*)$")
_USAGE_LINE = re.compile(r"^brainlesslab(?: \S+)?: error: (.*)$")


# What one in-process command printed (bytes) and how it ended.
CommandResult = collections.namedtuple("CommandResult", "exit_code stdout stderr")


def _call(argv):
    """Runs the command line (without the program name) in this thread."""
    args = [_ffi.new("char[]", os.fsencode(a)) for a in ["brainlesslab", *argv]]
    c_argv = _ffi.new("char *[]", args + [_ffi.NULL])
    res = _ffi.new("bl_cli_embed_result *")
    if _lib.bl_cli_embed_run(len(args), c_argv, res) != 0:
        raise MemoryError("cannot capture the command's output")
    try:
        out = bytes(_ffi.buffer(res.out, res.out_len)) if res.out else b""
        err = bytes(_ffi.buffer(res.err, res.err_len)) if res.err else b""
    finally:
        _lib.bl_cli_embed_free(res.out)
        _lib.bl_cli_embed_free(res.err)
    return CommandResult(res.exit_code, out, err)


def _call_interruptibly(argv):
    """_call in a worker thread, the caller waiting; Ctrl-C stops the
    command and re-raises once it has stopped."""
    if threading.current_thread() is not threading.main_thread():
        return _call(argv)  # only the main thread receives KeyboardInterrupt
    box = {"cancelled": False, "entered": False}
    turn = threading.Lock()  # orders "cancelled" against "entered"
    finished = threading.Event()

    def work():
        try:
            with turn:
                if box["cancelled"]:
                    return
                box["entered"] = True
            box["result"] = _call(argv)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e
        finally:
            finished.set()

    # Waiting on an Event, not on Thread.join: a join cut short by
    # KeyboardInterrupt can leave the thread reported as finished early.
    worker = threading.Thread(target=work, name="brainlesslab-command", daemon=True)
    try:
        worker.start()
        finished.wait()
    except KeyboardInterrupt:
        # Ctrl-C may come while the worker is being started: a command not
        # yet entered is cancelled; one entered is asked to stop, again and
        # again, since it may not yet have reached the point where its flag
        # is cleared. Further Ctrl-Cs only repeat the request: the record
        # must be failed, not abandoned.
        with turn:
            box["cancelled"] = True
            entered = box["entered"]
        while entered and not finished.is_set():
            _lib.bl_cli_embed_interrupt(signal.SIGINT)
            try:
                finished.wait(0.05)
            except KeyboardInterrupt:
                pass
        raise
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["result"]


def raise_for(result):
    """Raises the exception of the command's error line, if it printed one."""
    if result.exit_code == 0:
        return  # stderr holds a run's summary lines then, never an error
    lines = result.stderr.decode("utf-8", "replace").splitlines()
    if result.exit_code == 2:
        for line in reversed(lines):
            m = _USAGE_LINE.match(line)
            if m:
                raise ValueError(m.group(1))
    for line in reversed(lines):
        m = _ERROR_LINE.match(line)
        if m:
            kind, message = m.groups()
            raise _KINDS.get(kind, RuntimeError)(message)
    if result.exit_code not in (0, 1):
        raise RuntimeError(f"brainlesslab exited {result.exit_code}: " + "\n".join(lines[-3:]))


def command(argv):
    """Runs `brainlesslab argv...` in-process (check, run, inspect, decode)
    and returns its CommandResult; raises the exception of its error line."""
    result = _call_interruptibly([os.fspath(a) for a in argv])
    raise_for(result)
    return result


def _json(result):
    return json.loads(result.stdout.decode("utf-8"))


def check(path):
    """The resolved plan, as ``brainlesslab check PATH`` prints it, as a dict."""
    return _json(command(["check", "--", path]))


def inspect(path):
    """The inspection map of a record, as ``brainlesslab inspect PATH``
    prints it (for an incomplete or failed record too: see its "status")."""
    return _json(command(["inspect", "--", path]))


def _option(argv, name, value):
    """Appends --name=value (or one value per item for a list), unless None."""
    if value is None:
        return
    if isinstance(value, (list, tuple)):
        argv.append(f"--{name}")
        argv.extend(_text(v) for v in value)
    else:
        argv.append(f"--{name}={_text(value)}")


def _text(value):
    """An option value as the CLI's text: the CLI's parser, not Python, says
    what is acceptable (a float where an int belongs is its error too)."""
    if isinstance(value, float):
        return repr(value)
    return os.fsdecode(value) if isinstance(value, (bytes, os.PathLike)) else str(value)


def run_argv(path, root, *, backend=None, batch_size=None, memory_budget_mib=None,
             recording=None, recording_budget_mib=None, cpu_threads=None, calibration=None,
             shard=None):
    """The CLI command line of run(...); None leaves an option at the CLI's default."""
    argv = ["run"]
    _option(argv, "root", root)
    _option(argv, "shard", shard)
    _option(argv, "backend", backend)
    _option(argv, "batch-size", batch_size)
    _option(argv, "memory-budget-mib", memory_budget_mib)
    _option(argv, "recording", recording)
    _option(argv, "recording-budget-mib", recording_budget_mib)
    _option(argv, "cpu-threads", cpu_threads)
    if calibration is not None:
        sources = [calibration] if isinstance(calibration, (str, bytes, os.PathLike)) else calibration
        for source in sources:
            _option(argv, "calibration", source)
    argv += ["--", path]
    return argv


def decode_argv(record, *, points=None, fit=None, validation=None, evaluation=None,
                lambdas=None, split_seed=None, permutation_seed=None, memory_budget_mib=None,
                out=None):
    """The CLI command line of decode(...)."""
    argv = ["decode"]
    if isinstance(points, str):
        points = [points]
    _option(argv, "points", None if points is None else list(points))
    _option(argv, "fit", fit)
    _option(argv, "validation", validation)
    _option(argv, "evaluation", evaluation)
    _option(argv, "lambdas", None if lambdas is None else list(lambdas))
    _option(argv, "split-seed", split_seed)
    _option(argv, "permutation-seed", permutation_seed)
    _option(argv, "memory-budget-mib", memory_budget_mib)
    _option(argv, "out", out)
    argv += ["--", record]
    return argv
