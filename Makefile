# Build what spark-submit and Databricks need.
#   make dist   -> dist/linkgraph-<version>-py3-none-any.whl   (pip install on nodes; Databricks wheel task)
#                  dist/linkgraph-<version>-py-files.zip        (spark-submit --py-files: the package alone)
# The .zip is the wheel under another name: a pure-Python wheel is a zip archive with the package
# at its root, which is what --py-files puts on the Python path (Spark only adds .zip/.egg/.jar).
PYTHON ?= python3
DIST ?= dist
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
WHEEL := $(DIST)/linkgraph-$(VERSION)-py3-none-any.whl
PY_FILES := $(DIST)/linkgraph-$(VERSION)-py-files.zip

.PHONY: dist clean-dist generated

dist:
	rm -f $(WHEEL) $(PY_FILES)
	$(PYTHON) -m pip wheel --quiet --no-deps --wheel-dir $(DIST) .
	cp $(WHEEL) $(PY_FILES)
	@echo "built $(WHEEL) and $(PY_FILES)"

clean-dist:
	rm -rf $(DIST) build

# Every file rendered from the declarations (steps, tables, config keys); tests/test_structure.py
# fails when a committed one differs.
LINKGRAPH ?= .venv/bin/linkgraph
generated:
	$(LINKGRAPH) pipeline --emit dag --output jobs/airflow/linkgraph_dag.py
	$(LINKGRAPH) pipeline --emit bundle --output databricks.yml
	$(LINKGRAPH) pipeline --emit tables-doc --output docs/tables.md
	$(LINKGRAPH) pipeline --emit local-conf --output conf/local.yaml
	$(LINKGRAPH) pipeline --emit config-doc --output docs/configuration.md
