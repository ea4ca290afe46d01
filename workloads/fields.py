"""A declared record: the fields of a row prefixbench writes (a run, an audit's lane...), what
each one is for, and for each figure the threshold that gates it in ``compare``.

A field's *role* says how ``compare`` treats it: a ``key`` names the unit (a run's workload,
window, seed...), a ``figure`` is compared between two results, ``info`` is written and never
compared. A figure's *gate* names the ``--max-regression`` threshold that judges it (None: shown,
not gated) and *worse* the direction that is a regression. A list-valued figure (one value a
summary call) is compared as one number: its ``reduce`` (``sum`` or ``min``) under the name
``compared_as``.

The record schemas themselves live beside what writes them: :mod:`prefixbench.workloads.runs.schema`
(a run, a request) and :mod:`prefixbench.workloads.audit.schema` (the audit JSON).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import msgspec

Role = Literal["key", "figure", "info"]
#: The thresholds of ``compare --max-regression``.
Gate = Literal["uncached", "hit", "usd", "rejected", "written"]
#: Which way a figure worsens.
Worse = Literal["rise", "drop"]
Reduce = Literal["sum", "min"]
#: What a field holds: ``ratio`` a fraction in [0, 1] (rounded to 6 places), ``usd`` dollars
#: (a float in JSON), ``ints``/``ratios`` one value a summary call, ``texts`` a list of lines;
#: ``?`` after a type: the value may be null.
FieldType = Literal[
    "str", "str?", "int", "int?", "bool", "bool?", "ratio", "ratio?", "ratios", "usd", "usd?", "ints", "texts", "params", "any"
]


class Field(msgspec.Struct, frozen=True):
    """One field of a declared record."""

    name: str
    type: FieldType
    role: Role = "info"
    gate: Gate | None = None
    worse: Worse = "rise"
    #: A list figure is compared as one number: the sum or the minimum of its values.
    reduce: Reduce | None = None
    #: The figure's name in ``compare`` (default: the field's name).
    compared_as: str = ""
    #: The attribute of the in-memory record it is written from (default: the field's name).
    attr: str = ""
    #: What a null value of the figure says, as ``compare`` shows it (``not reported``: no request
    #: of the unit reports the count, :func:`~prefixbench.workloads.audit.core.reported_sum`); ""
    #: for a figure whose null ``compare`` leaves out as no figure.
    null: str = ""

    def __post_init__(self) -> None:
        if self.role != "figure" and (self.gate is not None or self.reduce is not None):
            raise ValueError(f"field {self.name!r}: only a figure is gated or reduced")
        if self.type in ("ints", "ratios") and self.role == "figure" and self.reduce is None:
            raise ValueError(f"field {self.name!r}: a list figure needs a reduce")

    @property
    def figure(self) -> str:
        """The name ``compare`` shows the figure under."""
        return self.compared_as or self.name

    @property
    def unit(self) -> Literal["ratio", "usd", "count"]:
        """How the figure reads: a ratio (shown as a percentage), dollars, or a count."""
        if self.type in ("ratio", "ratio?", "ratios"):
            return "ratio"
        return "usd" if self.type in ("usd", "usd?") else "count"

    @property
    def source(self) -> str:
        """The attribute the writer reads."""
        return self.attr or self.name


def names(fields: Iterable[Field], role: Role | None = None) -> tuple[str, ...]:
    """The fields' names (of one role when given), in declared order."""
    return tuple(f.name for f in fields if role is None or f.role == role)


def figures(fields: Iterable[Field]) -> dict[str, Field]:
    """The compared figures by the name ``compare`` shows them under."""
    return {f.figure: f for f in fields if f.role == "figure"}
