"""Leave-one-dataset-out choice of ranking rules, the same procedure for memories and relations.

A *setting* gives each rule one value from its grid (``Space``). For every dataset left out, the
setting is chosen on all the others (every embedder), by coordinate ascent from the plain single
signal (every rule off): one rule at a time, the value that raises the mean figure over the training
sets most, until nothing does. A setting is eligible only if it ranks at least as well as the plain
single signal on every training set and embedder (safety over averaging: DESIGN.md, fifth round).
The figure reported for a fold is the chosen setting's on the left-out set, which played no part in
choosing it. A rule is kept in the shipped default only if, on the folds it was not chosen on, it
helps (or at worst ties): ``rule_report`` gives its held-out effect per fold (the fold's setting
with and without it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Setting = tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Space:
    #: rule -> its values; the first value is "off" (the plain signal)
    grid: Mapping[str, Sequence[Any]]
    #: safety rules a move may bring along when it is not eligible on its own (a rule that helps some
    #: sets and costs another may be taken with the guard that removes the cost)
    guards: tuple[tuple[str, Any], ...] = ()

    def start(self) -> Setting:
        return tuple((name, values[0]) for name, values in self.grid.items())


def setting_dict(setting: Setting) -> dict[str, Any]:
    return dict(setting)


def replaced(setting: Setting, name: str, value: Any) -> Setting:
    return tuple((n, value if n == name else v) for n, v in setting)


class Table:
    """Figures per (setting, dataset, embedder), computed once each (``measure``) and memoised."""

    def __init__(self, measure: Callable[[Setting, str, str], float], datasets: Sequence[str], embedders: Sequence[str]) -> None:
        self.measure, self.datasets, self.embedders = measure, list(datasets), list(embedders)
        self._seen: dict[tuple[Setting, str, str], float] = {}

    def figure(self, setting: Setting, dataset: str, embedder: str) -> float:
        key = (setting, dataset, embedder)
        if key not in self._seen:
            self._seen[key] = self.measure(setting, dataset, embedder)
        return self._seen[key]

    def mean(self, setting: Setting, datasets: Iterable[str]) -> float:
        got = [self.figure(setting, d, e) for d in datasets for e in self.embedders]
        return sum(got) / len(got)


#: the least a rule must add to the training sets' mean figure to be taken (one question in a few
#: hundred): a rule that buys less is more likely to fit the sets than to generalise
MIN_GAIN = 0.005


def choose(table: Table, space: Space, train: Sequence[str], floor: Callable[[str, str], float], passes: int = 3,
           log: Callable[[str], None] | None = None, start: Setting | None = None) -> Setting:
    """Coordinate ascent on ``train`` from the plain signal, a move taken when it adds at least
    ``MIN_GAIN``; ``floor(dataset, embedder)``: the single signal's figure every eligible setting
    must reach on each training set."""

    def eligible(s: Setting) -> bool:
        return all(table.figure(s, d, e) >= floor(d, e) - 1e-9 for d in train for e in table.embedders)

    best = start or space.start()
    best_mean = table.mean(best, train)
    for _ in range(passes):
        moved = False
        for name, values in space.grid.items():
            for value in values:
                trial = replaced(best, name, value)
                if trial == best:
                    continue
                for guarded in _with_guards(trial, space):
                    m = table.mean(guarded, train)
                    if m >= best_mean + MIN_GAIN and eligible(guarded):
                        best, best_mean, moved = guarded, m, True
                        if log:
                            log(f"    {name}={value}{' with a guard' if guarded != trial else ''}: {m:.4f}")
                        break
        if not moved:
            break
    return best


def _with_guards(trial: Setting, space: Space) -> list[Setting]:
    """The trial alone, then with each guard it does not already have."""
    have = dict(trial)
    return [trial, *(replaced(trial, name, value) for name, value in space.guards if have[name] != value)]


def folds(table: Table, space: Space, floor: Callable[[str, str], float], log: Callable[[str], None] | None = None,
          start: Setting | None = None) -> dict[str, Setting]:
    """The setting chosen without each dataset (key: the dataset left out), and on all ("all"); the
    ascent starts from ``start`` (default: every rule off)."""
    out = {}
    for left in table.datasets:
        if log:
            log(f"  fold without {left}")
        out[left] = choose(table, space, [d for d in table.datasets if d != left], floor, log=log, start=start)
    if log:
        log("  all datasets")
    out["all"] = choose(table, space, table.datasets, floor, log=log, start=start)
    return out


def rule_report(table: Table, space: Space, chosen: Mapping[str, Setting]) -> dict[str, dict[str, float]]:
    """Per rule of the all-data setting that is not off: its held-out effect per fold, the left-out
    set's figure (mean over embedders) of the fold's setting with the rule's all-data value minus
    with it off."""
    final = chosen["all"]
    off = dict(space.start())
    report: dict[str, dict[str, float]] = {}
    for name, value in final:
        if value == off[name]:
            continue
        report[name] = {}
        for left in table.datasets:
            with_rule = replaced(chosen[left], name, value)
            without = replaced(chosen[left], name, off[name])
            report[name][left] = table.mean(with_rule, [left]) - table.mean(without, [left])
    return report


def pruned(table: Table, space: Space, chosen: Mapping[str, Setting], sizes: Mapping[str, int],
           log: Callable[[str], None] | None = None) -> Setting:
    """The all-data setting without the rules that do not pay held out: while a rule's held-out
    effect (``rule_report``), counted in questions over every fold (effect x the fold's ``sizes``),
    is not a gain, the worst such rule is turned off. Counted in questions, not averaged per fold, so
    one question of a 60-question set does not outvote twenty of a 500-question one."""
    folds_ = dict(chosen)
    off = dict(space.start())
    while True:
        report = rule_report(table, space, folds_)
        net = {name: sum(v * sizes[d] for d, v in effects.items()) for name, effects in report.items()}
        bad = {name: n for name, n in net.items() if n <= 0}
        if not bad:
            return folds_["all"]
        worst = min(bad, key=lambda n: bad[n])
        if log:
            log(f"  dropped {worst}: {bad[worst]:+.1f} questions held out")
        folds_["all"] = replaced(folds_["all"], worst, off[worst])
