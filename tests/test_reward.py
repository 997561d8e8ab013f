"""Reward-distribution ranking: hand-worked rounds, rewards, feeds, pruning, mass bounds."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

import crash_hook
from linkgraph.lake import schemas as S
from linkgraph.lake.config import Config, ConfigError, config_from_dict
from linkgraph.lake.config_analysis import TermRule
from linkgraph.rank import reward as R

LINK_COLUMNS = f"{S.SRC_ID} long, {S.DST_ID} long, {S.LINK_TYPE} string, {S.POSITION} string"
SCORES = f"{S.PAGE_ID} long, {S.SCORE} double"
REWARDS = f"{S.PAGE_ID} long, {R.REWARD_FIRST} double, {R.REWARD_LATER} double"


def _scores(df) -> dict[int, float]:
    return {row[S.PAGE_ID]: row[S.SCORE] for row in df.collect()}


# --- the hand-built example ---------------------------------------------------------------------
#
#   A=0, B=1, C=2, D=3.  Links (weights: FOOTER position 0.5, NOFOLLOW type 0, everything else 1):
#       A→B 1, A→C 1, C→A 1, B→C 0.5 (FOOTER), D→C 0 (NOFOLLOW)
#   Undirected weights: A–B 1, A–C 1+1 = 2, B–C 0.5; D has no neighbour (sends and receives nothing).
#   Shares: A → B 1/3, C 2/3;  B → A 1/1.5 = 2/3, C 1/3;  C → A 2/2.5 = 4/5, B 1/5.
#   α = β = 0.1.  Start: A 1 (a seed), B 0, C 0, D 0.5.
#   Rewards: B "job" (1) + a feed it discovers (1000 in round 1, then known: 20), C "taleo" (10),
#   D 2: reward_first = (0, 1001, 10, 2), reward_later = (0, 21, 10, 2).
#
# Round 1: sent A 0.1 (others 0: B, C hold nothing, D has no neighbour);
#          received B 0.1·1/3 = 1/30, C 0.1·2/3 = 1/15;
#          kept A 0.9, B 1/30, C 1/15, D 0.5; ×0.9 → 0.81, 0.03, 0.06, 0.45; + rewards →
#          A 0.81, B 1001.03, C 10.06, D 2.45.
# Round 2: sent A 0.081, B 100.103, C 1.006;
#          received A 0.1·1001.03·2/3 + 0.1·10.06·4/5 = 66.735333… + 0.8048 = 67.540133…
#                   B 0.1·0.81/3 + 0.1·10.06/5 = 0.027 + 0.2012 = 0.2282
#                   C 0.1·0.81·2/3 + 0.1·1001.03/3 = 0.054 + 33.367666… = 33.421666…
#          kept A 68.269133…, B 901.1552, C 42.475666…, D 2.45; ×0.9 + reward_later →
#          A 61.44222, B 832.03968, C 48.2281, D 4.205   (exactly 3072111/50000, 2600124/3125, …)
# Round 3 (same steps, exact fractions 515815011/5000000, 1744158783/2500000, 388562423/5000000,
#          11569/2000): A 103.1630022, B 697.6635132, C 77.7124846, D 5.7845.
EXPECTED_ROUNDS = {
    1: {0: 0.81, 1: 1001.03, 2: 10.06, 3: 2.45},
    2: {0: 61.44222, 1: 832.03968, 2: 48.2281, 3: 4.205},
    3: {0: 103.1630022, 1: 697.6635132, 2: 77.7124846, 3: 5.7845},
}
# totals: before, sent, forgotten, rewarded, after, largest change (worked out from the above)
EXPECTED_TOTALS = {
    1: (1.5, 0.1, 0.15, 1013.0, 1014.35, 1001.03),
    2: (1014.35, 101.19, 101.435, 33.0, 945.915, 168.99032),
    3: (945.915, 94.171, 94.5915, 33.0, 884.3235, 134.3761668),
}


@pytest.fixture(scope="module")
def four_pages(spark):
    links = spark.createDataFrame(
        [(0, 1, "INTERNAL", "CONTENT"), (0, 2, "INTERNAL", "CONTENT"), (2, 0, "INTERNAL", "NAV"),
         (1, 2, "INTERNAL", "FOOTER"), (3, 2, "NOFOLLOW", "CONTENT")],
        LINK_COLUMNS,
    )
    weighted = R.link_weights(links, {"NOFOLLOW": 0.0}, {"FOOTER": 0.5})
    shares = R.neighbour_shares(weighted)
    pages = spark.createDataFrame([(i,) for i in range(4)], f"{S.PAGE_ID} long")
    rewards = spark.createDataFrame([(0, 0.0, 0.0), (1, 1001.0, 21.0), (2, 10.0, 10.0), (3, 2.0, 2.0)], REWARDS)
    vertices = R.round_vertices(pages, shares, rewards)
    start = spark.createDataFrame([(0, 1.0), (1, 0.0), (2, 0.0), (3, 0.5)], SCORES)
    return shares, vertices, start


def test_neighbour_shares_of_the_hand_built_example(spark, four_pages):
    shares, _, _ = four_pages
    expected = spark.createDataFrame(
        [(0, 1, 1 / 3), (0, 2, 2 / 3), (1, 0, 2 / 3), (1, 2, 1 / 3), (2, 0, 0.8), (2, 1, 0.2)],
        f"{S.PAGE_ID} long, {R.NEIGHBOUR_ID} long, {R.SHARE} double",
    )
    assertDataFrameEqual(shares, expected, rtol=0, atol=1e-15)


def test_hand_built_rounds_1_to_3_match_the_worked_values(four_pages):
    shares, vertices, start = four_pages
    params = R.SpreadParams(send_fraction=0.1, forget_rate=0.1)
    current = start
    for round_no in (1, 2, 3):
        current, (stat,) = R.run_rounds(current, vertices, shares, params, rounds=1, first_round=round_no)
        got = _scores(current)
        for page, value in EXPECTED_ROUNDS[round_no].items():
            assert got[page] == pytest.approx(value, abs=1e-12, rel=0), (round_no, page)
        before, sent, forgotten, rewarded, after, largest = EXPECTED_TOTALS[round_no]
        assert stat.round == round_no
        assert (stat.total_score_before, stat.total_sent, stat.total_received, stat.total_forgotten,
                stat.total_rewarded, stat.total_score, stat.largest_change) == pytest.approx(
            (before, sent, sent, forgotten, rewarded, after, largest), abs=1e-9, rel=0)


def _dense_rounds(n, shares, sends, scores, reward_first, reward_later, params, rounds):
    """The rounds of the module docstring with a dense numpy matrix (the per-link reference):
    per round the scores and (before, sent, received, forgotten, rewarded, after, largest)."""
    import numpy as np

    alpha, beta = params.send_fraction, params.forget_rate
    m = np.zeros((n, n))
    for page, neighbour, share in shares:
        m[neighbour, page] += share
    s = np.asarray(scores, dtype=float)
    out = []
    for round_no in range(1, rounds + 1):
        reward = np.asarray(reward_first if round_no == 1 else reward_later)
        sent = np.where(sends, alpha * s, 0.0)
        received = alpha * (m @ s)
        kept = s - sent + received
        new = (1 - beta) * kept + reward
        out.append((new, (s.sum(), sent.sum(), received.sum(), (beta * kept).sum(), reward.sum(), new.sum(),
                          np.abs(new - s).max())))
        s = new
    return out


def test_block_rounds_equal_the_dense_product_on_a_random_graph(spark):
    """Page ids that are not dense, several blocks (block_size 7 for 40 pages), weights 0/0.5/1,
    pages without neighbours: the block rounds give the dense reference's scores and sums."""
    import random

    rng = random.Random(17)
    n = 40
    ids = [5 + 3 * i for i in range(n)]   # page id of vertex i, numbered 0..n-1 by the rounds
    links = {(rng.randrange(n - 3), rng.randrange(n - 3)) for _ in range(150)}   # the last 3: no links
    rows = [(ids[s], ids[d], rng.choice(["INTERNAL", "EXTERNAL", "NOFOLLOW"]), rng.choice(["CONTENT", "FOOTER"]))
            for s, d in sorted(links)]
    shares = R.neighbour_shares(R.link_weights(spark.createDataFrame(rows, LINK_COLUMNS), {"NOFOLLOW": 0.0},
                                               {"FOOTER": 0.5}))
    scores = [rng.uniform(0, 10) for _ in range(n)]
    first, later = [rng.uniform(0, 5) for _ in range(n)], [rng.uniform(0, 5) for _ in range(n)]
    pages = spark.createDataFrame([(p,) for p in ids], f"{S.PAGE_ID} long")
    rewards = spark.createDataFrame(list(zip(ids, first, later, strict=True)), REWARDS)
    start = spark.createDataFrame(list(zip(ids, scores, strict=True)), SCORES)
    params = R.SpreadParams(send_fraction=0.3, forget_rate=0.1)
    vertex = {p: i for i, p in enumerate(ids)}
    share_rows = [(vertex[r[S.PAGE_ID]], vertex[r[R.NEIGHBOUR_ID]], r[R.SHARE]) for r in shares.collect()]
    sends = [any(p == i for p, _, _ in share_rows) for i in range(n)]
    expected = _dense_rounds(n, share_rows, sends, scores, first, later, params, 3)

    final, history = R.run_rounds(start, R.round_vertices(pages, shares, rewards), shares, params, 3, block_size=7)
    got = _scores(final)
    assert sorted(got) == ids
    for i, page in enumerate(ids):
        assert got[page] == pytest.approx(expected[-1][0][i], abs=1e-12, rel=0), page
    for stat, (_, sums) in zip(history, expected, strict=True):
        assert (stat.total_score_before, stat.total_sent, stat.total_received, stat.total_forgotten,
                stat.total_rewarded, stat.total_score, stat.largest_change) == pytest.approx(sums, abs=1e-12, rel=0)


