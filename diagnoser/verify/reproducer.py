"""Reproducers a report carries, in the order they are tried (pure; no I/O):

1. **A failing test it names** — `FAILED tests/x.py::test_y`, or a pytest node id
   `tests/x.py::TestK::test_y[param]` anywhere in the text — when the file is the
   repository's (matched by path suffix, so `/home/me/proj/tests/x.py` works); in a
   repository with Java, a JUnit test as Maven, Gradle, JUnit or a stack frame names it
   (`CartTest.total:12`, `total(com.acme.CartTest)`, `CartTest > total() FAILED`,
   `com.acme.CartTest#total`, `at com.acme.CartTest.total(CartTest.java:12)`) when the class
   is one of the repository's test files: its id is `path::method`; in a repository with
   JavaScript, a test file it names (`test/parse.test.js`), with the failing tests Node's
   runner lists (`✖ parses a pair (1.2ms)`, `not ok 2 - parses a pair`): `path::name`.
2. **Runnable Python code** — fenced Python blocks (```` ```python ````, ```` ```py ````,
   or an unlabelled fence holding code that compiles) and console sessions (`>>>`, IPython's
   `In [1]:`; prompts dropped, output dropped), assembled in order into one script; a
   fence that reads names nothing before it binds is output or a fragment, and left out.
3. **Runnable JavaScript** — fenced ```` ```js ```` / ```` ```javascript ```` blocks, when
   the repository has JavaScript files (run with Node).

A traceback pasted in a fence does not compile and is left out; so are shell blocks.
Bounded: at most `MAX_TESTS` node ids; a script of at most `MAX_SCRIPT_CHARS`.
"""

from __future__ import annotations

import ast
import builtins
import codeop
import re
import warnings
from collections.abc import Collection
from dataclasses import dataclass

from diagnoser.finding import ReproducerSource

MAX_TESTS = 5
MAX_IMPORT_ROOTS = 8
MAX_SCRIPT_CHARS = 32_000
PYTHON = "python"
JAVASCRIPT = "javascript"
JAVA = "java"
PYTHON_FENCES = frozenset({"python", "py", "python3", "pycon", "ipython"})
JAVASCRIPT_FENCES = frozenset({"js", "javascript", "node", "nodejs", "mjs", "cjs"})
JAVASCRIPT_FILES = (".js", ".cjs", ".mjs")
_JS_ACTION = re.compile(r"\b(?:require\s*\(|import\b)|\w\s*\(")
"""JavaScript that does something: a `require(`, an `import`, a call."""
_NODE_ID = re.compile(
    r"(?<![\w./\\-])(?P<file>[\w./\\-]*?[\w-]\.py)::"
    r"(?P<name>[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)(?P<param>\[[^\]\s]*\])?"
)
"""A pytest node id. Each run of path characters is tried from its start only, lazily:
a pattern that could start anywhere in it, or split it two ways, backtracks for minutes
over a long run (`tests/hostile/test_reproducers.py`)."""
_JUNIT = re.compile(
    r"(?<![\w$.])(?:(?P<method>[a-z_$][\w$]*)\((?P<owner>(?:[a-z_]\w*\.)*[A-Z][\w$]*)\)"
    r"|(?P<cls>(?:[a-z_]\w*\.)*[A-Z][\w$]*)(?:#|\.| > )(?P<name>[a-z_$][\w$]*)(?![\w$]))"
)
"""A JUnit test: JUnit 4's `total(com.acme.CartTest)`, or `CartTest.total` (Maven), `CartTest
> total` (Gradle), `com.acme.CartTest#total` (a selector) — the class maybe qualified."""
NOT_METHODS = frozenset({"java", "kt", "class", "groovy", "scala", "jar"})
"""What follows a class name and a dot without being a method (`CartTest.java`)."""
_JS_PATH = re.compile(r"(?<![\w./\\@-])[\w./\\@-]*?[\w-]\.[cm]?js\b")
_NODE_FAILED = re.compile(
    r"^\s*(?:✖ (?P<spec>.+?) \(\d[\d.]*m?s\)|not ok \d+ - (?P<tap>.+?))\s*$", re.M
)
"""A failing test as Node's runner lists it (its spec and TAP reporters)."""
JS_TEST_FILE = re.compile(r"(?:^|/)(?:tests?|__tests__)/|[.-](?:test|spec)\.[cm]?js$|^test[.-]")
JAVA_TEST_NAME = re.compile(r"^(?:Test\w*|\w*(?:Test|Tests|TestCase|IT))\.java$")
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$", re.M)
_PROMPT = re.compile(r"^\s*(>>>|\.\.\.:?|In \[\d*\]:)( |$)")
"""A console prompt: Python's `>>> ` / `... `, IPython's `In [3]: ` / `   ...: `."""
BUILTINS = frozenset(dir(builtins))
NOT_MODULES = frozenset({"setup", "conftest", "noxfile", "tasks", "manage", "docs", "tests"})
"""Top-level names that are tooling, not the code a report imports."""


