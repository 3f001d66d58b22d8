"""Proactive retrieval against vak-session's session_log.rs and search.rs fixtures (spec ledger.md §8)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from ledger_messages import A, U, header

from vakaudit.ledger import SessionLog
from vakaudit.ledger.retrieval import extract_entities, score_text, tokenize

FIXTURE = [
    U("discuss Kubernetes cluster deployment"),
    A("the Kubernetes cluster uses Docker containers"),
    U("how to configure PostgreSQL database settings"),
    A("PostgreSQL needs shared_buffers tuning"),
    U("tell me about network firewalls"),
]


def bm25(tf: int, chars: int) -> float:
    """One term's BM25 weight with vak's constants: idf ln 2, k1 1.2, b 0.75, avgdl 100."""
    return math.log(2) * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * chars / 100))


def test_proactive_retrieval_returns_kubernetes_entries_first(tmp_path: Path) -> None:
    """§8 session_log.rs: "proactive retrieval returns Kubernetes-related older entries first"
    (vak's proactive_retrieval_finds_relevant_older_entries: query "Kubernetes deployment", cap 5,
    no excluded tail; at least two results, the first about Kubernetes)."""
    with SessionLog.create(
        tmp_path / "s.jsonl", header("0.1.0", "anthropic", "claude-sonnet-4-5"), fsync=False
    ) as log:
        ids = [log.append_message(m).id for m in FIXTURE]
        retrieved = log.retrieve_relevant_entries("Kubernetes deployment", 5, 0)
    assert len(retrieved) >= 2
    assert "Kubernetes" in retrieved[0][1]["content"][0]["text"]
    # hand-computed: message 1 scores 4*bm25(1, 37) + bm25(1, 37) = 4.669, message 2 4*bm25(1, 45) =
    # 3.578 (Kubernetes is a named entity in both; no message holds the whole phrase); nothing else
    # shares a term
    assert retrieved == [(ids[0], FIXTURE[0]), (ids[1], FIXTURE[1])]


def test_scores_match_hand_computed_bm25() -> None:
    terms, phrase = tokenize("Kubernetes deployment"), "kubernetes deployment"
    assert terms == ["kubernetes", "deployment"]
    first = FIXTURE[0]["content"][0]["text"]
    second = FIXTURE[1]["content"][0]["text"]
    assert extract_entities(first) == ["kubernetes"]
    assert extract_entities(second) == ["kubernetes", "docker"]
    assert score_text(first, terms, phrase, extract_entities(first)) == pytest.approx(5 * bm25(1, 37))
    assert score_text(second, terms, phrase, extract_entities(second)) == pytest.approx(4 * bm25(1, 45))
    assert 5 * bm25(1, 37) == pytest.approx(4.669, abs=1e-3)
    assert 4 * bm25(1, 45) == pytest.approx(3.578, abs=1e-3)
    # the whole phrase adds 3
    assert score_text("run the deploy script now", ["deploy", "script"], "deploy script") == pytest.approx(
        2 * bm25(1, 25) + 3
    )


def test_entity_extraction_matches_vaks_search_test() -> None:
    """search.rs entity_extraction_finds_camel_case_and_title_case."""
    entities = extract_entities("The Kubernetes cluster runs the Docker container for PostgreSQL.")
    assert {"kubernetes", "docker", "postgresql"} <= set(entities)
    # a proper-noun word needs four letters (vak's doc comment's "New York" example does not hold)
    assert extract_entities("We met in New York City with NASA, the JSON team.") == [
        "york_city",
        "nasa",
        "json",
    ]
    assert extract_entities("Summary: see Analysis.") == []  # noise words
    assert extract_entities("Rust Tokio Axum Hyper Serde") == [
        "rust_tokio_axum_hyper",
        "serde",
    ]  # runs of <= 4


def test_tokenize_keeps_runs_of_two_or_more_once() -> None:
    assert tokenize("a deploy, Deploy; x2 x script-42!") == ["deploy", "x2", "script", "42"]
    assert tokenize("   ") == []


def test_tail_cap_summaries_and_empty_queries(tmp_path: Path) -> None:
    with SessionLog.create(
        tmp_path / "s.jsonl", header("0.1.0", "anthropic", "claude-sonnet-4-5"), fsync=False
    ) as log:
        ids = [log.append_message(m).id for m in FIXTURE]
        assert log.retrieve_relevant_entries("Kubernetes deployment", 1) == [(ids[0], FIXTURE[0])]
        # the verbatim tail (last 4 projected messages) is never a candidate
        assert log.retrieve_relevant_entries("Kubernetes deployment", 5, 4) == [(ids[0], FIXTURE[0])]
        assert log.retrieve_relevant_entries("Kubernetes deployment", 5, 5) == []
        assert log.retrieve_relevant_entries("   ", 5) == []
        assert log.retrieve_relevant_entries("Kubernetes", 0) == []
        assert log.retrieve_relevant_entries("x", 5) == []  # no term of two characters
        # a compaction summary mentioning Kubernetes is never retrieved
        log.append(
            "compaction",
            {
                "summary": "Kubernetes talk",
                "first_kept_entry_id": ids[2],
                "tokens_before": 9,
                "reset_all": False,
            },
        )
        assert log.retrieve_relevant_entries("Kubernetes", 5) == []
        assert [i for i, _ in log.retrieve_relevant_entries("PostgreSQL", 5)] == [ids[3], ids[2]]


def test_turn_based_generations_key_results_by_turn(tmp_path: Path) -> None:
    """G3: every message of a turn carries the turn id (its directive's entry id), as vak tags them."""
    with SessionLog.create(
        tmp_path / "s.jsonl", header("4.0.0", "anthropic", "claude-sonnet-4-5"), fsync=False
    ) as log:
        ids = [log.append_message(m).id for m in FIXTURE]
        retrieved = log.retrieve_relevant_entries("Kubernetes deployment", 5)
    assert retrieved == [(ids[0], FIXTURE[0]), (ids[0], FIXTURE[1])]