def test_rounds_of_one_block_in_one_task_equal_a_job_per_round_bit_for_bit(spark):
    """A run of one block takes all its rounds in one task: the scores and every round's sums are
    exactly (==) those of one ``BlockRounds.round`` job per round on the same packed shares."""
    import random

    from linkgraph.rank.spread import BlockRounds

    rng = random.Random(5)
    n = 60
    links = {(rng.randrange(n - 2), rng.randrange(n - 2)) for _ in range(300)}
    rows = [(s, d, rng.choice(["INTERNAL", "NOFOLLOW"]), rng.choice(["CONTENT", "FOOTER"])) for s, d in sorted(links)]
    shares = R.neighbour_shares(R.link_weights(spark.createDataFrame(rows, LINK_COLUMNS), {"NOFOLLOW": 0.0},
                                               {"FOOTER": 0.5}))
    pages = spark.createDataFrame([(p,) for p in range(n)], f"{S.PAGE_ID} long")
    rewards = spark.createDataFrame([(p, rng.uniform(0, 5), rng.uniform(0, 5)) for p in range(n)], REWARDS)
    start = spark.createDataFrame([(p, rng.uniform(0, 10)) for p in range(n)], SCORES)
    vertices = R.round_vertices(pages, shares, rewards)
    params = R.SpreadParams(send_fraction=0.3, forget_rate=0.1)
    seen = []
    final, history = R.run_rounds(start, vertices, shares, params, 4, progress=seen.append)
    assert [stat.round for stat in history] == [1, 2, 3, 4] and seen == history

    packed = BlockRounds(start, vertices, shares)
    assert packed.n_blocks == 1
    try:
        per_round = []
        for round_no in range(1, 5):
            packed.state = R.saved(packed.round(0.3, 0.1, first=round_no == 1))
            per_round.append(packed.state.drop("block", "scores").first().asDict())
        expected = _scores(packed.scores())
    finally:
        packed.release()
    assert _scores(final) == expected
    for stat, sums in zip(history, per_round, strict=True):
        assert {name: getattr(stat, name) for name in sums} == sums


@pytest.mark.slow
def test_rounds_give_the_same_bits_whatever_order_the_shares_arrive_in(spark):
    """A re-run, or a retry after a lost executor, gets the shares from the shuffle in another
    order: the scores and every round's sums are still the same bits (scores of very different
    sizes, so that another order of the sums would show), with one block and with several."""
    import random

    rng = random.Random(11)
    n = 80
    links = {(rng.randrange(n), rng.randrange(n)) for _ in range(700)}
    rows = [(s, d, "INTERNAL", rng.choice(["CONTENT", "FOOTER"])) for s, d in sorted(links) if s != d]
    shares = R.neighbour_shares(R.link_weights(spark.createDataFrame(rows, LINK_COLUMNS), {}, {"FOOTER": 0.5}))
    pages = spark.createDataFrame([(p,) for p in range(n)], f"{S.PAGE_ID} long")
    rewards = spark.createDataFrame([(p, rng.uniform(0, 5), rng.uniform(0, 5)) for p in range(n)], REWARDS)
    start = spark.createDataFrame([(p, rng.choice([1e-7, 1.0, 1e7]) * rng.uniform(1, 2)) for p in range(n)], SCORES)
    vertices = R.round_vertices(pages, shares, rewards)
    params = R.SpreadParams(send_fraction=0.3, forget_rate=0.1)
    orders = [shares, shares.orderBy(F.rand(1)).repartition(5),
              shares.orderBy(F.desc(S.PAGE_ID), F.desc(R.NEIGHBOUR_ID)).coalesce(1)]
    for block_size in (65_536, 9):
        runs = [R.run_rounds(start, vertices, ordered, params, 3, block_size=block_size) for ordered in orders]
        def sums(history):
            return [(h.round, h.total_score_before, h.total_sent, h.total_received, h.total_forgotten,
                     h.total_rewarded, h.total_score, h.largest_change) for h in history]

        first_scores, first_sums = _scores(runs[0][0]), sums(runs[0][1])
        for final, history in runs[1:]:
            assert _scores(final) == first_scores, block_size
            assert sums(history) == first_sums, block_size


