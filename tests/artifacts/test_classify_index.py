"""Classification's component index finds exactly the patterns the glob rules match.

``candidates`` only tries the patterns whose last literal component a path has (plus the few
without one, filtered by their file name's literal start and end). The expectation here is the
rule itself: every registered (kind, pattern) tried with :func:`glob_matches`, ranked as
``classify`` documents, over every pattern's example paths, their nested-home forms, and paths
made to share a pattern's components without matching it.
"""

from __future__ import annotations

import pytest
from artifact_kind_helpers import glob_rule

import vakaudit.artifacts as artifacts
from vakaudit.artifacts import all_kinds, candidates


def _paths() -> list[str]:
    out = ["", "/", "a//b", "x.lock", "a/b/x.sock", "run.log", "presentations.tmp-1", "cache", "cache/"]
    for kind in all_kinds():
        for pattern in kind.all_patterns:
            filled = pattern.replace("**/", "").replace("**", "d/e").replace("*", "q1").replace("?", "z")
            deep = pattern.replace("**/", "a/b/").replace("**", "f").replace("*", "").replace("?", "z")
            out += [filled, deep, f"agents/vak/{filled}", f"agents/vak/agents/vak/{filled}", f"{filled}/x"]
            out.append(filled.rsplit("/", 1)[0])  # its directory alone
    return out


def _rule(rel_path: str, layout: str | None) -> list[tuple[str, str]]:
    return glob_rule(rel_path, layout)


@pytest.mark.parametrize("layout", [None, "g2", "g3"])
def test_candidates_equal_the_glob_rule(layout: str | None) -> None:
    paths = _paths()
    assert len(paths) > 1000
    for rel_path in paths:
        assert [(k.name, p) for k, p in candidates(rel_path, layout)] == _rule(rel_path, layout), rel_path


def test_every_pattern_is_indexed_once() -> None:
    artifacts.all_kinds()
    artifacts._pairs()
    indexed = [i for ids in artifacts._BY_COMPONENT.values() for i in ids] + [u[0] for u in artifacts._UNKEYED]
    assert sorted(indexed) == list(range(sum(len(k.all_patterns) for k in all_kinds())))


@pytest.mark.parametrize("layout", [None, "g1", "g2", "g3"])
def test_classify_is_the_best_of_the_glob_rule(layout: str | None) -> None:
    # classify tries the candidates best first and stops at the first match, with the directory's
    # key components looked up once per directory: the answer must still be the rule's first
    artifacts.classify.cache_clear()
    paths = _paths()
    for rel_path in paths:
        rule = _rule(rel_path, layout)
        assert artifacts.classify(rel_path, layout).name == (rule[0][0] if rule else "unclassified"), rel_path
