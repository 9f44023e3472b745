"""Suspects: distinct files from the ranking, best first, ten deep, frames first; the places
right after a file's first one too."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnoser.candidate import Candidate, Source
from diagnoser.candidates import rank_candidates
from diagnoser.finding import MAX_SUSPECTS, Signal
from diagnoser.intake import ReportIn
from diagnoser.intake.intake import build_report
from diagnoser.suspects import SUSPECT_CANDIDATES, SUSPECT_FILES, suspects
from diagnoser.workspace import Workspace
from tests.conftest import MakeRepo


def place(
    path: str, symbol: str | None, source: Source = Source.WORDS, score: float = 0.0
) -> Candidate:
    return Candidate(path, 3, 1, 9, symbol, source, f"why {symbol}", score)


def test_each_file_at_its_best_ranked_place_with_the_places_right_after_it() -> None:
    ranked = [
        place("a.py", "inner", Source.FRAME, 1.0),
        place("a.py", "outer", Source.FRAME, 1.0),
        place("b.py", "caller", Source.FRAME, 0.7),
        place("a.py", "computed", Source.DATAFLOW, 0.2),
        place("c.py", "named", Source.MENTION, 0.9),
        place("c.py", "named", Source.MENTION, 0.9),
    ]
    found = suspects(ranked)
    assert [(s.path, s.symbol, s.source) for s in found] == [
        ("a.py", "inner", Signal.FRAME),
        ("a.py", "outer", Signal.FRAME),  # right after: another function of the same file
        ("b.py", "caller", Signal.FRAME),  # a.py coming back later is not listed again
        ("c.py", "named", Signal.MENTION),  # nor the same place twice
    ]
    assert [s.score for s in found] == [1.0, 1.0, 0.7, 0.9]  # the ranking's order
    assert found[0].reason == "why inner" and found[0].line == 3


def test_at_most_ten_files_and_twelve_places() -> None:
    ranked = [place(f"m{n}.py", f"f{n}") for n in range(25)]
    assert (SUSPECT_FILES, MAX_SUSPECTS) == (10, 12)
    assert [s.path for s in suspects(ranked)] == [f"m{n}.py" for n in range(10)]
    assert len(suspects(ranked, limit=3)) == 3
    assert suspects([]) == []
    runs = [place(f"m{n}.py", f"f{n}.{k}") for n in range(25) for k in range(3)]
    found = suspects(runs)
    assert len(found) == MAX_SUSPECTS and len({s.path for s in found}) == 4


def test_every_ranking_signal_is_a_suspect_signal() -> None:
    """The two enums are one contract (a suspect's source is the candidate's)."""
    assert {s.value for s in Source} == {s.value for s in Signal}


FILES: dict[str, str | bytes] = {
    "shop/cart.py": (
        "def total(items):\n"  # 1
        "    return sum(item.price for item in items)\n"  # 2
    ),
    "shop/checkout.py": (
        "from shop.cart import total\n"  # 1
        "\n"
        "\n"
        "def checkout(items):\n"  # 4
        "    return total(items)\n"  # 5
    ),
    **{
        f"shop/price_{n}.py": f"def price_rule_{n}(item):\n    return item.price * {n}\n"
        for n in range(14)
    },
    "tests/test_cart.py": "def test_total():\n    assert total([]) == 0\n",
}
TRACE = (
    "It crashed\n"
    "Traceback (most recent call last):\n"
    '  File "/srv/shop/checkout.py", line 5, in checkout\n'
    '  File "/srv/shop/cart.py", line 2, in total\n'
    "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'\n"
)


@pytest.fixture
def shop(make_repo: MakeRepo, home: Path) -> Workspace:
    return Workspace(make_repo(FILES), home=home)


def test_a_real_ranking_gives_frames_first_with_their_priors_then_ten_files(
    shop: Workspace,
) -> None:
    index = shop.repository.index
    report = build_report(ReportIn(text=TRACE), files=index.files, index=index)
    found = suspects(rank_candidates(report, shop, limit=SUSPECT_CANDIDATES))
    assert len(found) == len({s.path for s in found}) == SUSPECT_FILES  # a frame first: one each
    assert [(s.path, s.symbol, s.source) for s in found[:2]] == [
        ("shop/cart.py", "total", Signal.FRAME),
        ("shop/checkout.py", "checkout", Signal.FRAME),
    ]
    # a frame's score is its prior: 1 / (1 + depth) ** 0.5 (no utility module, no headline lift)
    assert [s.score for s in found[:2]] == [1.0, pytest.approx(0.7071, abs=1e-4)]
    rest = found[2:]
    assert all(s.source is not Signal.FRAME and s.score > 0 for s in rest)
    assert "tests/test_cart.py" not in [s.path for s in found]  # peripheral: after ten others
