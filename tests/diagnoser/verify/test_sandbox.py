"""Real bubblewrap runs: what a hostile reproducer can and cannot do. Each is contained,
says what stopped it, and leaves nothing outside its copy."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

from diagnoser.verify import sandbox as sandbox_module
from diagnoser.verify.sandbox import (
    COPY_MOUNT,
    SANDBOX_UIDS,
    Limits,
    Sandbox,
    SandboxUnavailable,
)

PYTHON = sys.executable
BINDS = tuple(Path(p) for p in {sys.prefix, sys.base_prefix, *sys.path} if p and Path(p).exists())


FORK_BOMB = """
import os, time
children = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        children += 1
except OSError as exc:
    print("stopped after", children, type(exc).__name__)
"""
"""Forks until the process limit refuses; its children would outlive a run by far."""
NO_NETWORK = """
import socket
try:
    socket.create_connection(("pypi.org", 443), timeout=3)
    print("CONNECTED")
except OSError:
    print("no network")
"""
FILL_AND_HOLD = """
import os, time
try:
    while True:
        if os.fork() == 0:
            time.sleep(4)
            os._exit(0)
except OSError:
    time.sleep(4)
"""

SERVICE = """
import json, sys
from pathlib import Path
from diagnoser.verify.sandbox import Limits, Sandbox
copy, binds = Path(sys.argv[1]), tuple(Path(p) for p in json.loads(sys.argv[2]))
sandbox = Sandbox.find(Limits(seconds=60, cpu_seconds=60))
sandbox.run([sys.executable, "hostile.py"], copy=copy, binds=binds)
"""
"""A service that runs one sandboxed command (`hostile.py` in the copy given)."""
WRITES_FOREVER = "import time\nwhile True:\n open('alive', 'a').write('x'); time.sleep(0.05)"
"""Appends to `alive` until it is killed."""


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    tree = tmp_path / "copy"
    tree.mkdir()
    return tree


def _run(copy: Path, code: str, limits: Limits | None = None, **env: str):
    (copy / "hostile.py").write_text(textwrap.dedent(code))
    sandbox = Sandbox.find(limits or Limits(seconds=20, cpu_seconds=20))
    return sandbox.run([PYTHON, "hostile.py"], copy=copy, binds=BINDS, env=env)


def test_the_copy_is_the_only_writable_place_and_paths_come_back_relative(
    copy: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    run = _run(
        copy,
        f"""
        import os
        open("made.txt", "w").write("ok")
        for path in ({str(outside)!r}, "/etc/diagnoser-x", "/usr/x", {str(Path.cwd())!r} + "/x"):
            try:
                open(path, "w").write("escaped")
                print("WROTE", path)
            except OSError as exc:
                print("refused", type(exc).__name__)
        raise KeyError(os.getcwd())
    """,
    )
    assert "WROTE" not in run.output and run.output.count("refused") == 4
    assert (copy / "made.txt").read_text() == "ok"
    assert not outside.exists()
    assert 'File "hostile.py"' in run.output and COPY_MOUNT not in run.output
    assert run.exit_code != 0 and "KeyError" in run.output


def test_no_network(copy: Path) -> None:
    run = _run(
        copy,
        """
        import socket
        for host, port in (("pypi.org", 443), ("127.0.0.1", 5432), ("1.1.1.1", 53)):
            try:
                socket.create_connection((host, port), timeout=3)
                print("CONNECTED", host)
            except OSError as exc:
                print("no route", host)
    """,
    )
    assert "CONNECTED" not in run.output and run.output.count("no route") == 3


def test_no_secrets_home_or_environment(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSER_MODEL_API_KEY", "sk-leak-me")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-leak-me-too")
    home = Path.home()
    run = _run(
        copy,
        f"""
        import os
        print(sorted(os.environ))
        print("leak" in repr(dict(os.environ)))
        for path in ({str(home / ".ssh")!r}, {str(home)!r}, "/etc/shadow", "/work", "/tmp"):
            try:
                print(path, os.listdir(path))
            except OSError as exc:
                print(path, "refused")
    """,
    )
    assert "sk-leak" not in run.output and "DIAGNOSER" not in run.output
    assert "\nFalse\n" in run.output
    assert f"{home / '.ssh'} refused" in run.output or f"{home / '.ssh'} []" in run.output
    assert "/etc/shadow refused" in run.output
    assert "/tmp []" in run.output  # its own, empty


def test_a_fork_bomb_hits_the_process_limit(copy: Path) -> None:
    run = _run(copy, FORK_BOMB, Limits(seconds=20, processes=32))
    assert "stopped after" in run.output and "BlockingIOError" in run.output
    assert int(run.output.split("stopped after")[1].split()[0]) < 32
    assert run.seconds < 15  # the sleeping children died with the sandbox


def test_an_endless_loop_is_killed_at_the_wall_clock(copy: Path) -> None:
    run = _run(copy, "while True: pass", Limits(seconds=2, cpu_seconds=60))
    assert run.timed_out and run.seconds < 10


def test_a_timed_out_run_leaves_nothing_running(copy: Path) -> None:
    """The command and all it started die at the wall clock, not at their CPU limit (as
    root the command runs as its own user, and killing bubblewrap alone left it on)."""
    started = (
        f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', {WRITES_FOREVER!r}])\n"
    )
    run = _run(copy, started + WRITES_FOREVER, Limits(seconds=1, cpu_seconds=60))
    assert run.timed_out and run.seconds < 5  # the output's pipe closed: nothing holds it
    assert _stops_writing(copy)


def test_a_run_ends_with_the_service_that_started_it(copy: Path) -> None:
    """A service killed outright (kill -9, the OOM killer) takes its run with it: as root
    the command runs as a user of its own, whom bubblewrap's parent-death signal does not
    reach, and it ran on until its CPU limit, or for ever."""
    (copy / "hostile.py").write_text(WRITES_FOREVER)
    binds = json.dumps([str(path) for path in BINDS])
    service = subprocess.Popen([PYTHON, "-c", SERVICE, str(copy), binds])
    try:
        deadline = time.monotonic() + 30
        while not (copy / "alive").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (copy / "alive").exists(), "the run never started"
    finally:
        service.kill()
        service.wait()
    assert _stops_writing(copy)


def _stops_writing(copy: Path, within: float = 10.0) -> bool:
    """Whether `alive` stops growing (for half a second) within `within` seconds: what
    was left running wrote on until its CPU limit (60 s), or for ever."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        size = (copy / "alive").stat().st_size
        time.sleep(0.5)
        if (copy / "alive").stat().st_size == size:
            return True
    return False


