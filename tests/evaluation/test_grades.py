"""The optional per-case `grades` object, and the corpus judgments built from anchors and grades."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cce_relevance.errors import CceError
from cce_relevance.evaluation.anchor_index import AnchorIndex
from cce_relevance.evaluation.anchors import parse_anchor
from cce_relevance.evaluation.fixtures import parse_fixtures
from cce_relevance.evaluation.judgments import grade_of, judge
from cce_relevance.retrieval.chunking.chunk import Chunk


def case_line(**fields: object) -> str:
    return json.dumps({"query": "q", "expected": ["a.py", "a.py#function_definition"], **fields})


def parse(line: str, grades: bool = True):
    return parse_fixtures(f"{line}\n", "set.jsonl", grades=grades).cases[0]


def test_grades_align_with_anchors_and_default_to_one() -> None:
    case = parse(case_line(grades={"a.py#function_definition": 3}))
    assert case.grades == (1, 3)
    assert parse(case_line()).grades is None


def test_grades_are_ignored_unless_asked_for_as_the_reference_does() -> None:
    malformed = case_line(grades={"nope.py": -1})
    assert parse(malformed, grades=False).grades is None
    with pytest.raises(CceError):
        parse(malformed)


@pytest.mark.parametrize(
    ("grades", "message"),
    [
        ([1, 2], '"grades" must be an object mapping anchors of "expected" to positive integer grades'),
        (None, '"grades" must be an object mapping anchors of "expected" to positive integer grades'),
        ({"a.py": "2"}, 'grade of "a.py" must be a positive integer'),
        ({"a.py": 1.5}, 'grade of "a.py" must be a positive integer'),
        ({"a.py": 2.0}, 'grade of "a.py" must be a positive integer'),
        ({"a.py": True}, 'grade of "a.py" must be a positive integer'),
        ({"a.py": 0}, 'grade of "a.py" must be a positive integer'),
        ({"a.py": -1}, 'grade of "a.py" must be a positive integer'),
        ({"b.py": 2}, '"grades" names "b.py", which is not an anchor in "expected"'),
        ({" a.py": 2}, '"grades" names " a.py", which is not an anchor in "expected"'),
    ],
)
def test_malformed_grades_name_the_line_and_the_problem(grades: object, message: str) -> None:
    text = '{"schema":"cce.relevance/v1"}\n\n' + case_line(grades=grades) + "\n"
    with pytest.raises(CceError) as err:
        parse_fixtures(text, "set.jsonl", grades=True)
    assert err.value.message == f"fixture line 3: {message}"


def test_reference_errors_win_over_grade_errors() -> None:
    with pytest.raises(CceError) as err:
        parse(case_line(k=0, grades={"b.py": 1}))
    assert err.value.message == 'fixture line 1: "k" must be a positive integer'


def chunk(path: str, kind: str, start: int, end: int) -> Chunk:
    return Chunk(f"{path}:{start}", path, start, end, "function", kind, "python", "", 1)


def test_a_chunk_takes_the_largest_grade_of_the_anchors_it_matches() -> None:
    anchors = [
        parse_anchor("a.py"),
        parse_anchor("a.py#function_definition"),
        parse_anchor("#class_definition"),
    ]
    grades = [1, 3, 2]
    assert grade_of(anchors, grades, "a.py", "function_definition", 1, 2) == 3
    assert grade_of(anchors, grades, "a.py", "class_definition", 1, 2) == 2
    assert grade_of(anchors, grades, "a.py", "module", 1, 2) == 1
    assert grade_of(anchors, grades, "b.py", "module", 1, 2) == 0


def test_judgments_list_relevant_chunks_in_index_order() -> None:
    case = parse(case_line(expected=["a.py@3-4", "#class_definition"], grades={"#class_definition": 2}))
    chunks = [
        chunk("b.py", "class_definition", 1, 9),
        chunk("a.py", "function_definition", 1, 2),
        chunk("a.py", "function_definition", 4, 8),
        chunk("a.py", "class_definition", 10, 12),
    ]
    judged = judge(case, chunks, AnchorIndex(chunks))
    assert judged.relevant == (("b.py:1", 2), ("a.py:4", 1), ("a.py:10", 2))
    assert judged.gains == [2, 1, 2]


@given(st.dictionaries(st.sampled_from(["a.py", "#k", "b.py@1-2"]), st.integers(1, 5)))
def test_any_valid_grades_object_parses(grades: dict[str, int]) -> None:
    case = parse(case_line(expected=["a.py", "#k", "b.py@1-2"], grades=grades))
    assert case.grades == tuple(grades.get(a, 1) for a in ["a.py", "#k", "b.py@1-2"])
