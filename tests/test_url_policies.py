"""URL policies (the ``urls`` config section, ``linkgraph.urlpolicy``): each option on its own, the
per-URL and Arrow paths alike under every policy; the defaults leave today's URLs as they were;
the Public Suffix List's own test file; the policy a config builds and the table properties that
record it.  Spark tier: ``linkgraph ingest`` records the policy with ``pages`` and refuses a lake
written under another one (exit 2).

``tests/data/test_psl.txt`` is the Public Suffix List project's test file (``tests/test_psl.txt``
of github.com/publicsuffix/list, taken from the ``publicsuffixlist`` package on PyPI, version
1.1.2.20261023), its header (a CC0 public-domain dedication) intact.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
import re
from pathlib import Path

import idna
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import shared_file
from linkgraph import urls
from linkgraph.cli import main
from linkgraph.errors import ConfigError, PathNotFound
from linkgraph.lake import schemas as S
from linkgraph.lake.config import UrlsConfig, config_from_dict
from linkgraph.lake.delta import Lake
from linkgraph.lake.lakepolicy import (
    PSL_VERSION_PROPERTY,
    differing_keys,
    policy_properties,
    recorded_keys,
    url_policy,
)
from linkgraph.urlpolicy import DEFAULT_POLICY, UrlPolicy, suffix_list_from_text, suffix_list_version
from linkgraph.urls import canonicalize, canonicalize_arrow, registrable_domain
from test_urls import URL_DATA_FILES, equivalence_corpus, generated_urls

PSL_TESTS = Path(__file__).resolve().parent / "data" / "test_psl.txt"

COLLAPSE = UrlPolicy(collapse_slashes=True)
SORT = UrlPolicy(sort_query=True)
DROP = UrlPolicy(drop_empty_params=True)
FOLD = UrlPolicy(fold_www=True)
PUBLIC_ONLY = UrlPolicy(psl_private=False)
DEFAULT_RULE = UrlPolicy(unknown_tld="default_rule")
ALL_ON = UrlPolicy(collapse_slashes=True, sort_query=True, drop_empty_params=True, fold_www=True,
                   psl_private=False, unknown_tld="default_rule")

# a list of our own: `example` is a TLD, `pages.example` a private suffix, nothing else under `uk`
SMALL_LIST = """// VERSION: 2030-01-01_00-00-00_UTC
// ===BEGIN ICANN DOMAINS===
com
example
*.wild.example
!www.wild.example
// ===END ICANN DOMAINS===
// ===BEGIN PRIVATE DOMAINS===
pages.example
// ===END PRIVATE DOMAINS===
"""
SMALL = UrlPolicy(suffixes=suffix_list_from_text(SMALL_LIST, "small.dat"))


def both(values: list[str | None], policy: UrlPolicy) -> list[tuple]:
    """``canonicalize`` of each value under ``policy``, checked against ``canonicalize_arrow`` on the
    whole array and on one-value arrays."""
    scalar = [tuple(canonicalize(value, policy)) for value in values]
    arrow = [tuple(row.values()) for row in canonicalize_arrow(pa.array(values, pa.string()), policy).to_pylist()]
    assert arrow == scalar, policy
    one_by_one = [tuple(canonicalize_arrow(pa.array([value], pa.string()), policy).to_pylist()[0].values())
                  for value in values]
    assert one_by_one == scalar, policy
    return scalar


def url(value: str, policy: UrlPolicy) -> str | None:
    return both([value], policy)[0][0]


# --- the defaults: today's URLs unchanged -------------------------------------------------------

# What canonicalisation gave before policies existed (computed with that version), URL by URL.
BEFORE = [
    ("http://www.example.com//a//b/", ("http://www.example.com//a//b/", "www.example.com", "example.com", None, None)),
    ("https://example.com/a/b?b=2&a=1", ("https://example.com/a/b?b=2&a=1", "example.com", "example.com", None, None)),
    ("http://example.com/?a=&b=1&&c", ("http://example.com/?a=&b=1&&c", "example.com", "example.com", None, None)),
    ("http://example.com/search?q=&page=2&",
     ("http://example.com/search?q=&page=2&", "example.com", "example.com", None, None)),
    ("HTTP://WWW.Example.COM:80/a/./b/../c#frag",
     ("http://www.example.com/a/c", "www.example.com", "example.com", None, None)),
    ("https://www.bbc.co.uk/news?z=1&y=2", ("https://www.bbc.co.uk/news?z=1&y=2", "www.bbc.co.uk", "bbc.co.uk", None, None)),
    ("http://foo.blogspot.com/2024/01/post.html",
     ("http://foo.blogspot.com/2024/01/post.html", "foo.blogspot.com", "foo.blogspot.com", None, None)),
    ("http://www.foo.blogspot.com/", ("http://www.foo.blogspot.com/", "www.foo.blogspot.com", "foo.blogspot.com", None, None)),
    ("http://user:pw@www.example.com:8080/x?%61=%7e",
     ("http://www.example.com:8080/x?a=~", "www.example.com", "example.com", None, None)),
    ("http://b\u00fccher.example.com/\u00fc?x=\u00e9",
     ("http://xn--bcher-kva.example.com/%C3%BC?x=%C3%A9", "xn--bcher-kva.example.com", "example.com", None, None)),
    ("http://example.example/", (None, None, None, "INVALID_HOST", "no public suffix known for 'example.example'")),
    ("http://a.b.example/x", (None, None, None, "INVALID_HOST", "no public suffix known for 'a.b.example'")),
    ("http://www1.hollins/", (None, None, None, "INVALID_HOST", "no public suffix known for 'www1.hollins'")),
    ("http://localhost/", (None, None, None, "INVALID_HOST", "no public suffix known for 'localhost'")),
    ("http://192.168.0.1//x", ("http://192.168.0.1//x", "192.168.0.1", "192.168.0.1", None, None)),
    ("http://[2001:db8::1]/a?b=&a=", ("http://[2001:db8::1]/a?b=&a=", "[2001:db8::1]", "[2001:db8::1]", None, None)),
    ("http://www.com/", ("http://www.com/", "www.com", "www.com", None, None)),
    ("http://www.www.example.org/", ("http://www.www.example.org/", "www.www.example.org", "example.org", None, None)),
    ("https://example.com", ("https://example.com/", "example.com", "example.com", None, None)),
    ("https://example.com/?", ("https://example.com/", "example.com", "example.com", None, None)),
    ("http://example.com/a%2F%2Fb//c", ("http://example.com/a%2F%2Fb//c", "example.com", "example.com", None, None)),
    ("http://example.com/a b?c d=e f", ("http://example.com/a%20b?c%20d=e%20f", "example.com", "example.com", None, None)),
    ("https://github.io/", ("https://github.io/", "github.io", "github.io", None, None)),
    ("https://user.github.io/repo//x?b&a",
     ("https://user.github.io/repo//x?b&a", "user.github.io", "user.github.io", None, None)),
    ("http://example.com/?a=1&a=0&A=2", ("http://example.com/?a=1&a=0&A=2", "example.com", "example.com", None, None)),
    ("http://xn--e1afmkfd.xn--p1ai/",
     ("http://xn--e1afmkfd.xn--p1ai/", "xn--e1afmkfd.xn--p1ai", "xn--e1afmkfd.xn--p1ai", None, None)),
    ("mailto:x@example.com", (None, None, None, "UNSUPPORTED_SCHEME", "scheme 'mailto' is not http or https")),
    ("http:///nohost", (None, None, None, "MALFORMED_URL", "no host: 'http:///nohost'")),
    ("", (None, None, None, "NULL_FIELD", "URL is null or blank")),
    (None, (None, None, None, "NULL_FIELD", "URL is null or blank")),
]


def test_the_defaults_canonicalise_representative_urls_exactly_as_before():
    values = [value for value, _ in BEFORE]
    want = [expected for _, expected in BEFORE]
    for policy in (DEFAULT_POLICY, UrlPolicy(), UrlsConfig().policy(), config_from_dict({}).urls.policy()):
        assert policy == DEFAULT_POLICY
        assert both(values, policy) == want
    assert [tuple(canonicalize(value)) for value in values] == want   # no policy given: the defaults


def test_the_default_policy_is_the_one_of_an_empty_config_and_its_properties_are_the_defaults():
    recorded = policy_properties(UrlsConfig(), DEFAULT_POLICY)
    assert {k: v for k, v in recorded.items() if k != PSL_VERSION_PROPERTY} == {
        "linkgraph.canonical.collapse_slashes": "false", "linkgraph.canonical.sort_query": "false",
        "linkgraph.canonical.drop_empty_params": "false", "linkgraph.canonical.fold_www": "false",
        "linkgraph.canonical.psl_private": "true", "linkgraph.canonical.unknown_tld": "reject",
        "linkgraph.canonical.psl_file": ""}
    assert re.fullmatch(r"tldextract \S+ snapshot \S+ sha256:[0-9a-f]{64}", recorded[PSL_VERSION_PROPERTY])
    assert recorded_keys({}) == recorded_keys(recorded)   # a lake that records nothing: the defaults


# --- each option ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "expected"), [
    ("http://www.example.com//a//b/", "http://www.example.com/a/b/"),
    ("http://192.168.0.1//x", "http://192.168.0.1/x"),
    ("http://example.com//", "http://example.com/"),
    ("http://example.com/a//../b", "http://example.com/a/b"),           # dot segments first, as RFC 3986 reads them
    ("http://example.com/a%2F%2Fb//c", "http://example.com/a%2F%2Fb/c"),  # an escaped slash is no separator
    ("http://example.com/x?u=http://a//b", "http://example.com/x?u=http://a//b"),  # the query is left alone
    ("http://example.com\\\\a\\\\b", "http://example.com/a/b"),
])
def test_collapse_slashes(raw, expected):
    assert url(raw, COLLAPSE) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    ("https://example.com/a/b?b=2&a=1", "https://example.com/a/b?a=1&b=2"),
    ("http://example.com/?a=1&a=0&A=2", "http://example.com/?A=2&a=1&a=0"),   # by name, stable, ASCII order
    ("https://user.github.io/repo//x?b&a", "https://user.github.io/repo//x?a&b"),
    ("http://example.com/?b=2&a", "http://example.com/?a&b=2"),
    ("http://example.com/?%62=1&a=2", "http://example.com/?a=2&b=1"),         # escapes normalised first
    ("http://example.com/?a=&b=1&&c", "http://example.com/?&a=&b=1&c"),       # empty parameters stay
    ("http://example.com/?b=1;a=2", "http://example.com/?b=1;a=2"),           # only & separates
])
def test_sort_query(raw, expected):
    assert url(raw, SORT) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    ("http://example.com/?a=&b=1&&c", "http://example.com/?b=1&c"),
    ("http://example.com/search?q=&page=2&", "http://example.com/search?page=2"),
    ("https://example.com/?a=", "https://example.com/"),
    ("http://example.com/?&&", "http://example.com/"),
    ("http://example.com/?a=b=&c==", "http://example.com/?a=b=&c=="),   # values `b=` and `=` are not empty
    ("http://example.com/?=&=x", "http://example.com/?=x"),
    ("http://[2001:db8::1]/a?b=&a=", "http://[2001:db8::1]/a"),
    ("http://example.com/?b=2&a=1", "http://example.com/?b=2&a=1"),     # order kept
])
def test_drop_empty_params(raw, expected):
    assert url(raw, DROP) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    ("HTTP://WWW.Example.COM:80/a/./b/../c#frag", ("http://example.com/a/c", "example.com", "example.com")),
    ("https://www.bbc.co.uk/news", ("https://bbc.co.uk/news", "bbc.co.uk", "bbc.co.uk")),
    ("http://www.www.example.org/", ("http://example.org/", "example.org", "example.org")),
    ("http://user:pw@www.example.com:8080/x", ("http://example.com:8080/x", "example.com", "example.com")),
    ("http://www.foo.blogspot.com/", ("http://foo.blogspot.com/", "foo.blogspot.com", "foo.blogspot.com")),
    ("http://www.com/", ("http://www.com/", "www.com", "www.com")),                          # the registered domain
    ("http://www.blogspot.com/", ("http://www.blogspot.com/", "www.blogspot.com", "www.blogspot.com")),
    ("http://www1.example.com/", ("http://www1.example.com/", "www1.example.com", "example.com")),
    ("http://wwwexample.com/", ("http://wwwexample.com/", "wwwexample.com", "wwwexample.com")),
    ("http://shop.www.example.com/", ("http://shop.www.example.com/", "shop.www.example.com", "example.com")),
])
def test_fold_www(raw, expected):
    assert both([raw], FOLD)[0][:3] == expected


def test_psl_private_off_puts_private_suffixes_under_their_registrant():
    rows = both(["http://foo.blogspot.com/", "https://user.github.io/", "https://github.io/",
                 "http://forums.bbc.co.uk/"], PUBLIC_ONLY)
    assert [row[2] for row in rows] == ["blogspot.com", "github.io", "github.io", "bbc.co.uk"]
    assert [row[1] for row in rows] == ["foo.blogspot.com", "user.github.io", "github.io", "forums.bbc.co.uk"]
    # with fold_www, a www. label below a registrant of a private suffix folds
    assert url("http://www.blogspot.com/", UrlPolicy(psl_private=False, fold_www=True)) == "http://blogspot.com/"


def test_unknown_tld_default_rule_applies_the_psl_star_rule():
    rows = both(["http://example.example/", "http://a.b.example/x", "http://www1.hollins/", "http://localhost/",
                 "http://b\u00fccher.t\u00e9st/"], DEFAULT_RULE)
    assert [row[:3] for row in rows[:3]] == [
        ("http://example.example/", "example.example", "example.example"),
        ("http://a.b.example/x", "a.b.example", "b.example"),
        ("http://www1.hollins/", "www1.hollins", "www1.hollins")]
    assert rows[3][3:] == ("INVALID_HOST", "host is a bare top-level domain: 'localhost'")
    assert rows[4][2] == "xn--bcher-kva.xn--tst-bma"


def test_a_list_of_our_own_replaces_the_bundled_one():
    rows = both(["http://a.b.example/", "http://x.pages.example/", "http://news.bbc.co.uk/", "http://a.b.wild.example/",
                 "http://www.wild.example/", "http://shop.com/"], SMALL)
    assert [row[2] for row in rows] == ["b.example", "x.pages.example", None, "a.b.wild.example", "www.wild.example",
                                        "shop.com"]
    assert rows[2][3:] == ("INVALID_HOST", "no public suffix known for 'news.bbc.co.uk'")
    assert url("http://x.pages.example/", dataclasses.replace(SMALL, psl_private=False)) == "http://x.pages.example/"
    assert both(["http://x.pages.example/"], dataclasses.replace(SMALL, psl_private=False))[0][2] == "pages.example"
    assert both(["http://news.bbc.co.uk/"], dataclasses.replace(SMALL, unknown_tld="default_rule"))[0][2] == "co.uk"
    # the bundled list, in the same process, is untouched
    assert canonicalize("http://news.bbc.co.uk/").registered_domain == "bbc.co.uk"


def test_a_list_is_identified_by_its_text():
    same = suffix_list_from_text(SMALL_LIST, "elsewhere.dat")
    other = suffix_list_from_text(SMALL_LIST + "uk\n", "small.dat")
    assert same == SMALL.suffixes and hash(same) == hash(SMALL.suffixes) and other != same
    assert same.digest == hashlib.sha256(SMALL_LIST.encode()).hexdigest()
    assert suffix_list_version(same) == f"2030-01-01_00-00-00_UTC sha256:{same.digest}"
    assert suffix_list_version(suffix_list_from_text("com\n", "x")).startswith("sha256:")
    with pytest.raises(ConfigError, match=r"urls\.psl_file empty\.dat: no Public Suffix List rule"):
        suffix_list_from_text("// only a comment\n\n", "empty.dat")


def test_a_policy_pickles_with_its_list():
    """What an Arrow UDF's closure carries to a worker: the policy, the list's text with it."""
    shipped = pickle.loads(pickle.dumps(SMALL))
    assert shipped == SMALL and shipped.suffixes.text == SMALL_LIST and shipped.host_key == SMALL.host_key
    assert shipped.slow_shapes == SMALL.slow_shapes
    assert canonicalize("http://x.pages.example/", shipped) == canonicalize("http://x.pages.example/", SMALL)


def test_the_arrow_fast_path_leaves_only_what_an_option_may_rewrite_to_python():
    fast_shaped = ["http://www.example.com/a", "http://example.com/a//b", "http://example.com/?b=1&a=2",
                   "http://example.com/?a=", "http://example.com/?a=1", "http://example.com/x&y=/z"]
    array = pa.array(fast_shaped, pa.string())
    masks = {name: urls.fast_path_mask(array, policy).to_pylist()
             for name, policy in [("default", DEFAULT_POLICY), ("collapse", COLLAPSE), ("sort", SORT),
                                  ("drop", DROP), ("fold", FOLD), ("all", ALL_ON)]}
    assert masks == {
        "default": [True] * 6,
        "collapse": [True, False, True, True, True, True],
        "sort": [True, True, False, True, True, True],
        "drop": [True, True, True, False, True, True],
        "fold": [True] * 6,                  # hosts are folded on the fast path too
        "all": [True, False, False, False, True, True],
    }
    assert both(fast_shaped, FOLD)[0][:2] == ("http://example.com/a", "example.com")


POLICIES = {"collapse": COLLAPSE, "sort": SORT, "drop": DROP, "fold": FOLD, "public_only": PUBLIC_ONLY,
            "default_rule": DEFAULT_RULE, "small_list": SMALL, "all": ALL_ON}
some_policies = settings(max_examples=200, deadline=None)


@some_policies
@given(generated_urls, st.sampled_from(sorted(POLICIES)))
def test_canonicalisation_is_idempotent_under_every_policy(raw, name):
    policy = POLICIES[name]
    first = canonicalize(raw, policy)
    if first.url is not None:
        assert canonicalize(first.url, policy) == first
        assert first.host.endswith(first.registered_domain) and first.url.split("://", 1)[1].startswith(first.host)


@some_policies
@given(st.lists(generated_urls, min_size=1, max_size=20), st.sampled_from(sorted(POLICIES)))
def test_arrow_equals_scalar_under_every_policy_on_generated_urls(values, name):
    both(values, POLICIES[name])


def test_arrow_equals_scalar_under_every_policy_on_real_urls():
    """The vectorised path gives ``canonicalize``'s rows under every policy on a quarter of the
    equivalence corpus of tests/test_urls.py (shared data sets' URLs and their hostile variants)."""
    data = [shared_file(name) for name in URL_DATA_FILES][0].parents[1]
    values = equivalence_corpus(data)[::4]
    raw = pa.array(values, pa.string())
    for name, policy in POLICIES.items():
        got = canonicalize_arrow(raw, policy).to_pylist()
        want = [canonicalize(value, policy)._asdict() for value in values]
        wrong = [(value, g, w) for value, g, w in zip(values, got, want, strict=True) if g != w]
        assert not wrong, f"{name}: {len(wrong)} differ, e.g. {wrong[:3]}"
        fast = pc.sum(urls.fast_path_mask(raw, policy)).as_py()
        print(f"{name}: urls={len(values)} fast_path={fast}")


# --- the Public Suffix List's own tests --------------------------------------------------------------

_CHECK = re.compile(r"^checkPublicSuffix\((null|'[^']*'), (null|'[^']*')\);$")


def psl_cases() -> list[tuple[str | None, str | None]]:
    """``(host, registrable domain)`` of every ``checkPublicSuffix`` line (commented-out ones are not)."""
    cases = []
    for line in PSL_TESTS.read_text(encoding="utf-8").splitlines():
        found = _CHECK.match(line)
        if found:
            cases.append(tuple(None if part == "null" else part[1:-1] for part in found.groups()))
    return cases


def _ascii(name: str | None) -> str | None:
    return None if name is None else idna.encode(name.lower(), uts46=True).decode("ascii")


def test_the_psl_test_file_passes_with_the_default_rule():
    cases = psl_cases()
    assert len(cases) == 78   # the four commented-out lines (a listed, non-Internet TLD) are not cases
    for host, expected in cases:
        if host is None:
            assert canonicalize(host, DEFAULT_RULE).reason == "NULL_FIELD"
            continue
        assert registrable_domain(host, DEFAULT_RULE) == _ascii(expected), host
        row = canonicalize(f"http://{host}/", DEFAULT_RULE)
        if expected is not None:
            assert row.registered_domain == _ascii(expected), host
        else:   # rejected (a bare TLD, a leading dot) or a public suffix, which is its own registered domain
            assert row.reason is not None or row.registered_domain == row.host, host


def test_rejecting_unknown_tlds_differs_from_the_psl_only_on_the_unlisted_tld():
    differing = {host for host, expected in psl_cases()
                 if host is not None and registrable_domain(host) != _ascii(expected)}
    assert differing == {"example.example", "b.example.example", "a.b.example.example"}


# --- config keys, and the policy a config gives --------------------------------------------------------

def test_the_urls_keys_load_and_a_bad_value_names_its_key():
    config = config_from_dict({"urls": {"sort_query": True, "fold_www": True, "unknown_tld": "default_rule"}})
    assert config.urls.policy() == UrlPolicy(sort_query=True, fold_www=True, unknown_tld="default_rule")
    with pytest.raises(ConfigError, match=r"urls\.unknown_tld must be reject or default_rule"):
        config_from_dict({"urls": {"unknown_tld": "accept"}})
    with pytest.raises(ConfigError, match=r"config key 'urls\.fold_www' must be true or false"):
        config_from_dict({"urls": {"fold_www": "yes"}})


def test_trusted_seeds_are_checked_under_the_configs_policy():
    seeds = {"trusted_seeds": ["http://good.example/"]}
    with pytest.raises(ConfigError, match=r"scores\.trusted_seeds\[0\] is not a valid URL \(INVALID_HOST"):
        config_from_dict({"scores": seeds})
    config_from_dict({"scores": seeds, "urls": {"unknown_tld": "default_rule"}})
    config_from_dict({"scores": seeds, "urls": {"psl_file": "not/read/at/load.dat"}})   # its list: by the steps


def test_url_policy_reads_a_psl_file_once_on_the_driver(tmp_path):
    psl = tmp_path / "list.dat"
    psl.write_text(SMALL_LIST, encoding="utf-8")
    config = config_from_dict({"urls": {"psl_file": str(psl), "sort_query": True}})
    assert url_policy(config) == dataclasses.replace(SMALL, sort_query=True)
    assert url_policy(config_from_dict({"urls": {"psl_file": f"file://{psl}"}})) == SMALL
    with pytest.raises(PathNotFound, match=r"urls\.psl_file not found"):
        url_policy(config_from_dict({"urls": {"psl_file": str(tmp_path / "missing.dat")}}))
    with pytest.raises(PathNotFound, match="no Spark session"):
        url_policy(config_from_dict({"urls": {"psl_file": "s3a://bucket/list.dat"}}))
    (tmp_path / "latin1.dat").write_bytes("caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="is not UTF-8 text"):
        url_policy(config_from_dict({"urls": {"psl_file": str(tmp_path / "latin1.dat")}}))


def test_differing_keys_name_the_lake_and_the_config_value():
    recorded = policy_properties(UrlsConfig(), DEFAULT_POLICY)
    assert differing_keys(UrlsConfig(), recorded) == [] and differing_keys(UrlsConfig(), {}) == []
    other = UrlsConfig(sort_query=True, psl_file="/lists/psl.dat")
    assert differing_keys(other, {}) == ["urls.sort_query (lake: false, config: true)",
                                         "urls.psl_file (lake: null, config: /lists/psl.dat)"]
    # the list's version is information only
    assert differing_keys(UrlsConfig(), {**recorded, PSL_VERSION_PROPERTY: "sha256:0"}) == []


# --- the lake records its policy (Spark tier) ------------------------------------------------------------

def _write_config(path: Path, lake: Path, urls_keys: dict) -> str:
    path.write_text(yaml.safe_dump({"lake": {"path": str(lake)}, "urls": urls_keys}))
    return str(path)


def _edges(path: Path, records: list[dict]) -> str:
    path.write_text("".join(f'{{"from_url": "{r[0]}", "to_url": "{r[1]}"}}\n' for r in records))
    return str(path)


def test_ingest_canonicalises_under_the_policy_and_records_it(spark, tmp_path):
    psl = tmp_path / "list.dat"
    psl.write_text(SMALL_LIST, encoding="utf-8")
    keys = {"collapse_slashes": True, "sort_query": True, "drop_empty_params": True, "fold_www": True,
            "psl_file": str(psl)}
    conf = _write_config(tmp_path / "conf.yaml", tmp_path / "lake", keys)
    edges = _edges(tmp_path / "edges.jsonl", [
        ("http://www.shop.example//a?b=2&a=1&c=", "https://blog.pages.example/x"),
        ("http://shop.example/a?a=1&b=2", "http://news.bbc.co.uk/"),      # the same page; bbc.co.uk: no suffix
        ("http://shop.example/a/?a=1", "http://www.wild.example/"),
    ])
    assert main(["ingest", "--input", edges, "--format", "jsonl", "--conf", conf]) == 0
    lake = Lake(spark, config_from_dict({"lake": {"path": str(tmp_path / "lake")}}).lake)
    pages = {row[S.URL]: row[S.REGISTERED_DOMAIN] for row in lake.read(S.PAGES_TABLE).collect()}
    assert pages == {"http://shop.example/a?a=1&b=2": "shop.example", "https://blog.pages.example/x":
                     "blog.pages.example", "http://shop.example/a/?a=1": "shop.example",
                     "http://www.wild.example/": "www.wild.example"}
    rejects = lake.read(S.REJECTS_TABLE).collect()
    assert [(r[S.REASON], r[S.TO_URL]) for r in rejects] == [("INVALID_HOST", "http://news.bbc.co.uk/")]
    recorded = lake.table_properties(S.PAGES_TABLE)
    assert {k: recorded[k] for k in recorded if k.startswith("linkgraph.canonical.")} == {
        "linkgraph.canonical.collapse_slashes": "true", "linkgraph.canonical.sort_query": "true",
        "linkgraph.canonical.drop_empty_params": "true", "linkgraph.canonical.fold_www": "true",
        "linkgraph.canonical.psl_private": "true", "linkgraph.canonical.unknown_tld": "reject",
        "linkgraph.canonical.psl_file": str(psl),
        PSL_VERSION_PROPERTY: f"2030-01-01_00-00-00_UTC sha256:{hashlib.sha256(SMALL_LIST.encode()).hexdigest()}"}
    operations = [row["operation"] for row in lake.delta_table(S.PAGES_TABLE).history().collect()]
    assert "SET TBLPROPERTIES" not in operations   # created with its properties


def test_ingest_into_a_lake_of_another_policy_is_refused_with_exit_2(spark, tmp_path, capsys):
    lake_dir = tmp_path / "lake"
    edges = _edges(tmp_path / "edges.jsonl", [("http://www.example.com/a?b=1&a=2", "http://example.org/")])
    assert main(["ingest", "--input", edges, "--format", "jsonl", "--lake", str(lake_dir)]) == 0
    lake = Lake(spark, config_from_dict({"lake": {"path": str(lake_dir)}}).lake)
    versions = {t: lake.current_version(t) for t in (S.PAGES_TABLE, S.LINKS_TABLE, S.REJECTS_TABLE)}
    capsys.readouterr()
    conf = _write_config(tmp_path / "conf.yaml", lake_dir, {"sort_query": True, "fold_www": True})
    assert main(["ingest", "--input", edges, "--format", "jsonl", "--conf", conf]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "was written under another URL policy: urls.sort_query (lake: false, config: true), " \
           "urls.fold_www (lake: false, config: true)" in err
    assert {t: lake.current_version(t) for t in versions} == versions   # nothing written
    assert main(["ingest-sitemaps", "--input", edges, "--conf", conf]) == 2


@pytest.mark.slow
def test_a_lake_written_before_policies_counts_as_written_under_the_defaults(spark, tmp_path, capsys):
    lake_dir = tmp_path / "lake"
    edges = _edges(tmp_path / "edges.jsonl", [("http://www.example.com/a", "http://example.org/")])
    assert main(["ingest", "--input", edges, "--format", "jsonl", "--lake", str(lake_dir)]) == 0
    lake = Lake(spark, config_from_dict({"lake": {"path": str(lake_dir)}}).lake)
    recorded = [k for k in lake.table_properties(S.PAGES_TABLE) if k.startswith("linkgraph.canonical.")]
    spark.sql(f"ALTER TABLE delta.`{lake.location(S.PAGES_TABLE)}` UNSET TBLPROPERTIES "
              f"({', '.join(repr(k) for k in recorded)})")
    assert not any(k.startswith("linkgraph.canonical.") for k in lake.table_properties(S.PAGES_TABLE))
    conf = _write_config(tmp_path / "conf.yaml", lake_dir, {"unknown_tld": "default_rule"})
    assert main(["ingest", "--input", edges, "--format", "jsonl", "--conf", conf]) == 2
    assert "urls.unknown_tld (lake: reject, config: default_rule)" in capsys.readouterr().err
    assert main(["ingest", "--input", edges, "--format", "jsonl", "--lake", str(lake_dir)]) == 0
    assert lake.table_properties(S.PAGES_TABLE)["linkgraph.canonical.unknown_tld"] == "reject"   # recorded now
