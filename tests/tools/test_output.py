"""The printing helpers every listing shares."""

from __future__ import annotations

from drasnap.tools.output import count_line


def test_count_line_says_one_in_the_singular_and_any_other_count_in_the_plural() -> None:
    assert count_line(0, "run") == "(0 runs)"
    assert count_line(1, "run") == "(1 run)"
    assert count_line(3, "row") == "(3 rows)"
    assert count_line(1, "event", ", times UTC on 01-02") == "(1 event, times UTC on 01-02)"
