"""The reads of a declared table: ``T.PAGES.read(lake)``, ``T.LINKS.read_version(lake, version)``,
``T.SYNDICATION_NETWORKS.read_or_empty(lake)``, ``T.RANK_RUNS.exists(lake)``, ...

``linkgraph.lake.tables.Table`` takes these methods from :class:`TableReads`: each is the
``linkgraph.lake.delta.Lake`` method of the same name applied to the declaration's name (and, for
:meth:`TableReads.read_or_empty`, to its schema).  The steps read tables only this way, so every
read names a declaration; ``tests/test_step_reads.py`` checks that no step names a table to
``Lake`` and that each step reads only tables its ``reads`` or ``writes`` declare.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from linkgraph.lake.delta import Lake


class TableReads:
    """The read methods of a table declaration (``name`` and ``schema`` are the declaration's)."""

    name: str
    schema: StructType

    def exists(self, lake: Lake) -> bool:
        """Whether the lake holds the table (a Delta table with at least one commit)."""
        return lake.exists(self.name)

    def require(self, lake: Lake) -> None:
        """Stop with ``MissingTableError`` unless the lake holds the table."""
        lake.require(self.name)

    def read(self, lake: Lake) -> DataFrame:
        """The table's current version."""
        return lake.read(self.name)

    def read_version(self, lake: Lake, version: int) -> DataFrame:
        """The table as it was at Delta ``version`` (time travel)."""
        return lake.read_version(self.name, version)

    def read_or_empty(self, lake: Lake) -> DataFrame:
        """The table's current version, or no rows of its declared schema when the lake lacks it."""
        return lake.read_or_empty(self.name, self.schema)

    def version(self, lake: Lake) -> int | None:
        """The table's latest Delta version (None when the lake lacks it)."""
        return lake.version(self.name)

    def current_version(self, lake: Lake) -> int:
        """The table's latest Delta version (``MissingTableError`` when the lake lacks it)."""
        return lake.current_version(self.name)

    def built_from(self, lake: Lake) -> str | None:
        """The ``built_from`` its last commit recorded (None if absent or none)."""
        return lake.built_from(self.name)

    def last_build(self, lake: Lake) -> tuple[str | None, int] | None:
        """(``built_from``, rows written) of its last commit; None when the lake lacks it."""
        return lake.last_build(self.name)

    def rows_written(self, lake: Lake) -> int:
        """Rows its last commit wrote (from the Delta log)."""
        return lake.rows_written(self.name)

    def table_properties(self, lake: Lake) -> dict[str, str]:
        """Its table properties (``delta.*`` and user-set)."""
        return lake.table_properties(self.name)
