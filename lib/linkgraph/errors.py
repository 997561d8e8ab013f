"""Every error a user can cause, in one hierarchy.

``UsageError`` and its subclasses are problems with what the command was given (config, input,
lake state, flags): ``linkgraph`` prints the message and exits with 2, nothing written.
``ConflictRetriesExhausted`` (concurrent writers) exits with 1, like any other failure.  Several
classes are also importable from the modules that use them (``linkgraph.config.ConfigError``,
``linkgraph.readers.InputSchemaError``, ``linkgraph.pipeline.ScoresError``, ...).
"""

from __future__ import annotations


class UsageError(ValueError):
    """A problem with what the command was given; the CLI exits with 2."""


class ConfigError(UsageError):
    """A configuration problem; the message names the offending key."""


class InputSchemaError(UsageError):
    """The input lacks a required column or cannot be read in the given format."""


class MissingTableError(InputSchemaError):
    """A table the step reads is not in the lake (an earlier step has not run)."""


class PathNotFound(UsageError):
    """An input path that does not exist (or whose file system is not available); names the path."""


class ScoresError(UsageError):
    """The scores step cannot run as configured (e.g. no seed URLs); the message names the key."""


class EmptyTeleportError(UsageError):
    """A personalisation vector matches no page."""


class GraphFramesUnavailable(UsageError, RuntimeError):
    """The GraphFrames engine was asked for but its JVM package is not in the session."""


class PruneNotFound(UsageError):
    """``--undo-prune`` named a run that pruned nothing."""


class CompressedIndexError(ValueError):
    """The compressed tables are missing or were not built together."""


class CompressedTableMissing(CompressedIndexError, MissingTableError):
    """A compressed table is not in the lake: run ``linkgraph compress``."""


class ConflictRetriesExhausted(RuntimeError):
    """Every attempt of a step conflicted with a concurrent Delta commit (exit 1, not a usage error)."""


class UnreadableDataError(RuntimeError):
    """A step stopped on a file that cannot be read to its end (a data file of the lake's tables,
    or an input that changed) after it may have committed some tables; the message says which
    tables it committed and that a re-run completes it (exit 1, one line)."""
