"""Every error the project raises, in one hierarchy under ``LinkgraphError``.

Each class carries the exit code ``linkgraph`` ends with when it stops a command
(``exit_code_of``): ``UsageError`` and its subclasses are problems with what the command was given
(config, input, lake state, flags) and exit with 2, nothing written; every other project error
(conflicts with concurrent writers, unreadable data) exits with 1 after one line naming it.  Several
classes are also importable from the modules that use them (``linkgraph.lake.config.ConfigError``,
``linkgraph.inputs.readers.InputSchemaError``, ``linkgraph.steps.scores.ScoresError``, ...).
"""

from __future__ import annotations


class LinkgraphError(Exception):
    """The base of every project error; ``exit_code`` is the command's exit code when it stops one."""

    exit_code = 1


def exit_code_of(exc: BaseException) -> int | None:
    """The exit code a command ends with when ``exc`` stops it; None for an error that is not the
    project's (a bug or an environment failure: its traceback is shown)."""
    return exc.exit_code if isinstance(exc, LinkgraphError) else None


# ``--if-present`` and a step's required input path does not exist: nothing was done.  A scheduler
# reads it as "skipped" (the generated Airflow DAG skips the task and the tasks after it).
EXIT_NO_INPUT = 3


class UsageError(LinkgraphError, ValueError):
    """A problem with what the command was given; the CLI exits with 2."""

    exit_code = 2


class ConfigError(UsageError):
    """A configuration problem; the message names the offending key."""


class InputSchemaError(UsageError):
    """The input lacks a required column or cannot be read in the given format."""


class MissingTableError(InputSchemaError):
    """A table the step reads is not in the lake (an earlier step has not run)."""


class NotADeltaTable(UsageError):
    """Where the lake keeps a table there is something else: a file, or a directory of files
    without a ``_delta_log``; names the path."""


class PathNotFound(UsageError):
    """An input path that does not exist (or whose file system is not available); names the path."""


class UrlPolicyMismatch(UsageError):
    """The config's ``urls`` keys are not those the lake was ingested under (recorded with its
    ``pages`` table); names the keys that differ."""


class ScoresError(UsageError):
    """The scores step cannot run as configured (e.g. a frontier priority the latest rank run
    cannot give); the message names the key."""


class EmptyTeleportError(UsageError):
    """A personalisation vector matches no page."""


class GraphFramesUnavailable(UsageError, RuntimeError):
    """The GraphFrames engine was asked for but its JVM package is not in the session."""


class PruneNotFound(UsageError):
    """``--undo-prune`` named a run that pruned nothing."""


class PruneRefused(UsageError):
    """A reward run would prune more than ``reward.max_prune_share`` of the pages: refused before
    any of its results is written, so nothing is pruned.  The run stays unfinished: the next
    ``linkgraph reward`` completes it under the config then in force (a larger share lets the prune
    through, ``--no-prune`` finishes it without one)."""


class RunNotFinished(UsageError):
    """``--undo-prune`` named a reward run that was interrupted: the next ``linkgraph reward``
    completes it, and only then can its prune be undone."""


class StepAlreadyRunning(LinkgraphError, RuntimeError):
    """Another run of a step that must run alone (``linkgraph reward``) holds the lake's lease for
    it: its process is alive and has renewed the lease recently.  This start is refused before it
    writes anything (exit 1: retry once the other run has ended)."""


class CompressedIndexError(LinkgraphError, ValueError):
    """The compressed tables are missing or were not built together."""


class CompressedTableMissing(CompressedIndexError, MissingTableError):
    """A compressed table is not in the lake: run ``linkgraph compress``."""


class ConflictRetriesExhausted(LinkgraphError, RuntimeError):
    """Every attempt of a step conflicted with a concurrent Delta commit (exit 1, not a usage error)."""


class UnreadableDataError(LinkgraphError, RuntimeError):
    """A step stopped on a file that cannot be read to its end (a data file of the lake's tables,
    or an input that changed) after it may have committed some tables; the message says which
    tables it committed and that a re-run completes it (exit 1, one line)."""


# --- conflicts a step retries (linkgraph.lake.reliability) -------------------------------------------------

class ConcurrentPageIdException(LinkgraphError, RuntimeError):
    """Another ingest committed new pages between this one numbering its new pages and committing
    them, and ids collided; this ingest's inserted pages were removed again (a conflict: retried)."""


class ConcurrentPruneException(LinkgraphError, RuntimeError):
    """A concurrent prune (``linkgraph reward``) deleted pages this ingest links to after the
    ingest resolved its links to their ids; its links to them were removed again (a conflict:
    retried, and the re-run inserts those pages as new ones)."""


class ConcurrentTableCreationException(LinkgraphError, RuntimeError):
    """A table another job created at the same moment was not yet readable when this one read it
    (``DELTA_TABLE_NOT_FOUND`` for a table that exists now): a conflict, retried."""


# --- bad input inside one record or file (becomes a reject, never stops a job) ------------------------

class GmlTooLarge(LinkgraphError, ValueError):
    """The decompressed GML file is larger than the cap."""


class PayloadError(LinkgraphError, ValueError):
    """A crawl record's payload that cannot be used; ``reason`` is its reject reason code."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class WidgetError(LinkgraphError, ValueError):
    """A notebook widget read before it was defined, or a dropdown value outside its choices."""


class HyperBallTooLarge(UsageError):
    """HyperBall at the asked level would need more bytes per task than the block budget: refused
    before any iteration; the message gives the bytes it would need and the level that fits."""
