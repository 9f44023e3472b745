"""A small repository with secrets, escaping symlinks and a FIFO, plus its Workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from diagnoser.settings import Settings
from diagnoser.workspace import Workspace

SECRET = "TOPSECRET-7f3a"
"""Written into every file no tool may show; no output may ever contain it."""

APP = '''"""The app."""


class Cart:
    def __init__(self):
        self.items = []

    def total(self):
        return sum(item.price for item in self.items)


def checkout(cart):
    return cart.total()
'''


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    root = tmp_path / "repo"
    files = {
        "src/app.py": APP,
        "src/views.py": (
            "from src.app import checkout\n\n\ndef view(cart):\n    return checkout(cart)\n"
        ),
        "secrets.py": "def load_secrets():\n    return {}\n",
        "README.md": "# demo\n",
        ".env": f"TOKEN={SECRET}\n",
        ".env.local": f"TOKEN={SECRET}\n",
        "sub/.env": f"TOKEN={SECRET}\n",
        "prod.env": f"TOKEN={SECRET}\n",
        ".env.py": f"def leaked_{SECRET.replace('-', '_')}():\n    pass\n",
        "config/secrets.yml": f"token: {SECRET}\n",
        "config/credentials.json": f'{{"token": "{SECRET}"}}\n',
        "keys/server.pem": f"-----BEGIN {SECRET}-----\n",
        "keys/key.p12": SECRET,
        "deploy/id_rsa": SECRET,
        ".npmrc": f"//registry/:_authToken={SECRET}\n",
        ".pypirc": f"password = {SECRET}\n",
        "terraform.tfstate": SECRET,
        ".aws/credentials": SECRET,
        ".ssh/id_ed25519": SECRET,
        ".git/config": f"[remote] url = https://{SECRET}@host/x\n",
        ".git/HEAD": f"ref: {SECRET}\n",
        "node_modules/lib/index.js": "function lib() {}\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "escape_link.txt").symlink_to(outside / "secret.txt")
    (root / "sibling_link").symlink_to(outside, target_is_directory=True)
    (root / "etc_link").symlink_to("/etc", target_is_directory=True)
    (root / "zero_link").symlink_to("/dev/zero")
    (root / "env_alias").symlink_to(root / ".env")
    (root / "alias.py").symlink_to(root / "src" / "app.py")
    (root / "loop_a").symlink_to(root / "loop_b")
    (root / "loop_b").symlink_to(root / "loop_a")
    os.mkfifo(root / "fifo_pipe")
    return root


@pytest.fixture
def workspace(repo: Path, tmp_path: Path) -> Workspace:
    return Workspace(repo, Settings(), home=tmp_path / "home")
