"""Tables for the terminal and docs/benchmarks.md (GitHub pipe tables), and number formatting."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Table:
    """One section's table: a title, column names, rows of cells, and notes printed below."""

    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def render(self) -> str:
        """The table as aligned GitHub-flavoured markdown, notes as a list after it."""
        widths = [len(column) for column in self.columns]
        for row in self.rows:
            widths = [max(width, len(cell)) for width, cell in zip(widths, row, strict=True)]

        def line(cells: list[str]) -> str:
            return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

        out = [f"### {self.title}", "", line(self.columns)]
        out.append("| " + " | ".join("-" * width for width in widths) + " |")
        out.extend(line(row) for row in self.rows)
        if self.notes:
            out.append("")
            out.extend(f"- {note}" for note in self.notes)
        return "\n".join(out) + "\n"

    def as_json(self) -> dict[str, Any]:
        """The table as plain data for results.json."""
        return asdict(self)


def micros(seconds: float | None) -> str:
    """Seconds as microseconds with 3 significant figures, or a dash."""
    if seconds is None or math.isnan(seconds):
        return "-"
    value = seconds * 1e6
    return f"{value:.3g}" if value < 1000 else f"{value:,.0f}"


def ratio(numerator: float | None, denominator: float | None) -> str:
    """numerator / denominator as ``1.23x`` (3 significant figures), or a dash where either is
    missing or not finite, or the denominator not positive."""
    if numerator is None or denominator is None or not denominator > 0:
        return "-"
    value = numerator / denominator
    return f"{value:.3g}x" if math.isfinite(value) else "-"
