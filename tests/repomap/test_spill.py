from __future__ import annotations

from pathlib import Path

import pytest

from repomap.cachefile import CacheError
from repomap.spill import Spill, Spilled, read_back, spill_in


def test_bytes_set_aside_read_back_and_leave_no_named_file(tmp_path: Path) -> None:
    spill = Spill(tmp_path / "cache")
    first, second = spill.add(b"alpha"), spill.add(b"")
    assert isinstance(first, Spilled) and len(first) == 5
    assert (read_back(first), read_back(second), read_back(b"held")) == (b"alpha", b"", b"held")
    assert list((tmp_path / "cache").iterdir()) == []  # unnamed: nothing to clean


def test_a_spill_whose_write_fails_keeps_the_bytes_in_memory(tmp_path: Path) -> None:
    spill = Spill(tmp_path)
    spill._fd = -1  # a write that fails, as on a full disk
    data = b"kept"
    assert spill.add(data) is data  # nothing lost


def test_bytes_cut_short_are_an_error(tmp_path: Path) -> None:
    spill = Spill(tmp_path)
    with pytest.raises(CacheError):
        spill.read(0, 3)  # nothing written there


def test_no_directory_or_one_that_takes_no_file_means_no_spill(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    assert spill_in(None) is None and spill_in(tmp_path / "file" / "below") is None
    assert spill_in(tmp_path) is not None
