"""The one wording rule of relation facts (graphmem.schema.facts)."""

from __future__ import annotations

from datetime import datetime, timezone

from graphmem.schema.facts import relation_fact, relationship_words, stored_times

UTC = timezone.utc
MAY = datetime(2023, 5, 8, 15, 30, tzinfo=UTC)
JUNE = datetime(2024, 6, 1, tzinfo=UTC)


def test_the_issue_example_reads_as_a_sentence_with_types() -> None:
    assert relation_fact("alice", "person", "HAS_PET", "Rex", "dog", self_name="alice") == "I myself have pet Rex (dog)"
    assert relation_fact("Ana", "person", "LIVES_IN", "Porto", "city") == "Ana (person) lives in Porto (city)"


def test_the_users_own_node_is_written_in_the_first_person() -> None:
    # the user's name, in any case, and the self-references a model may leave: "I myself" as the source, "me" as the destination
    assert relation_fact("I", "person", "LIKES", "tea", "drink", self_name="alice") == "I myself like tea (drink)"
    assert relation_fact("Alice", "person", "KNOWS", "me", "person", self_name="alice") == "I myself know me"
    assert relation_fact("Ana", "person", "SISTER_OF", "alice", "person", self_name="alice") == "Ana (person) sister of me"
    assert relation_fact("the user", None, "WORKS_AT", "Acme", "company", self_name="alice") == "I myself work at Acme (company)"
    # another person of the same first name stays who they are; without a user known, nothing is rewritten
    assert relation_fact("Alice Smith", "person", "KNOWS", "Bob", "person", self_name="alice") == "Alice Smith (person) knows Bob (person)"
    assert relation_fact("I", "person", "LIKES", "tea", "drink") == "I (person) likes tea (drink)"


def test_a_fact_of_the_user_is_the_same_whatever_the_users_name() -> None:
    # the name told a first-person question nothing: every user's "has pet Rex" now reads (and embeds) alike
    facts = {relation_fact(name, "person", "HAS_PET", "Rex", "dog", self_name=name) for name in ("alice", "u-3f2a9c", "Dr. Bo Li")}
    assert facts == {"I myself have pet Rex (dog)"}


def test_generic_or_repeated_types_are_left_out() -> None:
    assert relation_fact("Bob", "entity", "KNOWS", "Acme", "") == "Bob knows Acme"
    assert relation_fact("Paris", "paris", "IS_IN", "France", None) == "Paris is in France"


def test_relationship_types_become_lower_case_words() -> None:
    assert relationship_words("WORKS_AT") == "works at"
    assert relationship_words("R_2ND_HOME_IN") == "2nd home in"
    assert relationship_words("RELATED_TO") == "related to"


def test_times_are_written_as_days() -> None:
    assert relation_fact("a", None, "LIVES_IN", "b", None, valid_at=MAY) == "a lives in b (since 8 May 2023)"
    assert relation_fact("a", None, "LIVES_IN", "b", None, invalid_at=JUNE) == "a lives in b (until 1 June 2024)"
    assert relation_fact("a", None, "LIVES_IN", "b", None, valid_at=MAY, invalid_at=JUNE) == "a lives in b (from 8 May 2023 until 1 June 2024)"


def test_a_stored_version_states_only_the_times_it_was_told() -> None:
    assert stored_times(MAY, None, MAY, None) == (None, None)  # valid_at is the add's own day
    assert stored_times(MAY, JUNE, JUNE, None) == (MAY, JUNE)  # another day, an end stated with it
    assert stored_times(MAY, JUNE, MAY, JUNE) == (None, None)  # the end came from a retirement


def test_the_users_own_relations_are_embedded_as_they_read_by_default() -> None:
    # the leave-one-dataset-out report chose the fact as it reads: a name often means what the question
    # asks about ("which cholesterol drug am I prescribed?" -> atorvastatin)
    from graphmem.schema.facts import NAME_LEFT_OUT, fact_meaning

    assert NAME_LEFT_OUT is False
    assert fact_meaning("alice", "person", "TAKES", "atorvastatin", "medication", self_name="alice") == "I myself take atorvastatin (medication)"
    assert fact_meaning("Ana", "person", "SISTER_OF", "alice", "person", self_name="alice") == "Ana (person) sister of me"
    assert fact_meaning("I", None, "LIVES_IN", "Porto", "City", valid_at=MAY, self_name="alice") == "I myself live in Porto (city) (since 8 May 2023)"


def test_the_name_left_out_rule_on_request() -> None:
    from graphmem.schema.facts import fact_meaning

    # the other end by its type: what a question about it says ("do I have a dog?", "who is my sister?")
    def left_out(*args: object, **kw: object) -> str:
        return fact_meaning(*args, name_left_out=True, **kw)  # type: ignore[arg-type]

    assert left_out("alice", "person", "HAS_PET", "Rex", "dog", self_name="alice") == "I myself have pet dog"
    assert left_out("Ana", "person", "SISTER_OF", "alice", "person", self_name="alice") == "person sister of me"
    assert left_out("I", None, "LIVES_IN", "Porto", "City", valid_at=MAY, self_name="alice") == "I myself live in city (since 8 May 2023)"
    # no informative type: the name is all there is, kept; other relations and a user unknown: the fact as it reads
    assert left_out("alice", "person", "LIKES", "pizza", None, self_name="alice") == "I myself like pizza"
    assert left_out("alice", "person", "OWNS", "laptop", "laptop", self_name="alice") == "I myself own laptop"
    assert left_out("Ana", "person", "LIVES_IN", "Porto", "city", self_name="alice") == "Ana (person) lives in Porto (city)"
    assert left_out("alice", "person", "KNOWS", "me", "person", self_name="alice") == "I myself know me"
    assert left_out("alice", "person", "HAS_PET", "Rex", "dog") == "alice (person) has pet Rex (dog)"


def test_the_first_person_takes_a_first_person_verb() -> None:
    # issue 46: the facts read "I myself lives in Denver (city)"
    from graphmem.schema.facts import first_person

    assert relation_fact("alice", "person", "LIVES_IN", "Denver", "city", self_name="alice") == "I myself live in Denver (city)"
    assert relation_fact("I", "person", "IS_ALLERGIC_TO", "peanuts", "food", self_name="alice") == "I myself am allergic to peanuts (food)"
    assert relation_fact("I", None, "HAS_NAME", "Desmond", "person", self_name="d") == "I myself have name Desmond (person)"
    assert [first_person(w) for w in ("studies at", "watches", "misses", "goes to", "loves playing", "sister of", "married to",
                                      "was born in", "boss of")] == [
        "study at", "watch", "miss", "go to", "love playing", "sister of", "married to", "was born in", "boss of"]
    # another subject keeps the third person
    assert relation_fact("Ana", "person", "LIVES_IN", "Porto", "city", self_name="alice") == "Ana (person) lives in Porto (city)"
