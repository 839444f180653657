"""`validate --unjudged [--top N]`: the hits no anchor labels, as a review form, and
`--unjudged --suggest --accept FORM`: the reviewed ones as a patch that `git apply` takes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.helpers import cli, cli_process


def _form_lines(out: str) -> list[tuple[str, str, str]]:
    """(mark, case id, anchor) of every hit line of a review form."""
    decoder = json.JSONDecoder()
    rows = []
    for line in out.splitlines():
        if line and not line.startswith("#"):
            case_id, end = decoder.raw_decode(line, 2)
            anchor, _ = decoder.raw_decode(line, end + 1)
            rows.append((line[0], case_id, anchor))
    return rows


def _unlabeled_in_per_query_text(project: Path, fixtures: str) -> dict[str, set[str]]:
    """Per case, the `file:start-end` of every hit `--per-query text` marks `?`."""
    text = cli("run", fixtures, "--per-query", "text", cwd=project).out
    found: dict[str, set[str]] = {}
    for block in text.split("\n\n"):
        if not block.startswith("query "):
            continue
        case_id = block.split()[1]
        found[case_id] = {line.split()[2] for line in block.splitlines() if line[8:9] == "?"}
    return found


def test_the_form_lists_every_unlabeled_hit_most_retrieved_first(small_project: Path) -> None:
    done = cli("validate", "set.jsonl", "--unjudged", cwd=small_project)
    assert done.code == 0 and "ok: every anchor resolves" in done.err
    rows = _form_lines(done.out)
    assert all(mark == "?" for mark, _, _ in rows)
    listed: dict[str, set[str]] = {}
    for line in done.out.splitlines():
        if line.startswith("?"):
            where = line.split("# ", 1)[1].split()[0]
            listed.setdefault(_form_lines(line)[0][1], set()).add(where)
    per_query = {
        case: hits for case, hits in _unlabeled_in_per_query_text(small_project, "set.jsonl").items() if hits
    }
    assert listed == per_query
    # the hit all three backends rank second comes before the ones fewer backends return
    session = [line for line in done.out.splitlines() if line.startswith('? "session"')]
    assert (
        session[0].startswith('? "session" "auth.py::Session.refresh"')
        and "bm25 2, vector 2, hybrid 2" in session[0]
    )
    assert done.out.startswith(
        "# cce-relevance validate --unjudged: hits in each case's k of bm25, vector, hybrid"
    )


def test_top_and_backend_narrow_the_listing(small_project: Path) -> None:
    one = _form_lines(cli("validate", "set.jsonl", "--unjudged", "--top", "1", cwd=small_project).out)
    assert one == []  # every case's first hit is relevant here
    bm25 = cli("validate", "set.jsonl", "--unjudged", "--backend", "bm25", cwd=small_project).out
    assert _form_lines(bm25) == [("?", "session", "auth.py::Session.refresh")]


def test_accepted_hits_become_a_patch_that_applies_and_labels_them(small_project: Path) -> None:
    form = cli("validate", "set.jsonl", "--unjudged", cwd=small_project).out
    marked = []
    for line in form.splitlines():
        if line.startswith('? "session" "auth.py::Session.refresh"'):
            line = "y" + line[1:]
        elif line.startswith('? "pay"'):
            line = "n" + line[1:]
        marked.append(line)
    (small_project / "review.txt").write_text("\n".join(marked) + "\n", encoding="utf-8")
    done = cli(
        "validate", "set.jsonl", "--unjudged", "--suggest", "--accept", "review.txt", cwd=small_project
    )
    assert done.code == 0
    assert done.err.startswith(
        "cce-relevance validate --accept: 1 anchor(s) added to expected, 2 to irrelevant, in 2 case(s)"
    )
    (small_project / "labels.diff").write_text(done.out, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=small_project, check=True)
    subprocess.run(["git", "apply", "labels.diff"], cwd=small_project, check=True)

    cases = [json.loads(line) for line in (small_project / "set.jsonl").read_text().splitlines()[1:]]
    by_id = {c["id"]: c for c in cases}
    assert by_id["session"]["expected"] == ["auth.py#class_definition", "auth.py::Session.refresh"]
    assert by_id["pay"]["irrelevant"] == ["auth.py::hash_password", "notes.md#module"]
    assert list(by_id["pay"]) == ["id", "query", "expected", "irrelevant", "k"]
    assert "irrelevant" not in by_id["hash"]
    # labeled now: the rejected ones are no longer listed, and count as judged
    again = _form_lines(cli("validate", "set.jsonl", "--unjudged", cwd=small_project).out)
    assert (
        not [row for row in again if row[1] == "pay"]
        and ("?", "session", "auth.py::Session.refresh") not in again
    )
    assert cli("validate", "set.jsonl", cwd=small_project).code == 0  # the added anchors resolve
    report = json.loads(cli("run", "set.jsonl", "--metrics", "judged", "--json", cwd=small_project).out)
    pay = {b["backend"]: next(q for q in b["per_query"] if q["id"] == "pay") for b in report["backends"]}
    judged = {backend: q["extra"]["judged_at_k"] for backend, q in pay.items()}
    # bm25 returns one result for the two slots: judged@k divides by k, as trec_eval's P_k does
    assert judged == {"bm25": "0.500000", "vector": "1.000000", "hybrid": "1.000000"}


def test_an_undecided_form_gives_no_patch(small_project: Path) -> None:
    form = cli("validate", "set.jsonl", "--unjudged", cwd=small_project).out
    (small_project / "review.txt").write_text(form, encoding="utf-8")
    done = cli(
        "validate", "set.jsonl", "--unjudged", "--suggest", "--accept", "review.txt", cwd=small_project
    )
    assert (done.code, done.out) == (0, "")
    assert "0 anchor(s) added to expected, 0 to irrelevant, in 0 case(s)" in done.err


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('x "pay" "auth.py"', "review.txt:2: expected a line starting y, n or ?"),
        ('y "pay"', 'review.txt:2: expected `y "case id" "anchor"`'),
        (
            'y "pay" "auth.py" trailing',
            'review.txt:2: expected `y "case id" "anchor"`, then only a # comment',
        ),
        ('y "nope" "auth.py"', 'review.txt:2: case id "nope" names no case of the set'),
        ('n "pay" "auth.py@9-1"', 'review.txt:2: anchor "auth.py@9-1" has an invalid line range'),
    ],
)
def test_a_malformed_review_names_its_line(small_project: Path, line: str, message: str) -> None:
    (small_project / "review.txt").write_text(f"# a comment\n{line}\n", encoding="utf-8")
    done = cli_process(
        "validate", "set.jsonl", "--unjudged", "--suggest", "--accept", "review.txt", cwd=small_project
    )
    assert done.code == 2 and done.out == "" and done.err.startswith(f"error: {message}"), done.err


def test_an_id_of_any_characters_goes_through_the_form_unchanged(small_project: Path) -> None:
    odd = 'pay "now"\tand\x1b[31m then'
    text = (
        (small_project / "set.jsonl")
        .read_text(encoding="utf-8")
        .replace('"id":"pay"', f'"id":{json.dumps(odd)}')
    )
    (small_project / "set.jsonl").write_text(text, encoding="utf-8")
    form = cli("validate", "set.jsonl", "--unjudged", cwd=small_project).out
    assert "\x1b" not in form and "\t" not in form.replace("\t", "", 0)
    marked = form.replace(f"? {json.dumps(odd)}", f"n {json.dumps(odd)}")
    (small_project / "review.txt").write_text(marked, encoding="utf-8")
    patch = cli(
        "validate", "set.jsonl", "--unjudged", "--suggest", "--accept", "review.txt", cwd=small_project
    ).out
    assert '"irrelevant":["auth.py::hash_password","notes.md#module"]' in patch


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--top", "3"], "--top needs --unjudged"),
        (["--backend", "bm25"], "--backend needs --unjudged"),
        (["--unjudged", "--json"], "--unjudged prints a review form; it cannot be used with --json"),
        (["--unjudged", "--suggest"], "--unjudged --suggest and --accept FILE go together"),
        (["--accept", "r.txt"], "--unjudged --suggest and --accept FILE go together"),
        (["--unjudged", "--suggest", "--accept", "r.txt", "--top", "2"], "--accept reads a review form"),
    ],
)
def test_option_combinations_are_checked(small_project: Path, args: list[str], message: str) -> None:
    done = cli_process("validate", "set.jsonl", *args, cwd=small_project)
    assert done.code == 2 and message in done.err
