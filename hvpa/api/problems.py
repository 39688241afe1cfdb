"""What is wrong with an Hvpa, field by field.

Every check reports a Problem instead of raising, so one pass finds them all
and the controller can name every bad field in its `ScalingActive=False,
reason=InvalidSpec` condition at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Findings", "InvalidHvpa", "Problem", "show"]


@dataclass(frozen=True, slots=True)
class Problem:
    """A field path in the manifest's own spelling (`spec.hpa.template.spec.maxReplicas`) and what is wrong."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class InvalidHvpa(ValueError):
    """An Hvpa that must not be acted on; `problems` lists every problem found."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__("; ".join(str(problem) for problem in self.problems))


class Findings:
    """The problems of one parse, with paths translated back to what the user wrote.

    A manifest in the proposal's three-stage form, or with autoscaling/v2beta1
    metrics, is converted before it is checked; `alias` records where a
    converted field came from, so `spec.hpa.template.spec.maxReplicas` is
    reported as `spec.hpaSpec.maxReplicas` when that is what the user wrote.
    """

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self._aliases: list[tuple[str, str, bool]] = []
        self._structural: set[str] = set()

    def alias(self, model_path: str, written_path: str, *, whole: bool = False) -> None:
        """Report problems at or below `model_path` under `written_path`.

        `whole`: the field was computed from `written_path` as a whole (the
        three-stage weights become intervals), so everything below it is
        reported at `written_path` itself.
        """
        self._aliases.append((model_path, written_path, whole))

    def written(self, path: str) -> str:
        best: tuple[str, str, bool] | None = None
        for alias in self._aliases:
            if _within(path, alias[0]) and (best is None or len(alias[0]) > len(best[0])):
                best = alias
        if best is None:
            return path
        model_path, written_path, whole = best
        return written_path if whole else written_path + path[len(model_path) :]

    def clean(self, path: str) -> bool:
        """No value at or below `path` (or below what the user wrote for it) was unreadable."""
        written = self.written(path)
        return not any(_within(bad, path) or _within(bad, written) for bad in self._structural)

    def structural(self, path: str, message: str) -> None:
        """A value that could not be read; checks of its meaning below this path are moot."""
        self.moot(path)
        self._add(path, message)

    def moot(self, path: str) -> None:
        """Nothing below `path` is worth checking further; its problems are already reported."""
        self._structural.add(path)

    def add(self, path: str, message: str) -> None:
        """A value that was read but means nothing valid; dropped under an unreadable one.

        A converted field (v2beta1, three-stage) was read under the path the user wrote,
        so an unreadable one is found under that path as well as the model's."""
        written = self.written(path)
        if any(_within(path, bad) or _within(written, bad) for bad in self._structural):
            return
        self._add(path, message)

    def _add(self, path: str, message: str) -> None:
        problem = Problem(self.written(path), message)
        if problem not in self.problems:
            self.problems.append(problem)


def _within(path: str, prefix: str) -> bool:
    return path == prefix or (path.startswith(prefix) and path[len(prefix)] in ".[")


def show(value: Any) -> str:
    """A value as a message quotes it: JSON spelling, short."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
