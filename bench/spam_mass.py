"""Spam-mass distribution on a real graph: ingest, analyze, a uniform PageRank run with
a trust vector, then ``page_flags``/``domains`` spam mass.

    python bench/spam_mass.py [--data polblogs|hollins] [--trusted-top 10] [--workdir DIR]

The trusted core is, for want of an editorial list, the ``--trusted-top`` pages with the most
in-links (ties by URL), chosen before the run; they are printed.  Prints seconds per step, the
quantiles of ``spam_mass`` over pages (and over domains), how many are ``spam_suspect``, and the
top suspects by PageRank.  Ends with ``suspects=N`` and ``median_spam_mass=X``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from pyspark.sql import functions as F

from linkgraph.lake import schemas as S
from linkgraph.lake.config import config_from_dict
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake
from linkgraph.lake.session import get_spark
from linkgraph.steps import analyze, flags, ingest, pagerank

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SETS = {"polblogs": ("polblogs/polblogs.gml.gz", "gml"), "hollins": ("hollins-2004/hollins.dat", "dat")}
QUANTILES = [0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=sorted(SETS), default="polblogs")
    parser.add_argument("--trusted-top", type=int, default=10)
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args(argv)
    relative, fmt = SETS[args.data]
    work = Path(args.workdir or tempfile.mkdtemp(prefix="linkgraph-spam-"))
    lake_dir = str(work / "lake")
    spark = get_spark(config_from_dict({"spark": {"master": "local[2]", "driver_memory": "2g"}}).spark)
    base = config_from_dict({"lake": {"path": lake_dir}})
    t = time.time()
    ingest.run(StepContext.create(spark, base), ingest.Params(str(DATA / relative), fmt))
    analyze.run(StepContext.create(spark, base), analyze.Params())
    print(f"ingest+analyze: {time.time() - t:.1f}s")
    lake = Lake(spark, base.lake)
    in_links = lake.read(S.LINKS_TABLE).groupBy(F.col(S.DST_ID).alias(S.PAGE_ID)).count()
    top = (lake.read(S.PAGES_TABLE).join(in_links, on=S.PAGE_ID, how="inner")
           .orderBy(F.desc("count"), S.URL).limit(args.trusted_top).collect())
    trusted = [r[S.URL] for r in top]
    print("trusted seeds:", " ".join(trusted))
    config = config_from_dict({"lake": {"path": lake_dir}, "scores": {"trusted_seeds": trusted}})
    t = time.time()
    report = pagerank.run(StepContext.create(spark, config), pagerank.Params())
    print(f"pagerank (2 vectors): {time.time() - t:.1f}s, {report.iterations} iterations")
    t = time.time()
    flagged = flags.run(StepContext.create(spark, config), flags.Params())
    print(f"flags: {time.time() - t:.1f}s")
    pages = lake.read(S.PAGE_FLAGS_TABLE).where(F.col(S.RUN_ID) == flagged.rank_run)
    domains = lake.read(S.DOMAINS_TABLE)
    for name, df in (("pages", pages), ("domains", domains)):
        qs = df.approxQuantile(S.SPAM_MASS, QUANTILES, 0.0)
        n, suspects = df.agg(F.count("*"), F.count_if(S.SPAM_SUSPECT)).first()
        print(f"{name}: n={n} spam_suspect={suspects} spam_mass quantiles "
              + " ".join(f"q{q:g}={v:.3f}" for q, v in zip(QUANTILES, qs, strict=True)))
    print("top suspects by PageRank:")
    for r in pages.where(S.SPAM_SUSPECT).orderBy(F.desc(S.RANK)).limit(10).collect():
        print(f"  {r[S.URL]}  rank={r[S.RANK]:.5f} trust_rank={r[S.TRUST_RANK]:.6f} spam_mass={r[S.SPAM_MASS]:.3f}")
    median = pages.approxQuantile(S.SPAM_MASS, [0.5], 0.0)[0]
    print(f"suspects={flagged.spam_suspect}")
    print(f"median_spam_mass={median:.4f}")


if __name__ == "__main__":
    main()
