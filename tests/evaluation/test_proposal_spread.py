"""Choosing N candidates: forms shared out, each definition and text once, files and kinds spread,
the same for a seed (Hypothesis over generated candidate pools)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.evaluation.proposals.candidates import FORMS, Candidate
from cce_relevance.evaluation.proposals.spread import choose, shares
from cce_relevance.retrieval.chunking.chunk import Chunk


def _chunk(path: str, line: int, kind: str) -> Chunk:
    return Chunk(f"{path}:{line}", path, line, line + 2, "function", kind, "python", "", 1)


candidate_specs = st.lists(
    st.tuples(
        st.sampled_from(FORMS),
        st.integers(0, 5),  # file
        st.integers(0, 6),  # definition within the file
        st.sampled_from(["function_definition", "class_definition"]),
        st.integers(0, 30),  # query text
    ),
    max_size=60,
)


def _pool(specs: list[tuple[str, int, int, str, int]]) -> list[Candidate]:
    kinds: dict[tuple[int, int], str] = {}
    out = []
    for form, f, d, kind, q in specs:
        kind = kinds.setdefault((f, d), kind)  # one definition has one kind
        out.append(Candidate(form, f"query {q} {form}", _chunk(f"f{f}.py", d * 10 + 1, kind), None, "note"))
    return out


@settings(max_examples=150, deadline=None)
@given(candidate_specs, st.integers(1, 40), st.integers(0, 3))
def test_choose_labels_each_definition_and_text_once_and_is_the_same_for_a_seed(
    specs: list[tuple[str, int, int, str, int]], n: int, seed: int
) -> None:
    pool = _pool(specs)
    picked = choose(pool, n, seed)
    assert picked == choose(list(pool), n, seed)
    assert len(picked) <= n
    assert len({c.chunk.chunk_id for c in picked}) == len(picked)
    assert len({c.query.lower() for c in picked}) == len(picked)
    taken = {c.chunk.chunk_id for c in picked} | {("t", c.query.lower()) for c in picked}
    if len(picked) < n:  # nothing left that could have been added
        assert all(c.chunk.chunk_id in taken or ("t", c.query.lower()) in taken for c in pool)
    order = [FORMS.index(c.form) for c in picked]
    assert order == sorted(order)


@settings(max_examples=150, deadline=None)
@given(candidate_specs, st.integers(1, 6), st.integers(0, 3))
def test_no_file_is_used_twice_while_a_fresh_file_had_a_candidate_of_that_form(
    specs: list[tuple[str, int, int, str, int]], n: int, seed: int
) -> None:
    pool = [c for c in _pool(specs) if c.form == "name"]  # one form: picks go in the order made
    picked = choose(pool, n, seed, forms=("name",))
    files = [c.chunk.file_path for c in picked]
    repeated = [f for f, k in Counter(files).items() if k > 1]
    if repeated:
        texts = {c.query.lower() for c in picked}
        fresh = {c.chunk.file_path for c in pool if c.query.lower() not in texts} - set(files)
        assert not fresh


def test_shares_split_evenly_and_give_what_a_form_lacks_to_the_others() -> None:
    assert shares({"name": 100, "doc": 100, "doc-unnamed": 100, "callers": 100}, 50) == {
        "name": 13,
        "doc": 13,
        "doc-unnamed": 12,
        "callers": 12,
    }
    assert shares({"name": 100, "doc": 100, "doc-unnamed": 2, "callers": 0}, 50) == {
        "name": 24,
        "doc": 24,
        "doc-unnamed": 2,
        "callers": 0,
    }
    assert sum(shares({"name": 3, "doc": 4}, 50).values()) == 7


def test_a_chosen_query_the_redactor_would_change_is_replaced_by_another() -> None:
    from cce_relevance.evaluation.proposals import propose
    from cce_relevance.retrieval.chunking.chunk import chunk_file

    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    texts = {  # not redacted: the guard is what keeps the token out
        "a.py": f'def fetch_remote_token():\n    """Send {secret} to the remote service for checking."""\n',
        "b.py": 'def store_local_cache():\n    """Write the cache entries into the local store."""\n',
    }
    chunks = [c for path, text in texts.items() for c in chunk_file(path, text).chunks]
    proposal = propose(chunks, texts, 3, 0, forms=("doc", "name"))
    queries = [p.candidate.query for p in proposal.cases]
    assert all(secret not in q for q in queries)
    assert sorted(queries) == ["Write the cache entries into the local store", "fetch remote token"]