def test_shares_new_page_scores_and_totals_give_the_same_bits_whatever_order_the_links_arrive_in(spark):
    """The sums before the rounds — a page's total link weight, a new page's inherited score,
    a table's total score — are the same bits when the links and scores come in another order
    (weights and scores of very different sizes, so that another order of the sums would show)."""
    import random

    rng = random.Random(5)
    n = 60
    links = sorted({(rng.randrange(n), rng.randrange(n)) for _ in range(900)})
    rows = [(s, d, "INTERNAL", rng.choice(["CONTENT", "FOOTER", "NAV"])) for s, d in links if s != d]
    position_weights = {"FOOTER": 1e-9, "NAV": 3.7e7, "CONTENT": 0.3}
    scored = [(p, rng.choice([1e-7, 1.0, 1e7]) * rng.uniform(1, 2)) for p in range(0, n, 2)]
    pages = spark.createDataFrame([(p,) for p in range(n)], f"{S.PAGE_ID} long")
    seeds = spark.createDataFrame([(1,)], f"{S.PAGE_ID} long")

    def outcome(link_rows, score_rows, partitions):
        links_df = spark.createDataFrame(link_rows, LINK_COLUMNS).repartition(partitions)
        previous = spark.createDataFrame(score_rows, SCORES).repartition(partitions)
        weighted = R.link_weights(links_df, {}, position_weights)
        shares = {(r[S.PAGE_ID], r[R.NEIGHBOUR_ID]): r[R.SHARE] for r in R.neighbour_shares(weighted).collect()}
        started = R.initial_scores(pages, previous, weighted, seeds, 0.2, 5.0)
        total = started.agg(R.exact_total(S.SCORE)).first()[0]
        return shares, _scores(started), total

    first = outcome(rows, scored, 1)
    for seed in (1, 2):
        shuffled_rows, shuffled_scores = rows[:], scored[:]
        random.Random(seed).shuffle(shuffled_rows)
        random.Random(seed).shuffle(shuffled_scores)
        assert outcome(shuffled_rows, shuffled_scores, 3 + seed) == first, seed


# --- rewards ----------------------------------------------------------------------------------------

RULES = [TermRule(1.0, ["job", "jobs", "career", "hr", "human resources"]),
         TermRule(10.0, ["hrms", "taleo", "jobvite", "icims"])]


def test_term_points_word_boundaries_case_and_cap(spark):
    rows = [
        # "hr" twice (HR, hr); never inside HRMS/hrms, which count 10 each (twice)
        (1, "HR", "hrms and HRMS, run by hr."),
        # jobs ×5 capped at 3; "job" not inside "jobs"; "job-board" is "job" then "board"
        (2, "Jobs", "jobs jobs jobs jobs job-board"),
        # letters or digits touching the term: no match ("jobsé", "hr2", "icims_x", "xtaleo")
        (3, None, "jobsé hr2 icims_x xtaleo"),
        # a term of two words across a line break, case-insensitive; Jobvite's counts (apostrophe)
        (4, "Human\nResources", "Jobvite's career"),
        (5, None, None),
    ]
    signals = spark.createDataFrame(rows, f"{S.PAGE_ID} long, {S.TITLE} string, {S.TEXT} string")
    got = {r[S.PAGE_ID]: r[R.TERM_POINTS] for r in R.term_points(signals, RULES, 3).collect()}
    assert got == {1: 2 + 20.0, 2: 3 + 1.0, 3: 0.0, 4: 1 + 10 + 1.0, 5: 0.0}


