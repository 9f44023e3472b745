"""Renderers: a Finding as JSON (the contract), Markdown (for a person) and SARIF 2.1.0
(for GitHub code scanning and IDEs). All pure: a Finding in, text or JSON values out."""

from __future__ import annotations

from diagnoser.render.json import to_json
from diagnoser.render.markdown import to_markdown
from diagnoser.render.sarif import to_sarif, to_sarif_json

__all__ = ["to_json", "to_markdown", "to_sarif", "to_sarif_json"]
