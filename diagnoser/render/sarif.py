"""A Finding as SARIF 2.1.0, the format GitHub code scanning (and most IDEs) read.

One run, one result per Finding with locations. GitHub needs, for each result: `ruleId`,
`message.text`, and a location with `physicalLocation.artifactLocation.uri` and
`region.startLine`; a Finding without locations yields a valid run with no results.
Proposed changes go in the result's `properties`, not `fixes`: a SARIF fix is a list of
region replacements, and a unified diff does not map onto those without re-reading the
file, which a pure renderer cannot do. The Finding's suspects follow its other locations
in `relatedLocations`, each with its reason as the message and `properties.suspect`
(rank, score, source) telling it apart from a grounded location. What was run is in the
result's `properties` too: `reproduction` (the report's failure at the base commit) and
each change's `tested`.
"""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import PackageNotFoundError, version
from typing import Any
from urllib.parse import quote

from diagnoser.finding import RANKING_ONLY, Finding, Location, Role, Status, Suspect
from diagnoser.intake.report import Kind
from diagnoser.render.constants import (
    DEFAULT_TOOL_VERSION,
    ERROR_KINDS,
    ERROR_MIN_CONFIDENCE,
    FINGERPRINT_KEY,
    INFORMATION_URI,
    RULE_DESCRIPTIONS,
    RULE_PREFIX,
    SARIF_SCHEMA_URI,
    SARIF_VERSION,
    SRCROOT,
    TOOL_NAME,
)

JsonObject = dict[str, Any]

DEFECT_KINDS = frozenset({Kind.CRASH, Kind.BUG, Kind.PERFORMANCE})
"""Kinds whose locations point at a problem; the others only give context (`note`)."""

SARIF_INDENT = 2


def _installed_version() -> str:
    try:
        return version(TOOL_NAME)
    except PackageNotFoundError:
        return DEFAULT_TOOL_VERSION


TOOL_VERSION = _installed_version()
"""The installed `diagnoser` version, read once at import."""


def to_sarif(
    finding: Finding,
    *,
    tool_version: str = TOOL_VERSION,
    information_uri: str = INFORMATION_URI,
) -> JsonObject:
    """The SARIF 2.1.0 log for `finding`, as plain JSON-ready values."""
    primary = primary_location(finding)
    results = [] if primary is None else [_result(finding, primary)]
    rules = [_rule(finding.classification)] if results else []
    driver: JsonObject = {
        "name": TOOL_NAME,
        "informationUri": information_uri,
        "version": tool_version,
        "rules": rules,
    }
    run: JsonObject = {"tool": {"driver": driver}, "results": results}
    properties: JsonObject = {}
    if finding.triage is not None:  # also when nothing was investigated (no result)
        properties["triage"] = finding.triage.model_dump(mode="json")
    if not results and finding.suspects:  # a request's or question's place: no result
        properties["suspects"] = [s.model_dump(mode="json") for s in finding.suspects]
        properties["suspectsNote"] = RANKING_ONLY
    if properties:
        run["properties"] = properties
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}


def to_sarif_json(
    finding: Finding,
    *,
    tool_version: str = TOOL_VERSION,
    information_uri: str = INFORMATION_URI,
) -> str:
    """`to_sarif` serialised as indented JSON (UTF-8 text, not ASCII-escaped)."""
    log = to_sarif(finding, tool_version=tool_version, information_uri=information_uri)
    return json.dumps(log, indent=SARIF_INDENT, ensure_ascii=False)


def rule_id(kind: Kind) -> str:
    """`diagnoser/crash` for a crash."""
    return f"{RULE_PREFIX}{kind.value}"


def primary_location(finding: Finding) -> Location | None:
    """The first fault location, else the first location (files are in relevance order)."""
    faults = [location for location in finding.files if location.role is Role.FAULT]
    return faults[0] if faults else next(iter(finding.files), None)


def level(finding: Finding) -> str:
    """`error` for a grounded, likely crash/bug fault; `note` for context only; else `warning`."""
    primary = primary_location(finding)
    context_only = all(location.role is Role.CONTEXT for location in finding.files)
    if primary is None or context_only or finding.classification not in DEFECT_KINDS:
        return "note"
    confidence = finding.root_cause.confidence if finding.root_cause else 0.0
    if (
        finding.status is Status.GROUNDED
        and finding.classification in ERROR_KINDS
        and primary.role is Role.FAULT
        and confidence >= ERROR_MIN_CONFIDENCE
    ):
        return "error"
    return "warning"