def test_rewards_from_the_sample_crawl_texts(spark, tmp_path):
    from linkgraph.inputs.signals import check_page_signals, read_page_signals, sample_signal_rows, split_page_signals

    rows = sample_signal_rows()
    bad = [
        {"url": "mailto:jobs@example.com", "title": "x", "text": "jobs", "feed_links": []},
        {"url": "https://www.acme-corp.com/", "title": "older copy", "text": "jobs", "feed_links": [],
         "fetched_at": "2025-01-01T00:00:00Z"},
        {"url": "https://jobs.example-board.com/extra", "title": "t", "text": "job", "fetched_at": "yesterday"},
        {"url": "https://jobs.example-board.com/more", "title": "t", "text": "job", "feed_links": ["http:///nohost"]},
    ]
    path = tmp_path / "signals.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows + bad) + "{not json\n")
    signals, rejects = split_page_signals(check_page_signals(read_page_signals(spark, str(path))), "test")
    by_reason = {r[S.REASON]: r["count"] for r in rejects.groupBy(S.REASON).count().collect()}
    assert by_reason == {"UNSUPPORTED_SCHEME": 1, "DUPLICATE_MERGED": 1, "MALFORMED_TIMESTAMP": 1,
                         "MALFORMED_URL": 1, "MALFORMED_RECORD": 1}
    # the page with the bad feed link stays, without it; the IDN page and its feed are canonical
    signals = signals.withColumn(S.PAGE_ID, F.lit(0).cast("long"))
    by_url = {r[S.URL]: r for r in R.term_points(signals, Config().reward.term_rules, 3).collect()}
    assert len(by_url) == len(rows) + 1
    assert by_url["https://jobs.example-board.com/more"][S.FEED_LINKS] == []
    assert by_url["https://xn--mnchen-jobs-thb.de/"][S.FEED_LINKS] == ["https://xn--mnchen-jobs-thb.de/feed/stellen.xml"]

    def points(url: str) -> float:
        return by_url[url][R.TERM_POINTS]

    # "Explore jobs at Acme and build your career with a team that cares." ("Careers" ≠ "career")
    assert points("https://careers.acme-corp.com/") == 2
    # "… our Taleo careers site; some teams recruit via Jobvite."
    assert points("https://careers.acme-corp.com/jobs/") == 20
    # career, jobs ×2, job, iCIMS, Taleo, Jobvite
    assert points("https://jobs.example-board.com/") == 1 + 2 + 1 + 30
    # "… builds payroll, HRMS and workforce analytics software …" (the newer signal won)
    assert points("https://www.acme-corp.com/") == 10
    # keyword stuffing: "Jobs" in the title and 5× in the text count 3
    assert points("http://www.best-jobs-now.biz/") == 3
    # jobs (capped 3), career ×3, hr ×2, jobvite, taleo
    assert points("http://www.best-jobs-now.biz/jobs/") == 3 + 3 + 2 + 20
    assert points("https://gardening-notes.blogspot.com/") == 0


def test_feed_rewards_new_versus_known(spark):
    feed_links = spark.createDataFrame(
        [
            (1, "https://a.example/", "2026-01-02 00:00:00", "https://a.example/jobs.xml"),
            (2, "https://b.example/", "2026-01-03 00:00:00", "https://a.example/jobs.xml"),
            (2, "https://b.example/", "2026-01-03 00:00:00", "https://known.example/feed.xml"),
            (3, "https://c.example/", None, "https://known.example/feed.xml"),
            # fetched at the same time: the smaller url discovers the feed
            (4, "https://e.example/", "2026-01-01 00:00:00", "https://new.example/x.xml"),
            (5, "https://d.example/", "2026-01-01 00:00:00", "https://new.example/x.xml"),
        ],
        f"{S.PAGE_ID} long, {S.URL} string, {S.FETCHED_AT} string, {S.FEED_URL} string",
    ).withColumn(S.FETCHED_AT, F.to_timestamp(S.FETCHED_AT))
    known = spark.createDataFrame([("https://known.example/feed.xml",)], f"{S.FEED_URL} string")
    points, discovered = R.feed_rewards(feed_links, known, 1000.0, 20.0)
    assertDataFrameEqual(points, spark.createDataFrame(
        [(1, 1000.0, 20.0), (2, 40.0, 40.0), (3, 20.0, 20.0), (4, 20.0, 20.0), (5, 1000.0, 20.0)],
        f"{S.PAGE_ID} long, {R.FEED_FIRST} double, {R.FEED_LATER} double"))
    assertDataFrameEqual(discovered, spark.createDataFrame(
        [("https://a.example/jobs.xml", "https://a.example/"), ("https://new.example/x.xml", "https://d.example/")],
        f"{S.FEED_URL} string, discovered_by string"))


# --- mass bounds (property) -----------------------------------------------------------------------

@st.composite
def random_graphs(draw):
    n = draw(st.integers(2, 7))
    pair = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
    edges = draw(st.lists(pair, max_size=3 * n, unique=True))
    types = draw(st.lists(st.sampled_from(S.LINK_TYPES), min_size=len(edges), max_size=len(edges)))
    positions = draw(st.lists(st.sampled_from(S.POSITIONS + (None,)), min_size=len(edges), max_size=len(edges)))
    scores = draw(st.lists(st.floats(0, 100), min_size=n, max_size=n))
    rewards = draw(st.lists(st.floats(0, 50), min_size=n, max_size=n))
    rewards_on = draw(st.booleans())
    params = R.SpreadParams(draw(st.sampled_from([0.0, 0.1, 0.5, 1.0])), draw(st.sampled_from([0.0, 0.1, 0.3])))
    return n, list(zip(edges, types, positions, strict=True)), scores, rewards, rewards_on, params


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graph=random_graphs())
def test_total_mass_bounds_on_random_graphs(spark, graph):
    n, links, scores, rewards, rewards_on, params = graph
    links_df = spark.createDataFrame([(s, d, t, p) for (s, d), t, p in links], LINK_COLUMNS)
    shares = R.neighbour_shares(R.link_weights(links_df, {"NOFOLLOW": 0.0}, {"FOOTER": 0.5}))
    pages = spark.createDataFrame([(i,) for i in range(n)], f"{S.PAGE_ID} long")
    reward_df = spark.createDataFrame([(i, r, r) for i, r in enumerate(rewards)], REWARDS) if rewards_on else None
    start = spark.createDataFrame(list(enumerate(scores)), SCORES)
    final, history = R.run_rounds(start, R.round_vertices(pages, shares, reward_df), shares, params, 3)

    reward_total = sum(rewards) if rewards_on else 0.0
    tol = 1e-9 * (1 + sum(scores) + 3 * reward_total)
    total = sum(scores)
    for stat in history:
        assert stat.total_score_before == pytest.approx(total, abs=tol)
        assert stat.total_received == pytest.approx(stat.total_sent, abs=tol)  # spreading moves mass only
        assert stat.total_score == pytest.approx((1 - params.forget_rate) * total + reward_total, abs=tol)
        if rewards_on:
            assert stat.total_score <= max(total, reward_total / params.forget_rate if params.forget_rate else math.inf) + tol
        else:
            assert stat.total_score <= total + tol  # never increases without rewards
        total = stat.total_score
    assert min(_scores(final).values()) >= -tol


# --- config ---------------------------------------------------------------------------------------

def test_reward_config_weights_and_errors():
    config = config_from_dict({"reward": {"link_type_weights": {"NOFOLLOW": 0, "EXTERNAL": "2.5"},
                                          "position_weights": {"FOOTER": 0.5}}})
    assert config.reward.link_type_weights == {"NOFOLLOW": 0.0, "EXTERNAL": 2.5}
    assert config.reward.position_weights == {"FOOTER": 0.5}
    for bad, message in [
        ({"link_type_weights": {"FOLLOW": 1}}, "reward.link_type_weights.FOLLOW"),
        ({"forget_rate": 1.5}, "reward.forget_rate"),
        ({"term_rules": [{"points": 1, "terms": []}]}, "terms"),
        ({"in_run": "sometimes"}, "reward.in_run"),
        ({"rounds_": 3}, "reward.rounds_"),
    ]:
        with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
            config_from_dict({"reward": bad})


# --- the step on a lake: pruning, feeds across runs, undo, CLI ----------------------------------------

PAGES = [  # S (id 0) is the seed; C and D are only reachable through B, two hops beyond the rewarded A
    (0, "https://jobs.example.com/"), (1, "https://jobs.example.com/a"), (2, "https://jobs.example.com/b"),
    (3, "https://garden.example.org/c"), (4, "https://garden.example.org/d"),
]
LINKS = [(0, 1), (1, 0), (1, 2), (2, 3), (3, 4)]
SIGNALS = [
    {"url": "https://jobs.example.com/", "title": "Jobs", "text": "", "feed_links": [],
     "fetched_at": "2026-01-01T00:00:00Z"},
    {"url": "https://jobs.example.com/a", "title": "Careers", "text": "A career in HR.",
     "feed_links": ["https://jobs.example.com/feed.xml"], "fetched_at": "2026-01-01T00:00:00Z"},
    {"url": "https://garden.example.org/c", "title": "Roses", "text": "Pruning roses.", "feed_links": [],
     "fetched_at": "2026-01-01T00:00:00Z"},
]

