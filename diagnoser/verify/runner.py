"""`Runner`: how a language's reproducers become commands — the one small interface a
new language implements (a named test → its test command; a snippet → a script file and
the command that runs it; the host folders its toolchain needs inside the sandbox; the
trace format its failures print). `prepare` makes a reproducer ready in a copy.

`PythonRunner` is the operator's interpreter (`DIAGNOSER_VERIFY_PYTHON`, else the first
`python3` on `PATH`): it should have the project's dependencies. Tests run with pytest
(`--tb=native`, so failures print plain Python tracebacks), scripts from the copy's root
with the copy importable, and the folders the code's imports resolve from
(`reproducer.import_roots`: `src/`, `backend/`…).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from diagnoser.intake.report import TraceFormat
from diagnoser.settings import TESTS_WORD, Settings
from diagnoser.verify.reproducer import JAVA, JAVASCRIPT, PYTHON, Reproducer, import_roots
from diagnoser.verify.sandbox import COPY_MOUNT, SAFE_PATH

PYTHON_WORD = "{python}"
PYTEST_TEMPLATE = (
    PYTHON_WORD,
    "-m",
    "pytest",
    "-q",
    "--tb=native",
    "-p",
    "no:cacheprovider",
    TESTS_WORD,
)
"""Named tests, by default: plain Python tracebacks (`--tb=native`), no cache written."""
SCRIPT_NAME = "_diagnoser_reproducer.py"
NODE_SCRIPT = "_diagnoser_reproducer.cjs"
NODE_MODULE_SCRIPT = "_diagnoser_reproducer.mjs"
LAUNCHER = Path(__file__).parent / "java" / "DiagnoserJUnit.java"
PLATFORM_LAUNCHER = Path(__file__).parent / "java" / "DiagnoserJUnitPlatform.java"
"""The JUnit Platform's (JUnit 5, and 4 through Vintage), used when the class path has it."""
JUNIT_CLASSPATH = ("/usr/share/java/junit4.jar", "/usr/share/java/hamcrest-core.jar")
JUNIT_PLATFORM = "/usr/share/java/junit-platform-console-standalone.jar"
"""Debian's junit5: the Platform's launcher and engines (Jupiter, Vintage) in one jar."""
JAVA_CLASSES = "/tmp/classes"
"""Where the copy's classes are compiled to (the sandbox's own `/tmp`)."""
JAVA_BUILD = (
    "find . -name '*.java' -type f > /tmp/sources"
    " && {javac} -nowarn -encoding UTF-8 -proc:none -d {classes} @/tmp/sources || exit 4"
)
JVM_OPTIONS = (
    "-Xmx512m -Xss2m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=64m "
    "-XX:CompressedClassSpaceSize=64m -XX:MaxMetaspaceSize=256m"
)
"""A JVM (and javac's) that fits the sandbox's address space: by default it reserves a
quarter of the machine's memory for its heap, and a gigabyte for its classes."""
_NODE_TEST_MODULE = re.compile(r"""(?:require\s*\(\s*|from\s+|import\s+)["'](?:node:)?test["']""")
_JAVA_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.M)
_ESM = re.compile(r"^\s*(?:import\s[^(]|export\s)", re.M)
"""An ES module: it runs as `.mjs`, anything else as CommonJS."""
_PACKAGE_NAME = re.compile(r"^(?:@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*$")
"""The snippet's file at the copy's root (not a repository file: its frames are not
credited as the repository's)."""
PROBE_SECONDS = 20.0
_PROBE = (
    "import json, sys; "
    "print(json.dumps([sys.executable, sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path]))"
)
"""The interpreter as it knows itself: a launcher (a pyenv shim, a wrapper script) may
not work inside the sandbox, the interpreter it starts does."""


class RuntimeMissing(Exception):
    """The configured runtime cannot be found or does not start."""


