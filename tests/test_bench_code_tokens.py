"""bench/code_tokens.py: what a paraphrase of a report must keep verbatim."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))

from code_tokens import code_tokens, compare, main

ORIGINAL = """Unmarshal fails for uint64 above MaxInt64
Decoding into a `uint64` field returns `(2, 5): strconv.ParseInt: value out of range`.
Run it with --strict on go1.21.4, see src/decode.go:42 and toml.Unmarshal() for details.

```go
var c Config
err := toml.Unmarshal(doc, &c)
```
"""


def test_code_and_code_like_words_are_tokens_prose_is_not() -> None:
    found = code_tokens(ORIGINAL)
    assert {"MaxInt64", "uint64", "strconv.ParseInt", "--strict", "go1.21.4",
            "src/decode.go:42", "toml.Unmarshal()", "Config", "err"} <= found.keys()  # fmt: skip
    assert found["toml.Unmarshal"] == 1  # inside the fence
    assert not {"Decoding", "returns", "details", "fails", "with"} & found.keys()


def test_a_faithful_paraphrase_loses_and_adds_nothing() -> None:
    reworded = ORIGINAL.replace("returns", "gives back").replace("for details", "as well")
    assert compare(ORIGINAL, reworded) == ([], [])


def test_a_tidied_identifier_and_an_added_hint_are_both_reported() -> None:
    tidied = ORIGINAL.replace("MaxInt64", "the largest int64").replace(
        "for details", "and the bug is in decodeInteger()"
    )
    missing, added = compare(ORIGINAL, tidied)
    assert missing == ["MaxInt64"]
    assert added == ["decodeInteger()", "int64"]


def test_the_command_line_exit_says_whether_they_differ(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original, same, other = tmp_path / "o.md", tmp_path / "s.md", tmp_path / "x.md"
    original.write_text(ORIGINAL)
    same.write_text(ORIGINAL.replace("Decoding", "Reading"))
    other.write_text(ORIGINAL.replace("go1.21.4", "Go"))
    assert main([str(original), str(same)]) == 0
    assert main([str(original), str(other)]) == 1
    assert "missing (in the original, not in the paraphrase): go1.21.4" in capsys.readouterr().out
    assert main([]) == 2
