"""The re-ranking rules of semanticsearch's candidates (codeintel/rerank.py), as pure functions;
their effect on real questions is measured by benchmarks/codesearch.py."""

from __future__ import annotations

from mcp_localtools.codeintel.rerank import NAME_FACTOR, longest, name_factor, name_forms, named, reranked


def test_a_query_spells_names_in_runs_of_two_to_four_words() -> None:
    spelled = named("Throttle time, then observe on the scheduler")
    assert {"throttletime", "observeon", "observeonthe", "onthescheduler"} <= spelled
    assert "throttle" not in spelled and "time" not in spelled  # one word names too much
    assert named("progressbar") == {"progressbar"}


def test_a_symbol_whose_name_the_query_spells_weighs_more() -> None:
    spelled = named("raise for status")
    assert name_factor("Response.raise_for_status", spelled) == NAME_FACTOR
    assert name_factor("Response.status", spelled) == 1.0
    candidates = [
        (1, 0.030, "src/config.ts", "interface", "ThrottleConfig"),
        (2, 0.025, "src/throttleTime.ts", "function", "throttleTime"),
        (3, 0.030, "docs/CHANGELOG.md", "text", ""),
    ]
    assert [chunk for chunk, _ in reranked(candidates, "throttle time")] == [2, 1, 3]


def test_the_names_a_query_may_spell_come_in_camel_snake_and_private_snake_form() -> None:
    forms = name_forms("raise for status")
    assert {"raiseforstatus", "raise_for_status", "_raise_for_status", "raisefor", "forstatus"} <= set(forms)
    assert "for_" not in forms and "raise" not in forms  # runs of two words or more, four letters
    assert name_forms("progressbar") == []  # one word: already a term of the query


def test_a_long_query_spells_at_most_as_many_names_as_an_old_sqlite_takes_parameters() -> None:
    assert len(name_forms(" ".join(f"word{i}" for i in range(200)))) <= 999


def test_a_name_inside_a_longer_one_is_left_out_but_two_spellings_of_one_name_stay() -> None:
    assert longest(["unknownoption", "allowunknownoption"]) == ["allowunknownoption"]
    assert sorted(longest(["get_user", "getuser", "user_id"])) == ["get_user", "getuser", "user_id"]
    assert longest(["raise_for_status", "for_status", "_raise_for_status"]) == [
        "_raise_for_status",
        "raise_for_status",
    ]
