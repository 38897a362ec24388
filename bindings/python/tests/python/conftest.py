"""Shared fixtures of the aguikit test suite.

The suite is run by ``cargo test --workspace`` (``tests/pytest.rs`` builds the extension,
installs it into a virtual environment under ``target/`` and runs pytest); it can also be
run by hand with that environment's ``python -m pytest bindings/python/tests/python``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List

import pytest

REPO = Path(__file__).resolve().parents[4]
SHARED = Path(os.environ.get("AGUI_SHARED_DIR") or (REPO.parent / "shared"))
CASES_DIR = SHARED / "conformance" / "cases"
CASE_FILES = sorted(CASES_DIR.glob("*.json"))


def load_case(path: Path) -> Dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def all_cases() -> List[Dict[str, Any]]:
    return [load_case(p) for p in CASE_FILES]


@pytest.fixture(scope="session")
def cases() -> List[Dict[str, Any]]:
    assert CASE_FILES, f"no conformance cases in {CASES_DIR} (set AGUI_SHARED_DIR)"
    return all_cases()


def json_eq(a: Any, b: Any) -> bool:
    """Structural JSON equality: key order free, numbers as numbers, absent != null."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        # Numbers are IEEE doubles in JSON as the reference reads it.
        return float(a) == float(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_eq(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_eq(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b