@dataclass(frozen=True, slots=True)
class Reproducer:
    source: ReproducerSource
    tests: tuple[str, ...] = ()
    """Repository-relative pytest node ids (a named failing test)."""
    code: str = ""
    """A script (a snippet) in `language`."""
    language: str = PYTHON
    """Which runner runs it (`diagnoser.verify.runner.RUNNERS`)."""


def find_reproducers(text: str, files: Collection[str]) -> list[Reproducer]:
    """The report's reproducers, best first: its named failing tests, then its code."""
    found: list[Reproducer] = []
    tests = named_tests(text, files)
    if tests:
        found.append(Reproducer(ReproducerSource.NAMED_TEST, tests=tests))
    junit = junit_tests(text, files) if any(f.endswith(".java") for f in files) else ()
    if junit:
        found.append(Reproducer(ReproducerSource.NAMED_TEST, tests=junit, language=JAVA))
    has_js = any(f.endswith(JAVASCRIPT_FILES) for f in files)
    node = node_tests(text, files) if has_js else ()
    if node:
        found.append(Reproducer(ReproducerSource.NAMED_TEST, tests=node, language=JAVASCRIPT))
    code = snippet(text, top_level_modules(files))
    if code:
        found.append(Reproducer(ReproducerSource.SNIPPET, code=code))
    script = javascript_snippet(text) if has_js else ""
    if script:
        found.append(Reproducer(ReproducerSource.SNIPPET, code=script, language=JAVASCRIPT))
    return found


def javascript_snippet(text: str) -> str:
    """The report's JavaScript fences as one script ("" when it carries none)."""
    parts = [
        body.strip("\n") for info, body in _fences(text)
        if (info.split() or [""])[0].lower() in JAVASCRIPT_FENCES and _JS_ACTION.search(body)
    ]  # fmt: skip
    script = "\n\n".join(parts)
    return script if 0 < len(script) <= MAX_SCRIPT_CHARS else ""


def named_tests(text: str, files: Collection[str]) -> tuple[str, ...]:
    """Pytest node ids in `text` whose file is one of the repository's `files`."""
    ids: dict[str, None] = {}
    for match in _NODE_ID.finditer(text):
        path = _repo_path(match["file"].replace("\\", "/"), files)
        if path:
            ids[f"{path}::{match['name']}{match['param'] or ''}"] = None
        if len(ids) == MAX_TESTS:
            break
    return tuple(ids)


def junit_tests(text: str, files: Collection[str]) -> tuple[str, ...]:
    """JUnit tests `text` names (`path::method`) whose class is a repository test file."""
    tests: dict[str, list[str]] = {}
    for path in sorted(files, key=lambda f: (len(f), f)):  # the shortest first
        name = path.rsplit("/", 1)[-1]
        if JAVA_TEST_NAME.match(name):
            tests.setdefault(name, []).append(path)
    ids: dict[str, None] = {}
    for match in _JUNIT.finditer(text):
        owner: str = match["owner"] or match["cls"] or ""
        method: str = match["method"] or match["name"] or ""
        if method in NOT_METHODS:
            continue
        found = _class_file(owner.partition("$")[0], tests)
        if found:
            ids[f"{found}::{method}"] = None
        if len(ids) == MAX_TESTS:
            break
    return tuple(ids)


def node_tests(text: str, files: Collection[str]) -> tuple[str, ...]:
    """JavaScript test files `text` names, each with the failing tests it lists
    (`path::name`; the bare path when it lists none)."""
    paths: dict[str, None] = {}
    for match in _JS_PATH.finditer(text):
        path = _repo_path(match[0].replace("\\", "/"), files)
        if path and JS_TEST_FILE.search(path):
            paths[path] = None
    names = dict.fromkeys(m["spec"] or m["tap"] for m in _NODE_FAILED.finditer(text))
    ids = [f"{path}::{name}" for path in paths for name in names] or list(paths)
    return tuple(ids[:MAX_TESTS])


def _class_file(qualified: str, tests: dict[str, list[str]]) -> str | None:
    """The test file of the class `qualified` (`com.acme.CartTest`, or `CartTest`: the
    shortest path of that name); a qualified name's package must match the file's folders."""
    *package, name = qualified.split(".")
    suffix = "/".join([*package, f"{name}.java"])
    return next((p for p in tests.get(f"{name}.java", ()) if p.endswith(suffix)), None)


def snippet(text: str, modules: Collection[str] = ()) -> str:
    """The report's Python code as one script ("" when it carries none). `modules`: the
    repository's top-level modules, which a console session often uses without the
    `import` it ran before the paste (`arrow.get(…)`): those imports are added."""
    parts: list[str] = []
    defined: set[str] = set()
    for info, body in _fences(text):
        language = info.split()[0].lower() if info.split() else ""
        if language and language not in PYTHON_FENCES:
            continue
        code = _session(body) if any(_PROMPT.match(line) for line in body.splitlines()) else body
        if _runnable(code) and _resolves(code, defined, modules):
            parts.append(code.strip("\n"))
    if not parts:  # a console session outside any fence
        code = _session(text)
        if _runnable(code):
            parts.append(code)
    script = "\n\n".join(parts)
    missing = sorted(_unbound(script) & set(modules)) if script else []
    script = "".join(f"import {name}\n" for name in missing) + script
    return script if 0 < len(script) <= MAX_SCRIPT_CHARS else ""


