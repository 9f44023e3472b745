"""What a report names, found in the repository: files (by path, module or compound
name) and definitions (by name, owner-qualified or bare, when few files define them).

Names come from the prose, backticks, and the code the reporter ran (fenced blocks and
`>>>` / `In [3]:` sessions: `diagnoser.intake.mentions`), so a trace with no frame in the
repository (`File "<stdin>"`, another library's frames only) still leads to them. A
compound name that is a file's name without folder or extension
(`sorted_state_adapter`) names that file (NAMES_AS_FILES). `diagnoser.relevance` weighs
what is found here.

    named_files(report, index)          # ["django/db/models/query.py", …]
    named_definitions(report, index)    # [(qualified?, [(path, Definition), …]), …]
"""

from __future__ import annotations

import re
import weakref
from collections import defaultdict
from collections.abc import Iterable

from diagnoser.intake.report import Report
from repomap import Definition, Symbol, SymbolIndex
from repomap.focus import resolve_focus

MAX_DEFINERS = 3
"""A mentioned name defined in more files than this is too common to point anywhere."""
NAMES_AS_FILES = True
"""A compound name the report mentions that is a file's name without folder or extension
(`sorted_state_adapter`, `AsyncSubject`) names that file (NAMED_FILE_WEIGHT; in the
headline also HEADLINE_NAME_WEIGHT, as a name the file defines would), when at most
MAX_DEFINERS files are so named. Only compound names (`_`, `-` or a case change inside):
a plain word (`add`, `sign`, `python`) names a file only by accident (measured: 9 cases
down, 1 up, with plain words)."""
_COMPOUND = re.compile(r"[A-Za-z0-9][_-][A-Za-z0-9]|[a-z][A-Z]")
_FILES_BY_STEM: weakref.WeakKeyDictionary[SymbolIndex, dict[str, list[str]]] = (
    weakref.WeakKeyDictionary()
)


def named_files(report: Report, index: SymbolIndex) -> list[str]:
    """Files the report names by path or by module (`django.db.models.query`,
    `com.acme.Cart`: a file of any language whose path without its extension ends so)."""
    named = set(resolve_focus(report.mentioned.files, index.files).files)
    stems = _stems(index.files)
    for module in report.mentioned.modules:
        key = "/" + module.replace(".", "/")
        found = sorted((p for stem, p in stems if stem.endswith(key)), key=lambda p: (len(p), p))
        named.update(found[:1])  # the least nested, the likeliest
    for files in files_named_by(report.mentioned.identifiers, index):
        named.update(files)
    return sorted(named)


def files_named_by(names: Iterable[str], index: SymbolIndex) -> list[list[str]]:
    """With NAMES_AS_FILES, per compound name (`_`, `-` or a case change inside) that at
    most MAX_DEFINERS files are named after (`named_after`), those files, in `names`'
    order; else nothing."""
    if not NAMES_AS_FILES:
        return []
    found = []
    for name in filter(_COMPOUND.search, names):
        files = _files_named(name, index)
        if 0 < len(files) <= MAX_DEFINERS:
            found.append(files)
    return found


def _files_named(name: str, index: SymbolIndex) -> list[str]:
    """The files named after `name` (`named_after`), from a table built once per index."""
    table = _FILES_BY_STEM.get(index)
    if table is None:
        table = defaultdict(list)
        for path in index.files:
            table[_folded(path.rsplit("/", 1)[-1].split(".", 1)[0])].append(path)
        _FILES_BY_STEM[index] = table
    return table.get(_folded(name.rsplit(".", 1)[-1]), [])


def _stems(files: Iterable[str]) -> list[tuple[str, str]]:
    """(`/` + path without its extension, path) for each file with an extension."""
    return [("/" + p.rsplit(".", 1)[0], p) for p in files if "." in p.rsplit("/", 1)[-1]]


def named_definitions(
    report: Report, index: SymbolIndex
) -> list[tuple[bool, list[tuple[str, Definition]]]]:
    """Per mentioned name defined in at most MAX_DEFINERS files: whether it was given with
    its owner (`Owner.member`), and its (file, definition) pairs.
    `Owner.member` whose owner is no class is a member of a package, module or file
    (Go's `json.Marshal`, Rust's `de::from_str`): the member's definitions under a folder
    or in a file named for the owner."""
    return defined(report.mentioned.identifiers, index)


def defined(
    names: Iterable[str], index: SymbolIndex
) -> list[tuple[bool, list[tuple[str, Definition]]]]:
    """`named_definitions` of any names."""
    found = []
    for name in names:
        lookup = index.find(name)
        if lookup.how.value in ("exact", "qualified"):
            matches = list(lookup.matches)
        elif "." in name:
            matches = _in_owner(name, index)
        else:
            continue
        by_file: dict[str, Definition] = {}
        for symbol in matches:
            by_file.setdefault(symbol.path, symbol.definition)
        if 0 < len(by_file) <= MAX_DEFINERS:
            found.append(("." in name, list(by_file.items())))
    return found


def _in_owner(name: str, index: SymbolIndex) -> list[Symbol]:
    """Definitions of `member` in a folder or file named `owner` (`pkg.Func`, `mod.func`)."""
    owner, member = name.rsplit(".", 1)
    lookup = index.find(member)
    if lookup.how.value != "exact":
        return []
    return [s for s in lookup.matches if owner in s.path.rsplit(".", 1)[0].split("/")]


def named_after(path: str, name: str) -> bool:
    """Whether the file's name, without extension, case and `_`/`-`, is the name's last part."""
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    return _folded(stem) == _folded(name.rsplit(".", 1)[-1])


def _folded(word: str) -> str:
    return word.lower().replace("_", "").replace("-", "")
