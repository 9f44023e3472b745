"""Focus extraction from a bug report, for the repo-map benchmark.

Pure standard library: this module is imported both from our own venv and from aider's
venv (bench/aider_quality.py), so both sides see the same file listing and the same focus.

    extract_focus(problem_statement, repo_files) -> (mentioned repo files, mentioned identifiers)
    list_py_files(root) -> sorted repo-relative .py paths (no hidden dirs, no build/ or dist/)
    list_source_files(root, exts, skip_dirs) -> the same for any extensions
    load_cases(path) -> list of case dicts from cases.jsonl

Run `python bench/focus.py` for a self-check on the first 3 cases.
"""

from __future__ import annotations

import builtins
import json
import keyword
import os
import re
import sys

# shared/ sits beside the repository's folder (../shared/bench/cases.jsonl).
CASES_PATH = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "shared", "bench", "cases.jsonl",
)  # fmt: skip

MAX_FILES = 20  # cap on mentioned repo files returned
MAX_IDENTS = 30  # cap on mentioned identifiers returned
MIN_WORD_LEN = 4  # CamelCase / snake_case words shorter than this are ignored
MIN_BACKTICK_IDENT_LEN = 3  # identifiers inside backticks shorter than this are ignored
SKIP_DIRS = {"build", "dist"}  # plus every directory whose name starts with "."

# Names that are never useful as repo code names.
_STOP_IDENTS = (
    set(keyword.kwlist)
    | set(dir(builtins))
    | {"self", "cls", "args", "kwargs", "None", "True", "False", "module"}
)

