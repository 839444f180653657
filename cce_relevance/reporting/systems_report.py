"""Renderings of a comparison of three or more systems (`run --compare A,B,C`, `compare R1 R2 R3`):
human text, GitHub Markdown and the JSON block.

Per metric: every system's mean, every pair's tests (mean delta, W/L/T, t-test p, permutation p,
Holm-adjusted permutation p, randomised Tukey HSD p), and a matrix of the HSD p-values with the
pairs below alpha marked, the clearest view of which systems differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cce_relevance import schemas
from cce_relevance.reporting.full_report import label, optional6
from cce_relevance.reporting.markdown_safe import code_span, escape_md
from cce_relevance.reporting.numbers import format6, signed6
from cce_relevance.reporting.terminal import terminal_safe
from cce_relevance.stats.multi_system import HSD_SEED, HSD_TRIALS, SystemsTest

ALPHA = 0.05  # what the matrix marks

SYSTEMS_LEGEND = (
    '\n  reading the systems comparison (docs/statistics.md, "More than two systems"):\n'
    "  perm-p   two-sided sign-flip permutation p of the pair's per-query deltas\n"
    "  Holm-p   perm-p adjusted by Holm's method across the pairs of the metric\n"
    f"  HSD-p    randomised Tukey HSD (Carterette 2012), {HSD_TRIALS} trials, "
    f"PCG64 seed {HSD_SEED}: the share of\n"
    "           trials, each shuffling every query's scores among the systems, whose range of system\n"
    "           means reaches the pair's |mean difference|; it controls the error over all pairs at once\n"
    f"  *        HSD-p below {ALPHA:g}\n"
)


def _hsd_cell(p: float | None) -> str:
    if p is None:
        return "n/a"
    return format6(p) + ("*" if p < ALPHA else " ")


def _matrix(test: SystemsTest) -> list[list[str]]:
    """The HSD p of every pair as a symmetric grid, `-` on the diagonal."""
    return [["-" if a == b else _hsd_cell(test.pair(a, b).hsd_p) for b in test.systems] for a in test.systems]


def systems_text(title: str, tests: Sequence[SystemsTest]) -> str:
    """One block per metric: means, pairs, HSD matrix; then the legend."""
    if not tests:
        return ""
    names = [terminal_safe(s) for s in tests[0].systems]
    first = max(12, *(len(n) + 2 for n in names))
    out = [f"\n  {title}\n"]
    for test in tests:
        out.append(f"\n  {label(test.key)} over {test.n} queries scored by every system\n")
        out.append("  " + "system".ljust(first) + "mean".rjust(12) + "\n")
        for name, mean in zip(names, test.means, strict=True):
            out.append("  " + name.ljust(first) + format6(mean).rjust(12) + "\n")
        pair_width = max(
            16,
            *(
                len(names[test.systems.index(p.a)]) + len(names[test.systems.index(p.b)]) + 5
                for p in test.pairs
            ),
        )
        out.append(
            "  "
            + "pair".ljust(pair_width)
            + "".join(
                h.rjust(w)
                for h, w in zip(
                    ("mean-delta", "W/L/T", "t-p", "perm-p", "Holm-p", "HSD-p"),
                    (12, 10, 10, 10, 10, 11),
                    strict=True,
                )
            )
            + "\n"
        )
        for p in test.pairs:
            pair = f"{names[test.systems.index(p.a)]} → {names[test.systems.index(p.b)]}"
            cells = (
                signed6(p.mean_delta),
                f"{p.wins}/{p.losses}/{p.ties}",
                optional6(p.t_p),
                optional6(p.perm_p),
                optional6(p.holm_p),
                _hsd_cell(p.hsd_p),
            )
            out.append(
                "  "
                + pair.ljust(pair_width)
                + "".join(c.rjust(w) for c, w in zip(cells, (12, 10, 10, 10, 10, 11), strict=True))
                + "\n"
            )
        out.append("  HSD-p matrix\n  " + "".ljust(first) + "".join(n[:10].rjust(11) for n in names) + "\n")
        for name, row in zip(names, _matrix(test), strict=True):
            out.append("  " + name.ljust(first) + "".join(c.rjust(11) for c in row) + "\n")
    out.append(SYSTEMS_LEGEND)
    return "".join(line.rstrip() + "\n" for line in "".join(out).split("\n")[:-1])


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def systems_markdown(title: str, tests: Sequence[SystemsTest]) -> str:
    """The same content as `systems_text`, as GitHub tables; names are escaped (untrusted)."""
    if not tests:
        return ""
    names = [code_span(s, in_table=True) for s in tests[0].systems]
    parts = [f"### {escape_md(title)}\n"]
    for test in tests:
        parts.append(f"\n#### {escape_md(label(test.key))} ({test.n} queries)\n\n")
        rows = []
        for a, name in zip(test.systems, names, strict=True):
            rows.append(
                [
                    name,
                    format6(test.means[test.systems.index(a)]),
                    *("–" if a == b else _hsd_cell(test.pair(a, b).hsd_p).strip() for b in test.systems),
                ]
            )
        parts.append(_md_table(["system", "mean", *(f"HSD p vs {n}" for n in names)], rows))
        pair_rows = [
            [
                f"{names[test.systems.index(p.a)]} → {names[test.systems.index(p.b)]}",
                signed6(p.mean_delta),
                f"{p.wins}/{p.losses}/{p.ties}",
                optional6(p.t_p),
                optional6(p.perm_p),
                optional6(p.holm_p),
                _hsd_cell(p.hsd_p).strip(),
            ]
            for p in test.pairs
        ]
        parts.append(
            "\n" + _md_table(["pair", "mean Δ", "W/L/T", "t p", "perm p", "Holm p", "HSD p"], pair_rows)
        )
    parts.append(
        f"\n<sub>Holm p = permutation p adjusted across the pairs · HSD p = randomised Tukey HSD "
        f"(Carterette 2012), {HSD_TRIALS} seeded trials · * = HSD p below {ALPHA:g}.</sub>\n"
    )
    return "".join(parts)


def _optional_doc(value: float | None) -> str | None:
    return format6(value) if value is not None else None


def systems_document(tests: Sequence[SystemsTest]) -> dict[str, Any]:
    """The JSON block: systems, settings, and per metric the means and the pairs."""
    return {
        "hsd": {"seed": HSD_SEED, "trials": HSD_TRIALS},
        "metrics": {
            t.key: {
                "means": {s: format6(m) for s, m in zip(t.systems, t.means, strict=True)},
                "n": t.n,
                "pairs": [
                    {
                        "a": p.a,
                        "b": p.b,
                        "holm_p": _optional_doc(p.holm_p),
                        "hsd_p": _optional_doc(p.hsd_p),
                        "losses": p.losses,
                        "mean_delta": signed6(p.mean_delta),
                        "permutation_p": _optional_doc(p.perm_p),
                        "t_p": _optional_doc(p.t_p),
                        "ties": p.ties,
                        "wins": p.wins,
                    }
                    for p in t.pairs
                ],
            }
            for t in tests
        },
        "systems": list(tests[0].systems) if tests else [],
    }


SavedSystems = Sequence[tuple[str, Sequence[SystemsTest]]]  # per backend all the reports scored


def saved_reports_document(paths: Sequence[str], results: SavedSystems) -> dict[str, Any]:
    """`compare R1 R2 R3… --json`: per backend the systems block, and the reports compared."""
    return {
        "backends": [{"backend": name, **systems_document(tests)} for name, tests in results],
        "reports": list(paths),
        "schema": schemas.SYSTEMS,
    }


def saved_reports_markdown(paths: Sequence[str], results: SavedSystems) -> str:
    """`compare R1 R2 R3… --markdown`: one systems section per backend."""
    return "".join(
        systems_markdown(f"Relevance of {len(paths)} reports, backend {name}", tests)
        for name, tests in results
    )


def saved_reports_text(paths: Sequence[str], results: SavedSystems) -> str:
    """`compare R1 R2 R3…`: the reports by number, then one systems block per backend."""
    return (
        "CCE relevance — comparison of saved reports\n"
        + "".join(f"  {i}: {terminal_safe(p)}\n" for i, p in enumerate(paths, 1))
        + "".join(systems_text(f"backend {terminal_safe(name)}", tests) for name, tests in results)
    )
