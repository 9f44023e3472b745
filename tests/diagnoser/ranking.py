"""A small repository with known call chains, and the ranking of a report over it: what
the tests of `diagnoser.candidates`, `frames`, `relevance` and `named` read."""

from __future__ import annotations

import pytest

from diagnoser.candidate import Candidate, Source
from diagnoser.candidates import MAX_CANDIDATES, rank_candidates
from diagnoser.intake import ReportIn
from diagnoser.intake.intake import build_report
from diagnoser.workspace import Workspace

# A music player whose store reviews name no identifier (`diagnoser.passages`).
PLAYER = {
    "player/playlists.py": (
        "def export_playlist(playlist, path):\n"
        '    """Write the playlist to an M3U file."""\n'
        "    with open(path, 'w') as out:  # one line per song\n"
        "        out.write('\\n'.join(playlist.songs))\n"
        "\n"
        "\n"
        "def shuffle(playlist):\n"
        '    """Play the songs of the playlist in a random order."""\n'
        "    return sorted(playlist.songs, key=hash)\n"
    ),
    "player/account.py": (
        "def delete_account(user):\n"
        '    """Remove the user and everything they stored."""\n'
        '    user.store.remove_all(reason="deleted by the user")\n'
    ),
    "tests/test_playlists.py": "def test_export_playlist():\n    assert True\n",
}

FILES = {
    "app/utils.py": (
        "def check_positive(value):\n"  # 1
        "    if value <= 0:\n"
        '        raise ValueError("must be positive")\n'
        "    return value\n"
    ),
    "app/stackplot.py": (
        "from app.utils import check_positive\n"  # 1
        "\n"
        "\n"
        "def stackplot(axes, values):\n"  # 4
        "    check_positive(len(values))\n"  # 5
        "    return axes.draw(values)\n"
    ),
    "app/axes.py": (
        "from app.stackplot import stackplot\n"  # 1
        "\n"
        "\n"
        "class Axes:\n"  # 4
        "    def plot(self, values):\n"  # 5
        "        return stackplot(self, values)\n"  # 6
        "\n"
        "    def draw(self, values):\n"  # 8
        "        return self.canvas.paint(values)\n"  # 9
    ),
    "app/mail.py": (
        "def notify(share):\n"  # 1
        "    return share.recipient.email\n"  # 2
        "\n"
        "\n"
        "def banner(self):\n"  # 5
        "    return self.owner.name\n"  # 6
        "\n"
        "\n"
        "def greet(recipient):\n"  # 9
        '    return "Hi " + recipient.email\n'  # 10
    ),
    "app/service.py": (
        "from app.mail import greet, notify\n"  # 1
        "\n"
        "\n"
        "def share_note(users, email, share):\n"  # 4
        "    share.recipient = users.get(email)\n"  # 5
        "    return notify(share)\n"  # 6
        "\n"
        "\n"
        "def welcome(users, email):\n"  # 9
        "    return greet(users.get(email))\n"  # 10
    ),
    "app/cart.py": (
        "def cart_size(cart):\n"  # 1
        "    return cart.items.count\n"  # 2
        "\n"
        "\n"
        "def checkout(cart):\n"  # 5
        "    return cart_size(cart)\n"  # 6
    ),
    "app/common/dom.py": "def build_node(tag):\n    return tag.upper() + 1\n",
    "app/forms.py": (
        "def require_amount(amount):\n"  # 1
        "    if amount is None:\n"  # 2
        '        raise ValueError("amount")\n'  # 3
    ),
    "app/render.py": (
        "from app.common.dom import build_node\n"  # 1
        "from app.forms import require_amount\n"  # 2
        "\n"
        "\n"
        "def render(tag, amount):\n"  # 5
        "    require_amount(amount)\n"  # 6
        "    return build_node(tag)\n"  # 7
    ),
    "app/orders.py": (
        "class Order:\n"  # 1
        "    def resize(self, size):\n"  # 2
        "        if size < 0:\n"  # 3
        "            raise ValueError(size)\n"  # 4
        "        self.size = size\n"  # 5
    ),
    "app/checkout.py": (
        "from app.orders import Order\n"  # 1
        "\n"
        "\n"
        "def place(order, size):\n"  # 4
        "    return order.resize(size - 10)\n"  # 5
    ),
    "app/charts.py": "def draw_chart(series):\n    return [point.value for point in series]\n",
    "app/assets/charts.js": (
        "function drawChart(series){return series.map(function(point){return point.value})}"
        + ";var padding=0" * 100
        + "\n"
    ),
    "app/static/vendor_js/lib/chart-2.9.4.js": (
        "function drawChart(series) { return series.map(function (point) {"
        " return point.value; }); }\n"
    ),
    "app/billing.py": "def invoice_total(lines):\n    return sum(line.amount for line in lines)\n",
    "app/pages.py": (
        "class Pager:\n"  # 1
        "    def page_count(self, total, per_page):\n"  # 2
        "        return max(1, total // per_page)\n"  # 3
        "\n"
        "    def page(self, total, number, per_page):\n"  # 5
        "        pages = self.page_count(total, per_page)\n"  # 6
        "        if number > pages:\n"  # 7
        "            raise IndexError(number)\n"  # 8
        "        return number\n"  # 9
    ),
    "app/exporter.py": (
        "import json\n"
        "\n"
        "\n"
        "class Exporter:\n"
        "    def __init__(self, rows):\n"
        "        self.rows = rows\n"
        "\n"
        "    def to_csv(self):\n"
        '        return ",".join(self.rows)\n'
        "\n"
        "    def to_json(self):\n"
        "        return json.dumps(self.rows)\n"
    ),
    "tests/test_billing.py": "def test_invoice_total():\n    assert invoice_total([]) == 0\n",
    "examples/invoice_demo.py": "def invoice_total_demo():\n    return invoice_total([])\n",
}


def trace(*frames: tuple[str, int, str], error: str) -> str:
    lines = ["Traceback (most recent call last):"]
    lines += [
        f'  File "/srv/project/{path}", line {line}, in {name}' for path, line, name in frames
    ]
    return "\n".join([*lines, error, ""])


def workspace_of(files: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    root = tmp_path_factory.mktemp("repo")
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return Workspace(root, home=tmp_path_factory.mktemp("home"))


def rank(
    workspace: Workspace, text: str, title: str | None = None, *, limit: int = MAX_CANDIDATES
) -> list[Candidate]:
    index = workspace.repository.index
    report = build_report(ReportIn(text=text, title=title), files=index.files, index=index)
    return rank_candidates(report, workspace, limit=limit)


def places(found: list[Candidate]) -> list[tuple[str, str | None, Source]]:
    return [(c.path, c.symbol, c.source) for c in found]


PLOT_TRACE = trace(
    ("app/axes.py", 6, "plot"),
    ("app/stackplot.py", 5, "stackplot"),
    ("app/utils.py", 3, "check_positive"),
    error="ValueError: must be positive",
)


STEMS = {
    "app/render.py": (
        "def render_page(page):\n    return page_layout(page) + page_border(page) + page.title\n"
    ),
    "app/page_state.py": "def draw(page):\n    return 1\n",
    "app/add.py": "def run():\n    return 2\n",
}
"""Files named after a compound name (`page_state`) and after a plain word (`add`)."""
