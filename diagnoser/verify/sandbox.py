"""`Sandbox`: runs one command on a throwaway copy under bubblewrap, bounded.

    sandbox = Sandbox.find(limits)              # SandboxUnavailable: bwrap/prlimit missing
    run = sandbox.run(["python", "repro.py"], copy=Path(".../scratch/ab12/repo"),
                      binds=(interpreter_prefix,))

What the command sees: a new, read-only root holding only the host's system folders
(`SYSTEM`) and the interpreter's own (bound read-only), an empty `/tmp` and home, and the
copy — the only writable place — at `COPY_MOUNT`; no home directory, no data directory,
no other repository. No network (its own network namespace: only a loopback that is
down), its own PID namespace with no reaper of bubblewrap's (`--as-pid-1`: whatever the
command leaves running dies when it ends, and its CPU time reaches our `RUSAGE_CHILDREN`,
which bubblewrap's own reaper would swallow), its own session (no terminal injection), an
environment of our own making (nothing of ours leaks: no `DIAGNOSER_*`, no provider
keys). Run as root, the command drops to an unprivileged user of its own
(`SANDBOX_UIDS`, `setpriv`), so the process-count limit holds (the kernel does not count
root's processes) and root-only files stay closed; its PID 1 is then a shell that stays
root and waits for it (`KEEPER`): bubblewrap's parent-death signal cannot reach another
user's process, and a service killed outright (kill -9, the OOM killer) left the command
running until its CPU limit, or for ever if it slept. Run as another user, bubblewrap
maps that user into a user namespace, and the command is PID 1 itself.

Limits (`prlimit`, inherited by every process inside): CPU seconds, address space, file
size, process count, open files, no core dumps; a wall-clock timeout that kills the
command, and with it the whole sandbox; output read as it comes and kept as its head
and its tail (a traceback is at the end), however much is written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import secrets
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

COPY_MOUNT = "/sandbox/repo"
"""Where the copy appears inside the sandbox; paths in its output are rewritten to
repository-relative ones by stripping it."""
SANDBOX_HOME = "/sandbox/home"
"""`HOME` inside: an empty tmpfs."""
SANDBOX_UIDS = range(100_000, 160_000)
"""Who runs the command when the service runs as root: an unprivileged user of no account,
drawn afresh for each run — the kernel counts processes per user, so two runs at once
(two jobs) never share a process limit, and a fork bomb in one cannot starve the other."""
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
"""The host's folders a command sees (read-only); nothing else of the host is there —
no home, no /tmp, no /run, no data directory, no other repository."""
OUTPUT_HEAD_BYTES = 16 * 1024
OUTPUT_TAIL_BYTES = 112 * 1024
"""Output kept: its start and its end (where a traceback is); the middle is dropped."""
READ_CHUNK = 64 * 1024
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
INFO_BYTES = 4096
"""What is read of bubblewrap's `--info-fd` (a small JSON object)."""
KEEPER = ("/bin/sh", "-c", '"$@"; exit $?', "sh")
"""PID 1 of a run as root: a shell that runs the rest of its arguments (`setpriv`, then
the command), waits, and exits with its status (128 + N for a signal, as bubblewrap says
it). It keeps our user, so the parent-death signal of `--die-with-parent` reaches it, and
a namespace dies with its PID 1. The `exit` keeps the shell from replacing itself with
the command."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one sandboxed command may use."""

    seconds: float = 30.0
    """Wall clock; past it the sandbox and everything in it is killed."""
    cpu_seconds: int = 30
    memory_bytes: int = 2 * 1024**3
    """Address space of each process."""
    file_bytes: int = 64 * 1024**2
    """Largest file it may write."""
    processes: int = 64
    """Processes and threads it may have at once (of the sandbox's user)."""
    open_files: int = 1024


@dataclass(frozen=True, slots=True)
class SandboxRun:
    """What one command did."""

    exit_code: int
    """Its exit status; negative: killed by that signal."""
    output: str
    """stdout and stderr interleaved, head and tail kept (`OUTPUT_*_BYTES`), the copy's
    mount point stripped from paths."""
    output_bytes: int
    """How much it wrote in all."""
    seconds: float
    timed_out: bool = False

    @property
    def cut(self) -> bool:
        return self.output_bytes > OUTPUT_HEAD_BYTES + OUTPUT_TAIL_BYTES


