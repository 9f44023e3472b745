from __future__ import annotations

from diagnoser.intake.fingerprint import at_revision, fingerprint, mask
from diagnoser.intake.report import Frame, MappedFrame, TraceException


def frames(*places: tuple[str, str, int]) -> list[MappedFrame]:
    return [
        MappedFrame(frame=Frame(file=f"/srv/{p}", line=line, function=fn), repo_path=p, symbol=fn,
                    in_app=True)
        for p, fn, line in places
    ]  # fmt: skip


ERROR = TraceException(type="KeyError", message="'user_17'")


def test_same_crash_different_lines_and_messages_collapse() -> None:
    a = fingerprint(ERROR, frames(("app/views.py", "show", 10), ("app/store.py", "get", 42)))
    b = fingerprint(
        TraceException(type="KeyError", message="'user_99'"),
        frames(("app/views.py", "show", 12), ("app/store.py", "get", 45)),
    )
    assert a == b and len(a) == 16


def test_different_crashes_differ() -> None:
    base = fingerprint(ERROR, frames(("app/store.py", "get", 42)))
    assert base != fingerprint(ERROR, frames(("app/store.py", "put", 42)))
    assert base != fingerprint(
        TraceException(type="IndexError"), frames(("app/store.py", "get", 42))
    )


def test_without_frames_the_masked_message_counts() -> None:
    one = fingerprint(TraceException(type="Timeout", message="after 30s on host 10.0.0.1"), [])
    two = fingerprint(TraceException(type="Timeout", message="after 31s on host 10.0.0.7"), [])
    other = fingerprint(TraceException(type="Timeout", message="database locked"), [])
    assert one == two != other


def test_mask() -> None:
    assert mask("id 3f2a1b4c-1111-2222-3333-444455556666 at 0xdeadbeef: 'bob' x42") == (
        "id <uuid> at <addr>: <str> x<n>"
    )


def test_a_pinned_repositorys_crash_is_one_per_revision() -> None:
    crash = "0123456789abcdef"
    assert at_revision(crash, None) == crash == at_revision(crash, "")
    assert at_revision(crash, "v1.0.0") == at_revision(crash, "v1.0.0") != crash
    assert at_revision(crash, "v1.0.0") != at_revision(crash, "v1.0.1")
    assert len(at_revision(crash, "v1.0.0")) == len(crash)
