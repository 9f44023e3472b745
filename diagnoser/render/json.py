"""The Finding itself as JSON: the machine-readable form, exactly the contract."""

from __future__ import annotations

from diagnoser.finding import Finding

JSON_INDENT = 2


def to_json(finding: Finding) -> str:
    """`finding` as indented JSON; `files` stay in relevance order (the fault first).

    `Finding.model_validate_json(to_json(f)) == f` for every Finding.
    """
    return finding.model_dump_json(indent=JSON_INDENT)
