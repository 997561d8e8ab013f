"""Compressed link storage: codes, the Boldi-Vigna codec, ConnectivityIndex, BVGraph files and
``linkgraph compress``."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import shared_file
from linkgraph.compress import BVParams, CompressedIndexError, ConnectivityIndex
from linkgraph.compress import bits as B
from linkgraph.compress.bv import decode_block, decode_one, encode_block
from linkgraph.compress.webgraph import read_bvgraph, read_offsets, read_properties

MAX_ID = (1 << 62) - 1


def bit_string(words: np.ndarray, n_bits: int) -> str:
    return "".join(format(byte, "08b") for byte in B.words_to_bytes(words, n_bits))[:n_bits]


def write_all(values, code: int, k: int):
    words = B.new_words(sum(B.code_len(v, code, k) for v in values))
    pos = 0
    for v in values:
        pos = B.write_code(words, pos, v, code, k)
    return words, pos


def read_all(words, count: int, code: int, k: int) -> list[int]:
    out, pos = [], 0
    for _ in range(count):
        value, pos = B.read_code(words, pos, code, k)
        out.append(int(value))
    return out


# --- codes ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "code, k, value, bits",
    [
        (B.GAMMA, 1, 0, "1"),
        (B.GAMMA, 1, 1, "010"),
        (B.GAMMA, 1, 4, "00101"),          # 5 = 101
        (B.DELTA, 1, 4, "011" + "01"),     # 5: msb 2 -> gamma(2) = 011, then low bits 01
        (B.ZETA, 3, 0, "100"),             # h=0: interval [1, 8), 1 is one of the short codes
        (B.ZETA, 3, 2, "1011"),            # 3 written in 3 bits
        (B.ZETA, 3, 7, "01" + "00000"),    # 8: h=1, interval [8, 64): 8 - 8 = 0 < 8 -> 5 bits
        (B.ZETA, 2, 5, "01" + "010"),      # 6: h=1, interval [4, 16): 6 - 4 = 2 < 4 -> 3 bits
    ],
)
def test_codes_match_hand_worked_bits(code, k, value, bits):
    words, n_bits = write_all([value], code, k)
    assert bit_string(words, n_bits) == bits
    assert read_all(words, 1, code, k) == [value]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, MAX_ID - 1) | st.integers(0, 300), max_size=40),
       st.sampled_from([(B.GAMMA, 1), (B.DELTA, 1), (B.ZETA, 1), (B.ZETA, 3), (B.ZETA, 7)]))
def test_codes_round_trip_up_to_2_62(values, code_k):
    code, k = code_k
    words, n_bits = write_all(values, code, k)
    assert n_bits == sum(B.code_len(v, code, k) for v in values)
    assert read_all(words, len(values), code, k) == values


@settings(max_examples=60, deadline=None)
@given(st.integers(0, MAX_ID - 1), st.lists(st.tuples(st.integers(1, 1 << 40) | st.just(1), st.integers(0, MAX_ID - 1)),
                                            max_size=30))
def test_order_pairs_round_trip_up_to_2_62(first_key, steps):
    """links_compressed_order chunks: strictly increasing keys from first_key, any values in [0, 2^62)."""
    keys = np.cumsum([first_key] + [step for step, _ in steps[1:]]).astype(np.int64)[: len(steps)]
    keys = keys[keys < MAX_ID]
    values = np.array([value for _, value in steps[: len(keys)]], dtype=np.int64)
    words, n_bits = B.gamma_encode_pairs(keys, values, first_key)
    got_keys, got_values = B.gamma_decode_pairs(B.bytes_to_words(B.words_to_bytes(words, n_bits)), len(keys), first_key)
    assert got_keys.tolist() == keys.tolist() and got_values.tolist() == values.tolist()


def test_unary_reads_across_zero_words():
    words = B.new_words(300)
    pos = B.write_unary(words, 5, 200)
    assert B.read_unary(words, 5) == (200, pos)


# --- the list codec --------------------------------------------------------------------------------

def csr(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=indptr[1:])
    return indptr, np.array([x for r in rows for x in sorted(r)], dtype=np.int64)


def test_list_encoding_matches_hand_worked_bits():
    # node 0 -> 1 4 8: outdegree gamma(3) = 00100, reference unary(0) = 1, no interval gamma(0) = 1,
    # residuals zeta3 of int2nat(1 - 0) = 2 -> 1011, 4 - 1 - 1 = 2 -> 1011, 8 - 4 - 1 = 3 -> 1100
    block = encode_block(*csr([[1, 4, 8]]), first_id=0)
    assert bit_string(block.words, block.bit_length) == "00100" + "1" + "1" + "1011" + "1011" + "1100"
    # node 1 -> 1 4 8 9: outdegree gamma(4) = 00101, refers to node 0 (unary(1) = 01), block count
    # gamma(0) = 1 (no blocks: an even count copies the rest, all of node 0), no interval (1), one
    # residual 9: zeta3(int2nat(9 - 1) = 16): h=1 (01), 17 - 8 = 9 >= 8 so 17 in 6 bits (010001)
    block = encode_block(*csr([[1, 4, 8], [1, 4, 8, 9]]), first_id=0)
    second = bit_string(block.words, block.bit_length)[block.offsets[1]:]
    assert second == "00101" + "01" + "1" + "1" + "01" + "010001"
    assert list(block.references) == [0, 1]


def chain_depths(references: np.ndarray) -> np.ndarray:
    depth = np.zeros(len(references), dtype=np.int64)
    for x, r in enumerate(references):
        depth[x] = 0 if r == 0 else depth[x - r] + 1
    return depth


@pytest.mark.parametrize("max_ref", [1, 3, 1000])
def test_reference_chains_are_bounded_and_decode(max_ref):
    rows = [list(range(1000, 1050)) + [5000 + x] for x in range(300)]   # near-identical rows
    indptr, succ = csr(rows)
    params = BVParams(max_ref_count=max_ref)
    block = encode_block(indptr, succ, 0, params)
    depths = chain_depths(block.references)
    assert depths.max() == min(max_ref, 299)
    got_indptr, got = decode_block(block.words, 0, len(rows), len(succ), params)
    assert np.array_equal(got_indptr, indptr) and np.array_equal(got, succ)
    code, k = params.code
    for x in (0, 1, 150, 299):
        assert np.array_equal(decode_one(block.words, block.offsets, 0, 0, x, 7, 4, code, k), succ[indptr[x]:indptr[x + 1]])


def arcs_of(sources, targets) -> np.ndarray:
    arcs = np.column_stack([np.asarray(sources, dtype=np.int64), np.asarray(targets, dtype=np.int64)])
    return np.unique(arcs, axis=0) if len(arcs) else arcs.reshape(0, 2)


def lists_of(arcs: np.ndarray, node: int) -> np.ndarray:
    """Successors of ``node`` in arcs sorted by (node, successor)."""
    lo, hi = np.searchsorted(arcs[:, 0], [node, node + 1])
    return arcs[lo:hi, 1]


def assert_index_holds(index: ConnectivityIndex, arcs: np.ndarray, probes: int = 50) -> None:
    assert np.array_equal(index.forward.arcs_array(), arcs)
    transposed = arcs[np.lexsort((arcs[:, 0], arcs[:, 1]))][:, ::-1]
    assert np.array_equal(index.reverse.arcs_array(), transposed)
    rng = np.random.default_rng(0)
    for src, dst in arcs[rng.integers(0, len(arcs), probes)] if len(arcs) else []:
        assert np.array_equal(index.out_links(int(src)), lists_of(arcs, src))
        assert np.array_equal(index.in_links(int(dst)), lists_of(transposed, dst))
        assert index.has_link(int(src), int(dst))
        assert index.has_link(int(dst), int(src)) == (int(src) in lists_of(arcs, dst))


ID_BASES = [0, 2**31 - 40, 2**32 - 7, MAX_ID - 5000]


@st.composite
def graphs(draw):
    """Arc lists around a base id (near 0, 2^31, 2^32 or 2^62) with local and far successors,
    repeated rows (reference chains), runs of consecutive ids (intervals) and empty rows."""
    base = draw(st.sampled_from(ID_BASES))
    n = draw(st.integers(1, 120))
    rows = []
    for _ in range(n):
        kind = draw(st.sampled_from(["empty", "local", "far", "copy", "run"]))
        if kind == "local":
            rows.append(draw(st.sets(st.integers(base, base + 3 * n), max_size=20)))
        elif kind == "far":
            rows.append(draw(st.sets(st.integers(0, MAX_ID), max_size=6)))
        elif kind == "copy" and rows:
            kept = {x for x in rows[-1] if draw(st.booleans())}
            rows.append(kept | draw(st.sets(st.integers(base, base + 3 * n), max_size=3)))
        elif kind == "run":
            start = draw(st.integers(base, base + 3 * n))
            rows.append(set(range(start, start + draw(st.integers(1, 12)))))
        else:
            rows.append(set())
    sources = [base + i for i, row in enumerate(rows) for _ in row]
    targets = [t for row in rows for t in row]
    return arcs_of(sources, targets)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(graphs(), st.sampled_from([BVParams(), BVParams(0, 1, 0, "gamma"), BVParams(3, 1, 2, "delta"),
                                  BVParams(7, 3, 4, "zeta2"), BVParams(12, 8, 0, "zeta5")]),
       st.sampled_from([4, 64, 1 << 16]))
def test_random_and_adversarial_graphs_round_trip(arcs, params, block_size):
    index = ConnectivityIndex.from_arcs(arcs[:, 0], arcs[:, 1], params, block_size=block_size)
    assert index.forward.arcs == index.reverse.arcs == len(arcs)
    assert_index_holds(index, arcs)


def test_huge_rows_and_empty_graph():
    rng = np.random.default_rng(3)
    hub = np.unique(np.concatenate([np.arange(10, 40_000), rng.integers(0, 2**33, 3_000)]))
    sources = np.concatenate([np.full(len(hub), 7), hub[:500]])
    targets = np.concatenate([hub, np.full(500, 7)])
    arcs = arcs_of(sources, targets)
    index = ConnectivityIndex.from_arcs(arcs[:, 0], arcs[:, 1], block_size=1 << 12)
    assert index.out_degree(7) == len(hub) and index.in_degree(7) == 500
    assert_index_holds(index, arcs, probes=20)

    empty = ConnectivityIndex.from_arcs(np.empty(0, np.int64), np.empty(0, np.int64))
    assert len(empty.out_links(0)) == 0 and not empty.has_link(0, 1) and empty.forward.arcs == 0


# --- cnr-2000: WebGraph's own files -----------------------------------------------------------------

@pytest.fixture(scope="module")
def cnr_arcs() -> np.ndarray:
    import pandas as pd

    path = shared_file("cnr-2000/cnr-2000.arcs.tsv.gz")
    with gzip.open(path, "rb") as handle:
        return pd.read_csv(handle, sep="\t", header=None, dtype=np.int64, engine="c").to_numpy()


def test_cnr_2000_single_stream_is_webgraphs_file_bit_for_bit(cnr_arcs, tmp_path):
    """Encoded as one block with WebGraph's defaults, both cnr-2000 and its transpose are the
    LAW .graph and .offsets files (up to the zero bytes those files are padded with)."""
    for name, (nodes, succ) in {"cnr-2000": (cnr_arcs[:, 0], cnr_arcs[:, 1]),
                                "cnr-2000-t": (cnr_arcs[:, 1], cnr_arcs[:, 0])}.items():
        index = ConnectivityIndex.from_arcs(nodes, succ, block_size=1 << 20)
        index.write_bvgraph(tmp_path / name)
        for ext in (".graph", ".offsets"):
            law = shared_file(f"cnr-2000/{name}{ext}").read_bytes()
            ours = (tmp_path / f"{name}{ext}").read_bytes()
            assert law[: len(ours)] == ours and not law[len(ours):].strip(b"\0")
        law_bits_per_link = float(read_properties(shared_file(f"cnr-2000/{name}.graph").with_suffix(""))["bitsperlink"])
        assert round(index.forward.bits_per_link, 3) == law_bits_per_link


def test_cnr_2000_round_trips_in_blocks_within_the_bit_budget(cnr_arcs, tmp_path):
    index = ConnectivityIndex.from_arcs(cnr_arcs[:, 0], cnr_arcs[:, 1])
    assert index.forward.bits_per_link <= 3.2 and index.reverse.bits_per_link <= 2.6
    assert_index_holds(index, cnr_arcs, probes=200)
    # LAW's file decodes to the same arcs, and our block-wise export reads back identically
    law_indptr, law_succ = read_bvgraph(shared_file("cnr-2000/cnr-2000.graph").with_suffix(""))
    assert np.array_equal(law_succ, cnr_arcs[:, 1]) and law_indptr[-1] == len(cnr_arcs)
    index.write_bvgraph(tmp_path / "blocks")
    indptr, succ = read_bvgraph(tmp_path / "blocks")
    assert np.array_equal(indptr, law_indptr) and np.array_equal(succ, law_succ)
    lists_outside_blocks = 325_557 - int(index.forward.block_nodes.sum())    # one bit each: outdegree 0
    assert read_offsets(tmp_path / "blocks", 325_557)[-1] == index.forward.bits + lists_outside_blocks


# --- linkgraph compress on Spark --------------------------------------------------------------------

ARCS = {0: [1, 2, 3], 1: [2, 3], 2: [0], 4: [0, 3, 5], 5: [1]}
OUT = {0: [1, 2, 3], 1: [2, 3], 2: [0], 3: [], 4: [0, 3, 5], 5: [1], 6: []}
IN = {0: [2, 4], 1: [0, 5], 2: [0, 1], 3: [0, 1, 4], 4: [], 5: [4], 6: []}


def test_missing_tables_are_a_clear_error(tmp_path):
    with pytest.raises(CompressedIndexError, match="run linkgraph compress"):
        ConnectivityIndex.load(tmp_path)


@pytest.mark.slow
def test_compress_cli_builds_idempotent_tables_and_rejects_unencodable_ids(spark, tmp_path, capsys):
    from linkgraph.cli import main
    from linkgraph.lake import schemas as S
    from linkgraph.lake.config import config_from_dict
    from linkgraph.lake.context import StepContext
    from linkgraph.lake.delta import Lake
    from linkgraph.steps import compress

    lake_dir = tmp_path / "lake"
    assert main(["compress", "--lake", str(lake_dir)]) == 2
    assert "run ingest first" in capsys.readouterr().err

    conf = tmp_path / "conf.yaml"
    conf.write_text("compress:\n  block_size: 2\n")      # blocks {0,1} {2,3} {4,5}
    config = config_from_dict({"lake": {"path": str(lake_dir)}, "compress": {"block_size": 2}})
    lake = Lake(spark, config.lake)
    # compress reads only (src_id, dst_id) of links; (-1, 2) is a link whose id the codec cannot
    # hold: rejected with a reason while the rest is encoded
    rows = [(s, d) for s, ds in ARCS.items() for d in ds] + [(-1, 2)]
    lake.append(S.LINKS_TABLE, spark.createDataFrame([(s, d, None, None, None, None, None, None) for s, d in rows], S.LINKS))

    assert main(["compress", "--lake", str(lake_dir), "--conf", str(conf)]) == 0
    out = capsys.readouterr().out
    assert "arcs=10 " in out and "blocks=3+3" in out and "rejected=1" in out
    rejects = lake.read(S.REJECTS_TABLE).where(f"{S.REASON} = 'INVALID_VALUE'").select(S.FROM_URL, S.TO_URL).collect()
    assert [tuple(r) for r in rejects] == [("-1", "2")]

    for source in (lake_dir, lake):
        index = ConnectivityIndex.load(source)
        assert index.links_version == lake.version(S.LINKS_TABLE)
        assert {p: index.out_links(p).tolist() for p in OUT} == OUT
        assert {p: index.in_links(p).tolist() for p in IN} == IN
        assert index.has_link(4, 5) and not index.has_link(5, 4) and not index.has_link(3, 0)
        assert index.out_links(0).dtype == np.int64

    tables = (S.LINKS_COMPRESSED_FORWARD_TABLE, S.LINKS_COMPRESSED_REVERSE_TABLE, S.LINKS_COMPRESSED_OFFSETS_TABLE,
              S.LINKS_COMPRESSED_ORDER_TABLE)
    versions = {t: lake.version(t) for t in tables}
    again = compress.run(StepContext.create(spark, config), compress.Params())
    assert again.tables_written == [] and {t: lake.version(t) for t in tables} == versions
    assert (again.arcs, again.forward_blocks, again.reverse_blocks) == (10, 3, 3)


def test_compress_config_rejects_bad_values():
    from linkgraph.lake.config import ConfigError, config_from_dict

    assert config_from_dict({"compress": {"residual_code": "zeta2", "window_size": 0}}).compress.window_size == 0
    for bad, message in (({"residual_code": "zeta9"}, "residual_code"), ({"block_size": 0}, "block_size"),
                         ({"min_interval_length": 1}, "min_interval_length"), ({"windows": 7}, "compress.windows")):
        with pytest.raises(ConfigError, match=message):
            config_from_dict({"compress": bad})


def test_blocks_cut_by_arcs_and_a_lookup_reads_one_block(spark, tmp_path):
    """block_size 8, block_max_arcs 3: nodes 0..5 with 1, 1, 5, 1, 2, 1 out-links make the blocks
    {0, 1}, {2} (a list of 3+ arcs alone), {3, 4}, {5}: arcs of smaller ids before each node 0, 1,
    2, 7, 8, 10 -> keys 0, 0, 1, 4, 4, 6.  (Without a pages table the vertex order is the page id
    order of the linked pages: pages 0..5 and 9..14 are vertices 0..11.)  One lookup then reads the
    order chunk of the page, one block file, one offsets file and the order chunks of the answer
    (chunks of 8 vertices: two for page 2's out-links, pages 10..14 = vertices 7..11)."""
    from linkgraph.compress.build import arcs_by_block
    from linkgraph.lake import schemas as S
    from linkgraph.lake.config import config_from_dict
    from linkgraph.lake.context import StepContext
    from linkgraph.lake.delta import Lake
    from linkgraph.steps import compress

    arcs = {0: [9], 1: [9], 2: [10, 11, 12, 13, 14], 3: [9], 4: [9, 10], 5: [2]}
    rows = [(s, d) for s, ds in arcs.items() for d in ds]
    links = spark.createDataFrame(rows, f"{S.SRC_ID} long, {S.DST_ID} long")
    blocks = {(r["node"], r[S.BLOCK_ID]) for r in arcs_by_block(links, S.FORWARD, 8, 3).collect()}
    assert blocks == {(0, 0), (1, 0), (2, 2), (3, 3), (4, 3), (5, 5)}

    lake_dir = tmp_path / "lake"
    config = config_from_dict({"lake": {"path": str(lake_dir)}, "compress": {"block_size": 8, "block_max_arcs": 3}})
    lake = Lake(spark, config.lake)
    lake.append(S.LINKS_TABLE, spark.createDataFrame([(s, d, None, None, None, None, None, None) for s, d in rows],
                                                     S.LINKS))
    report = compress.run(StepContext.create(spark, config), compress.Params())
    assert (report.arcs, report.forward_blocks) == (11, 4)
    full = ConnectivityIndex.load(lake_dir)
    for page in range(16):
        lazy = ConnectivityIndex.open(lake_dir)
        assert lazy.out_links(page).tolist() == full.out_links(page).tolist() == arcs.get(page, [])
        if page in arcs:   # the page's block and its offsets: one file each, of 4 + 8 files
            answer_chunks = {(d if d < 6 else d - 3) // 8 for d in arcs[page]}
            assert [Path(f).parent.name for f in lazy.files_read] == [
                S.LINKS_COMPRESSED_ORDER_TABLE, S.LINKS_COMPRESSED_FORWARD_TABLE, S.LINKS_COMPRESSED_OFFSETS_TABLE,
                *[S.LINKS_COMPRESSED_ORDER_TABLE] * len(answer_chunks)]
    # with a limit only the order chunks of the first `limit` successors (vertex order) are read:
    # page 2's first out-link is page 10, vertex 7, in the first chunk
    lazy = ConnectivityIndex.open(lake_dir)
    assert lazy.out_links(2, limit=1).tolist() == full.out_links(2, limit=1).tolist() == [10]
    assert [Path(f).parent.name for f in lazy.files_read] == [
        S.LINKS_COMPRESSED_ORDER_TABLE, S.LINKS_COMPRESSED_FORWARD_TABLE, S.LINKS_COMPRESSED_OFFSETS_TABLE,
        S.LINKS_COMPRESSED_ORDER_TABLE]
    lazy = ConnectivityIndex.open(lake)
    assert lazy.in_links(9).tolist() == [0, 1, 3, 4] and lazy.in_links(2).tolist() == [5]
    assert lazy.in_links(15).tolist() == [] and lazy.out_degree(2) == 5


LOOKUP_IN_A_FRESH_PROCESS = r"""
import contextlib, io, json, sys
import pyarrow.parquet as pq

read = []

class RecordingParquetFile(pq.ParquetFile):
    def __init__(self, source, *args, **kwargs):
        read.append(str(source))
        super().__init__(source, *args, **kwargs)

pq.ParquetFile = RecordingParquetFile
from linkgraph.cli import main

out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["links", *sys.argv[1:]])
print(json.dumps({"code": code, "out": out.getvalue().split(), "files": read,
                  "pyspark": sorted(m for m in sys.modules if m.split(".")[0] in ("pyspark", "py4j", "pandas"))}))
"""


def test_auto_compaction_on_leaves_one_block_per_file_and_a_lookup_reads_one_block(spark, tmp_path):
    """Delta's auto compaction on in the session, triggered from two small files on: compress
    still leaves one block per data file (its writes turn compaction off, its tables carry the
    layout properties), and a lookup reads the page's one block file.  A plain Delta table written
    in the same session is compacted, so the setting does act."""
    from linkgraph.compress.build import LAYOUT_PROPERTIES
    from linkgraph.lake import schemas as S
    from linkgraph.lake.config import config_from_dict
    from linkgraph.lake.context import StepContext
    from linkgraph.lake.delta import Lake
    from linkgraph.steps import compress

    arcs = {0: [9], 1: [9], 2: [10, 11, 12, 13, 14], 3: [9], 4: [9, 10], 5: [2]}
    rows = [(s, d) for s, ds in arcs.items() for d in ds]
    lake_dir = tmp_path / "lake"
    config = config_from_dict({"lake": {"path": str(lake_dir)}, "compress": {"block_size": 8, "block_max_arcs": 3}})
    lake = Lake(spark, config.lake)
    lake.append(S.LINKS_TABLE, spark.createDataFrame([(s, d, None, None, None, None, None, None) for s, d in rows],
                                                     S.LINKS))
    on = {"spark.databricks.delta.autoCompact.enabled": "true", "spark.databricks.delta.autoCompact.minNumFiles": "2"}
    previous = {key: spark.conf.get(key, None) for key in on}
    try:
        for key, value in on.items():
            spark.conf.set(key, value)
        report = compress.run(StepContext.create(spark, config), compress.Params())
        plain = str(tmp_path / "plain")
        spark.range(8).repartition(4).write.format("delta").save(plain)
        plain_files = len(spark.read.format("delta").load(plain).inputFiles())
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
    assert plain_files == 1   # auto compaction merged the plain table's four files
    forward = lake.read(S.LINKS_COMPRESSED_FORWARD_TABLE)
    assert report.forward_blocks == 4 and len(forward.inputFiles()) == 4
    properties = lake.delta_table(S.LINKS_COMPRESSED_FORWARD_TABLE).detail().first()["properties"]
    assert {k: properties.get(k) for k in LAYOUT_PROPERTIES} == LAYOUT_PROPERTIES
    lazy = ConnectivityIndex.open(lake_dir)
    assert lazy.out_links(2).tolist() == arcs[2]
    assert [Path(f).parent.name for f in lazy.files_read][:3] == [
        S.LINKS_COMPRESSED_ORDER_TABLE, S.LINKS_COMPRESSED_FORWARD_TABLE, S.LINKS_COMPRESSED_OFFSETS_TABLE]
    assert [Path(f).parent.name for f in lazy.files_read].count(S.LINKS_COMPRESSED_FORWARD_TABLE) == 1


def test_a_url_is_looked_up_in_the_pages_file_its_url_key_names(spark, tmp_path):
    """Pages numbered in url_key order (as ingest does), two files: each holds two hosts whose
    names, not reversed, lie far apart, so the URL statistics of both files admit any URL of the
    four hosts while the url_key statistics name one file.  A row whose stored url_key is not
    its URL's (hand-written data) is still found, in a second read."""
    from linkgraph.compress.pages import PageDirectory
    from linkgraph.lake import schemas as S
    from linkgraph.lake.config import config_from_dict
    from linkgraph.lake.delta import Lake
    from linkgraph.urls import url_key

    hosts = ["a.m.com", "z.m.com", "b.n.com", "y.n.com"]   # url_key order: com.m.a < com.m.z < com.n.b < com.n.y
    urls = [f"http://{host}/p{i}" for i, host in enumerate(hosts)]
    rows = [(i, u, hosts[i], hosts[i][2:], url_key(u), None, None) for i, u in enumerate(urls)]
    rows.append((4, "http://c.m.com/p4", "c.m.com", "m.com", "hand-written key", None, None))
    lake = Lake(spark, config_from_dict({"lake": {"path": str(tmp_path / "lake")}}).lake)
    lake.overwrite(S.PAGES_TABLE, spark.createDataFrame(rows[:2], S.PAGES).coalesce(1))
    lake.append(S.PAGES_TABLE, spark.createDataFrame(rows[2:], S.PAGES).coalesce(1))
    directory = PageDirectory(str(tmp_path / "lake"))
    assert len(directory._files.paths) == 2
    assert directory.page_id("http://b.n.com/p2") == 2 and len(directory.files_read) == 1
    assert directory.page_id("http://c.m.com/p4") == 4 and len(directory.files_read) == 3
    with pytest.raises(LookupError, match="no page"):
        directory.page_id("http://b.n.com/nothing")


@pytest.mark.slow
def test_links_compressed_reads_one_block_per_direction_without_pyspark(spark, tmp_path):
    """``linkgraph links --compressed`` in a fresh process: no pyspark, py4j or pandas module is imported;
    the Parquet files read are pages files, then the order chunk of the page, the one block file of
    the asked direction, the one offsets file of that block (of 3 blocks per direction, 6 offsets
    files) and the order chunks of the answer's positions.  With deletion vectors in ``pages`` (a
    deleted page's row still in its file) the answer is read without Spark too.

    The vertices are the 10 linked pages in url_key order: pages 0, 1, 2, 3 | 5, 6, 7, 10 | 11, 9
    (``p10`` < ``p11`` < ``p9``), in order chunks of 4 positions.  The in-links of page 5 (vertex
    4) are vertices 0, 1, 8, 9 (chunks 1 and 3), its out-links vertices 0, 7 (chunks 1 and 2)."""
    import json
    import subprocess
    import sys

    from linkgraph.cli import main
    from linkgraph.compress.pages import PageDirectory
    from linkgraph.lake import schemas as S
    from linkgraph.lake.config import config_from_dict
    from linkgraph.lake.context import StepContext
    from linkgraph.lake.delta import Lake
    from linkgraph.steps import compress

    lake_dir = tmp_path / "lake"
    config = config_from_dict({"lake": {"path": str(lake_dir)}, "compress": {"block_size": 4}})
    lake = Lake(spark, config.lake)

    def url(i: int) -> str:
        return f"http://h{i // 4}.example.com/p{i}"

    lake.overwrite(S.PAGES_TABLE, spark.createDataFrame(
        [(i, url(i), f"h{i // 4}.example.com", "example.com", url(i), None, None) for i in range(12)], S.PAGES))
    arcs = [(0, 5), (1, 5), (9, 5), (11, 5), (5, 0), (5, 10), (2, 3), (6, 7), (10, 11)]
    lake.append(S.LINKS_TABLE, spark.createDataFrame([(s, d, None, None, None, None, None, None) for s, d in arcs],
                                                     S.LINKS))
    compress.run(StepContext.create(spark, config), compress.Params())

    def lookup(*args: str) -> dict:
        done = subprocess.run([sys.executable, "-c", LOOKUP_IN_A_FRESH_PROCESS, *args, "--lake", str(lake_dir)],
                              capture_output=True, text=True, check=True)
        return json.loads(done.stdout.strip().splitlines()[-1])

    def tables(files: list[str]) -> list[str]:
        return [Path(f).parent.name for f in files if Path(f).parent.name != S.PAGES_TABLE]

    answer = lookup("in", url(5), "--compressed")
    assert (answer["code"], answer["out"], answer["pyspark"]) == (0, [url(0), url(1), url(9), url(11)], [])
    order = S.LINKS_COMPRESSED_ORDER_TABLE
    assert tables(answer["files"]) == [order, S.LINKS_COMPRESSED_REVERSE_TABLE, S.LINKS_COMPRESSED_OFFSETS_TABLE,
                                       order, order]
    answer = lookup("out", url(5), "--compressed")
    assert (answer["code"], answer["out"], answer["pyspark"]) == (0, [url(0), url(10)], [])
    assert tables(answer["files"]) == [order, S.LINKS_COMPRESSED_FORWARD_TABLE, S.LINKS_COMPRESSED_OFFSETS_TABLE,
                                       order, order]
    assert main(["links", "out", "http://nowhere.example.com/", "--compressed", "--lake", str(lake_dir)]) == 2

    pages = lake.location(S.PAGES_TABLE)
    spark.sql(f"ALTER TABLE delta.`{pages}` SET TBLPROPERTIES ('delta.enableDeletionVectors' = true)")
    spark.sql(f"DELETE FROM delta.`{pages}` WHERE {S.PAGE_ID} = 1")
    assert any('"deletionVector":{' in commit.read_text() for commit in (lake_dir / S.PAGES_TABLE / "_delta_log").glob("*.json"))
    directory = PageDirectory(str(lake_dir))
    with pytest.raises(LookupError, match="no page"):
        directory.page_id(url(1))
    assert directory.page_id(url(5)) == 5 and directory.urls([0, 1, 9]) == {0: url(0), 9: url(9)}
    answer = lookup("in", url(5), "--compressed")
    assert (answer["code"], answer["out"], answer["pyspark"]) == (0, [url(0), "None", url(9), url(11)], [])


def test_vertex_order_is_the_host_order_whatever_the_page_ids(spark):
    """The same 9 pages numbered in host order (one ingest) and as three ingests of random hosts
    would number them: both give the vertices in url_key order, so the encoded blocks are the same
    bytes.  Page 99 has no pages row (no key): after the others.  Page 8 has no link: no vertex."""
    from linkgraph.compress import build as CB
    from linkgraph.lake import schemas as S
    from linkgraph.lake.config import CompressConfig

    keys = ["com.a/1", "com.a/2", "com.a/3", "com.b/1", "com.b/2", "com.c/1", "com.c/2", "com.c/3", "com.d/1"]
    links_by_key = [(0, 1), (0, 2), (1, 2), (2, 0), (3, 4), (4, 3), (5, 6), (6, 7), (7, 5), (0, 3), (5, 0), (3, 9)]
    at_once = list(range(9))                 # page id of keys[i]
    batched = [6, 7, 8, 0, 1, 3, 4, 5, 2]      # hosts c (ids 3-5), b (0-1), a (6-8) in three batches, d last
    config = CompressConfig(block_size=4)
    vertex = {**{i: i for i in range(8)}, 9: 8}     # key index -> vertex: keys 0..7, then page 99
    encoded = {}
    for name, ids in (("at once", at_once), ("batched", batched)):
        pages = spark.createDataFrame([(ids[i], keys[i]) for i in range(9)], f"{S.PAGE_ID} long, {S.URL_KEY} string")
        page = {**dict(enumerate(ids)), 9: 99}
        links = spark.createDataFrame([(page[s], page[d]) for s, d in links_by_key], f"{S.SRC_ID} long, {S.DST_ID} long")
        order = CB.vertex_order(links, pages)
        assert sorted(tuple(r) for r in order.collect()) == sorted((page[i], v) for i, v in vertex.items())
        vertex_links = CB.in_vertex_order(links, order)
        assert sorted(tuple(r) for r in vertex_links.collect()) == sorted((vertex[s], vertex[d]) for s, d in links_by_key)
        blocks = CB.encode_blocks(CB.arcs_by_block(vertex_links, S.FORWARD, 4), config, 1)
        encoded[name] = sorted((r[S.FIRST_ID], r[S.NODE_COUNT], bytes(r[S.DATA])) for r in blocks.collect())
    assert encoded["at once"] == encoded["batched"] and len(encoded["at once"]) == 2   # vertices 0-3, 4-7


def test_arc_blocks_stay_bounded_around_adjacent_hubs(spark):
    """block_max_arcs 4: every list of 4+ arcs (hubs of 9, 7, 12 and 4 arcs, two pairs of them
    adjacent) is alone in its block, and every other block holds fewer than 2 × 4 arcs."""
    from collections import defaultdict

    from linkgraph.compress.build import arcs_by_block
    from linkgraph.lake import schemas as S

    degrees = [1, 9, 7, 1, 1, 1, 1, 3, 3, 3, 2, 0, 12, 1, 4, 3, 3, 1, 2]
    rows = [(s, 100 + k) for s, d in enumerate(degrees) for k in range(d)]
    links = spark.createDataFrame(rows, f"{S.SRC_ID} long, {S.DST_ID} long")
    blocks: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for r in arcs_by_block(links, S.FORWARD, 64, 4).collect():
        blocks[r[S.BLOCK_ID]][r["node"]] += 1
    hubs = {s for s, d in enumerate(degrees) if d >= 4}
    assert hubs == {1, 2, 12, 14}
    for nodes in blocks.values():
        assert len(nodes) == 1 or (sum(nodes.values()) < 8 and not hubs & set(nodes)), dict(nodes)
    assert sorted(n for nodes in blocks.values() for n in nodes) == [s for s, d in enumerate(degrees) if d]
    assert sum(len(nodes) == 1 and next(iter(nodes)) in hubs for nodes in blocks.values()) == 4