class Runner(Protocol):
    @property
    def language(self) -> str: ...

    @property
    def trace_formats(self) -> frozenset[str]:
        """The `TraceFormat` values of the tracebacks its runs print."""
        ...

    def binds(self) -> tuple[Path, ...]:
        """Host folders the toolchain needs, shown read-only inside the sandbox."""
        ...

    def environment(self, code: str, files: Collection[str]) -> dict[str, str]:
        """The run's variables, for `code` (what runs) in a repository of `files`."""
        ...

    def test_command(self, tests: Sequence[str], copy: Path) -> list[str]:
        """The command that runs the named `tests` (ids `path::name`) in `copy`."""
        ...

    def script(self, copy: Path, code: str) -> list[str]:
        """Write the snippet (and what it needs) into `copy`; the command that runs it."""
        ...


@dataclass(frozen=True, slots=True)
class Prepared:
    command: list[str]
    environment: dict[str, str]


def prepare(runner: Runner, reproducer: Reproducer, copy: Path, files: Collection[str]) -> Prepared:
    """`reproducer` made ready to run in `copy`: its command and environment."""
    if reproducer.tests:
        code = "\n".join(_read(copy / test.split("::")[0]) for test in reproducer.tests)
        command = runner.test_command(reproducer.tests, copy)
        return Prepared(command, runner.environment(code, files))
    command = runner.script(copy, reproducer.code)
    return Prepared(command, runner.environment(reproducer.code, files))


def find_runner(language: str, settings: Settings) -> Runner:
    """The runner of `language` with the settings' runtime; RuntimeMissing says why not."""
    if language == JAVASCRIPT:
        return NodeRunner.find(settings.verify_node)
    if language == JAVA:
        return JavaRunner.find(settings.verify_java, settings.verify_classpath)
    template = tuple(shlex.split(settings.verify_test_command or "")) or None
    return PythonRunner.find(settings.verify_python, test_template=template)


@dataclass(frozen=True, slots=True)
class PythonRunner:
    python: str
    """The interpreter, as it knows itself (a venv's `bin/python` stays a venv's)."""
    folders: tuple[Path, ...]
    test_template: tuple[str, ...] | None = None
    """`Settings.verify_test_command` as words (`{python}`, `{tests}`); None: pytest's."""
    language: str = PYTHON
    trace_formats: frozenset[str] = frozenset({TraceFormat.PYTHON.value})

    @classmethod
    def find(
        cls, python: str | None, *, test_template: tuple[str, ...] | None = None
    ) -> PythonRunner:
        """The interpreter `python` (a path or a command on `PATH`; None: `python3`)."""
        found = shutil.which(python or "python3")
        if not found:
            raise RuntimeMissing(
                f"no Python runtime: {python or 'python3'} not found; set "
                "DIAGNOSER_VERIFY_PYTHON to an interpreter with the project's dependencies"
            )
        try:
            done = subprocess.run(
                [found, "-I", "-c", _PROBE], capture_output=True, text=True,
                timeout=PROBE_SECONDS, env={"PATH": SAFE_PATH}, check=True,
            )  # fmt: skip
            executable, *paths = json.loads(done.stdout)
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            raise RuntimeMissing(f"the Python runtime {found} does not start: {exc}") from None
        binds = [Path(os.path.realpath(executable)).parent, Path(executable).parent,
                 *(Path(p) for p in paths if p)]  # fmt: skip
        kept = tuple(dict.fromkeys(p for p in binds if p.is_absolute() and p.exists()))
        return cls(executable, kept, test_template)

    def binds(self) -> tuple[Path, ...]:
        return self.folders

    def environment(self, code: str, files: Collection[str]) -> dict[str, str]:
        roots = import_roots(code, files)
        path = ":".join([COPY_MOUNT, *(f"{COPY_MOUNT}/{root}" for root in roots)])
        return {
            "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0", "PYTHONUNBUFFERED": "1", "PYTHONNOUSERSITE": "1",
            "PYTHONFAULTHANDLER": "1",
        }  # fmt: skip

    def test_command(self, tests: Sequence[str], copy: Path) -> list[str]:
        template = self.test_template or PYTEST_TEMPLATE
        command: list[str] = []
        for word in template:
            command += (
                list(tests) if word == TESTS_WORD else [word.replace(PYTHON_WORD, self.python)]
            )
        return command

    def script(self, copy: Path, code: str) -> list[str]:
        (copy / SCRIPT_NAME).write_text(code, encoding="utf-8")
        return [self.python, SCRIPT_NAME]


