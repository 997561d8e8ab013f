"""One error hierarchy (linkgraph.errors): what the CLI maps to exit 2, and the old import paths."""

from __future__ import annotations

import pytest

from linkgraph import errors
from linkgraph.cli import EXIT_USAGE, main


def test_usage_errors_derive_from_one_base_and_keep_their_old_homes():
    from linkgraph.compress import CompressedIndexError
    from linkgraph.config import ConfigError
    from linkgraph.paths import PathNotFound
    from linkgraph.pipeline import ScoresError
    from linkgraph.rank.gf import GraphFramesUnavailable
    from linkgraph.rank.teleport import EmptyTeleportError
    from linkgraph.readers import InputSchemaError
    from linkgraph.reliability import ConflictRetriesExhausted
    from linkgraph.reward_pipeline import PruneNotFound

    usage = (ConfigError, InputSchemaError, errors.MissingTableError, PathNotFound, ScoresError, EmptyTeleportError,
             GraphFramesUnavailable, PruneNotFound, errors.CompressedTableMissing)
    assert all(issubclass(cls, errors.UsageError) for cls in usage)
    assert issubclass(errors.MissingTableError, InputSchemaError)  # callers catching the old class still do
    assert issubclass(errors.CompressedTableMissing, CompressedIndexError)
    assert not issubclass(CompressedIndexError, errors.UsageError)  # a corrupt build is not the user's doing
    assert not issubclass(ConflictRetriesExhausted, errors.UsageError)


def test_cli_maps_a_usage_error_to_exit_2(tmp_path, capsys):
    conf = tmp_path / "bad.yaml"
    conf.write_text("rank:\n  dampng: 0.85\n")
    assert main(["compress", "--conf", str(conf), "--lake", str(tmp_path / "lake")]) == EXIT_USAGE
    assert "linkgraph compress: error:" in capsys.readouterr().err


def test_cli_maps_a_missing_input_to_exit_2(tmp_path, capsys):
    assert main(["ingest", "--input", str(tmp_path / "missing.jsonl"), "--lake", str(tmp_path / "lake")]) == EXIT_USAGE
    assert "not found" in capsys.readouterr().err


@pytest.mark.parametrize("cls", [errors.ScoresError, errors.PruneNotFound, errors.GraphFramesUnavailable])
def test_usage_errors_are_value_errors(cls):
    assert issubclass(cls, ValueError)
