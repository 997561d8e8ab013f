"""Spam mass from trusted seeds: a link farm boosting one target beside a trusted core.

The crawl (18 pages, every link followed):

* trusted core good.com/{,a,b}, all linking each other; good.com/ links news.org/, which links
  news.org/x and six leaves news.org/y1..y6 (dangling); news.org/x links back to good.com/ and to
  spam.net/f1 (the one path from the core into the farm);
* the farm: spam.net/f1..f6 each link target.biz/, which links every farm page back.

``scores.trusted_seeds`` = good.com/ and good.com/a; ``analysis.good_fraction`` γ = 1, so
trust_rank = the PageRank personalised on them.  Expected values, d = 0.85, from networkx
(``pagerank(G)`` and ``pagerank(G, personalization={trusted: 1})``, tol 1e-15), also recomputed
below by a dense linear solve of the engine's equation:

    page          PageRank p       trust_rank p'    spam_mass (p - p')/p
    good.com/     0.068835146311   0.315090490050   -3.577465247549
    good.com/a    0.056871420743   0.280532539123   -3.932750676176
    news.org/     0.032701066927   0.089275638848   -1.730052785340
    news.org/x    0.017168619313   0.010840613289    0.368579785546
    spam.net/f1   0.064760087323   0.006606507385    0.897984890721
    spam.net/f2   0.057463424115   0.001999246738    0.965208360478
    target.biz/   0.312463402186   0.014112329912    0.954835254903

Median PageRank (percentile_approx, 9th of 18) = 0.056871420743 (good.com/a, /b).  Suspects (mass >
0.7 and p > median): target.biz/ and spam.net/f1..f6; the core's mass is negative.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from pyspark.sql import functions as F

from linkgraph.lake import schemas as S
from linkgraph.lake.config import ConfigError, config_from_dict
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake
from linkgraph.steps import flags
from steps_support import ingest_step, pagerank_step

CORE = ["good.com/", "good.com/a", "good.com/b"]
FARM = [f"spam.net/f{i}" for i in range(1, 7)]
EXPECTED = {  # page: (PageRank, trust_rank, spam_mass), see the module docstring
    "good.com/": (0.068835146311, 0.315090490050, -3.577465247549),
    "good.com/a": (0.056871420743, 0.280532539123, -3.932750676176),
    "news.org/": (0.032701066927, 0.089275638848, -1.730052785340),
    "news.org/x": (0.017168619313, 0.010840613289, 0.368579785546),
    "spam.net/f1": (0.064760087323, 0.006606507385, 0.897984890721),
    "spam.net/f2": (0.057463424115, 0.001999246738, 0.965208360478),
    "target.biz/": (0.312463402186, 0.014112329912, 0.954835254903),
}


def crawl() -> list[tuple[str, str]]:
    edges = [(a, b) for a in CORE for b in CORE if a != b]
    edges += [("good.com/", "news.org/"), ("news.org/", "news.org/x"), ("news.org/x", "good.com/"),
              ("news.org/x", "spam.net/f1")]
    edges += [("news.org/", f"news.org/y{i}") for i in range(1, 7)]
    edges += [(f, "target.biz/") for f in FARM] + [("target.biz/", f) for f in FARM]
    return edges


def exact(edges: list[tuple[str, str]], teleport: dict[str, float], d: float = 0.85) -> dict[str, float]:
    """The engine's fixed point r = d (M^T r + D v) + (1 - d) v by a dense solve."""
    nodes = sorted({u for e in edges for u in e})
    index = {u: i for i, u in enumerate(nodes)}
    n = len(nodes)
    m = np.zeros((n, n))
    for u, w in edges:
        m[index[w], index[u]] = 1.0
    out = m.sum(axis=0)
    dangling = out == 0
    m[:, ~dangling] /= out[~dangling]
    v = np.array([teleport.get(u, 0.0) for u in nodes])
    v /= v.sum()
    a = np.eye(n) - d * m - d * np.outer(v, dangling.astype(float))
    r = np.linalg.solve(a, (1 - d) * v)
    return {u: float(r[index[u]]) for u in nodes}