# the seed of the small lake, and a prune of any share of its pages let through
PRUNING = {"seeds": ["https://jobs.example.com"], "max_prune_share": 1.0}


def _small_lake(spark, lake_dir) -> None:
    """pages and links of the five pages above (every link INTERNAL/EXTERNAL, position unknown)."""
    from datetime import datetime

    from linkgraph.lake.config import LakeConfig
    from linkgraph.lake.delta import Lake

    def host(url: str) -> str:
        return url.split("/")[2]

    def domain(url: str) -> str:
        return ".".join(host(url).split(".")[-2:])

    seen = datetime(2026, 1, 1)
    lake = Lake(spark, LakeConfig(path=str(lake_dir)))
    lake.overwrite(S.PAGES_TABLE, spark.createDataFrame(
        [(i, u, host(u), domain(u), u, seen, seen) for i, u in PAGES], S.PAGES))
    urls = dict(PAGES)
    lake.overwrite(S.LINKS_TABLE, spark.createDataFrame(
        [(s, d, None, None, "INTERNAL" if domain(urls[s]) == domain(urls[d]) else "EXTERNAL", None, seen, seen)
         for s, d in LINKS], S.LINKS))


def _crash_after(monkeypatch, commits: int) -> None:
    """The next step dies right after its ``commits``-th Delta commit (tests/crash_hook.py in raise
    mode: only ``finally`` blocks run, none writes a table, so the lake is what a SIGKILL there
    leaves; tests/test_crash_safety.py kills a real process with it)."""
    crash_hook.arm(monkeypatch, f"{commits}:raise")


def _assert_links_between_pages(spark, lake_dir) -> None:
    """The lake as a crash left it: page ids and URLs unique, no link to a missing page."""
    pages = spark.read.format("delta").load(str(lake_dir / S.PAGES_TABLE))
    links = spark.read.format("delta").load(str(lake_dir / S.LINKS_TABLE))
    row = pages.agg(F.count("*").alias("n"), F.countDistinct(S.PAGE_ID).alias("ids"),
                    F.countDistinct(S.URL).alias("urls")).first()
    assert row.n == row.ids == row.urls, row
    ids = pages.select(S.PAGE_ID)
    for end in (S.SRC_ID, S.DST_ID):
        assert links.join(ids.withColumnRenamed(S.PAGE_ID, end), on=end, how="left_anti").count() == 0, end


def _die_after(monkeypatch, spark, lake_dir, step, commits: int) -> str:
    """Run ``step``, which dies right after its ``commits``-th commit; check the lake it left and
    return the table of that commit."""
    _crash_after(monkeypatch, commits)
    with pytest.raises(crash_hook.SimulatedCrash):
        step()
    _assert_links_between_pages(spark, lake_dir)
    return crash_hook.CRASH_HOOK.tables[-1]


def _finish(monkeypatch, step):
    """Run ``step`` to its end; (its result, the tables it committed to)."""
    _crash_after(monkeypatch, 1_000_000)
    result = step()
    monkeypatch.delenv(crash_hook.CRASH_AFTER_COMMITS)
    return result, crash_hook.CRASH_HOOK.tables


@pytest.mark.e2e
def test_reward_step_prunes_pages_with_their_links_and_undoes_it(spark, tmp_path, lake_dir, monkeypatch):
    from linkgraph.cli import main
    from linkgraph.lake.context import StepContext
    from linkgraph.steps import reward as reward_step_module

    config = config_from_dict({"lake": {"path": str(lake_dir)}, "reward": PRUNING})
    assert main(["reward", "--lake", str(lake_dir)]) == 2  # no pages/links yet: one clear message
    _small_lake(spark, lake_dir)
    signals = tmp_path / "signals.jsonl"
    signals.write_text("".join(json.dumps(r) + "\n" for r in SIGNALS))

    def lake(table: str):
        return spark.read.format("delta").load(str(lake_dir / table))

    first = reward_step_module.run(StepContext.create(spark, config),
                                   reward_step_module.Params(rounds=2, signals=str(signals)))
    # start S 1 (seed), others 0.  Round 1: S sends 0.1 to A; A's reward 2 ("career", "hr") + 1000
    # (new feed) → A 0.09 + 1002 = 1002.09; S 0.81 + 1 ("Jobs"); B, C, D still 0.
    # Round 2: B receives 0.1·1002.09/3 (A links S both ways: weight 2, B: 1) > 0.01; C, D get nothing.
    pruned = {r[S.PAGE_ID]: (r[S.URL], r[S.SCORE], r["links_removed"]) for r in lake(S.PRUNED_PAGES_TABLE).collect()}
    assert pruned == {3: ("https://garden.example.org/c", 0.0, 2), 4: ("https://garden.example.org/d", 0.0, 1)}
    assert (first.pruned_pages, first.pruned_links, first.feeds_discovered) == (2, 2, 1)
    pages_left = lake(S.PAGES_TABLE).select(S.PAGE_ID)
    links = lake(S.LINKS_TABLE)
    assert sorted((r[S.SRC_ID], r[S.DST_ID]) for r in links.collect()) == [(0, 1), (1, 0), (1, 2)]
    assert links.join(pages_left.withColumnRenamed(S.PAGE_ID, S.SRC_ID), on=S.SRC_ID, how="left_anti").count() == 0
    assert links.join(pages_left.withColumnRenamed(S.PAGE_ID, S.DST_ID), on=S.DST_ID, how="left_anti").count() == 0
    scores = {r[S.PAGE_ID]: r[S.SCORE] for r in lake(S.REWARD_SCORES_TABLE).collect()}
    assert set(scores) == {0, 1, 2}
    assert scores[2] == pytest.approx(0.9 * 0.1 * 1002.09 / 3, abs=1e-12)
    rounds = lake(S.REWARD_RUNS_TABLE).orderBy(S.ROUND).collect()
    assert [r[S.ROUND] for r in rounds] == [0, 1, 2]
    assert [r["total_rewarded"] for r in rounds] == [0.0, 1003.0, 23.0]  # the feed is known from round 2
    feed = lake(S.FEEDS_TABLE).first()
    assert (feed[S.FEED_URL], feed["discovered_by"]) == ("https://jobs.example.com/feed.xml", "https://jobs.example.com/a")

    # a second run (CLI): the feeds table knows the feed, so A's round-1 reward is 2 + 20, not 1002
    assert main(["reward", "--lake", str(lake_dir), "--rounds", "1", "--seeds", "https://jobs.example.com/"]) == 0
    second = lake(S.REWARD_RUNS_TABLE).where(F.col(S.RUN_ID) != first.run_id).orderBy(S.ROUND).collect()
    assert [(r[S.ROUND], r["new_pages"], r["total_rewarded"]) for r in second] == [(0, 0, 0.0), (1, 0, 1 + 22.0)]
    assert lake(S.PAGES_TABLE).count() == 3  # nothing more to prune

    undone = reward_step_module.run(StepContext.create(spark, config), reward_step_module.Params(undo_prune=first.run_id))
    _assert_undone(spark, lake_dir, undone)
    assert main(["reward", "--lake", str(lake_dir), "--undo-prune", "no-such-run"]) == 2