def top_level_modules(files: Collection[str]) -> frozenset[str]:
    """Names the repository's code is imported by: its top-level packages (at any depth,
    `src/arrow/__init__.py` → `arrow`) and the modules at its root or in `src/`."""
    names: set[str] = set()
    for path in files:
        parts = path.split("/")
        if parts[-1] == "__init__.py" and len(parts) > 1:
            parent = "/".join(parts[:-2])
            if f"{parent}/__init__.py".lstrip("/") not in files:
                names.add(parts[-2])
        elif path.endswith(".py") and (len(parts) == 1 or (len(parts) == 2 and parts[0] == "src")):
            names.add(parts[-1][: -len(".py")])
    return frozenset(n for n in names if n.isidentifier() and n not in NOT_MODULES)


def import_roots(code: str, files: Collection[str]) -> tuple[str, ...]:
    """Repository folders that make `code`'s imports resolve: for each top-level module it
    imports, the parent of the shallowest package or module of that name (`backend` for
    `import notes` when the repository has `backend/notes/__init__.py`). The root itself
    is not listed (it is always importable)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return ()
    names: dict[str, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update((alias.name.split(".")[0], None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names[node.module.split(".")[0]] = None
    roots: dict[str, None] = {}
    for name in names:
        if f"{name}/__init__.py" in files or f"{name}.py" in files:
            continue  # importable from the root
        suffixes = (f"/{name}/__init__.py", f"/{name}.py")
        homes = [path[: -len(end)] for path in files for end in suffixes if path.endswith(end)]
        if homes:
            roots[min(homes, key=lambda home: (home.count("/"), home))] = None
    return tuple(roots)[:MAX_IMPORT_ROOTS]


def _fences(text: str) -> list[tuple[str, str]]:
    """(info string, body) of each fenced block."""
    blocks: list[tuple[str, str]] = []
    opened: re.Match[str] | None = None
    for match in _FENCE.finditer(text):
        if opened is None:
            opened = match
        elif (
            match["fence"][0] == opened["fence"][0]
            and len(match["fence"]) >= len(opened["fence"])
            and not match["info"].strip()
        ):
            blocks.append((opened["info"].strip(), text[opened.end() + 1 : match.start()]))
            opened = None
    return blocks


def _session(text: str) -> str:
    """The code of a console session: prompted lines without their prompts, and the
    unprompted lines that continue a statement left open (a paste that lost its `...`
    prompts inside a multi-line string); the rest is output."""
    code: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        found = _PROMPT.match(line)
        rest = (line[found.end() :] if found.group(2) else "") if found else line
        if found and found.group(1).startswith("..."):
            current.append(rest)
        elif found:
            code += current
            current = [rest]
        elif current and _open("\n".join(current)):
            current.append(line)
        else:
            code += current
            current = []
    return "\n".join(code + current).strip("\n")


def _open(source: str) -> bool:
    """Whether `source` is a statement that goes on (an open string, bracket or block)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return codeop.compile_command(source, "<session>", "exec") is None
    except (SyntaxError, ValueError, OverflowError):
        return False


def _resolves(code: str, defined: set[str], modules: Collection[str] = ()) -> bool:
    """Whether every name `code` reads is a builtin, a repository module, or bound in it
    or in the blocks before (`defined`, which grows by what it binds): a fence that reads
    names nothing binds is printed output (`datetime.datetime(2020, 1, 1)`) or a fragment,
    not part of the script."""
    bound, read = _names(code)
    if read - bound - defined - BUILTINS - set(modules):
        return False
    defined |= bound
    return True


def _unbound(code: str) -> set[str]:
    """Names `code` reads that it never binds (nor are builtins)."""
    bound, read = _names(code)
    return read - bound - BUILTINS


def _names(code: str) -> tuple[set[str], set[str]]:
    """(names `code` binds, names it reads)."""
    bound: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound, read


def _runnable(code: str) -> bool:
    """Compiles, and does something: imports or calls (not a bare literal or a name)."""
    if not code.strip() or len(code) > MAX_SCRIPT_CHARS:
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(node, (ast.Import, ast.ImportFrom, ast.Call)) for node in ast.walk(tree))


def _repo_path(path: str, files: Collection[str]) -> str | None:
    """`path` as a repository file: itself, or the file it ends with."""
    path = path.removeprefix("./")
    if path in files:
        return path
    parts = path.split("/")
    for start in range(1, len(parts)):
        tail = "/".join(parts[start:])
        if tail in files:
            return tail
    return None