@pytest.fixture(scope="module")
def flagged(spark, tmp_path_factory):
    work = tmp_path_factory.mktemp("spam")
    path = work / "edges.jsonl"
    path.write_text("".join(json.dumps({"from_url": f"http://{s}", "to_url": f"http://{t}"}) + "\n"
                            for s, t in crawl()))
    config = config_from_dict({"lake": {"path": str(work / "lake")},
                               "rank": {"tol": 1e-14, "max_iter": 1000},
                               "scores": {"trusted_seeds": ["http://good.com/", "HTTP://Good.com/a"]}})
    ingest_step(spark, config, str(path), "jsonl")
    lake = Lake(spark, config.lake)
    # what `flags` reads of the domain analysis (no link farm by the 90% rule, a domains table)
    lake.overwrite(S.LINK_FARMS_TABLE, spark.createDataFrame([], S.LINK_FARMS), built_from="test")
    lake.overwrite(S.DOMAINS_TABLE, spark.createDataFrame(
        [("com.good", 3), ("org.news", 8), ("net.spam", 6), ("biz.target", 1)], "domain string, pages long"),
        built_from="analysis inputs")
    rank_report = pagerank_step(spark, config)
    flags_report = flags.run(StepContext.create(spark, config), flags.Params())
    return lake, rank_report, flags_report


def test_trust_vector_is_computed_in_the_pagerank_pass(flagged):
    lake, rank_report, _ = flagged
    assert rank_report.vectors == 2 and rank_report.converged
    sums = {r[S.VECTOR_ID]: r["total"] for r in lake.read(S.PAGERANK_TABLE).groupBy(S.VECTOR_ID)
            .agg(F.sum(S.RANK).alias("total")).collect()}
    assert sums[0] == pytest.approx(1.0, abs=1e-12)
    assert sums[1] == pytest.approx(1.0, abs=1e-12)


def test_spam_mass_matches_the_worked_values(flagged):
    lake, rank_report, flags_report = flagged
    rows = {r[S.URL].removeprefix("http://"): r for r in lake.read(S.PAGE_FLAGS_TABLE).collect()}
    assert len(rows) == 18
    for page, (rank, trust, mass) in EXPECTED.items():
        assert rows[page][S.RANK] == pytest.approx(rank, abs=1e-9)
        assert rows[page][S.TRUST_RANK] == pytest.approx(trust, abs=1e-9)
        assert rows[page][S.SPAM_MASS] == pytest.approx(mass, abs=1e-9)
    pr = exact(crawl(), {u: 1.0 for u in {x for e in crawl() for x in e}})
    trust = exact(crawl(), {"good.com/": 1.0, "good.com/a": 1.0})
    for page, row in rows.items():
        assert row[S.RANK] == pytest.approx(pr[page], abs=1e-9)
        assert row[S.TRUST_RANK] == pytest.approx(trust[page], abs=1e-9)
        assert row[S.SPAM_MASS] == pytest.approx((pr[page] - trust[page]) / pr[page], abs=1e-9)
    suspects = {page for page, row in rows.items() if row[S.SPAM_SUSPECT]}
    assert suspects == {"target.biz/", *FARM}
    assert flags_report.spam_suspect == 7
    assert not any(rows[page][S.SPAM_SUSPECT] for page in CORE)


def test_domains_gain_the_summed_spam_mass(flagged):
    lake, _, _ = flagged
    domains = {r[S.DOMAIN]: r for r in lake.read(S.DOMAINS_TABLE).collect()}
    pr = exact(crawl(), {u: 1.0 for u in {x for e in crawl() for x in e}})
    trust = exact(crawl(), {"good.com/": 1.0, "good.com/a": 1.0})
    for name, host in (("com.good", "good.com"), ("org.news", "news.org"), ("net.spam", "spam.net"),
                       ("biz.target", "target.biz")):
        p = sum(v for u, v in pr.items() if u.startswith(host + "/"))
        t = sum(v for u, v in trust.items() if u.startswith(host + "/"))
        assert domains[name][S.RANK] == pytest.approx(p, abs=1e-9)
        assert domains[name][S.TRUST_RANK] == pytest.approx(t, abs=1e-9)
        assert domains[name][S.SPAM_MASS] == pytest.approx((p - t) / p, abs=1e-9)
    # domain sums (p, p'): news (0.153, 0.165), good (0.183, 0.804), target (0.312, 0.014), spam (0.352, 0.017);
    # median of p (2nd of 4) 0.183: spam and target have mass 0.95 above it
    assert {name for name, row in domains.items() if row[S.SPAM_SUSPECT]} == {"net.spam", "biz.target"}
    assert domains["com.good"]["pages"] == 3  # the analysis' columns and inputs stay
    assert lake.built_from(S.DOMAINS_TABLE) == "analysis inputs"


def test_spam_settings_are_validated_at_load():
    with pytest.raises(ConfigError, match=r"scores\.trusted_seeds\[1\]"):
        config_from_dict({"scores": {"trusted_seeds": ["http://good.com/", "not a url"]}})
    with pytest.raises(ConfigError, match=r"analysis\.spam_mass_threshold"):
        config_from_dict({"analysis": {"spam_mass_threshold": 1.5}})
    with pytest.raises(ConfigError, match=r"analysis\.good_fraction"):
        config_from_dict({"analysis": {"good_fraction": 0}})
