"""find_symbol: definitions matching a name (exact, qualified, then case-insensitive) with
their place, signature, number of references and top callers; "did you mean" otherwise."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from diagnoser.constants import SYMBOL_MAX_MATCHES, SYMBOL_TOP_CALLERS
from diagnoser.errors import ToolError
from diagnoser.tools.text import clip
from diagnoser.workspace import Workspace
from repomap import MatchKind


@dataclass(frozen=True, slots=True)
class SymbolHit:
    path: str
    qualified: str
    kind: str
    start_line: int
    end_line: int
    signature: str


@dataclass(frozen=True, slots=True)
class SymbolResult:
    name: str
    how: str
    """exact | qualified | case-insensitive | none"""
    hits: tuple[SymbolHit, ...]
    total: int
    references: int
    """Lines anywhere that use the bare name."""
    callers: tuple[tuple[str, int], ...]
    """(`path::Enclosing.def` or `path`, uses) — where the name is used most."""
    suggestions: tuple[str, ...] = ()

    def render(self) -> str:
        if not self.hits:
            hint = f"; did you mean {', '.join(self.suggestions)}?" if self.suggestions else ""
            return f"no definition named {self.name!r}{hint}"
        lines = [
            f"{self.name}: {self.total} definition(s) ({self.how} match), "
            f"{self.references} references"
        ]
        for hit in self.hits:
            lines.append(f"{hit.path}:{hit.start_line}-{hit.end_line} {hit.kind} {hit.qualified}")
            lines.append(f"    {clip(hit.signature)}")
        if self.total > len(self.hits):
            lines.append(
                f"(showing {len(self.hits)} of {self.total} — qualify the name, e.g. Class.method)"
            )
        if self.callers:
            lines.append(
                "used most in: " + ", ".join(f"{where} ({n})" for where, n in self.callers)
            )
        return "\n".join(lines)

    __str__ = render


def find_symbol(workspace: Workspace, name: str, *, kind: str | None = None) -> SymbolResult:
    """Look `name` up in the repo map's symbol index."""
    if not name or not name.strip():
        raise ToolError("give a symbol name, e.g. QuerySet or QuerySet.filter")
    index = workspace.repository.index
    lookup = index.find(name, kind=kind)
    visible = [s for s in lookup.matches if not workspace.denied(s.path)]
    hits = tuple(
        SymbolHit(
            s.path,
            s.definition.qualified,
            s.definition.kind,
            s.definition.start_line,
            s.definition.end_line,
            s.definition.signature,
        )
        for s in visible[:SYMBOL_MAX_MATCHES]
    )
    callers: Counter[str] = Counter()
    references = 0
    if hits:
        for site in index.references(name):
            if workspace.denied(site.path):
                continue
            references += 1
            around = index.enclosing(site.path, site.line)
            callers[f"{site.path}::{around.qualified}" if around else site.path] += 1
    return SymbolResult(
        name=name.strip(),
        how=lookup.how.value if hits else MatchKind.NONE.value,
        hits=hits,
        total=len(visible),
        references=references,
        callers=tuple(callers.most_common(SYMBOL_TOP_CALLERS)),
        suggestions=lookup.suggestions,
    )