def test_cpu_time_is_limited_too(copy: Path) -> None:
    run = _run(copy, "while True: pass", Limits(seconds=30, cpu_seconds=1))
    assert not run.timed_out and run.exit_code != 0 and run.seconds < 15


def test_a_huge_allocation_fails_inside(copy: Path) -> None:
    run = _run(copy, "x = bytearray(10 * 1024**3)", Limits(seconds=20, memory_bytes=1024**3))
    assert "MemoryError" in run.output


def test_a_huge_file_is_cut_at_the_file_limit(copy: Path) -> None:
    run = _run(
        copy,
        """
        with open("big", "wb") as f:
            for _ in range(100):
                f.write(b"x" * 1024**2)
    """,
        Limits(seconds=20, file_bytes=8 * 1024**2),
    )
    assert run.exit_code != 0
    assert (copy / "big").stat().st_size <= 8 * 1024**2


def test_a_gigabyte_of_output_keeps_its_head_and_tail(copy: Path) -> None:
    run = _run(
        copy,
        """
        import sys
        print("FIRST")
        block = "y" * 1023 + "\\n"
        for _ in range(1024 * 1024):
            sys.stdout.write(block)
        print("LAST")
    """,
        Limits(seconds=60, cpu_seconds=60),
    )
    assert run.output_bytes > 1024**3 and run.cut
    assert run.output.startswith("FIRST") and run.output.rstrip().endswith("LAST")
    assert len(run.output) < 200_000 and "bytes of output not kept" in run.output


