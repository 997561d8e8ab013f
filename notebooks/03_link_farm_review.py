# Databricks notebook source
# MAGIC %md
# MAGIC # linkgraph: link farms and syndication networks
# MAGIC
# MAGIC What `linkgraph analyze` flagged: domains sending almost all their outgoing links to one other
# MAGIC domain (`link_farms`), and groups of domains linking heavily to each other
# MAGIC (`syndication_networks`), drawn as a domain subgraph with the links among them.
# MAGIC Elsewhere than Databricks: `python notebooks/03_link_farm_review.py --lake lake`.

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
dbutils.widgets.text("max_domains", "40", "At most this many domains in the drawing")
dbutils.widgets.text("figures", "figures", "Directory for the PNG figures")

# COMMAND ----------

from pyspark.sql import functions as F

from linkgraph.explore import queries as explore
from linkgraph.explore import plots
from linkgraph.lake import schemas as S
from linkgraph.lake.config import load_config
from linkgraph.lake.delta import Lake
from linkgraph.explore.widgets import save_figure
from linkgraph.lake.session import get_spark

config = load_config(dbutils.widgets.get("conf") or None).with_lake_path(dbutils.widgets.get("lake"))
figures = dbutils.widgets.get("figures")
max_domains = int(dbutils.widgets.get("max_domains"))
spark = get_spark(config.spark)
lake = Lake(spark, config.lake)
link_farms = lake.read_or_empty(S.LINK_FARMS_TABLE, S.LINK_FARMS)
networks = lake.read_or_empty(S.SYNDICATION_NETWORKS_TABLE, S.SYNDICATION_NETWORKS)
domain_links = lake.read_or_empty(S.DOMAIN_LINKS_TABLE, S.DOMAIN_LINKS)

# COMMAND ----------

# MAGIC %md ## Link farms (share of external links going to one target) and syndication networks

# COMMAND ----------

display(link_farms.orderBy(F.col("links_to_target").desc()).limit(100))
display(networks.orderBy(S.NETWORK_ID, S.DOMAIN).limit(100))

# COMMAND ----------

# MAGIC %md ## The flagged domains and the links among them

# COMMAND ----------

flagged = explore.flagged_domains(link_farms, networks, max_domains=max_domains).toPandas()
edges = explore.domain_subgraph(domain_links, spark.createDataFrame(flagged[["domain"]].astype(str), "domain string"))
edges = edges.toPandas()
display(flagged)
fig = plots.domain_subgraph_figure(
    flagged, edges, f"Link farms and syndication networks ({len(flagged)} domains, {len(edges)} domain links)"
)
print(save_figure(fig, figures, "domain_subgraph"))
display(fig)