class SandboxUnavailable(Exception):
    """bubblewrap (or util-linux's `setpriv`/`prlimit`) is missing or cannot start."""


@dataclass(frozen=True, slots=True)
class Sandbox:
    bwrap: str
    prlimit: str
    setpriv: str | None
    """Set when running as root: the command drops to a user of `SANDBOX_UIDS` with it."""
    limits: Limits

    @classmethod
    def find(cls, limits: Limits | None = None) -> Sandbox:
        """The sandbox of this machine; SandboxUnavailable says what is missing."""
        root = os.geteuid() == 0
        tools = {name: shutil.which(name) for name in ("bwrap", "prlimit", "setpriv")}
        needed = ("bwrap", "prlimit", "setpriv") if root else ("bwrap", "prlimit")
        missing = [name for name in needed if not tools[name]]
        if missing:
            raise SandboxUnavailable(
                f"{' and '.join(missing)} not found: install Debian's bubblewrap"
                f"{' and util-linux' if 'bwrap' not in missing or len(missing) > 1 else ''}"
                " (nothing runs unsandboxed)"
            )
        return cls(tools["bwrap"] or "", tools["prlimit"] or "", tools["setpriv"] if root else None,
                   limits or Limits())  # fmt: skip

    def within(self, seconds: float) -> Sandbox:
        """This sandbox with its wall clock cut to `seconds` (what a budget has left)."""
        cut = dataclasses.replace(self.limits, seconds=max(1.0, min(self.limits.seconds, seconds)))
        return dataclasses.replace(self, limits=cut)

    def run(
        self,
        command: Sequence[str],
        *,
        copy: Path,
        binds: Sequence[Path] = (),
        env: Mapping[str, str] | None = None,
        workdir: str = COPY_MOUNT,
    ) -> SandboxRun:
        """Run `command` with `copy` writable at `COPY_MOUNT` and `binds` (an
        interpreter's folders) readable; never raises for what the command does."""
        uid = SANDBOX_UIDS[secrets.randbelow(len(SANDBOX_UIDS))]
        if self.setpriv:  # the dropped user must be able to write its copy
            _chown_tree(copy, uid)
        info, told = os.pipe()  # bubblewrap writes its PID 1's process id to `told`
        argv = [*self._limits(), self.bwrap, *self._mounts(copy, binds), *_namespaces(self.setpriv),
                "--info-fd", str(told), "--chdir", workdir, "--clearenv", *_environment(env),
                *self._user(uid), "--", *command]  # fmt: skip
        started = time.monotonic()
        try:
            process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                start_new_session=True, close_fds=True, pass_fds=(told,),
            )  # fmt: skip
        except OSError as exc:
            os.close(info)
            raise SandboxUnavailable(f"bubblewrap did not start: {exc.strerror or exc}") from None
        finally:
            os.close(told)
        output = _Output()
        reader = threading.Thread(target=output.drain, args=(process.stdout,), daemon=True)
        reader.start()
        timed_out = False
        try:
            process.wait(timeout=self.limits.seconds)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill(process, info)
        finally:
            os.close(info)
        reader.join(timeout=self.limits.seconds)
        seconds = time.monotonic() - started
        text = output.text().replace(f"{COPY_MOUNT}/", "").replace(COPY_MOUNT, ".")
        return SandboxRun(process.returncode, text, output.total, seconds, timed_out)

    def _limits(self) -> list[str]:
        limits = self.limits
        cpu = f"{limits.cpu_seconds}:{limits.cpu_seconds + 1}"  # SIGXCPU first, then SIGKILL
        return [
            self.prlimit, f"--cpu={cpu}", f"--as={limits.memory_bytes}",
            f"--fsize={limits.file_bytes}", f"--nproc={_process_limit(limits.processes)}",
            f"--nofile={limits.open_files}", "--core=0",
        ]  # fmt: skip

    def _mounts(self, copy: Path, binds: Sequence[Path]) -> list[str]:
        """A new, read-only root holding only the system's folders, the interpreter's,
        an empty /tmp and home, and the copy."""
        args = ["--tmpfs", "/"]
        for path in SYSTEM:
            if os.path.islink(path):  # merged /usr: /bin -> usr/bin
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        args += ["--dev", "/dev", "--proc", "/proc", "--perms", "1777", "--tmpfs", "/tmp"]
        bound: list[str] = [*SYSTEM]
        for path in sorted({str(p) for p in binds}, key=len):  # a parent before its children
            if not os.path.exists(path) or _under(path, bound):
                continue
            for parent in reversed(Path(path).parents[:-1]):  # made open, or `nobody` cannot pass
                if not _under(str(parent), bound):
                    args += ["--perms", "0755", "--dir", str(parent)]
            args += ["--ro-bind", path, path]
            bound.append(path)
        args += ["--perms", "0755", "--dir", "/sandbox", "--perms", "0777", "--dir", SANDBOX_HOME,
                 "--bind", str(copy), COPY_MOUNT, "--remount-ro", "/"]  # fmt: skip
        return args

    def _user(self, uid: int) -> list[str]:
        if not self.setpriv:
            return []
        return [*KEEPER, self.setpriv, "--reuid", str(uid), "--regid", str(uid), "--clear-groups",
                "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]  # fmt: skip


def _under(path: str, tops: Sequence[str]) -> bool:
    return any(path == top or path.startswith(f"{top}/") for top in tops)


def _namespaces(as_root: str | None) -> list[str]:
    args = ["--unshare-pid", "--as-pid-1", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session"]  # fmt: skip
    return args if as_root else ["--unshare-user", *args]


def _environment(env: Mapping[str, str] | None) -> list[str]:
    """Only what we set: the run sees none of the service's environment."""
    values = {"PATH": SAFE_PATH, "HOME": SANDBOX_HOME, "LANG": "C.UTF-8", "TMPDIR": "/tmp",
              **(env or {})}  # fmt: skip
    args: list[str] = []
    for name, value in values.items():
        args += ["--setenv", name, value]
    return args


def _process_limit(processes: int) -> int:
    """As root the command runs as a user of its own, whose count starts at zero; as another
    user the kernel counts every process of that user, the service's own threads too."""
    if os.geteuid() == 0:
        return processes
    return processes + _tasks_of(os.getuid())


def _tasks_of(uid: int) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += sum(1 for _ in (entry / "task").iterdir())
            except OSError:
                continue  # gone while we looked
    return count


def _chown_tree(top: Path, uid: int) -> None:
    for folder, dirs, files in os.walk(top):
        os.chown(folder, uid, uid)
        for name in (*dirs, *files):
            os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)


def _kill(process: subprocess.Popen[bytes], info: int) -> None:
    """Kill the PID 1 of the run's namespace (the command, or the `KEEPER` shell), which
    takes the rest of the sandbox with it, then bubblewrap's process group. Killing
    bubblewrap alone left the command running: it is in a session of its own, not in that
    group. `info` is the pipe of bubblewrap's `--info-fd`, which names PID 1's process id."""
    pid_1 = _pid_1(info)
    with contextlib.suppress(ProcessLookupError):
        if pid_1 is not None and process.poll() is None:  # not reaped: not reused
            os.kill(pid_1, signal.SIGKILL)
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _pid_1(info: int) -> int | None:
    """PID 1's process id, from what bubblewrap wrote to its `--info-fd`
    (`{"child-pid": N, …}`); None when it wrote nothing readable."""
    os.set_blocking(info, False)
    try:
        said = json.loads(os.read(info, INFO_BYTES) or b"null")
    except (BlockingIOError, ValueError):
        return None
    pid = said.get("child-pid") if isinstance(said, dict) else None
    return pid if isinstance(pid, int) and pid > 1 else None


class _Output:
    """A stream's head and tail, however long it runs."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def drain(self, stream: object) -> None:
        read = stream.read1 if hasattr(stream, "read1") else stream.read  # type: ignore[attr-defined]
        while chunk := read(READ_CHUNK):
            self.total += len(chunk)
            room = OUTPUT_HEAD_BYTES - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            self.tail += chunk
            if len(self.tail) > 2 * OUTPUT_TAIL_BYTES:
                del self.tail[: len(self.tail) - OUTPUT_TAIL_BYTES]

    def text(self) -> str:
        tail = self.tail[-OUTPUT_TAIL_BYTES:]
        dropped = self.total - len(self.head) - len(tail)
        gap = f"\n[… {dropped:,} bytes of output not kept …]\n".encode() if dropped > 0 else b""
        return (bytes(self.head) + gap + bytes(tail)).decode("utf-8", "replace")
