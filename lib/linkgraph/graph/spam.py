"""Spam mass from a trusted core (Gyöngyi, Garcia-Molina, Pedersen 2004; Gyöngyi et al. 2006).

A uniform rank run with ``scores.trusted_seeds`` computes, in the same engine pass, vector 0 = the
PageRank ``p`` (teleport 1/n on every page) and vector 1 = ``t``, the PageRank personalised on
the |T| trusted pages (teleport 1/|T| on each, nothing elsewhere; TrustRank).  Both sum to 1 (the
``pagerank`` table stores them as they are).  The core-based PageRank is ``p' = γ · t`` with γ =
``analysis.good_fraction``, the share of all good pages the core stands for (Gyöngyi et al. 2006,
§4.3, scale the core's random jump to γ; with γ = 1, the default, the core stands for the whole
good web).  Then, per page,

    trust_rank = p',   spam_mass = (p − p') / p   ∈ [−∞, 1]

1 means no rank at all comes from the trusted core; 0 means the core accounts for all of it;
negative values are pages the core favours more than the uniform walk does (the core itself and
its close neighbours).  ``spam_suspect``: ``spam_mass`` > ``analysis.spam_mass_threshold`` and
``p`` above the median of ``p`` (the paper's recipe: mass is only meaningful for pages with
non-trivial rank); the median is ``percentile_approx`` (a value of the data; "above" is strict).

Per domain: ``rank`` = Σ p and ``trust_rank`` = Σ p' over the domain's pages, ``spam_mass`` =
(Σ p − Σ p') / Σ p, and ``spam_suspect`` the same rule over domains (median of the domains' Σ p).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.lake import schemas as S

MEDIAN_ACCURACY = 100_000
_MEDIAN = "_median"


def relative_mass(rank: str, trust: str) -> F.Column:
    return (F.col(rank) - F.col(trust)) / F.col(rank)


def suspects(rows: DataFrame, key: str, threshold: float) -> DataFrame:
    """``rows`` (key, rank, trust_rank) with ``spam_mass`` and ``spam_suspect`` added."""
    median = rows.agg(F.percentile_approx(S.RANK, 0.5, MEDIAN_ACCURACY).alias(_MEDIAN))
    return (
        rows.crossJoin(F.broadcast(median))
        .withColumn(S.SPAM_MASS, relative_mass(S.RANK, S.TRUST_RANK))
        .select(
            key, S.RANK, S.TRUST_RANK, S.SPAM_MASS,
            F.coalesce((F.col(S.SPAM_MASS) > F.lit(threshold)) & (F.col(S.RANK) > F.col(_MEDIAN)),
                       F.lit(False)).alias(S.SPAM_SUSPECT),
        )
    )


def page_spam(ranks: DataFrame, trust: DataFrame, threshold: float, good_fraction: float = 1.0) -> DataFrame:
    """(page_id, rank, trust_rank, spam_mass, spam_suspect) from the run's vector 0 ``ranks`` and
    vector 1 ``trust`` (both page_id, rank); ``trust_rank`` = ``good_fraction`` · trust."""
    rows = ranks.select(S.PAGE_ID, S.RANK).join(
        trust.select(S.PAGE_ID, (F.col(S.RANK) * F.lit(good_fraction)).alias(S.TRUST_RANK)), on=S.PAGE_ID, how="left"
    ).fillna(0.0, subset=[S.TRUST_RANK])
    return suspects(rows, S.PAGE_ID, threshold)


def domain_spam(spam: DataFrame, domain_of: DataFrame, threshold: float) -> DataFrame:
    """``DOMAIN_SPAM`` rows: page ``spam`` (page_id, rank, trust_rank, ...) summed per domain
    (``domain_of``: page_id, domain)."""
    sums = (spam.join(domain_of.select(S.PAGE_ID, S.DOMAIN), on=S.PAGE_ID, how="inner")
            .groupBy(S.DOMAIN).agg(F.sum(S.RANK).alias(S.RANK), F.sum(S.TRUST_RANK).alias(S.TRUST_RANK)))
    return suspects(sums, S.DOMAIN, threshold).select(*[F.col(f.name).cast(f.dataType) for f in S.DOMAIN_SPAM.fields])


def with_page_spam(flags: DataFrame, spam: DataFrame | None) -> DataFrame:
    """``page_flags`` rows with the spam columns (null / false when the run has no trust vector)."""
    if spam is None:
        return flags.select(
            *flags.columns, F.lit(None).cast("double").alias(S.TRUST_RANK),
            F.lit(None).cast("double").alias(S.SPAM_MASS), F.lit(False).alias(S.SPAM_SUSPECT))
    joined = flags.join(spam.select(S.PAGE_ID, S.TRUST_RANK, S.SPAM_MASS, S.SPAM_SUSPECT), on=S.PAGE_ID, how="left")
    return joined.select(*[F.col(f.name).cast(f.dataType) if f.name != S.SPAM_SUSPECT
                           else F.coalesce(F.col(S.SPAM_SUSPECT), F.lit(False)).alias(S.SPAM_SUSPECT)
                           for f in S.PAGE_FLAGS.fields])


def with_domain_spam(domains: DataFrame, spam: DataFrame) -> DataFrame:
    """``domains`` with the ``DOMAIN_SPAM`` columns (replacing earlier ones)."""
    extra = [f.name for f in S.DOMAIN_SPAM.fields if f.name != S.DOMAIN]
    base = domains.drop(*extra)
    joined = base.join(spam, on=S.DOMAIN, how="left")
    return joined.select(*base.columns, *extra[:-1],
                         F.coalesce(F.col(S.SPAM_SUSPECT), F.lit(False)).alias(S.SPAM_SUSPECT))
