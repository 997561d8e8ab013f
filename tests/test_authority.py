"""``linkgraph import-authority`` on hostile files: values read with safe casts (a non-numeric value
is one reject, never an ANSI cast error), and a file whose rejected share passes
``authority.max_reject_share`` replaces nothing."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from linkgraph.cli import main
from linkgraph.errors import UsageError
from linkgraph.lake import schemas as S
from linkgraph.lake.config import ConfigError, config_from_dict
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake
from linkgraph.steps import authority


def _stored(lake: Lake, source: str) -> list[tuple[str, float]]:
    table = lake.read(S.EXTERNAL_AUTHORITY_TABLE).where(F.col(S.SOURCE) == source)
    return sorted((r[S.DOMAIN], round(r[S.AUTHORITY], 6)) for r in table.collect())


def _rejects(lake: Lake, path) -> list[tuple[str, str]]:
    """(reason, detail) of the rejects of one input file (its source is a path or a file: URI)."""
    rows = lake.read(S.REJECTS_TABLE).where(F.col(S.SOURCE).endswith(path.name)).collect()
    return sorted((r[S.REASON], r[S.DETAIL]) for r in rows)


def _import(spark, lake_path: str, path, fmt: str, **authority_keys):
    config = config_from_dict({"lake": {"path": lake_path}, "authority": authority_keys})
    report = authority.run(StepContext.create(spark, config), authority.Params(str(path), fmt))
    return report, config


def test_non_numeric_values_are_rejected_and_the_good_rows_imported(spark, tmp_path, capsys):
    lake = str(tmp_path / "lake")
    opr = tmp_path / "opr.csv"
    opr.write_text("domain,page_rank_decimal\n"
                   "alpha.com,5.5\nbeta.org,2\ngamma.net,7.25\ndelta.io,10\nepsilon.de,0\n"
                   "eta.com,1e1\ntheta.com,3.0\niota.com,4\nkappa.com,6\nlambda.com,8\n"
                   "bad1.com,abc\nbad2.com,NaN\nbad3.com,Infinity\nbad4.com,11\nbad5.com,\n"
                   ",5\nbad6.com," + "9" * 5000 + "\n")
    assert main(["import-authority", "--input", str(opr), "--format", "openpagerank", "--lake", lake]) == 0
    out = capsys.readouterr().out
    assert "openpagerank imported=10 rejected=7" in out and "not imported" not in out
    store = Lake(spark, config_from_dict({"lake": {"path": lake}}).lake)
    assert _stored(store, "openpagerank") == [
        ("com.alpha", 0.55), ("com.eta", 1.0), ("com.iota", 0.4), ("com.kappa", 0.6), ("com.lambda", 0.8),
        ("com.theta", 0.3), ("de.epsilon", 0.0), ("io.delta", 1.0), ("net.gamma", 0.725), ("org.beta", 0.2)]
    rejects = _rejects(store, opr)
    reasons = sorted(reason for reason, _ in rejects)
    assert reasons == ["INVALID_VALUE"] * 6 + ["NULL_FIELD"]
    details = [detail for _, detail in rejects]
    assert "page_rank_decimal 'abc' is not a number" in details
    assert "page_rank_decimal 'NaN' is not a number" in details
    assert "page_rank_decimal 'Infinity' is not a number" in details
    assert "page_rank_decimal '11' is outside 0-10" in details
    assert "page_rank_decimal '' is not a number" in details
    assert "page_rank_decimal '" + "9" * 100 + "' is not a number" in details   # past double's range; shown bounded


def test_a_mostly_bad_file_replaces_nothing_writes_its_rejects_and_exits_2(spark, tmp_path, capsys):
    lake = str(tmp_path / "lake")
    good = tmp_path / "good.csv"
    good.write_text("domain,page_rank_decimal\nalpha.com,5.5\nbeta.org,2.0\n")
    assert main(["import-authority", "--input", str(good), "--format", "openpagerank", "--lake", lake]) == 0
    capsys.readouterr()
    mostly_bad = tmp_path / "mostly-bad.csv"
    mostly_bad.write_text("domain,page_rank_decimal\nalpha.com,9.0\nbeta.org,n/a\ngamma.net,high\ndelta.io,-\n")
    code = main(["import-authority", "--input", str(mostly_bad), "--format", "openpagerank", "--lake", lake])
    assert code == UsageError.exit_code == 2
    out = capsys.readouterr().out
    assert ("openpagerank imported=0 rejected=3; not imported: 3 of 4 rows rejected (75%), more than "
            "authority.max_reject_share 0.5; the openpagerank rows of external_authority left as they were") in out
    store = Lake(spark, config_from_dict({"lake": {"path": lake}}).lake)
    assert _stored(store, "openpagerank") == [("com.alpha", 0.55), ("org.beta", 0.2)]
    assert [reason for reason, _ in _rejects(store, mostly_bad)] == ["INVALID_VALUE"] * 3


def test_the_share_is_configurable_and_checked(spark, tmp_path):
    lake = str(tmp_path / "lake")
    mixed = tmp_path / "mixed.csv"
    mixed.write_text("domain,page_rank_decimal\nalpha.com,4\nbeta.org,x\ngamma.net,y\ndelta.io,z\n")
    report, config = _import(spark, lake, mixed, "openpagerank", max_reject_share=0.8)
    assert (report.imported, report.rejected, report.refused, report.exit_code(config)) == (1, 3, None, 0)
    report, config = _import(spark, lake, mixed, "openpagerank", max_reject_share=0.0)
    assert (report.imported, report.rejected, report.exit_code(config)) == (0, 3, 2)
    assert _stored(Lake(spark, config.lake), "openpagerank") == [("com.alpha", 0.4)]
    with pytest.raises(ConfigError, match=r"authority\.max_reject_share"):
        config_from_dict({"authority": {"max_reject_share": 1.5}})


def test_ccrank_positions_and_values_read_safely(spark, tmp_path):
    lake = str(tmp_path / "lake")
    ranks = tmp_path / "ranks.txt"
    header = "#harmonicc_pos\t#harmonicc_val\t#pr_pos\t#pr_val\t#host_rev\n"
    good = "".join(f"{i}\t{100.0 - i}\t{i}\t0.1\tcom.site{i}\n" for i in range(1, 9))
    bad = ("first\t1.0\t1\t0.1\tcom.bad1\n0\t1.0\t1\t0.1\tcom.bad2\n1.5\t1.0\t1\t0.1\tcom.bad3\n"
           "Infinity\t1.0\t1\t0.1\tcom.bad4\n9\tzz\t1\t0.1\tcom.bad5\n9\t1.0\t1\t0.1\t\n")
    ranks.write_text(header + good + bad)
    report, config = _import(spark, lake, ranks, "ccrank")
    assert (report.imported, report.rejected, report.refused) == (8, 6, None)
    store = Lake(spark, config.lake)
    stored = dict(_stored(store, "ccrank"))
    assert (stored["com.site1"], stored["com.site8"], len(stored)) == (1.0, 0.0, 8)
    details = sorted(detail for _, detail in _rejects(store, ranks))
    assert details == ["#harmonicc_pos '0' is not a whole number from 1",
                       "#harmonicc_pos '1.5' is not a whole number from 1",
                       "#harmonicc_pos 'Infinity' is not a whole number from 1",
                       "#harmonicc_pos 'first' is not a whole number from 1",
                       "#harmonicc_val 'zz' is not a number", "empty name"]