_PATH_EXTS = (
    "py|pyi|pyx|pxd|js|ts|html|css|c|h|cc|cpp|hpp|rs|go|java|rb|php|"
    "rst|txt|cfg|toml|json|yml|yaml|ini"
)
# A file path: optional drive letter, then path characters, ending in a known extension.
_PATH_RE = re.compile(
    r"(?<![\w.])((?:[A-Za-z]:)?[\w.\-/\\]*[\w\-]\.(?:" + _PATH_EXTS + r"))(?![\w])"
)
# A dotted name such as django.db.models.query or sklearn.utils.validation.check_array.
_DOTTED_RE = re.compile(r"(?<![\w./\\])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)")
# Traceback frame: File "path", line N, in func
_FRAME_RE = re.compile(r'File "([^"\n]+)", line \d+(?:, in ([\w<>.]+))?')
# Inline code in backticks (single or double), on one line; fenced blocks are removed first.
_BACKTICK_RE = re.compile(r"(`{1,2})([^`\n]+?)\1")
_FENCE_RE = re.compile(r"```.*?(?:```|$)", re.S)
_URL_RE = re.compile(r"\b(?:https?|ftp)://\S+")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Whole word tokens for the CamelCase / snake_case scan (may start with a digit, e.g. a
# migration name such as 0011_update_proxy_permissions, which matches a file's basename).
_WORD_RE = re.compile(r"(?<![\w])\w+(?![\w])")
# Bare file names that name the reporter's own project files far more often than the repo's.
_GENERIC_BASENAMES = {
    "__init__.py",
    "__main__.py",
    "manage.py",
    "setup.py",
    "settings.py",
    "models.py",
    "urls.py",
    "views.py",
    "admin.py",
    "apps.py",
    "forms.py",
    "tests.py",
    "test.py",
    "conftest.py",
    "utils.py",
    "main.py",
    "app.py",
    "run.py",
    "example.py",
    "script.py",
}


def _blank(text: str, spans) -> str:
    """Replace the given (start, end) spans by spaces, keeping every other offset."""
    chars = list(text)
    for start, end in spans:
        for i in range(start, end):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


class _RepoIndex:
    """Repo-relative paths, looked up by path suffix (whole components only)."""

    def __init__(self, repo_files):
        self.files = []
        self.by_base = {}
        seen = set()
        for raw in repo_files:
            f = raw.replace("\\", "/").removeprefix("./")
            if f in seen:
                continue
            seen.add(f)
            self.files.append(f)
            self.by_base.setdefault(f.rsplit("/", 1)[-1], []).append(f)

    def ending_with(self, suffix: str):
        """Repo files equal to `suffix` or ending with '/' + suffix."""
        base = suffix.rsplit("/", 1)[-1]
        return [f for f in self.by_base.get(base, ()) if f == suffix or f.endswith("/" + suffix)]

    def match_path(self, path: str):
        """Repo files a mentioned path refers to.

        The longest trailing run of components (at least 2) that is the tail of a repo path
        wins, so `/x/site-packages/django/db/models/query.py` -> `django/db/models/query.py`
        and `site-packages/matplotlib/axes/_axes.py` -> `lib/matplotlib/axes/_axes.py`.
        A bare file name (`query.py`) counts only when exactly one repo file has that name.
        """
        parts = [p for p in path.replace("\\", "/").split("/") if p and p != "."]
        if not parts:
            return []
        if len(parts) == 1:
            if parts[0] in _GENERIC_BASENAMES:
                return []
            hits = self.by_base.get(parts[0], [])
            return hits if len(hits) == 1 else []
        for k in range(len(parts), 1, -1):
            if parts[-k] == "..":
                continue
            hits = self.ending_with("/".join(parts[-k:]))
            if hits:
                return hits
        return []

    def match_dotted(self, dotted: str):
        """Repo module a dotted name refers to (longest prefix of >= 2 names that is a module)."""
        names = dotted.split(".")
        for k in range(len(names), 1, -1):
            stem = "/".join(names[:k])
            for cand in (stem + ".py", stem + "/__init__.py"):
                hits = self.ending_with(cand)
                if len(hits) == 1:
                    return hits
                if hits:  # ambiguous tail: keep only an exact root-level match
                    exact = [h for h in hits if h == cand]
                    if exact:
                        return exact
        return []


def _looks_like_code_name(word: str) -> bool:
    if len(word) < MIN_WORD_LEN or word in _STOP_IDENTS:
        return False
    if word.startswith("__") and word.endswith("__"):
        return False  # dunders are everywhere; they still come in via backticks / frames
    if word[0].isdigit():  # only names like 0011_update_proxy_permissions
        return "_" in word and any(c.isalpha() for c in word)
    if "_" in word.strip("_"):
        return any(c.isalpha() for c in word)
    inner_cap = any(c.isupper() for c in word[1:])
    return inner_cap and any(c.islower() for c in word)


def extract_focus(problem_statement: str, repo_files: list[str]) -> tuple[list[str], list[str]]:
    """Return (mentioned repo files, mentioned identifiers), each ordered by first appearance.

    Files: traceback frame paths, other paths and dotted module names, resolved to repo files.
    Identifiers: names in inline backticks, traceback `in <func>` names, capitalised heads of
    dotted names (`Engine.render_to_string`), and words that look like code names (contain
    `_` or an inner capital, length >= MIN_WORD_LEN).
    """
    text = problem_statement or ""
    file_hits, ident_hits, hidden = _file_mentions(text, _RepoIndex(repo_files))
    # URLs and paths are hidden from the identifier scans (offsets are kept).
    hidden.extend(m.span() for m in _URL_RE.finditer(text))
    ident_hits.extend(_ident_mentions(_blank(text, hidden)))
    return _ordered(file_hits, MAX_FILES), _ordered(ident_hits, MAX_IDENTS)


def _file_mentions(text: str, index: _RepoIndex):
    """(file hits, traceback function hits, path spans); hits are (offset, name)."""
    file_hits, ident_hits, path_spans = [], [], []
    # traceback frames: path and function name
    for m in _FRAME_RE.finditer(text):
        file_hits.extend((m.start(1), f) for f in index.match_path(m.group(1)))
        path_spans.append(m.span(1))
        func = m.group(2)
        if func and not func.startswith("<"):
            ident_hits.append((m.start(2), func.rsplit(".", 1)[-1]))
    # paths anywhere (outside frames too)
    for m in _PATH_RE.finditer(text):
        file_hits.extend((m.start(1), f) for f in index.match_path(m.group(1)))
        if "/" in m.group(1) or "\\" in m.group(1):
            path_spans.append(m.span(1))
    # dotted module names
    for m in _DOTTED_RE.finditer(text):
        file_hits.extend((m.start(1), f) for f in index.match_dotted(m.group(1)))
    return file_hits, ident_hits, path_spans


def _ident_mentions(scan: str):
    """Identifier hits (offset, name) in a text whose paths and URLs are blanked out."""
    hits = []
    # identifiers inside inline backticks (fenced blocks are left to the word scan)
    no_fences = _blank(scan, [m.span() for m in _FENCE_RE.finditer(scan)])
    for m in _BACKTICK_RE.finditer(no_fences):
        for w in _IDENT_RE.finditer(m.group(2)):
            name = w.group(0)
            if len(name) >= MIN_BACKTICK_IDENT_LEN and name not in _STOP_IDENTS:
                hits.append((m.start(2) + w.start(), name))
    # class-like heads of dotted names: Engine.render_to_string -> Engine
    for m in _DOTTED_RE.finditer(scan):
        for part in _IDENT_RE.finditer(m.group(1)):
            if _looks_like_class_name(part.group(0)):
                hits.append((m.start(1) + part.start(), part.group(0)))
    # CamelCase / snake_case words anywhere
    for w in _WORD_RE.finditer(scan):
        if _looks_like_code_name(w.group(0)):
            hits.append((w.start(), w.group(0)))
    return hits


def _looks_like_class_name(name: str) -> bool:
    return (
        len(name) >= MIN_WORD_LEN
        and name[0].isupper()
        and any(c.islower() for c in name)
        and name not in _STOP_IDENTS
    )


def _ordered(hits, cap):
    """Distinct items of (offset, item) hits, by first offset, at most `cap`."""
    out, seen = [], set()
    for _pos, item in sorted(hits, key=lambda h: h[0]):
        if item not in seen:
            seen.add(item)
            out.append(item)
            if len(out) >= cap:
                break
    return out


def list_py_files(root: str) -> list[str]:
    """Sorted repo-relative (posix) paths of every .py file under root.

    Directories whose name starts with "." and directories named build/ or dist/ are skipped
    at any depth.
    """
    return list_source_files(root, (".py",), skip_dirs=SKIP_DIRS)


def list_source_files(root: str, exts, skip_dirs=()) -> list[str]:
    """Sorted repo-relative (posix) paths of files under root whose name ends with one of
    `exts`, skipping hidden directories (name starts with ".") and `skip_dirs` at any depth."""
    exts = tuple(exts)
    skip = set(skip_dirs)
    out = []
    root = os.path.abspath(root)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in skip)
        rel_dir = os.path.relpath(dirpath, root)
        for name in filenames:
            if name.endswith(exts):
                rel = name if rel_dir == "." else os.path.join(rel_dir, name)
                out.append(rel.replace(os.sep, "/"))
    return sorted(out)


def load_cases(path: str = CASES_PATH) -> list[dict]:
    """Cases from a cases.jsonl file (one JSON object per non-empty line)."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


if __name__ == "__main__":
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".cache", "devbench", "src")
    for case in load_cases(sys.argv[1] if len(sys.argv) > 1 else CASES_PATH)[:3]:
        root = os.path.join(src, case["root"])
        files = list_py_files(root) if os.path.isdir(root) else list(case["gold_files"])
        fs, ids = extract_focus(case["problem_statement"], files)
        note = "" if os.path.isdir(root) else ", sources missing: gold files only"
        print(f"== {case['id']}  ({len(files)} repo files{note})")
        print("   gold  :", case["gold_files"])
        print("   files :", fs)
        print("   idents:", ids)