def _assert_undone(spark, lake_dir, undone) -> None:
    """The two pages the prune removed and their links are back; their scores are 0."""
    def lake(table: str):
        return spark.read.format("delta").load(str(lake_dir / table))

    assert (undone.pages_restored, undone.links_restored) == (2, 2)
    assert lake(S.PAGES_TABLE).count() == 5
    assert sorted((r[S.SRC_ID], r[S.DST_ID]) for r in lake(S.LINKS_TABLE).collect()) == sorted(LINKS)
    assert {r[S.PAGE_ID]: r[S.SCORE] for r in lake(S.REWARD_SCORES_TABLE).where(F.col(S.PAGE_ID) >= 3).collect()} == {
        3: 0.0, 4: 0.0}


@pytest.mark.drill
def test_an_undo_dying_after_each_of_its_commits_is_completed_by_its_rerun(spark, tmp_path, lake_dir, monkeypatch):
    """The undo of a prune dies right after each of its commits in turn (pages, links, scores);
    each re-run completes the rest, and the last finds nothing left to do."""
    from linkgraph.lake.context import StepContext
    from linkgraph.steps import reward as reward_step_module

    config = config_from_dict({"lake": {"path": str(lake_dir)}, "reward": PRUNING})
    _small_lake(spark, lake_dir)
    signals = tmp_path / "signals.jsonl"
    signals.write_text("".join(json.dumps(r) + "\n" for r in SIGNALS))
    first = reward_step_module.run(StepContext.create(spark, config),
                                   reward_step_module.Params(rounds=2, signals=str(signals)))
    assert (first.pruned_pages, first.pruned_links) == (2, 2)

    def undo():
        return reward_step_module.run(StepContext.create(spark, config), reward_step_module.Params(undo_prune=first.run_id))

    assert _die_after(monkeypatch, spark, lake_dir, undo, 1) == S.PAGES_TABLE
    assert _die_after(monkeypatch, spark, lake_dir, undo, 1) == S.LINKS_TABLE
    assert _die_after(monkeypatch, spark, lake_dir, undo, 1) == S.REWARD_SCORES_TABLE
    undone, commits = _finish(monkeypatch, undo)
    assert commits == []                                 # nothing left to do
    _assert_undone(spark, lake_dir, undone)


