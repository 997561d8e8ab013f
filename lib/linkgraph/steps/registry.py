"""The one declaration of every pipeline step, and what is derived from it.

A step is a ``Step``: its name (the ``linkgraph`` subcommand), a help line, a parameters dataclass
whose fields become the subcommand's flags (``option``) and, where a field names one, config
overrides, the tables it reads and writes (their declarations, ``linkgraph.lake.tables.Table``), the
steps it runs after, and ``run(ctx, params) -> Report``.  A step never runs another step: its
subcommand may chain steps around it (``before``, ``then``), ``linkgraph run`` orders them by
``after``.  Each step module declares its own ``STEP``; ``Registry.default()`` collects the
``STEP`` of every module of ``linkgraph.steps``, so adding a step touches its module alone.

Derived from the registry: the CLI's step subcommands (``add_subcommands``), the order of
``linkgraph run`` (``pipeline_order``: a topological order of ``after``, ties broken by step
name), and the deployment tasks (``deployed_tasks``) that ``linkgraph.deploy``
renders as the Airflow DAG and the Databricks bundle.  Importing this module imports no pyspark:
the step modules are loaded only when the registry is built.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import pkgutil
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from linkgraph.errors import UsageError
from linkgraph.lake.config import Config

if TYPE_CHECKING:
    from linkgraph.lake.context import Report, StepContext
    from linkgraph.lake.tables import Table

P = TypeVar("P")



def option(help: str, *, flag: str | None = None, choices: Iterable[str] | None = None, required: bool = False,
           metavar: str | None = None, config: str | None = None, config_value: Any = None,
           group: str | None = None, path: str | None = None, default: Any = None) -> Any:
    """A parameters field that is also a command-line flag.

    ``flag`` defaults to ``--<field-name>`` with dashes; a ``bool`` field is a switch and a
    ``list`` field a repeatable flag.  ``config="section.key"`` makes a given value override that
    config key (``config_value``: the value a set switch writes there).  Fields sharing a
    ``group`` are mutually exclusive.  ``path`` names an input path ("input", "page signals"):
    it is checked before Spark starts, and a remote one once the session runs."""
    metadata = {"help": help, "flag": flag, "choices": tuple(choices) if choices is not None else None,
                "required": required, "metavar": metavar, "config": config, "config_value": config_value,
                "group": group, "path": path}
    if isinstance(default, list):
        return field(default_factory=list, metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class RunPlan:
    """What ``linkgraph run`` was given: the input, sitemaps and seeds (the sample's by default)."""

    input_path: str
    fmt: str
    sitemaps: str | None
    seeds: list[str]
    on_sample: bool


@dataclass(frozen=True)
class NoParams:
    """The parameters of a step that has none of its own (its config section drives it)."""


def no_params(plan: RunPlan, config: Config) -> NoParams:
    """``for_run`` of a parameterless step: it always runs in ``linkgraph run``."""
    return NoParams()


@dataclass(frozen=True)
class Task:
    """One deployment task of a step (Airflow task, Databricks task): its id and its arguments.

    Arguments may hold placeholders that each deployment renders its own way: ``{ds}`` the run's
    date, ``{run_id}`` the scheduler's run id, ``{param:NAME}`` a deployment parameter.  ``after``
    names tasks of the same step this one waits for (two tasks that write the same tables must
    not run at once)."""

    task_id: str
    arguments: tuple[str, ...] = ()
    after: tuple[str, ...] = ()


# What a step does inside `linkgraph run`: its parameters, a line to print instead of running
# (a skip worth saying), or None (skipped quietly).
ForRun = Callable[[RunPlan, Config], "Any | str | None"]


@dataclass(frozen=True)
class Step(Generic[P]):
    """One pipeline step: everything the CLI, ``linkgraph run`` and the deployments need."""

    name: str
    help: str
    params: type[P]
    run: Callable[[StepContext, P], Report]
    reads: tuple[Table, ...] = ()
    writes: tuple[Table, ...] = ()
    after: tuple[str, ...] = ()
    for_run: ForRun | None = None          # None: not part of `linkgraph run`
    tasks: tuple[Task, ...] | None = None  # None: one task named after the step when in the pipeline
    prepare: Callable[[P], P] | None = None   # checks and completes the parameters before Spark starts
    then: tuple[str, ...] = ()             # steps the subcommand runs after this one (analyze -> flags)
    before: tuple[str, ...] = ()           # steps the subcommand runs before this one (flags -> scores)

    @property
    def in_pipeline(self) -> bool:
        return self.for_run is not None

    def tables_read(self) -> list[str]:
        return [str(t) for t in self.reads]

    def tables_written(self) -> list[str]:
        return [str(t) for t in self.writes]

    def deploy_tasks(self) -> tuple[Task, ...]:
        if self.tasks is not None:
            return self.tasks
        return (Task(self.name.replace("-", "_")),) if self.in_pipeline else ()

    def last_tasks(self) -> tuple[Task, ...]:
        """The deployment tasks no other task of this step waits for: what later steps wait for."""
        waited_for = {name for task in self.deploy_tasks() for name in task.after}
        return tuple(task for task in self.deploy_tasks() if task.task_id not in waited_for)


_RUN_ID = re.compile(r"[A-Za-z0-9._:+-]{1,100}")


def checked_run_id(run_id: str) -> str:
    """A ``--run-id`` value as given, or a usage error (1-100 letters, digits and ``. _ : + -``)."""
    if not _RUN_ID.fullmatch(run_id):
        raise UsageError(f"--run-id {run_id!r}: use 1-100 letters, digits and . _ : + -")
    return run_id


def comma_groups(values: Iterable[str] | None) -> list[list[str]]:
    """Repeated comma-separated flag values as lists (``["a,b", "c"]`` -> ``[["a", "b"], ["c"]]``)."""
    return [[v.strip() for v in value.split(",") if v.strip()] for value in values or []]


def _fields(params: type) -> list[dataclasses.Field[Any]]:
    if not dataclasses.is_dataclass(params):
        raise TypeError(f"{params!r} is not a dataclass")
    return [f for f in dataclasses.fields(params) if "help" in f.metadata]


def flag_of(f: dataclasses.Field[Any]) -> str:
    return str(f.metadata["flag"] or "--" + f.name.replace("_", "-"))


def _is(f: dataclasses.Field[Any], kind: str) -> bool:
    return str(f.type).replace(" ", "").startswith(kind)


def required_flags(step: Step[Any]) -> list[str]:
    """The flags a step cannot run without."""
    return [flag_of(f) for f in _fields(step.params) if f.metadata["required"]]


def add_arguments(parser: argparse.ArgumentParser, params: type) -> None:
    """The flags of a parameters dataclass, added to ``parser``."""
    groups: dict[str, Any] = {}
    for f in _fields(params):
        meta = f.metadata
        target: Any = parser
        if meta["group"] is not None:
            if meta["group"] not in groups:
                groups[meta["group"]] = parser.add_mutually_exclusive_group()
            target = groups[meta["group"]]
        kwargs: dict[str, Any] = {"dest": f.name, "help": meta["help"]}
        if _is(f, "bool"):
            kwargs["action"] = "store_true"
        else:
            kwargs.update(metavar=meta["metavar"], choices=meta["choices"], required=meta["required"])
            if _is(f, "list"):
                kwargs["action"] = "append"
            elif _is(f, "int"):
                kwargs["type"] = int
            elif _is(f, "float"):
                kwargs["type"] = float
        target.add_argument(flag_of(f), **kwargs)


def params_from(params: type[P], args: argparse.Namespace) -> P:
    """The parameters dataclass from parsed arguments (absent flags keep their defaults)."""
    values = {}
    for f in _fields(params):
        value = getattr(args, f.name, None)
        if value is not None and value is not False:
            values[f.name] = value
    return params(**values)


def with_overrides(config: Config, params: Any) -> Config:
    """``config`` with the values of the fields that name a config key applied."""
    for f in _fields(type(params)):
        key, value = f.metadata["config"], getattr(params, f.name)
        if key is None or value is None or value is False or value == []:
            continue
        if f.metadata["config_value"] is not None:
            value = f.metadata["config_value"]
        section, name = key.split(".", 1)
        changed = dataclasses.replace(getattr(config, section), **{name: value})
        config = dataclasses.replace(config, **{section: changed})
    return config


def with_params(ctx: StepContext, params: Any) -> StepContext:
    """``ctx`` with the config keys that ``params`` set applied (:func:`with_overrides`, which the
    CLI applies too): ``run(ctx, Params(tol=...))`` means what ``--tol`` means."""
    return ctx.with_config(with_overrides(ctx.config, params))


def path_fields(params: Any) -> list[tuple[str, str]]:
    """(field name, what) of every input-path field that is set."""
    return [(f.name, f.metadata["path"]) for f in _fields(type(params))
            if f.metadata["path"] is not None and getattr(params, f.name) is not None]


def path_field_names(params: type) -> list[str]:
    """The names of a parameters dataclass's input-path fields."""
    return [f.name for f in _fields(params) if f.metadata["path"] is not None]


def required_path(params: Any, name: str) -> bool:
    """Whether the input-path field ``name`` is a required flag."""
    return any(f.name == name and f.metadata["required"] for f in _fields(type(params)))


def input_paths(params: Any) -> list[tuple[str, str]]:
    """(path, what) of every input-path field that is set."""
    return [(getattr(params, name), what) for name, what in path_fields(params)]


class Registry:
    """Steps by name, in declaration order."""

    def __init__(self, steps: Iterable[Step[Any]] = ()) -> None:
        self._steps: dict[str, Step[Any]] = {}
        for step in steps:
            self.register(step)

    @classmethod
    def default(cls) -> Registry:
        """Every step the package declares: the ``STEP`` of each module of ``linkgraph.steps``, by
        name (imports the step modules, hence pyspark)."""
        package = importlib.import_module("linkgraph.steps")
        modules = (importlib.import_module(f"{package.__name__}.{info.name}")
                   for info in pkgutil.iter_modules(package.__path__))
        return cls(sorted((module.STEP for module in modules if hasattr(module, "STEP")), key=lambda s: s.name))

    def register(self, step: Step[Any]) -> Step[Any]:
        if step.name in self._steps:
            raise ValueError(f"step {step.name!r} is declared twice")
        _fields(step.params)   # a dataclass, or refuse now
        self._steps[step.name] = step
        return step

    def __iter__(self) -> Iterator[Step[Any]]:
        return iter(self._steps.values())

    def __contains__(self, name: object) -> bool:
        return name in self._steps

    def __getitem__(self, name: str) -> Step[Any]:
        try:
            return self._steps[name]
        except KeyError:
            raise UsageError(f"no step {name!r}; steps: {', '.join(self._steps)}") from None

    def names(self) -> list[str]:
        return list(self._steps)

    def pipeline_order(self) -> list[str]:
        """The steps of ``linkgraph run`` in a topological order of ``after`` (Kahn's algorithm,
        the first registered of the ready steps first; ``default`` registers by name); an
        ``after`` outside the pipeline is ignored."""
        members = [step.name for step in self if step.in_pipeline]
        waiting = {name: {a for a in self[name].after if a in members} for name in members}
        order: list[str] = []
        while waiting:
            ready = [name for name in members if name in waiting and not waiting[name]]
            if not ready:
                raise ValueError(f"the steps' `after` declarations form a cycle among {sorted(waiting)}")
            order.append(ready[0])
            del waiting[ready[0]]
            for pending in waiting.values():
                pending.discard(ready[0])
        return order

    def upstream_steps(self, name: str) -> set[str]:
        """The nearest deployed steps ``name`` waits for: its ``after``, with each step that has no
        deployment task replaced by what that one waits for."""
        found: set[str] = set()
        for before in self[name].after:
            if before not in self:
                continue
            found |= {before} if self[before].deploy_tasks() else self.upstream_steps(before)
        return found

    def _reaches(self, start: str, goal: str) -> bool:
        """Whether ``goal`` is among the steps ``start`` runs after, directly or not."""
        before = [b for b in self[start].after if b in self]
        return goal in before or any(self._reaches(b, goal) for b in before)

    def deployed_tasks(self) -> list[tuple[Step[Any], Task, list[str]]]:
        """(step, task, upstream task ids) of every deployment task, in pipeline order; an
        upstream step that another upstream step already waits for is left out."""
        rows: list[tuple[Step[Any], Task, list[str]]] = []
        for name in self.pipeline_order():
            step = self[name]
            nearest = self.upstream_steps(name)
            direct = {u for u in nearest if not any(self._reaches(other, u) for other in nearest - {u})}
            upstream = sorted(task.task_id for before in direct for task in self[before].last_tasks())
            rows.extend((step, task, [*upstream, *task.after]) for task in step.deploy_tasks())
        return rows


def add_subcommands(sub: Any, registry: Registry) -> None:
    """One subcommand per step, with the step's flags and the common ``--conf``/``--lake``."""
    for step in registry:
        parser = sub.add_parser(step.name, help=step.help, description=step.help)
        add_arguments(parser, step.params)
        parser.add_argument("--conf", help="job config YAML (default: the built-in local defaults, as in "
                                           "conf/local.yaml)")
        parser.add_argument("--lake", help="lake directory holding the Delta tables (overrides lake.path)")
        if path_field_names(step.params):
            parser.add_argument("--if-present", action="store_true",
                                help="a missing input path is no error: without its required input the step "
                                     "does nothing and exits 3; a missing optional input is left out")
        parser.set_defaults(step=step.name)
