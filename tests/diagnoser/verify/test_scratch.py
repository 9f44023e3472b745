"""The throwaway copy: what it holds, and that it is gone afterwards."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from diagnoser.settings import Settings
from diagnoser.verify import scratch
from diagnoser.verify.scratch import Scratch, ScratchTooLarge
from diagnoser.workspace import Workspace
from tests.diagnoser.verify.conftest import SECRET


def test_a_copy_holds_the_code_but_no_secret_and_no_vcs(shop: Path, home: Path) -> None:
    (shop / ".git").mkdir()
    (shop / ".git" / "config").write_text("[core]\n")
    os.symlink("/etc/passwd", shop / "shop" / "passwd.txt")
    os.symlink("cart.py", shop / "shop" / "alias.py")
    with Scratch(home).copy(Workspace(shop, Settings())) as copy:
        made = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*"))
        assert made == ["shop", "shop/__init__.py", "shop/alias.py", "shop/cart.py", "tests",
                        "tests/test_cart.py"]  # fmt: skip
        assert not (copy / "shop" / "alias.py").is_symlink()
        assert copy.is_relative_to(home)
        (copy / "shop" / "cart.py").write_text("changed")
        place = copy.parent
    assert not place.exists()
    assert "changed" not in (shop / "shop" / "cart.py").read_text()
    assert SECRET in (shop / ".env").read_text()  # the user's tree is as it was


def test_a_tree_over_the_bounds_is_refused(shop: Path, home: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(scratch, "MAX_COPY_FILES", 2)
    with (
        pytest.raises(ScratchTooLarge, match="too large"),
        Scratch(home).copy(Workspace(shop, Settings())),
    ):
        pass
    assert not any((home / scratch.SCRATCH_DIR).iterdir())


def test_copies_a_crash_left_behind_are_swept(shop: Path, home: Path) -> None:
    stale = home / scratch.SCRATCH_DIR / "old"
    stale.mkdir(parents=True)
    os.utime(stale, (0, 0))
    with Scratch(home).copy(Workspace(shop, Settings())):
        pass
    assert not stale.exists()
