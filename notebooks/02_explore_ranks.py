# Databricks notebook source
# MAGIC %md
# MAGIC # linkgraph: explore ranks
# MAGIC
# MAGIC The rank distribution (log-log), how the last rank run converged, the top pages and the top
# MAGIC domains by authority, read from the lake's `pagerank`, `rank_runs`, `domain_authority` and
# MAGIC `domains` tables (`linkgraph pagerank` and `linkgraph analyze` write them), and, once
# MAGIC `linkgraph centrality --level host` has run, PageRank against harmonic centrality and the
# MAGIC spam mass of the top hosts (`host_centrality`, `page_flags`), and once `linkgraph diff` has
# MAGIC compared two runs, what changed between them (`rank_changes`).
# MAGIC Elsewhere than Databricks: `python notebooks/02_explore_ranks.py --lake lake`.

# COMMAND ----------

try:
    dbutils  # noqa: F821 -- provided by Databricks
except NameError:
    from linkgraph.explore.widgets import local_dbutils
    from linkgraph.explore.widgets import local_display as display

    dbutils = local_dbutils()

# COMMAND ----------

dbutils.widgets.text("lake", "lake", "Lake (directory, dbfs:/ or s3a:// path)")
dbutils.widgets.text("conf", "", "Config YAML (empty: built-in defaults)")
dbutils.widgets.text("vector", "0", "Rank vector (vector_id)")
dbutils.widgets.text("top", "20", "How many top pages and domains")
dbutils.widgets.text("figures", "figures", "Directory for the PNG figures")

# COMMAND ----------

from linkgraph.explore import queries as explore
from linkgraph.explore import plots
from linkgraph.lake import schemas as S
from linkgraph.lake.config import load_config
from linkgraph.lake.delta import Lake
from linkgraph.explore.widgets import save_figure
from linkgraph.lake.session import get_spark

config = load_config(dbutils.widgets.get("conf") or None).with_lake_path(dbutils.widgets.get("lake"))
figures = dbutils.widgets.get("figures")
vector, top = int(dbutils.widgets.get("vector")), int(dbutils.widgets.get("top"))
spark = get_spark(config.spark)
lake = Lake(spark, config.lake)
pagerank = lake.read_or_empty(S.PAGERANK_TABLE, S.PAGERANK)

# COMMAND ----------

# MAGIC %md ## Rank distribution
# MAGIC Pages per logarithmic rank bin; on a web graph both curves are close to straight lines.

# COMMAND ----------

histogram = explore.rank_histogram(pagerank, bins_per_decade=10, vector_id=vector).toPandas()
fig = plots.rank_distribution_figure(histogram, f"PageRank distribution (vector {vector})")
print(save_figure(fig, figures, "rank_distribution"))
display(fig)

# COMMAND ----------

# MAGIC %md ## Convergence of the last run (L1 change per iteration, against the tolerance)

# COMMAND ----------

history = explore.convergence_history(lake.read_or_empty(S.RANK_RUNS_TABLE, S.RANK_RUNS)).toPandas()
display(history)
fig = plots.convergence_figure(history)
print(save_figure(fig, figures, "convergence"))
display(fig)

# COMMAND ----------

# MAGIC %md ## Top pages and top domains

# COMMAND ----------

pages = explore.top_pages(pagerank, n=top, vector_id=vector).toPandas()
display(pages)
fig = plots.top_bar_figure(pages, "url", "rank", f"Top {top} pages by PageRank (vector {vector})")
print(save_figure(fig, figures, "top_pages"))
display(fig)

# COMMAND ----------

domains = explore.top_domains(
    lake.read_or_empty(S.DOMAIN_AUTHORITY_TABLE, S.DOMAIN_AUTHORITY_SCHEMA),
    lake.read_or_empty(S.DOMAINS_TABLE, S.DOMAINS),
    n=top,
).toPandas()
display(domains)
fig = plots.top_bar_figure(domains, "domain", "authority_score", f"Top {top} domains by authority (0-10 score)",
                           xlabel="authority score")
print(save_figure(fig, figures, "top_domains"))
display(fig)

# COMMAND ----------

# MAGIC %md ## Top hosts: PageRank against harmonic centrality, and spam mass
# MAGIC Harmonic centrality (HyperBall) rewards hosts that many hosts reach in few steps; PageRank also
# MAGIC rewards link-farm structures.  Spam mass (with `scores.trusted_seeds`) is the share of a host's
# MAGIC PageRank that does not come from the trusted core.  The PNG is saved once the lake has
# MAGIC `host_centrality`.

# COMMAND ----------

host_centrality = lake.read_or_empty(S.HOST_CENTRALITY_TABLE, S.HOST_CENTRALITY)
page_flags = lake.read_or_empty(S.PAGE_FLAGS_TABLE, S.PAGE_FLAGS)
hosts = explore.top_hosts(host_centrality, page_flags, lake.read_or_empty(S.PAGES_TABLE, S.PAGES), n=top).toPandas()
display(hosts)
fig = plots.centrality_spam_figure(hosts)
if not hosts.empty:
    print(save_figure(fig, figures, "centrality_spam"))
display(fig)

# COMMAND ----------

# MAGIC %md ## What changed since the run before
# MAGIC Once `linkgraph diff` has compared two runs (`rank_changes`): the best-placed nodes' positions
# MAGIC in the earlier run against the later one (on the diagonal: unchanged), coloured by their kind of
# MAGIC change, and the nodes of each kind.  The PNG is saved once the lake has `rank_changes`.

# COMMAND ----------

rank_changes = lake.read_or_empty(S.RANK_CHANGES_TABLE, S.RANK_CHANGES)
changes_top = explore.rank_changes_top(rank_changes, n=10 * top).toPandas()
change_counts = explore.rank_change_counts(rank_changes).toPandas()
display(change_counts)
fig = plots.rank_changes_figure(changes_top, change_counts)
if not changes_top.empty:
    print(save_figure(fig, figures, "rank_changes"))
display(fig)