def fingerprint(finding: Finding) -> str:
    """A stable hash of classification, fault path and symbol (line numbers drift; these don't)."""
    primary = primary_location(finding)
    path = _normalised_path(primary.path) if primary else ""
    symbol = (primary.symbol or "") if primary else ""
    key = "\0".join((finding.classification.value, path, symbol))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _rule(kind: Kind) -> JsonObject:
    return {
        "id": rule_id(kind),
        "name": kind.value,
        "shortDescription": {"text": RULE_DESCRIPTIONS[kind]},
        "properties": {"tags": [TOOL_NAME, kind.value]},
    }


def _result(finding: Finding, primary: Location) -> JsonObject:
    related = [location for location in finding.files if location is not primary]
    locations = [_location(loc, id_=number) for number, loc in enumerate(related, start=1)]
    locations += [
        _suspect(suspect, rank=rank, id_=len(related) + rank)
        for rank, suspect in enumerate(finding.suspects, start=1)
    ]
    return {
        "ruleId": rule_id(finding.classification),
        "ruleIndex": 0,
        "level": level(finding),
        "message": {"text": _message(finding)},
        "locations": [_location(primary)],
        "relatedLocations": locations,
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(finding)},
        "properties": _properties(finding),
    }


def _message(finding: Finding) -> str:
    if finding.root_cause is not None:
        return finding.root_cause.summary
    return " ".join(finding.title.split()) or rule_id(finding.classification)


def _location(location: Location, *, id_: int | None = None) -> JsonObject:
    region: JsonObject = {"startLine": location.start_line, "endLine": location.end_line}
    if location.evidence:
        region["snippet"] = {"text": location.evidence}
    sarif: JsonObject = {} if id_ is None else {"id": id_}
    sarif["physicalLocation"] = {
        "artifactLocation": {"uri": _uri(location.path), "uriBaseId": SRCROOT},
        "region": region,
    }
    if location.symbol:
        sarif["logicalLocations"] = [{"fullyQualifiedName": location.symbol}]
    sarif["message"] = {"text": _describe(location)}
    return sarif


def _suspect(suspect: Suspect, *, rank: int, id_: int) -> JsonObject:
    """A suspect as a related location: its line, its reason, and its rank and score."""
    sarif: JsonObject = {
        "id": id_,
        "physicalLocation": {
            "artifactLocation": {"uri": _uri(suspect.path), "uriBaseId": SRCROOT},
            "region": {"startLine": suspect.line},
        },
    }
    if suspect.symbol:
        sarif["logicalLocations"] = [{"fullyQualifiedName": suspect.symbol}]
    reason = " ".join(suspect.reason.split())
    sarif["message"] = {"text": reason or f"suspect ({suspect.source.value})"}
    sarif["properties"] = {
        "suspect": {"rank": rank, "score": suspect.score, "source": suspect.source.value}
    }
    return sarif


def _describe(location: Location) -> str:
    reason = " ".join(location.reason.split())
    return f"{location.role.value}: {reason}" if reason else location.role.value


def _properties(finding: Finding) -> JsonObject:
    cause = finding.root_cause
    return {
        "title": finding.title,
        "classification": finding.classification.value,
        "status": finding.status.value,
        "reproduction": finding.reproduction.model_dump(mode="json"),
        "confidence": cause.confidence if cause else None,
        "checks": [check.model_dump(mode="json") for check in finding.checks],
        "changes": [change.model_dump(mode="json") for change in finding.changes],
        "risk": finding.risk.model_dump(mode="json"),
        "provenance": finding.provenance.model_dump(mode="json"),
        "triage": finding.triage.model_dump(mode="json") if finding.triage else None,
    }


def _normalised_path(path: str) -> str:
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path.lstrip("/")


def _uri(path: str) -> str:
    """A relative URI reference for a repo-relative path (spaces, `%`, `#` … escaped)."""
    return quote(_normalised_path(path), safe="/")
