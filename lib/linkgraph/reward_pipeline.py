"""Deprecated function-style entry points to the reward step: thin shims and re-exports.  The
step is ``linkgraph.steps.reward``; page-signal transforms are in ``linkgraph.signals``.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from linkgraph.config import Config
from linkgraph.errors import PruneNotFound as PruneNotFound
from linkgraph.signals import RAW_PAGE_SIGNAL as RAW_PAGE_SIGNAL
from linkgraph.signals import SAMPLE_SOURCE as SAMPLE_SOURCE
from linkgraph.signals import check_page_signals as check_page_signals
from linkgraph.signals import read_page_signals as read_page_signals
from linkgraph.signals import sample_seed_urls as sample_seed_urls
from linkgraph.signals import sample_signal_rows as sample_signal_rows
from linkgraph.signals import split_page_signals as split_page_signals
from linkgraph.signals import write_sample_signals as write_sample_signals
from linkgraph.steps import reward
from linkgraph.steps.context import StepContext
from linkgraph.steps.reward import RewardReport as RewardReport
from linkgraph.steps.reward import SignalsReport as SignalsReport
from linkgraph.steps.reward import UndoReport as UndoReport
from linkgraph.steps.reward import ingest_page_signals as ingest_page_signals


def reward_step(spark: SparkSession, config: Config, rounds: int | None = None, seeds: list[str] | None = None,
                signals_path: str | None = None, signals_source: str | None = None) -> RewardReport:
    return reward.run(StepContext.create(spark, config), rounds, seeds, signals_path, signals_source)


def undo_prune(spark: SparkSession, config: Config, run_id: str) -> UndoReport:
    return reward.undo(StepContext.create(spark, config), run_id)


def reward_in_run(spark: SparkSession, config: Config, on_sample: bool) -> RewardReport | None:
    return reward.in_run(StepContext.create(spark, config), on_sample)
