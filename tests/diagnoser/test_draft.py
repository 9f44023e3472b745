"""`Draft`: the schema a formatter model is shown describes every field it fills."""

from __future__ import annotations

from diagnoser.draft import Draft


def test_the_schema_a_model_is_shown_describes_each_field_it_fills() -> None:
    properties = Draft.model_json_schema()["properties"]
    described = {name for name, field in properties.items() if field.get("description")}
    assert described == set(properties) - {"root_cause"}  # its own model describes it
    assert properties["files"]["description"].startswith("Relevance order")
    assert properties["complexity"]["default"] == properties["risk"]["default"] == "medium"
