from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagnoser.intake.intake import build_report, exception_chain, report_fingerprint, report_schema
from diagnoser.intake.payloads import from_payload
from diagnoser.intake.report import Kind, Report, ReportIn, Source
from repomap import Repository, SymbolIndex
from tests.conftest import FIXTURES, GOLDEN_REPO

PY_TRACE = """Saving a note fails:

```
Traceback (most recent call last):
  File "/srv/app/notes/api.py", line {api}, in show_note
    note = store.get(note_id)
  File "/srv/app/notes/store.py", line {store}, in get
    raise NoteNotFound(note_id)
notes.models.NoteNotFound: {note}
```
"""


@pytest.fixture
def index(home: Path) -> SymbolIndex:
    return Repository.open(GOLDEN_REPO).index


def report_for(text: str, index: SymbolIndex, **fields: object) -> Report:
    return build_report(
        ReportIn.model_validate({"text": text, **fields}), files=index.files, index=index
    )


def test_python_traceback_in_a_fence_is_mapped_onto_the_repo(index: SymbolIndex) -> None:
    report = report_for(PY_TRACE.format(api=13, store=20, note=7), index)
    assert report.exception is not None
    assert (report.exception.type, report.exception.message) == ("notes.models.NoteNotFound", "7")
    assert [(f.repo_path, f.symbol, f.in_app) for f in report.frames] == [
        ("notes/api.py", "show_note", True),
        ("notes/store.py", "NoteStore.get", True),
    ]
    assert report.classification.kind is Kind.CRASH
    assert "/srv/app/notes/store.py" in report.mentioned.files


def test_same_crash_keeps_its_fingerprint_across_line_drift_and_ids(index: SymbolIndex) -> None:
    first = report_for(PY_TRACE.format(api=13, store=20, note=7), index)
    drifted = report_for(PY_TRACE.format(api=14, store=19, note=99), index)  # same functions
    elsewhere = report_for(PY_TRACE.format(api=13, store=23, note=7), index)  # in search()
    assert first.fingerprint == drifted.fingerprint
    assert first.fingerprint != elsewhere.fingerprint


ASAN_TRACE = """Emitting a freed node crashes:

```
==2211==ERROR: AddressSanitizer: heap-use-after-free on address 0x6030 at pc 0x51 bp 0x1 sp 0x2
READ of size 8 at 0x6030 thread T0
    #0 0x51 in std::string::size() const /usr/include/c++/12/bits/basic_string.h:1071:16
    #1 0x52 in YAML::Emitter::Write(std::string const&) /src/yaml-cpp/src/emitter.cpp:120:3
    #2 0x53 in YAML::Dump(YAML::Node const&) /src/yaml-cpp/src/emitfromevents.cpp:44:5
    #3 0x54 in main (/out/emit_fuzzer+0x5f4e)
    #4 0x55 in __libc_start_main (/lib/x86_64-linux-gnu/libc.so.6+0x29d90)

freed by thread T0 here:
    #0 0x61 in operator delete(void*) /src/llvm/compiler-rt/lib/asan/asan_new_delete.cpp:152:3
    #1 0x62 in YAML::detail::node_data::reset() /src/yaml-cpp/src/node_data.cpp:31:7

SUMMARY: AddressSanitizer: heap-use-after-free /usr/include/c++/12/bits/basic_string.h:1071:16
```
"""


def test_an_asan_report_maps_its_crash_stack_onto_the_repository() -> None:
    files = ["src/emitter.cpp", "src/emitfromevents.cpp", "src/node_data.cpp", "test/main.cpp"]
    report = build_report(ReportIn(text=ASAN_TRACE), files=files)
    assert report.exception is not None
    assert (report.exception.type, report.exception.causes) == ("heap-use-after-free", [])
    assert [(f.frame.function, f.repo_path, f.in_app) for f in report.frames] == [
        ("__libc_start_main", None, False),
        ("main", None, False),  # `(/out/emit_fuzzer+0x5f4e)`: a binary, not a file
        ("Dump", "src/emitfromevents.cpp", True),
        ("Write", "src/emitter.cpp", True),
        ("size", None, False),
    ]
    assert report.frames[3].frame.module == "YAML::Emitter"
    assert report.frames[-1].unmapped_reason == "library or runtime frame"
    assert report.frames[1].frame.file is None
    assert report.classification.kind is Kind.CRASH


def test_a_failed_assert_over_a_gdb_backtrace_is_the_top_exception_with_the_stack_mapped() -> None:
    text = (
        "cfgtool: src/parser.c:123: parse_value: Assertion `n > 0' failed.\n"
        "\n"
        "Program terminated with signal SIGABRT, Aborted.\n"
        "#0  __pthread_kill_implementation (threadid=1, signo=6) at ./nptl/pthread_kill.c:44\n"
        "#1  0x00007f0a1b2c3d4e in __GI_abort () at ./stdlib/abort.c:79\n"
        "#2  0x0000555555555a10 in parse_value (p=0x5) at src/parser.c:123\n"
        "#3  0x0000555555555b20 in main () at src/main.c:9\n"
    )
    report = build_report(ReportIn(text=text), files=["src/parser.c", "src/main.c"])
    assert report.exception is not None
    assert (report.exception.type, report.exception.message) == ("assertion failed", "n > 0")
    assert [c.type for c in report.exception.causes] == ["SIGABRT"]
    assert [(f.frame.function, f.repo_path) for f in report.frames if f.in_app] == [
        ("main", "src/main.c"),
        ("parse_value", "src/parser.c"),
    ]