def test_a_run_without_seeds_or_signals_scores_every_page_and_prunes_nothing(spark, lake_dir, capsys):
    """An edges-only lake on its first run: no seed, no page signals, no earlier scores.  Every
    page scores 0, below the delete threshold, yet the scores tell no page from another: the run
    writes them, prunes nothing and says why in one line."""
    from linkgraph.cli import main

    _small_lake(spark, lake_dir)
    assert main(["reward", "--lake", str(lake_dir), "--rounds", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("pruned nothing: no page scored above 0 (seeds=0, pages with signals=0, earlier scores=0)") == 1

    def lake(table: str):
        return spark.read.format("delta").load(str(lake_dir / table))

    assert lake(S.PAGES_TABLE).count() == len(PAGES) and lake(S.LINKS_TABLE).count() == len(LINKS)
    assert {r[S.PAGE_ID]: r[S.SCORE] for r in lake(S.REWARD_SCORES_TABLE).collect()} == dict.fromkeys(range(5), 0.0)
    assert not (lake_dir / S.PRUNED_PAGES_TABLE).exists()
    assert [r[S.ROUND] for r in lake(S.REWARD_RUNS_TABLE).orderBy(S.ROUND).collect()] == [0, 1, 2]   # finished
    assert "pruned_pages=0 pruned_links=0" in out


@pytest.mark.slow
def test_a_prune_of_more_than_max_prune_share_is_refused_and_nothing_is_pruned(spark, tmp_path, lake_dir, capsys):
    """The prune of the small lake takes 2 of its 5 pages (40%): with ``reward.max_prune_share``
    0.3 the run stops with exit 2 and one line naming the counts and the key, before it writes any
    result, so pages, links and the prune's tables are as they were.  The run stays unfinished: the
    next start with ``--no-prune`` completes that run, pruning nothing."""
    import yaml
    from delta.tables import DeltaTable

    from linkgraph.cli import main
    from linkgraph.errors import PruneRefused, UsageError

    assert issubclass(PruneRefused, UsageError)
    _small_lake(spark, lake_dir)
    signals = tmp_path / "signals.jsonl"
    signals.write_text("".join(json.dumps(r) + "\n" for r in SIGNALS))
    conf = tmp_path / "reward.yaml"
    conf.write_text(yaml.safe_dump({"lake": {"path": str(lake_dir)},
                                    "reward": {**PRUNING, "max_prune_share": 0.3}}))

    def lake(table: str):
        return spark.read.format("delta").load(str(lake_dir / table))

    def version(table: str) -> int:
        return DeltaTable.forPath(spark, str(lake_dir / table)).history(1).first()["version"]

    pages_version, links_version = version(S.PAGES_TABLE), version(S.LINKS_TABLE)
    capsys.readouterr()
    assert main(["reward", "--conf", str(conf), "--rounds", "2", "--signals", str(signals)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "refused to prune 2 of 5 pages (40.0%, more than reward.max_prune_share=0.3)" in err
    assert (version(S.PAGES_TABLE), version(S.LINKS_TABLE)) == (pages_version, links_version)
    assert lake(S.PAGES_TABLE).count() == len(PAGES) and lake(S.LINKS_TABLE).count() == len(LINKS)
    for table in (S.PRUNED_PAGES_TABLE, S.REWARD_SCORES_TABLE, S.REWARD_RUNS_TABLE, S.FEEDS_TABLE):
        assert not (lake_dir / table).exists(), table
    (refused,) = [r[S.RUN_ID] for r in lake(S.STEP_RUNS_TABLE).collect()]

    assert main(["reward", "--conf", str(conf), "--rounds", "2", "--no-prune"]) == 0
    assert f"reward run {refused} had not finished: completed it" in capsys.readouterr().out
    assert lake(S.PAGES_TABLE).count() == len(PAGES) and lake(S.LINKS_TABLE).count() == len(LINKS)
    assert {r[S.RUN_ID] for r in lake(S.REWARD_RUNS_TABLE).collect()} == {refused}
    assert lake(S.REWARD_SCORES_TABLE).count() == len(PAGES)


def test_max_prune_share_is_a_fraction_and_the_shipped_configs_keep_it_small():
    from pathlib import Path

    from linkgraph.lake.config import load_config

    assert Config().reward.max_prune_share == 0.05
    conf = Path(__file__).resolve().parents[1] / "conf"
    assert {load_config(conf / name).reward.max_prune_share for name in ("local.yaml", "cluster.yaml")} == {0.05}
    for bad in (-0.1, 1.5):
        with pytest.raises(ConfigError, match=r"reward\.max_prune_share must be in \[0, 1\]"):
            config_from_dict({"reward": {"max_prune_share": bad}})


def _comparable(df):
    """``df`` without what differs between two runs of the same computation: run ids, times, and
    the input versions ``step_runs`` records (a re-merge of the same signals writes a
    ``page_signals`` version of the same rows, so each rerun before the record moves it on)."""
    from pyspark.sql.types import TimestampType

    varying = {S.RUN_ID, "discovered_run_id", "seconds", "inputs"}
    return df.select(*[f.name for f in df.schema.fields
                       if f.name not in varying and not isinstance(f.dataType, TimestampType)])


REWARD_RUN_TABLES = (S.PAGES_TABLE, S.LINKS_TABLE, S.PAGE_SIGNALS_TABLE, S.REJECTS_TABLE, S.STEP_RUNS_TABLE,
                     S.REWARD_SCORES_TABLE, S.FEEDS_TABLE, S.PRUNED_PAGES_TABLE, S.REWARD_RUNS_TABLE)


@pytest.mark.drill
def test_a_reward_run_rerun_without_run_id_after_dying_after_each_commit_equals_one_run(spark, tmp_path,
                                                                                         monkeypatch):
    """The run dies right after its first commit; its rerun, started as ``linkgraph reward`` and
    ``linkgraph run`` start it (a new process, a new run id), completes the interrupted run and
    dies right after its own first new commit, and so on: one death after every commit of the run
    in turn, each leaving a consistent lake.  Every rerun reads the versions the first attempt
    recorded, so none advances the scores again or re-awards the feed as known; after the last
    commit (``reward_runs``: the run is finished) the lake holds the tables of one clean run on
    another lake, each table's rows written by one commit, and no run left unfinished."""
    from delta.tables import DeltaTable

    from linkgraph.lake.context import StepContext
    from linkgraph.lake.delta import Lake
    from linkgraph.steps import reward as reward_step_module

    signals = tmp_path / "signals.jsonl"
    signals.write_text("".join(json.dumps(r) + "\n" for r in SIGNALS))
    lake_dir, reference = tmp_path / "lake", tmp_path / "reference"

    def run(lake, run_id=None):   # an attempt in a new process: new start time and run id
        config = config_from_dict({"lake": {"path": str(lake)}, "reward": PRUNING})
        ctx = StepContext.create(spark, config)
        return reward_step_module.run(ctx, reward_step_module.Params(rounds=2, signals=str(signals), run_id=run_id))

    for lake in (lake_dir, reference):
        _small_lake(spark, lake)
    clean = run(reference)
    # page_signals (create, MERGE), rejects (create), step_runs (create, insert), reward_scores,
    # feeds, pruned_pages (create, insert: the audit, before the deletes), links, pages, reward_runs
    died_after = [_die_after(monkeypatch, spark, lake_dir, lambda: run(lake_dir), 1) for _ in range(12)]
    assert died_after == [S.PAGE_SIGNALS_TABLE, S.PAGE_SIGNALS_TABLE, S.REJECTS_TABLE, S.STEP_RUNS_TABLE,
                          S.STEP_RUNS_TABLE, S.REWARD_SCORES_TABLE, S.FEEDS_TABLE, S.PRUNED_PAGES_TABLE,
                          S.PRUNED_PAGES_TABLE, S.LINKS_TABLE, S.PAGES_TABLE, S.REWARD_RUNS_TABLE]
    monkeypatch.delenv(crash_hook.CRASH_AFTER_COMMITS)

    def lake(root, table: str):
        return spark.read.format("delta").load(str(root / table))

    for table in REWARD_RUN_TABLES:
        assertDataFrameEqual(_comparable(lake(lake_dir, table)), _comparable(lake(reference, table)), rtol=1e-12)
    (run_id,) = {r[S.RUN_ID] for r in lake(lake_dir, S.STEP_RUNS_TABLE).collect()}   # one run, no orphan
    assert {r[S.RUN_ID] for r in lake(lake_dir, S.REWARD_RUNS_TABLE).collect()} == {run_id}

    # each table got its rows in one commit although 12 attempts computed the run (a MERGE
    # that changes no row may still rewrite a file and write a version: feeds)
    def writes(table: str) -> int:
        merged = ("numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsDeleted")
        history = DeltaTable.forPath(spark, str(lake_dir / table)).history().select("operation", "operationMetrics")
        return sum(any(int((h.operationMetrics or {}).get(m, 0))
                       for m in (merged if h.operation == "MERGE" else ("numOutputRows",)))
                   for h in history.collect())

    assert {t: writes(t) for t in (S.REWARD_SCORES_TABLE, S.FEEDS_TABLE, S.PRUNED_PAGES_TABLE, S.REWARD_RUNS_TABLE)} == {
        S.REWARD_SCORES_TABLE: 1, S.FEEDS_TABLE: 1, S.PRUNED_PAGES_TABLE: 1, S.REWARD_RUNS_TABLE: 1}
    assert (clean.pruned_pages, clean.pruned_links, clean.feeds_discovered) == (2, 2, 1)

    # a retry of the finished run (a scheduler passes the run id): nothing is written
    scores_version = Lake(spark, config_from_dict({"lake": {"path": str(lake_dir)}}).lake).current_version(
        S.REWARD_SCORES_TABLE)
    again = run(lake_dir, run_id=run_id)
    assert Lake(spark, config_from_dict({"lake": {"path": str(lake_dir)}}).lake).current_version(
        S.REWARD_SCORES_TABLE) == scores_version
    assert (again.pages, again.pruned_pages, again.pruned_links, again.feeds_discovered) == (5, 2, 2, 1)
    assert again.total_score == pytest.approx(clean.total_score, rel=1e-12)


@pytest.mark.drill
def test_an_ingest_racing_a_prune_leaves_no_link_to_a_pruned_page(spark, tmp_path, monkeypatch):
    """Two interleavings forced in one thread.  Ingest I2 (a link A → D) has numbered its pages
    and resolved its links when the whole reward run of the prune test prunes C and D; inside that
    run, between its links DELETE and its pages DELETE, ingest I1 (a link A → C) runs to its end.
    I1's link reached C before the pages DELETE: the prune's last links DELETE removes it (the
    prune wins, as if I1 had run just before it).  I2 commits its link to D after D was deleted: it
    finds D gone, removes that link and re-runs, which inserts D as a new page with the link.  No
    link to a missing page remains, and both ingests account for every record."""
    from linkgraph.lake import tables
    from linkgraph.lake.context import StepContext
    from linkgraph.lake.delta import Lake
    from linkgraph.steps import reward as reward_step_module
    from steps_support import ingest_step

    lake_dir = tmp_path / "lake"
    _small_lake(spark, lake_dir)
    signals = tmp_path / "signals.jsonl"
    signals.write_text("".join(json.dumps(r) + "\n" for r in SIGNALS))
    config = config_from_dict({"lake": {"path": str(lake_dir)}, "reward": PRUNING,
                               "reliability": {"conflict_backoff_seconds": 0.0}})

    def one_link(name: str, to_url: str) -> str:
        path = tmp_path / f"{name}.jsonl"
        path.write_text(json.dumps({"from_url": "https://jobs.example.com/a", "to_url": to_url,
                                    "last_seen_at": "2026-01-02T00:00:00Z"}) + "\n")
        return str(path)

    to_c, to_d = one_link("i1", "https://garden.example.org/c"), one_link("i2", "https://garden.example.org/d")
    events: list[str] = []
    reports = {}
    delete_matching, upsert_links = Lake.delete_matching, tables.upsert_links

    def delete_with_an_ingest_before_the_pages_delete(self, table, keys_df, keys, **options):
        if table == S.PAGES_TABLE and "I1" not in events:
            events.append("I1")
            reports["I1"] = ingest_step(spark, config, to_c, "jsonl")
        events.append(f"delete {table}")
        return delete_matching(self, table, keys_df, keys, **options)

    def upsert_links_after_a_prune(lake, links, new_from=None, **options):
        if "prune" not in events:
            events.append("prune")
            reports["prune"] = reward_step_module.run(StepContext.create(spark, config),
                                                      reward_step_module.Params(rounds=2, signals=str(signals)))
        events.append("links MERGE")
        return upsert_links(lake, links, new_from=new_from, **options)

    monkeypatch.setattr(Lake, "delete_matching", delete_with_an_ingest_before_the_pages_delete)
    monkeypatch.setattr(tables, "upsert_links", upsert_links_after_a_prune)
    reports["I2"] = ingest_step(spark, config, to_d, "jsonl")

    assert events == [
        "prune", "delete links",                 # the prune's links DELETE
        "I1", "links MERGE",                     # I1 commits A → C
        "delete pages", "delete links",          # the prune's pages DELETE, then its sweep removes A → C
        "links MERGE", "delete links",           # I2 commits A → D, finds D gone and removes it
        "links MERGE",                           # I2's re-run: D a new page, A → D again
    ]
    assert reports["prune"].pruned_pages == 2
    assert all((r.read, r.written, r.rejected) == (1, 1, 0) for r in (reports["I1"], reports["I2"]))
    _assert_links_between_pages(spark, lake_dir)

    def lake(table: str):
        return spark.read.format("delta").load(str(lake_dir / table))

    pages = {r[S.URL]: r[S.PAGE_ID] for r in lake(S.PAGES_TABLE).collect()}
    assert set(pages) == {url for _, url in PAGES} - {"https://garden.example.org/c"}
    assert pages["https://garden.example.org/d"] == 3   # numbered anew after the largest id left (2)
    assert sorted((r[S.SRC_ID], r[S.DST_ID]) for r in lake(S.LINKS_TABLE).collect()) == [(0, 1), (1, 0), (1, 2), (1, 3)]


# --- one reward run at a time: the lake's lease ----------------------------------------------------

def test_a_second_start_is_refused_while_a_run_holds_the_lease(spark, tmp_path, capsys):
    """A live holder (this process inside its ``with``, another live process on this host that
    renewed the lease recently, another host that did) refuses a start before it writes; a
    holder that left, died or stopped renewing is taken over.  Through the CLI, the refusal is one
    line naming the running run, exit 1, and nothing written."""
    import socket
    import subprocess
    import sys
    import time

    from linkgraph.cli import main
    from linkgraph.errors import StepAlreadyRunning
    from linkgraph.lake import leases

    lake_dir = tmp_path / "lake"
    _small_lake(spark, lake_dir)
    root = f"file:{lake_dir}"
    path = lake_dir / leases.LEASE_DIRECTORY / "reward.json"

    with leases.Lease(spark, root, "reward", "running-run"):
        with pytest.raises(StepAlreadyRunning, match="running-run"):
            leases.Lease(spark, root, "reward", "second").__enter__()
        assert main(["reward", "--lake", str(lake_dir)]) == 1
        assert main(["reward", "--lake", str(lake_dir), "--undo-prune", "any"]) == 1
        err = capsys.readouterr().err
        assert err.count("linkgraph reward is already running in this lake: run running-run on") == 2, err
    assert not path.exists()   # removed on a normal exit
    assert not (lake_dir / S.STEP_RUNS_TABLE).exists() and not (lake_dir / S.REWARD_RUNS_TABLE).exists()

    with pytest.raises(crash_hook.SimulatedCrash), leases.Lease(spark, root, "reward", "crashed-run"):
        raise crash_hook.SimulatedCrash("killed")
    assert path.exists()   # left, as a kill leaves it; this process no longer holds it
    with leases.Lease(spark, root, "reward", "next"):
        pass

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        def holder(**fields) -> None:
            lease = {"run_id": "other-run", "host": socket.gethostname(), "pid": sleeper.pid, "token": "x",
                     "heartbeat_at": time.time(), **fields}
            path.parent.mkdir(exist_ok=True)
            path.write_text(json.dumps(lease))

        for fields, live in (({}, True), ({"heartbeat_at": time.time() - leases.LEASE_SECONDS - 1}, False),
                             ({"host": "elsewhere", "pid": 1}, True),
                             ({"host": "elsewhere", "heartbeat_at": time.time() - leases.LEASE_SECONDS - 1}, False)):
            holder(**fields)
            assert leases.is_live(leases.read_lease(spark, str(path))) is live, fields
            if live:
                with pytest.raises(StepAlreadyRunning, match="other-run"):
                    leases.Lease(spark, root, "reward", "start").__enter__()
        holder()
        sleeper.kill()
        sleeper.wait()
        with leases.Lease(spark, root, "reward", "after-the-kill"):   # its process is gone
            pass
    finally:
        sleeper.kill()
