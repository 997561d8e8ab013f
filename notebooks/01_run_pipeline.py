# Databricks notebook source
# MAGIC %md
# MAGIC # linkgraph: run the pipeline
# MAGIC
# MAGIC Runs the chosen `linkgraph` steps, in order, on one input (the built-in sample crawl when
# MAGIC `input` is empty) into the lake, exactly as the command line and the jobs do, then shows how
# MAGIC long each step took and what ingest rejected. The built-in sample is written to the user's
# MAGIC cache directory on the driver (`~/.cache/linkgraph/sample`), which suits a local or
# MAGIC single-node cluster; on a multi-node cluster give
# MAGIC `input` on storage every node reads (dbfs:/, s3a://, abfss://).
# MAGIC
# MAGIC On Databricks attach a cluster with the `linkgraph` wheel installed (the bundle's job cluster
# MAGIC has it). Elsewhere run the source itself: `python notebooks/01_run_pipeline.py --lake lake`
# MAGIC (widgets as `--name value`).

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
dbutils.widgets.text("input", "", "Edge records (empty: the built-in sample crawl)")
dbutils.widgets.text("format", "jsonl", "Input format")
dbutils.widgets.text("steps", "ingest,analyze,pagerank", "Steps (linkgraph commands; run in pipeline order)")
dbutils.widgets.text("figures", "figures", "Directory for the PNG figures")

# COMMAND ----------

import time

import pandas as pd

from linkgraph.explore import queries as explore
from linkgraph.explore import plots
from linkgraph.lake import schemas as S
from linkgraph.cli import main as linkgraph
from linkgraph.lake.config import load_config
from linkgraph.lake.delta import Lake
from linkgraph.explore.widgets import sample_input_dir, save_figure
from linkgraph.sample import write_sample_input
from linkgraph.lake.session import get_spark
from linkgraph.steps.registry import Registry, required_flags

lake_path = dbutils.widgets.get("lake")
conf_path = dbutils.widgets.get("conf")
figures = dbutils.widgets.get("figures")
# the steps of `linkgraph run`, in its order (from the step registry), that need no input but the edges
registry = Registry.default()
pipeline_steps = [name for name in registry.pipeline_order() if name == "ingest" or not required_flags(registry[name])]
chosen = {step.strip() for step in dbutils.widgets.get("steps").split(",") if step.strip()}
unknown = sorted(chosen - set(pipeline_steps))
if unknown:
    raise ValueError(f"unknown steps {unknown}; choose among {pipeline_steps}")
steps = [name for name in pipeline_steps if name in chosen]

input_path, input_format = dbutils.widgets.get("input"), dbutils.widgets.get("format")
if not input_path:
    # a fixed place, so that re-running the notebook ingests the same source (and changes nothing)
    input_path, input_format = str(write_sample_input(sample_input_dir())), "jsonl"

config = load_config(conf_path or None).with_lake_path(lake_path)
spark = get_spark(config.spark)
print(f"lake {lake_path}, steps {steps}, input {input_path} ({input_format})")

# COMMAND ----------

# MAGIC %md ## Run the steps

# COMMAND ----------

common = ["--lake", lake_path] + (["--conf", conf_path] if conf_path else [])
timings = []
for step in steps:
    arguments = [step, *common] + (["--input", input_path, "--format", input_format] if step == "ingest" else [])
    started = time.monotonic()
    code = linkgraph(arguments)
    timings.append({"step": step, "seconds": time.monotonic() - started, "exit_code": code})
    if code != 0:
        raise RuntimeError(f"linkgraph {' '.join(arguments)} exited with {code}")
timings = pd.DataFrame(timings)
display(timings)

# COMMAND ----------

fig = plots.top_bar_figure(timings, "step", "seconds", f"Pipeline steps ({timings['seconds'].sum():.0f} s in all)",
                           xlabel="seconds")
print(save_figure(fig, figures, "pipeline_steps"))
display(fig)

# COMMAND ----------

# MAGIC %md ## What ingest rejected (every stored reject, by reason)

# COMMAND ----------

lake = Lake(spark, config.lake)
rejects = explore.rejects_by_reason(lake.read_or_empty(S.REJECTS_TABLE, S.REJECTS)).toPandas()
display(rejects)
fig = plots.top_bar_figure(rejects, "reason", "records", f"Rejected records ({int(rejects['records'].sum())})",
                           xlabel="records")
print(save_figure(fig, figures, "rejects_by_reason"))
display(fig)
