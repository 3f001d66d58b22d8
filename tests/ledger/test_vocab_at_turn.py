"""``at_turn`` names an entry's turn (baseline7.md §8.1: the directive entry id of the turn), written
before or after the directive. Hand-built rows as the line reader gives them (file-order numbers from
``turn_step``; ``turn_id`` = ``at_turn`` where written), and the numbers the envelope asks for."""

from __future__ import annotations

from vakaudit.ledger.vocab import at_turn_attribution


def _apply(rows: list[tuple]) -> list:
    ids, directive, nos, tids = (list(c) for c in zip(*rows, strict=True))
    return at_turn_attribution(ids, directive, nos, tids)


def test_prep_before_its_directive_keeps_the_file_order_numbering() -> None:
    # (id, directive, file-order turn_no, turn_id)
    rows = [("h", False, None, None), ("b1", False, 1, "d1"), ("i1", False, 1, "d1"), ("d1", True, 1, "d1"),
            ("a1", False, 1, "d1"), ("b2", False, 2, "d2"), ("d2", True, 2, "d2")]
    assert _apply(rows) == [None, 1, 1, 1, 1, 2, 2]


def test_a_binding_after_its_directive_stays_in_that_turn() -> None:
    rows = [("h", False, None, None), ("d1", True, 1, "d1"),
            ("b1", False, 2, "d1"),  # file order alone would give it to the next turn
            ("a1", False, 1, "d1"), ("d2", True, 2, "d2"),
            ("b2", False, 3, "d2")]  # and a trailing one would open a third turn
    assert _apply(rows) == [None, 1, 1, 1, 2, 2]


def test_a_turn_id_that_names_no_directive_changes_nothing() -> None:
    rows = [("d1", True, 1, "d1"),
            ("x", False, 2, "gone"),  # names no entry of the ledger: its number stays
            ("c", False, 2, "x"),  # names an entry that is not a directive
            ("p", False, 3, None)]  # a prep entry written without at_turn
    assert _apply(rows) == [1, 2, 2, 3]