@dataclass(frozen=True, slots=True)
class NodeRunner:
    """Node.js (`DIAGNOSER_VERIFY_NODE`, else `node` on `PATH`): a snippet runs as a script
    at the copy's root, where `require`/`import` of the package's own name reaches the
    copy (a `node_modules/<name>` link to it, from its `package.json`); named tests with
    `node --test` and its spec reporter (whose failures print V8 stack traces)."""

    node: str
    language: str = JAVASCRIPT
    trace_formats: frozenset[str] = frozenset({TraceFormat.JAVASCRIPT_V8.value})

    @classmethod
    def find(cls, node: str | None) -> NodeRunner:
        found = shutil.which(node or "node")
        if not found:
            raise RuntimeMissing(
                f"no Node.js runtime: {node or 'node'} not found; install Debian's nodejs or "
                "set DIAGNOSER_VERIFY_NODE"
            )
        return cls(os.path.realpath(found))

    def binds(self) -> tuple[Path, ...]:
        return (Path(self.node).parent,)

    def environment(self, code: str, files: Collection[str]) -> dict[str, str]:
        return {"NODE_OPTIONS": "--stack-trace-limit=50", "NO_COLOR": "1"}

    def test_command(self, tests: Sequence[str], copy: Path) -> list[str]:
        """`node --test` of the files (their named tests only, when named); a file that
        does not use Node's own runner (a Jest or Mocha suite) is refused."""
        files = dict.fromkeys(test.split("::", 1)[0] for test in tests)
        other = [path for path in files if not _NODE_TEST_MODULE.search(_read(copy / path))]
        if other:
            raise RuntimeMissing(
                f"{', '.join(other)} does not use Node's test runner (node:test); other "
                "JavaScript test runners are not run"
            )
        names = dict.fromkeys(test.split("::", 1)[1] for test in tests if "::" in test)
        patterns = [f"--test-name-pattern=^{_js_escaped(name)}$" for name in names]
        return [self.node, "--test", "--test-reporter=spec", *patterns, *files]

    def script(self, copy: Path, code: str) -> list[str]:
        name = _package_name(copy)
        if name:  # the package by its own name, as the report's code requires it
            link = copy / "node_modules" / name
            if not link.exists() and not link.is_symlink():
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(os.path.relpath(copy, link.parent), target_is_directory=True)
        module = _ESM.search(code) is not None
        script = NODE_MODULE_SCRIPT if module else NODE_SCRIPT
        (copy / script).write_text(code, encoding="utf-8")
        return [self.node, script]


