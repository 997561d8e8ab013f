"""What every step gets (``StepContext``) and gives back (``Report``)."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

from pyspark.sql import SparkSession

from linkgraph.lake.config import Config
from linkgraph.lake.delta import Lake
from linkgraph.lake.ids import new_run_id
from linkgraph.lake.session import checkpoint_dir_of_lake, use_checkpoint_dir


@dataclass(frozen=True)
class StepContext:
    """The session, config and lake of one command, with the start time and run id of its step.

    Built once per command (``create``); a command that runs several steps hands each the next
    one (``next_step``: same session, config and lake; its own start time and run id)."""

    spark: SparkSession
    config: Config
    lake: Lake
    run_id: str
    started_at: datetime
    clock: float = field(default_factory=time.monotonic, repr=False)

    @classmethod
    def create(cls, spark: SparkSession, config: Config) -> StepContext:
        started_at = datetime.now(timezone.utc)
        lake = Lake(spark, config.lake)
        use_checkpoint_dir(spark, config.spark.checkpoint_dir or checkpoint_dir_of_lake(lake.root))
        return cls(spark, config, lake, new_run_id(started_at), started_at)

    def next_step(self) -> StepContext:
        started_at = datetime.now(timezone.utc)
        return dataclasses.replace(self, run_id=new_run_id(started_at), started_at=started_at,
                                   clock=time.monotonic())

    def with_config(self, config: Config) -> StepContext:
        return dataclasses.replace(self, config=config)

    def elapsed(self) -> float:
        """Seconds since the step started."""
        return time.monotonic() - self.clock


class Report:
    """What a step did: how long it took, how many rows it wrote and one ``summary()`` line (the
    line the CLI prints; its text is a contract that users and tests parse)."""

    seconds: float

    @property
    def rows_written(self) -> int:
        return 0

    def summary(self) -> str:
        raise NotImplementedError

    def lines(self) -> list[str]:
        """What the step's subcommand prints: the summary line (some reports add lines before it)."""
        return [self.summary()]

    @property
    def quiet(self) -> bool:
        """True when a step run only because another asked for it has nothing worth printing."""
        return False

    def exit_code(self, config: Config) -> int:
        """The subcommand's exit code for this outcome (0: done)."""
        return 0


def reasons_text(by_reason: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(by_reason.items())) or "none"