def test_a_process_left_running_dies_with_the_run(copy: Path, tmp_path: Path) -> None:
    run = _run(
        copy,
        """
        import subprocess, sys
        forever = "import time\\nwhile True:\\n open('alive', 'a').write('x'); time.sleep(0.1)"
        subprocess.Popen([sys.executable, "-c", forever], start_new_session=True)
        import time; time.sleep(0.5)
        print("left it")
    """,
    )
    assert "left it" in run.output
    size = (copy / "alive").stat().st_size
    time.sleep(0.5)
    assert (copy / "alive").stat().st_size == size  # nothing writes any more


def test_without_bubblewrap_nothing_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap, no prlimit
    with pytest.raises(SandboxUnavailable, match="bwrap"):
        Sandbox.find()


def test_as_root_the_command_runs_unprivileged(copy: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the drop to nobody applies to a service running as root")
    run = _run(copy, "import os; print(os.getuid(), os.getgroups())")
    uid, groups = run.output.split(maxsplit=1)
    assert int(uid) in SANDBOX_UIDS and groups.strip() == "[]"


def test_the_runs_cpu_time_reaches_the_caller(copy: Path) -> None:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    _run(copy, "x = 0\nfor i in range(5_000_000):\n    x += i\n")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert (after.ru_utime - before.ru_utime) > 0.05  # a reaper inside would swallow it


def test_a_fork_bomb_does_not_starve_a_run_beside_it(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("runs have users of their own when the service runs as root")
    bomb, calm = tmp_path / "bomb", tmp_path / "calm"
    bomb.mkdir()
    calm.mkdir()
    limits = Limits(seconds=15, processes=16)
    holding = threading.Thread(target=_run, args=(bomb, FILL_AND_HOLD, limits))
    holding.start()
    try:
        time.sleep(1.5)  # the bomb holds all its processes now
        beside = _run(calm, "import os\nprint('started', os.fork() >= 0)", limits)
    finally:
        holding.join()
    assert "started True" in beside.output, beside.output


AS_ANOTHER_USER = """
import importlib.util, json, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location("sandbox", sys.argv[1])
sandbox = importlib.util.module_from_spec(spec)
sys.modules["sandbox"] = sandbox
spec.loader.exec_module(sandbox)
box = sandbox.Sandbox.find(sandbox.Limits(seconds=20, processes=16))
run = box.run(["/usr/bin/python3", "hostile.py"], copy=Path(sys.argv[2]))
print(json.dumps({"setpriv": box.setpriv, "exit": run.exit_code, "output": run.output}))
"""


def test_a_service_that_is_not_root_gets_a_user_namespace_and_the_same_limits() -> None:
    """Every machine here runs as root: the other path, run as `nobody` with Debian's
    Python (the test environment's interpreter lives under /root, pytest's folders are
    root's alone)."""
    setpriv, system_python = shutil.which("setpriv"), Path("/usr/bin/python3")
    if os.geteuid() != 0 or not setpriv or not system_python.exists():
        pytest.skip("needs root to become another user, and Debian's /usr/bin/python3")
    with tempfile.TemporaryDirectory(dir="/tmp") as place:
        _as_nobody(Path(place), setpriv, system_python)


def _as_nobody(place: Path, setpriv: str, system_python: Path) -> None:
    copy = place / "copy"
    copy.mkdir()
    (copy / "hostile.py").write_text(NO_NETWORK + FORK_BOMB)
    for path in (place, copy, copy / "hostile.py"):
        os.chown(path, 65534, 65534)
    module = Path(sandbox_module.__file__ or "")
    done = subprocess.run(
        [setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups", str(system_python),
         "-I", "-c", AS_ANOTHER_USER, str(module), str(copy)],
        capture_output=True, text=True, timeout=60, cwd=copy, env={"PATH": "/usr/bin:/bin"},
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["setpriv"] is None  # not root: bubblewrap's user namespace, no drop
    assert "no network" in result["output"] and "CONNECTED" not in result["output"]
    assert int(result["output"].split("stopped after")[1].split()[0]) < 16