def test_java_chain_puts_the_top_level_exception_last_and_keeps_its_causes() -> None:
    logcat = next(p for p in (FIXTURES / "traces").iterdir() if "logcat" in p.name).read_text()
    report = build_report(ReportIn(text=logcat, source=Source.CRASH_LOG))
    chain = exception_chain(report.traces)
    top = chain[-1].exception
    assert top is not None and report.traces[0].exception == top  # printed first: the top level
    assert report.exception is not None and report.exception.type == top.type
    assert len(report.exception.causes) == len(chain) - 1 >= 1


def test_payload_frames_are_used_instead_of_reparsing_the_text(index: SymbolIndex) -> None:
    payload = json.loads((FIXTURES / "payloads" / "sentry_event_alert_chained.json").read_text())
    [intake] = from_payload("sentry", payload)
    report = build_report(intake.report, traces=intake.traces, files=index.files, index=index)
    assert report.traces == list(intake.traces)
    assert report.source is Source.SENTRY and report.classification.kind is Kind.CRASH


def test_a_review_is_classified_by_words_and_rating(index: SymbolIndex) -> None:
    report = report_for("App freezes every time I save a note!!", index, source="review", rating=1)
    assert report.exception is None and report.frames == []
    assert report.classification.kind is Kind.BUG
    again = report_for("App freezes every time I save a note!!", index)
    assert report.fingerprint == again.fingerprint


def test_derived_fields_from_the_caller_are_ignored() -> None:
    forged = ReportIn.model_validate(
        {
            "text": "Love it!",
            "rating": 5,
            "fingerprint": "forged",
            "classification": {"kind": "crash"},
        }
    )
    report = build_report(forged)
    assert report.fingerprint != "forged" and report.classification.kind is Kind.PRAISE


def test_json_schema_is_exported() -> None:
    properties = report_schema()["properties"]
    assert isinstance(properties, dict)
    assert {"text", "frames", "exception", "classification", "fingerprint"} <= set(properties)


def test_truncated_carries_the_adapter_notes_and_the_text_parsers_own() -> None:
    frames = "".join(f'  File "f{i}.py", line 1, in g\n' for i in range(600))
    text = "Traceback (most recent call last):\n" + frames + "ValueError: x\n"
    report = build_report(ReportIn(text=text), truncated=["webhook: a note"])
    assert report.truncated == [
        "webhook: a note",
        "text: 600 frames in the python trace at character 0; kept the innermost 512",
    ]
    assert len(report.traces[0].frames) == 512 and report.frames[-1].frame.file == "f599.py"


def test_a_callers_truncated_and_derived_fields_are_never_taken() -> None:
    forged = ReportIn.model_validate({"text": "it crashes", "truncated": ["forged"]})
    assert build_report(forged).truncated == []
    first = build_report(ReportIn(text="it crashes"), truncated=["real"])
    again = build_report(first)  # a Report is a ReportIn: its derived fields are recomputed
    assert again.truncated == [] and again.classification == first.classification


def test_payload_notes_reach_the_report() -> None:
    payload = {"error": {"exceptionClass": "E", "stackTrace": [{"file": "a.kt"}] * 600}}
    (intake,) = from_payload("bugsnag", payload)
    report = build_report(intake.report, traces=intake.traces, truncated=intake.truncated)
    assert report.truncated == ["bugsnag: 600 frames in error.stackTrace; kept the innermost 512"]
    assert report.traces[0].omitted_frames == 88


def test_report_fingerprint_is_build_reports() -> None:
    for text in (
        'Traceback (most recent call last):\n  File "app/x.py", line 3, in f\n'
        "    g()\nKeyError: 1\n",
        "the app freezes when I open settings",
    ):
        report = ReportIn(text=text, source=Source.CRASH_LOG)
        files = {"app/x.py"}
        assert (
            report_fingerprint(report, files=files) == build_report(report, files=files).fingerprint
        )


def test_rust_panics_keep_the_order_they_happened_in_the_first_is_the_cause() -> None:
    text = (
        "thread 'main2' (501447) panicked at crates/app/src/reporters.rs:300:35:\n"
        "no entry found for key\n"
        "\n"
        "thread 'main' (501446) panicked at crates/app/src/lib.rs:2540:10:\n"
        "Tokio executor failed, was there a panic?: Any { .. }\n"
    )
    report = build_report(ReportIn(text=text), files=["crates/app/src/reporters.rs",
                                                         "crates/app/src/lib.rs"])  # fmt: skip
    chain = exception_chain(report.traces)
    assert [t.frames[-1].file for t in chain] == [
        "crates/app/src/reporters.rs",
        "crates/app/src/lib.rs",
    ]
    assert [m.repo_path for m in report.frames] == ["crates/app/src/reporters.rs"]