@dataclass(frozen=True, slots=True)
class JavaRunner:
    """A JDK (`DIAGNOSER_VERIFY_JAVA`, else `java` on `PATH`, with `javac` beside it) and
    the class path the project's code needs (`DIAGNOSER_VERIFY_CLASSPATH`; unset: Debian's
    JUnit 4 and Hamcrest jars, and its JUnit Platform when installed). A named test runs
    by compiling every `.java` file of the copy with `javac` (into the sandbox's `/tmp`;
    failing that: exit 4, a build failure) and running the tests by method with a small
    launcher that prints each failure's stack trace: `DiagnoserJUnitPlatform` when the
    class path holds the JUnit Platform (JUnit 5 tests, and JUnit 4 ones through its
    Vintage engine), else `DiagnoserJUnit` (JUnit 4). The JVM's reservations are sized to
    fit the sandbox's address-space limit. No snippets: Java reports carry tests."""

    java: str
    javac: str
    classpath: tuple[str, ...]
    launcher: Path = LAUNCHER
    language: str = JAVA
    trace_formats: frozenset[str] = frozenset({TraceFormat.JAVA.value})

    @classmethod
    def find(cls, java: str | None, classpath: str | None) -> JavaRunner:
        found = shutil.which(java or "java")
        if not found:
            raise RuntimeMissing(
                f"no Java runtime: {java or 'java'} not found; install Debian's "
                "default-jdk-headless or set DIAGNOSER_VERIFY_JAVA"
            )
        real = os.path.realpath(found)
        javac = os.path.join(os.path.dirname(real), "javac")
        if not os.access(javac, os.X_OK):
            raise RuntimeMissing(f"no javac beside {real}: DIAGNOSER_VERIFY_JAVA needs a JDK")
        entries = tuple(p for p in (classpath or "").split(":") if p) or _default_classpath()
        missing = [p for p in entries if not os.path.exists(p)]
        if missing:
            raise RuntimeMissing(
                f"the class path names what is not there ({', '.join(missing)}); install "
                "Debian's junit4 or set DIAGNOSER_VERIFY_CLASSPATH"
            )
        platform = any("junit-platform" in os.path.basename(p) for p in entries)
        launcher = PLATFORM_LAUNCHER if platform else LAUNCHER
        return cls(real, javac, tuple(os.path.realpath(p) for p in entries), launcher)

    def binds(self) -> tuple[Path, ...]:
        home = Path(self.java).parent.parent  # the JDK: …/jvm/java-17/bin/java
        entries = (Path(p) if os.path.isdir(p) else Path(p).parent for p in self.classpath)
        return tuple(dict.fromkeys([home, self.launcher.parent, *entries]))

    def environment(self, code: str, files: Collection[str]) -> dict[str, str]:
        return {
            "CLASSPATH": ":".join([JAVA_CLASSES, *self.classpath]),
            "JAVA_TOOL_OPTIONS": JVM_OPTIONS,
        }

    def test_command(self, tests: Sequence[str], copy: Path) -> list[str]:
        ids = [f"{_java_class(copy, path)}#{name}" for path, _, name in
               (test.rpartition("::") for test in tests)]  # fmt: skip
        build = JAVA_BUILD.format(javac=shlex.quote(self.javac), classes=JAVA_CLASSES)
        run = f'exec {shlex.quote(self.java)} {shlex.quote(str(self.launcher))} "$@"'
        return ["/bin/sh", "-c", f"{build}; {run}", "sh", *ids]

    def script(self, copy: Path, code: str) -> list[str]:
        raise RuntimeMissing("Java snippets are not run: name a failing JUnit test")


def _default_classpath() -> tuple[str, ...]:
    """Debian's JUnit 4 and Hamcrest, and its JUnit Platform when installed."""
    return (JUNIT_PLATFORM, *JUNIT_CLASSPATH) if os.path.exists(JUNIT_PLATFORM) else JUNIT_CLASSPATH


def _java_class(copy: Path, path: str) -> str:
    """The class a Java file declares: its `package` and its file name."""
    name = path.rsplit("/", 1)[-1].removesuffix(".java")
    found = _JAVA_PACKAGE.search(_read(copy / path))
    return f"{found[1]}.{name}" if found else name


def _js_escaped(text: str) -> str:
    """`text` as a JavaScript regular expression that matches it literally."""
    return re.sub(r"[\\^$.|?*+()[\]{}/]", lambda m: "\\" + m[0], text)


def _package_name(copy: Path) -> str | None:
    try:
        name = json.loads((copy / "package.json").read_text("utf-8")).get("name")
    except (OSError, ValueError, AttributeError):
        return None
    return name if isinstance(name, str) and _PACKAGE_NAME.match(name) else None


def _read(path: Path) -> str:
    try:
        return path.read_text("utf-8", "replace")
    except OSError:
        return ""
