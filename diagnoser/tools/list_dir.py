"""list_dir: a folder's entries (to a depth) with type, size, file count and main language
per folder. Ignored and denied entries are hidden; the listing is capped."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from diagnoser.constants import LIST_MAX_DEPTH
from diagnoser.workspace import Kind, Workspace


@dataclass(frozen=True, slots=True)
class Entry:
    path: str
    """Repo-relative."""
    kind: Kind
    size: int
    """Bytes: the file's, or everything listed under the folder."""
    files: int
    """1 for a file; files anywhere under a folder."""
    language: str | None
    """The file's language, or the most common one under the folder."""


@dataclass(frozen=True, slots=True)
class ListResult:
    path: str
    entries: tuple[Entry, ...]
    total: int
    """Entries before the cap."""
    depth: int

    def render(self) -> str:
        base = self.path or "."
        if not self.entries:
            return f"{base}/ has no listed files (ignored and denied files are hidden)"
        prefix = len(self.path) + 1 if self.path else 0
        width = max(len(e.path) - prefix + (e.kind is Kind.DIRECTORY) for e in self.entries)
        lines = [f"{base}/"]
        for entry in self.entries:
            name = entry.path[prefix:] + ("/" if entry.kind is Kind.DIRECTORY else "")
            count = f"{entry.files} files" if entry.kind is Kind.DIRECTORY else ""
            facts = "  ".join(x for x in (count, _size(entry.size), entry.language or "") if x)
            lines.append(f"  {name:<{width}}  {facts}")
        if self.total > len(self.entries):
            lines.append(
                f"(showing {len(self.entries)} of {self.total} entries — "
                "list a subfolder or lower the depth)"
            )
        return "\n".join(lines)

    __str__ = render


def list_dir(workspace: Workspace, path: str = ".", *, depth: int = 1) -> ListResult:
    """Entries under `path` down to `depth` levels (1 = direct children)."""
    folder = workspace.resolve(path, Kind.DIRECTORY).rel
    depth = max(1, min(int(depth), LIST_MAX_DEPTH))
    prefix = folder + "/" if folder else ""
    sizes: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    languages: dict[str, Counter[str]] = {}
    entries: dict[str, Entry] = {}
    for file in workspace.files:
        if not file.path.startswith(prefix):
            continue
        parts = file.path[len(prefix) :].split("/")
        for level in range(min(depth, len(parts) - 1)):
            directory = prefix + "/".join(parts[: level + 1])
            sizes[directory] += file.size
            counts[directory] += 1
            if file.language:
                languages.setdefault(directory, Counter())[file.language] += 1
        if len(parts) <= depth:
            entries[file.path] = Entry(file.path, Kind.FILE, file.size, 1, file.language)
    for directory, count in counts.items():
        main = languages.get(directory)
        language = main.most_common(1)[0][0] if main else None
        entries[directory] = Entry(directory, Kind.DIRECTORY, sizes[directory], count, language)
    ordered = sorted(entries.values(), key=lambda e: (e.path.split("/"), e.kind is Kind.FILE))
    cap = workspace.settings.list_max_entries
    return ListResult(folder, tuple(ordered[:cap]), len(ordered), depth)


def _size(size: int) -> str:
    for unit, scale in (("MB", 1_000_000), ("kB", 1_000)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"
