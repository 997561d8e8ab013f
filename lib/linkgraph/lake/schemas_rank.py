"""Schemas and column names of the rankers' tables: PageRank's (``pagerank``, ``rank_runs``,
``rank_state``) and reward ranking's (``reward_scores``, ``feeds``, ``reward_runs``, ``pruned_pages``),
with ``RUN_ID`` and ``RANK``, which the tables derived from a run share.

``linkgraph.lake.schemas`` re-exports every name here (read them as ``S.NAME``); the PageRank tables'
names are in its list of table names.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from linkgraph.lake.names import PAGE_ID, URL

# --- ranking ---------------------------------------------------------------------------------
RUN_ID = "run_id"
RANK = "rank"
VECTOR_ID = "vector_id"

PAGERANK = StructType(
    [
        StructField(PAGE_ID, LongType(), False),
        StructField(URL, StringType(), True),
        StructField(VECTOR_ID, IntegerType(), False),
        StructField(RANK, DoubleType(), False),
        StructField(RUN_ID, StringType(), False),
    ]
)

ITERATION = StructType(
    [
        StructField("iteration", IntegerType(), False),
        StructField("l1_change", DoubleType(), False),
        StructField("dangling_mass", DoubleType(), False),
        StructField("seconds", DoubleType(), False),
        StructField("active_vectors", IntegerType(), False),
    ]
)

RANK_RUNS = StructType(
    [
        StructField(RUN_ID, StringType(), False),
        StructField("started_at", TimestampType(), False),
        StructField("engine", StringType(), False),
        StructField("damping", DoubleType(), False),
        StructField("tol", DoubleType(), False),
        StructField("max_iter", IntegerType(), False),
        StructField("personalization", StringType(), True),
        StructField("vectors", IntegerType(), False),
        StructField("warm_start", BooleanType(), False),
        StructField("resumed_from", IntegerType(), True),
        StructField("graph_version", LongType(), True),
        StructField("pages", LongType(), False),
        StructField("links_followed", LongType(), False),
        StructField("iterations", IntegerType(), False),
        StructField("converged", BooleanType(), False),
        StructField("vector_iterations", ArrayType(IntegerType()), False),
        StructField("final_l1_change", DoubleType(), True),
        StructField("seconds", DoubleType(), False),
        StructField("history", ArrayType(ITERATION), False),
    ]
)

# The block engine's rank state of the last checkpointed iteration (``linkgraph.steps.rank_state``).
RANK_STATE = StructType(
    [
        StructField("run_key", StringType(), False),
        StructField("iteration", IntegerType(), False),
        StructField("active", BinaryType(), False),            # bool[K]: vectors still iterating
        StructField("vector_iterations", ArrayType(IntegerType()), False),
        StructField("block", IntegerType(), False),
        StructField("ranks", BinaryType(), False),             # float64[K, block size]
        StructField("saved_at", TimestampType(), True),        # UTC; state older than a day is dropped
    ]
)

# --- reward ranking ------------------------------------------------------------------------------
SCORE = "score"
FEED_URL = "feed_url"
ROUND = "round"

# The reward ranker's score per page after the last run (replaced by each run): the crawl
# frontier's ordering key.  Scores are non-negative points.
REWARD_SCORES = StructType(
    [
        StructField(PAGE_ID, LongType(), False),
        StructField(URL, StringType(), True),
        StructField(SCORE, DoubleType(), False),
        StructField(RUN_ID, StringType(), False),
    ]
)

# XML feeds ever linked from a page: a feed's first sighting earns its page the new-feed reward.
FEEDS = StructType(
    [
        StructField(FEED_URL, StringType(), False),               # canonical URL
        StructField("discovered_by", StringType(), True),         # url of the page credited with it
        StructField("discovered_at", TimestampType(), False),     # when the reward run saw it first
        StructField("discovered_run_id", StringType(), False),
        StructField("last_seen_at", TimestampType(), False),      # latest reward run that saw it linked
    ]
)

# One row per round of each reward run; round 0 is the start state (new pages initialised).
# Invariant per row: total_score = total_score_before - total_forgotten + total_rewarded
# + total_initialised, and total_received = total_sent (spreading moves mass, never makes it).
REWARD_RUNS = StructType(
    [
        StructField(RUN_ID, StringType(), False),
        StructField(ROUND, IntegerType(), False),
        StructField("started_at", TimestampType(), False),
        StructField("pages", LongType(), False),
        StructField("new_pages", LongType(), False),
        StructField("send_fraction", DoubleType(), False),
        StructField("forget_rate", DoubleType(), False),
        StructField("rewards_enabled", BooleanType(), False),
        StructField("links_version", LongType(), True),
        StructField("total_score_before", DoubleType(), False),
        StructField("total_sent", DoubleType(), False),
        StructField("total_received", DoubleType(), False),
        StructField("total_forgotten", DoubleType(), False),
        StructField("total_rewarded", DoubleType(), False),
        StructField("total_initialised", DoubleType(), False),
        StructField("total_score", DoubleType(), False),
        StructField("largest_change", DoubleType(), False),
        StructField("seconds", DoubleType(), False),
    ]
)

# What a prune deleted: enough to audit it and to undo it by Delta time travel to the versions
# of ``pages`` and ``links`` read before the deletes (``linkgraph reward --undo-prune RUN_ID``).
PRUNED_PAGES = StructType(
    [
        StructField(RUN_ID, StringType(), False),
        StructField(PAGE_ID, LongType(), False),
        StructField(URL, StringType(), True),
        StructField(SCORE, DoubleType(), False),
        StructField("links_removed", LongType(), False),          # links with this page at either end
        StructField("pages_version", LongType(), False),          # pages version holding the page
        StructField("links_version", LongType(), False),          # links version holding its links
        StructField("pruned_at", TimestampType(), False),
    ]
)

REWARD_SCORES_TABLE = "reward_scores"
REWARD_RUNS_TABLE = "reward_runs"
FEEDS_TABLE = "feeds"
PRUNED_PAGES_TABLE = "pruned_pages"

# --- rank_changes (linkgraph diff): two runs compared, one row per node of either --------------
RANK_CHANGES_TABLE = "rank_changes"
NODE = "node"
FROM_SCORE = "from_score"
TO_SCORE = "to_score"
FROM_POSITION = "from_position"
TO_POSITION = "to_position"
POSITION_CHANGE = "position_change"
CHANGE = "change"
LEVEL = "level"
MEASURE = "measure"
FROM_RUN = "from_run"
TO_RUN = "to_run"

RANK_CHANGES = StructType(
    [
        StructField(NODE, StringType(), False),            # a page's URL, a host's reversed name, a domain
        StructField(PAGE_ID, LongType(), True),            # page level only
        StructField(FROM_SCORE, DoubleType(), True),       # null: the earlier run lacks the node
        StructField(TO_SCORE, DoubleType(), True),         # null: the later run lacks the node
        StructField(FROM_POSITION, LongType(), True),      # 1 = the highest score
        StructField(TO_POSITION, LongType(), True),
        StructField(POSITION_CHANGE, LongType(), True),    # from_position - to_position: positive = up
        StructField(CHANGE, StringType(), False),          # linkgraph.rank.changes.CHANGES
        StructField(LEVEL, StringType(), False),
        StructField(MEASURE, StringType(), False),
        StructField(FROM_RUN, StringType(), False),
        StructField(TO_RUN, StringType(), False),
    ]
)
