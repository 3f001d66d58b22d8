"""Every file of every fixture home lands in the kind the fixture is named after (readerless kinds too)."""

from __future__ import annotations

import pytest
from artifact_kind_helpers import FIXTURES

from vakaudit.artifacts import classify

KINDS_WITH_FIXTURES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


@pytest.mark.parametrize("kind_name", KINDS_WITH_FIXTURES)
def test_fixture_files_classify_to_their_kind(kind_name: str) -> None:
    root = FIXTURES / kind_name
    rels = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert rels
    assert {rel: classify(rel).name for rel in rels} == dict.fromkeys(rels, kind_name)
