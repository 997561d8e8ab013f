"""URL canonicalisation, host keys and link classification (pure Python, no Spark).

``canonicalize`` applies RFC 3986 §6 syntax-based normalisation plus common crawler practice, and
either returns a canonical ``http``/``https`` URL with its host and registered domain, or a reject
reason code (the same strings as ``linkgraph.lake.schemas.Reason``) and a human-readable detail.

Invariants of a canonical URL ``u`` (``canonicalize(x).url`` when not ``None``):

* ``u`` is pure printable ASCII with no whitespace, no userinfo, no fragment and no empty query;
* ``u`` is ``scheme://host[:port]path[?query]`` with scheme ``http`` or ``https``, a lower-case
  host, a port only when it is not the scheme's default, and a path starting with ``/``;
* ``canonicalize(u).url == u`` (idempotence).

Public Suffix List look-ups use tldextract's bundled snapshot (private domains included) and never
touch the network.  Every canonicalising function takes a ``UrlPolicy`` (``linkgraph.urlpolicy``;
default ``DEFAULT_POLICY``, the rules here); extractors and host caches are built lazily, once per
process and policy.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import quote, unquote

import idna
import pyarrow as pa
import pyarrow.compute as pc
import tldextract

from linkgraph.errors import ConfigError
from linkgraph.urlpolicy import (
    BUNDLED,
    DEFAULT_POLICY,
    FAST_CANONICAL_URL,
    SuffixList,
    UrlPolicy,
    build_extractor,
    fold_www,
    public_suffix,
    remove_dot_segments,
    rewrite_path,
    rewrite_query,
)

if TYPE_CHECKING:
    import pyarrow

__all__ = [
    "CanonicalUrl",
    "DEFAULT_POLICY",
    "UrlPolicy",
    "canonicalize",
    "canonicalize_arrow",
    "fast_path_mask",
    "FAST_CANONICAL_URL",
    "IPV4_SHAPE",
    "classify_link",
    "registrable_domain",
    "reverse_host",
    "url_key",
    "NULL_FIELD",
    "MALFORMED_URL",
    "UNSUPPORTED_SCHEME",
    "INVALID_HOST",
    "INVALID_VALUE",
    "CANONICAL_COLUMNS",
]

# Reason codes; identical to ``linkgraph.lake.schemas.Reason`` (not imported: that module needs pyspark).
NULL_FIELD = "NULL_FIELD"
MALFORMED_URL = "MALFORMED_URL"
UNSUPPORTED_SCHEME = "UNSUPPORTED_SCHEME"
INVALID_HOST = "INVALID_HOST"
INVALID_VALUE = "INVALID_VALUE"

CANONICAL_COLUMNS = ("url", "host", "registered_domain", "reason", "detail")

_DEFAULT_PORTS = {"http": "80", "https": "443"}
_HOST_CACHE_SIZE = 100_000
_DETAIL_MAX = 200


class CanonicalUrl(NamedTuple):
    """Result of :func:`canonicalize`.

    Exactly one of ``url`` and ``reason`` is ``None``.  On success ``url``, ``host`` and
    ``registered_domain`` are set; on rejection only ``reason`` and ``detail`` are.
    """

    url: str | None
    host: str | None
    registered_domain: str | None
    reason: str | None
    detail: str | None


def _reject(reason: str, detail: str) -> CanonicalUrl:
    if len(detail) > _DETAIL_MAX:
        detail = detail[: _DETAIL_MAX - 3] + "..."
    return CanonicalUrl(None, None, None, reason, detail)


_NULL = CanonicalUrl(None, None, None, NULL_FIELD, "URL is null or blank")

# --- Public Suffix List ------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _psl(private: bool = True, suffixes: SuffixList = BUNDLED) -> tldextract.TLDExtract:
    """The offline tldextract extractor of a list, with or without its private section, built once
    per process (default: the bundled PSL snapshot, private domains on)."""
    return build_extractor(private, suffixes)


# --- host --------------------------------------------------------------------------------------

_DOTS_RE = re.compile("[.\u3002\uff0e\uff61]")
# Lenient on purpose: DNS names in the wild carry ``_`` and ``--`` in positions 3-4 (WHATWG URL
# accepts both); IDNA 2008 proper is applied to non-ASCII labels and to ``xn--`` labels.
_ASCII_LABEL_RE = re.compile(r"[a-z0-9_-]{1,63}")
# a dotted quad (its numbers are checked apart); Java and Python regex syntax alike
IPV4_SHAPE = r"[0-9]+(?:\.[0-9]+){3}"
_IPV4_SHAPE_RE = re.compile(IPV4_SHAPE)
_NUMERIC_LABEL_RE = re.compile(r"[0-9]+")

_HostInfo = tuple[str | None, str | None, str | None, str | None]


def _host_reject(detail: str) -> _HostInfo:
    return (None, None, INVALID_HOST, detail)


def _ascii_labels(raw: str) -> list[str] | str:
    """Labels of ``raw`` in ASCII (A-label) form, or an error message."""
    labels = _DOTS_RE.split(raw)
    if len(labels) > 1 and labels[-1] == "":
        labels.pop()  # one trailing root dot
    out: list[str] = []
    for label in labels:
        if not label:
            return "empty label"
        if label.isascii():
            label = label.lower()
            if label.startswith("xn--"):
                try:
                    if idna.alabel(idna.ulabel(label)).decode("ascii") != label:
                        return f"non-canonical punycode label {label!r}"
                except (idna.IDNAError, UnicodeError, ValueError) as exc:
                    return f"invalid punycode label {label!r}: {exc}"
        else:
            try:
                label = idna.encode(label, uts46=True).decode("ascii")
            except (idna.IDNAError, UnicodeError, ValueError) as exc:
                return f"IDNA encoding failed for {label!r}: {exc}"
        out.extend(label.split("."))
    for label in out:
        if not _ASCII_LABEL_RE.fullmatch(label):
            if len(label) > 63:
                return f"label longer than 63 characters: {label[:20]!r}..."
            if not label:
                return "empty label"
            return f"illegal character in label {label!r}"
    return out


@functools.lru_cache(maxsize=_HOST_CACHE_SIZE)
def _host_info(raw: str) -> _HostInfo:
    """``(host, registered_domain, reason, detail)`` for a raw authority host (no port) under the
    default policy (:func:`_host_info_under`)."""
    return _host_info_under(raw, DEFAULT_POLICY)


_HOST_LOOKUPS: dict[tuple, Callable[[str], _HostInfo]] = {DEFAULT_POLICY.host_key: _host_info}


def _host_lookup(policy: UrlPolicy) -> Callable[[str], _HostInfo]:
    """The cached ``_host_info_under`` of ``policy``'s host options (one cache per ``host_key``)."""
    if policy is DEFAULT_POLICY:
        return _host_info
    lookup = _HOST_LOOKUPS.get(policy.host_key)
    if lookup is None:
        lookup = _HOST_LOOKUPS[policy.host_key] = functools.lru_cache(maxsize=_HOST_CACHE_SIZE)(
            functools.partial(_host_info_under, policy=policy))
    return lookup


def _host_info_under(raw: str, policy: UrlPolicy) -> _HostInfo:
    """``(host, registered_domain, reason, detail)`` for a raw authority host (no port).

    ``host`` is lower-case ASCII without trailing dot, a dotted-quad IPv4 address, or an IPv6
    address in RFC 5952 form inside brackets.  A non-IP host needs a public suffix on the PSL (or,
    with ``unknown_tld: default_rule``, any last label) and at least two labels; when it is itself a
    public suffix (``blogspot.com``, ``gov.uk``) it is its own registered domain.  With ``fold_www``
    its leading ``www.`` labels below the registered domain are dropped.
    """
    if raw.startswith("["):
        inner = raw[1:-1]
        if "%" in inner:
            return _host_reject(f"IPv6 zone identifiers are not allowed: {raw!r}")
        try:
            address = ipaddress.IPv6Address(inner)
        except ValueError:
            return _host_reject(f"invalid IPv6 literal {raw!r}")
        host = f"[{address.compressed}]"
        return (host, host, None, None)

    if "%" in raw:
        try:
            raw = unquote(raw, errors="strict")
        except UnicodeError:
            return _host_reject(f"percent-escapes in host are not UTF-8: {raw!r}")

    labels = _ascii_labels(raw)
    if isinstance(labels, str):
        return _host_reject(labels)
    host = ".".join(labels)
    if len(host) > 253:
        return _host_reject(f"host longer than 253 characters ({len(host)})")

    if _NUMERIC_LABEL_RE.fullmatch(labels[-1]):
        if _IPV4_SHAPE_RE.fullmatch(host):
            try:
                ipaddress.IPv4Address(host)
            except ValueError:
                return _host_reject(f"invalid IPv4 address {host!r}")
            return (host, host, None, None)
        return _host_reject(f"numeric top-level label and not a dotted-quad IPv4 address: {host!r}")
    return _name_info(host, len(labels), policy)


def _name_info(host: str, labels: int, policy: UrlPolicy) -> _HostInfo:
    """:func:`_host_info_under` of a host name of ``labels`` labels (not an IP address)."""
    split = public_suffix(_psl(policy.psl_private, policy.suffixes)(host), host, policy.unknown_tld)
    if split is None:
        return _host_reject(f"no public suffix known for {host!r}")
    registered = split[1]
    if not registered:
        if labels < 2:
            return _host_reject(f"host is a bare top-level domain: {host!r}")
        registered = host
    return (fold_www(host, registered) if policy.fold_www else host, registered, None, None)


def registrable_domain(host: str, policy: UrlPolicy = DEFAULT_POLICY) -> str | None:
    """The Public Suffix List algorithm's registrable domain of a host name under ``policy``'s list
    (the public suffix and the label before it), in ASCII; None when the host is itself a public
    suffix, an IP address or not a valid name, or (``unknown_tld: reject``) no rule matches.  (Where
    the PSL says None for a name that is a suffix, ``canonicalize`` makes it its own registered
    domain.)"""
    labels = _ascii_labels(host)
    if isinstance(labels, str) or _NUMERIC_LABEL_RE.fullmatch(labels[-1]):
        return None
    host = ".".join(labels)
    split = public_suffix(_psl(policy.psl_private, policy.suffixes)(host), host, policy.unknown_tld)
    return (split[1] or None) if split is not None else None


# --- path and query ----------------------------------------------------------------------------

# RFC 3986 pchar / "/" / "?" minus "%": left as they are in path and query.
_PLAIN = r"A-Za-z0-9\-._~!$&'()*+,;=:@/?"
_NEEDS_WORK_RE = re.compile(f"[^{_PLAIN}]")
_PCT_TOKEN_RE = re.compile(f"%[0-9A-Fa-f]{{2}}|%|[^{_PLAIN}%]+")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _escape_table() -> dict[str, str]:
    hexdigits = "0123456789abcdefABCDEF"
    table = {}
    for hi in hexdigits:
        for lo in hexdigits:
            char = chr(int(hi + lo, 16))
            table[f"%{hi}{lo}"] = char if char in _UNRESERVED else f"%{hi}{lo}".upper()
    table["%"] = "%25"
    return table


_ESCAPES = _escape_table()


def _pct_token(match: re.Match) -> str:
    token = match.group()
    fixed = _ESCAPES.get(token)
    if fixed is not None:
        return fixed
    return quote(token, safe="")  # UTF-8; raises UnicodeEncodeError on lone surrogates


def _normalize_pct(text: str) -> str:
    """Decode escaped unreserved characters, upper-case other escapes, escape what must be."""
    if _NEEDS_WORK_RE.search(text) is None:
        return text
    return _PCT_TOKEN_RE.sub(_pct_token, text)


# --- canonicalize ------------------------------------------------------------------------------

_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
# WHATWG URL "special" schemes: a backslash is a path separator in them, as ``/`` is (only http
# and https are accepted here, but the rule is the standard's, so it is spelled out for all six).
SPECIAL_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp", "file"})
_AUTHORITY_END_RE = re.compile(r"[/?#\\]")
_SLASHES = ("//", "\\\\", "/\\", "\\/")


class _Parts(NamedTuple):
    scheme: str
    authority: str
    path: str
    query: str


def _split(s: str) -> _Parts | CanonicalUrl:
    """Scheme, authority, path and query of ``s`` (fragment dropped), or a reject.

    Splitting follows the WHATWG URL parser for special schemes: a backslash counts as ``/``
    among the two slashes after the scheme, ends the authority and separates path segments, so
    ``http://a.com\\@b.com/`` is host ``a.com`` with path ``/@b.com/``, as browsers read it."""
    if _CONTROL_RE.search(s):
        return _reject(MALFORMED_URL, f"control character in URL: {s!r}")
    colon = s.find(":")
    scheme = s[:colon]
    if colon <= 0 or not _SCHEME_RE.fullmatch(scheme):
        return _reject(UNSUPPORTED_SCHEME, f"no scheme: {s!r}")
    scheme = scheme.lower()
    if scheme != "http" and scheme != "https":
        return _reject(UNSUPPORTED_SCHEME, f"scheme {scheme!r} is not http or https")
    if s[colon + 1 : colon + 3] not in _SLASHES:
        return _reject(MALFORMED_URL, f"no '//' authority after scheme: {s!r}")
    start = colon + 3
    end = _AUTHORITY_END_RE.search(s, start)
    a_end = end.start() if end else len(s)
    hash_pos = s.find("#", a_end)
    rest = s[a_end:hash_pos] if hash_pos >= 0 else s[a_end:]
    path, _, query = rest.partition("?")
    if scheme in SPECIAL_SCHEMES:
        path = path.replace("\\", "/")
    return _Parts(scheme, s[start:a_end], path, query)


def _host_port(authority: str, scheme: str, s: str) -> tuple[str, str] | CanonicalUrl:
    """``(host, port)`` of an authority (userinfo dropped, a default port as ``""``), or a reject."""
    if "@" in authority:
        authority = authority.rpartition("@")[2]
    if " " in authority:
        return _reject(MALFORMED_URL, f"whitespace in authority: {authority!r}")
    if authority.startswith("["):
        close = authority.find("]")
        if close < 0:
            return _reject(MALFORMED_URL, f"unterminated IPv6 literal: {authority!r}")
        host, after = authority[: close + 1], authority[close + 1 :]
        if after and after[0] != ":":
            return _reject(MALFORMED_URL, f"junk after IPv6 literal: {authority!r}")
        port = after[1:]
    else:
        host, _, port = authority.partition(":")
    if not host:
        return _reject(MALFORMED_URL, f"no host: {s!r}")
    if port:
        if not (port.isascii() and port.isdigit()) or int(port) > 65535:
            return _reject(MALFORMED_URL, f"bad port {port!r}")
        port = str(int(port))
        if port == _DEFAULT_PORTS[scheme]:
            port = ""
    return host, port


def _canonicalize(s: str, policy: UrlPolicy) -> CanonicalUrl:
    parts = _split(s)
    if isinstance(parts, CanonicalUrl):
        return parts
    host_port = _host_port(parts.authority, parts.scheme, s)
    if isinstance(host_port, CanonicalUrl):
        return host_port
    raw_host, port = host_port
    host, registered, reason, detail = (_host_info if policy is DEFAULT_POLICY else _host_lookup(policy))(raw_host)
    if reason is not None or host is None:
        return _reject(reason or MALFORMED_URL, detail or "")
    path = remove_dot_segments(_normalize_pct(parts.path)) if parts.path else "/"
    query = "?" + _normalize_pct(parts.query) if parts.query else ""
    if policy.rewrites:
        path = rewrite_path(path) if policy.collapse_slashes else path
        query = rewrite_query(query, policy)
    authority = f"{host}:{port}" if port else host
    return CanonicalUrl(f"{parts.scheme}://{authority}{path}{query}", host, registered, None, None)


def canonicalize(url: str | None, policy: UrlPolicy = DEFAULT_POLICY) -> CanonicalUrl:
    """Canonicalise one URL; never raises.

    Rules: surrounding whitespace stripped; scheme and host lower-cased; only http/https; userinfo
    dropped (credentials are not part of a page's identity); host IDNA-encoded (UTS #46) to its
    ASCII form without trailing dot, IPv4 kept, IPv6 in RFC 5952 form; default port dropped; empty
    path becomes ``/``; percent-encoding normalised in path and query (unreserved escapes decoded,
    other escapes upper-cased, a stray ``%`` becomes ``%25``, characters outside RFC 3986 -
    including space, ``"<>[]^`{|}`` and non-ASCII as UTF-8 - escaped) and then dot segments
    removed; fragment and empty query dropped; query order unchanged.  As in the WHATWG URL
    standard (and browsers), a backslash in an http(s) URL is ``/`` before the query: among the
    slashes after the scheme, as the end of the authority and as a path separator
    (``http://a.com\\@b.com/`` is host ``a.com``, path ``/@b.com/``); in the query it is escaped.

    Rejects: ``NULL_FIELD`` (None, empty, blank), ``UNSUPPORTED_SCHEME`` (missing or not
    http/https), ``MALFORMED_URL`` (no ``//`` authority, no host, bad port, control characters,
    whitespace in the authority, undecodable text), ``INVALID_HOST`` (IDNA failure, empty or
    over-long label, host over 253 characters, illegal character, bad IP literal, no public suffix
    on the PSL, bare TLD).
    ``policy`` adds the options of the ``urls`` config section (``linkgraph.urlpolicy``).
    """
    if url is None:
        return _NULL
    if not isinstance(url, str):
        return _reject(MALFORMED_URL, f"not a string: {type(url).__name__}")
    s = url.strip()
    if not s:
        return _NULL
    try:
        return _canonicalize(s, policy)
    except (ValueError, UnicodeError) as exc:
        return _reject(MALFORMED_URL, f"{type(exc).__name__}: {exc}")


def canonical_seed_urls(seeds: list[str], setting: str, policy: UrlPolicy = DEFAULT_POLICY) -> list[CanonicalUrl]:
    """Canonical forms of configured seed URLs, as ingest writes them under ``policy``; the first
    unusable one stops the command with a ``ConfigError`` naming ``setting[i]`` (e.g.
    ``scores.seeds[2]``)."""
    canonical = []
    for i, seed in enumerate(seeds):
        result = canonicalize(seed, policy)
        if result.url is None:
            raise ConfigError(f"{setting}[{i}] is not a valid URL ({result.reason}: {result.detail}): {seed!r}")
        canonical.append(result)
    return canonical


# --- batches: Arrow arrays ------------------------------------------------------------------------

_FAST_HOST = r"^https?://(?P<host>[^/]+)/"
_FAST_PARTS = r"^(?P<scheme>https?://)[^/]+(?P<rest>/.*)$"


def _fast_rows(raw: pyarrow.Array, policy: UrlPolicy) -> tuple[pyarrow.BooleanArray, list[pyarrow.Array]]:
    """Which values of a string array are taken as they are (with ``fold_www``: with their host
    folded), and the five columns of :data:`CANONICAL_COLUMNS` for them (null in every other row)."""
    fast = pc.fill_null(pc.match_substring_regex(raw, FAST_CANONICAL_URL), False)
    for pattern in policy.slow_shapes:   # URLs an option may rewrite
        fast = pc.and_not(fast, pc.fill_null(pc.match_substring_regex(raw, pattern), False))
    nothing = pa.nulls(len(raw), pa.string())
    fast_host = pc.if_else(fast, pc.struct_field(pc.extract_regex(raw, _FAST_HOST), [0]), nothing)
    encoded = fast_host.dictionary_encode()
    hosts = encoded.dictionary.to_pylist()
    lookup = _host_lookup(policy)
    infos = [lookup(host) for host in hosts]
    # a fast-shaped host is canonical as it is, folded (fold_www) or rejected
    canonical = ([info[0] is not None for info in infos] if policy.fold_www
                 else [info[0] == host for info, host in zip(infos, hosts, strict=True)])
    host_is_canonical = pa.array(canonical, pa.bool_())
    taken = pc.fill_null(pc.take(host_is_canonical, encoded.indices), False)
    domain = pc.take(pa.array([info[1] for info in infos], pa.string()), encoded.indices)
    url = raw
    if policy.fold_www and any(info[0] != host for info, host in zip(infos, hosts, strict=True)):
        fast_host = pc.take(pa.array([info[0] for info in infos], pa.string()), encoded.indices)
        parts = pc.extract_regex(raw, _FAST_PARTS)
        url = pc.binary_join_element_wise(pc.struct_field(parts, [0]), fast_host, pc.struct_field(parts, [1]), "")
    return taken, [pc.if_else(taken, url, nothing), pc.if_else(taken, fast_host, nothing),
                   pc.if_else(taken, domain, nothing), nothing, nothing]


def fast_path_mask(raw_urls: pyarrow.Array, policy: UrlPolicy = DEFAULT_POLICY) -> pyarrow.BooleanArray:
    """True for the values :func:`canonicalize_arrow` takes without Python per value."""
    return _fast_rows(raw_urls.cast(pa.string()), policy)[0]


def canonicalize_arrow(raw_urls: pyarrow.Array, policy: UrlPolicy = DEFAULT_POLICY) -> pyarrow.StructArray:
    """:func:`canonicalize` of every value of a string array under ``policy``, as a struct array with
    the fields of :data:`CANONICAL_COLUMNS` (for Arrow UDFs; the result equals ``canonicalize`` value
    by value).

    The common case costs no Python per value: a URL :data:`FAST_CANONICAL_URL` matches (Arrow's
    vectorised RE2 kernels) is its own canonical form when its host is, and its host is looked up
    once per distinct host of the array (cached across arrays, one cache per policy); under a
    policy, less the URLs one of its options may rewrite (``UrlPolicy.slow_shapes``), with hosts
    folded there too (``fold_www``).  Every other value goes through ``canonicalize`` once per
    distinct value of the array.
    """
    raw = raw_urls.cast(pa.string())
    taken, columns = _fast_rows(raw, policy)
    rest = pc.invert(taken)
    rest_values = raw.filter(rest).to_pylist()
    if rest_values:
        seen: dict[str, CanonicalUrl] = {}
        results = []
        for value in rest_values:
            result = _NULL if value is None else seen.get(value)
            if result is None:
                result = seen[value] = canonicalize(value, policy)
            results.append(result)
        columns = [pc.replace_with_mask(column, rest, pa.array(list(values), pa.string()))
                   for column, values in zip(columns, zip(*results, strict=True), strict=True)]
    return pa.StructArray.from_arrays(columns, names=list(CANONICAL_COLUMNS))


# --- keys --------------------------------------------------------------------------------------


def _is_ip_host(host: str) -> bool:
    return host.startswith("[") or bool(_IPV4_SHAPE_RE.fullmatch(host))


def reverse_host(host: str) -> str:
    """``www.example.com`` -> ``com.example.www``; IPv4 and bracketed IPv6 hosts are kept as is."""
    if _is_ip_host(host):
        return host
    return ".".join(reversed(host.split(".")))


def url_key(canonical_url: str) -> str:
    """Sort key of a canonical URL: reversed host, ``:port`` if any, path and query, then
    ``" https"`` for https URLs.

    ``http://www.stanford.edu/biology?a=1`` -> ``edu.stanford.www/biology?a=1``, and
    ``https://www.stanford.edu/biology`` -> ``edu.stanford.www/biology https``.

    Sorting by key keeps each host's pages (and a registered domain's hosts) together; the scheme
    only breaks ties.  The key is injective over canonical URLs: those never contain a raw space,
    so the suffix cannot be confused with a path.  The input must come from :func:`canonicalize`;
    anything that is not ``http(s)://...`` raises ``ValueError``.
    """
    scheme, sep, rest = canonical_url.partition("://")
    if not sep or (scheme != "http" and scheme != "https"):
        raise ValueError(f"not a canonical http(s) URL: {canonical_url!r}")
    slash = rest.find("/")
    if slash < 0:
        authority, path_query = rest, "/"
    else:
        authority, path_query = rest[:slash], rest[slash:]
    if authority.startswith("["):
        close = authority.find("]") + 1
        host, port_part = authority[:close], authority[close:]
    else:
        host, colon, port = authority.partition(":")
        port_part = colon + port
    suffix = "" if scheme == "http" else " https"
    return f"{reverse_host(host)}{port_part}{path_query}{suffix}"


# --- link classification -----------------------------------------------------------------------

_REL_PRECEDENCE = ("SPONSORED", "UGC", "NOFOLLOW")
_REL_TYPES = frozenset(_REL_PRECEDENCE)
_SPLIT_REL_RE = re.compile(r"[\s,]+")


def classify_link(
    from_domain: str | None,
    to_domain: str | None,
    rel: str | None,
    given_type: str | None,
) -> tuple[str | None, str | None]:
    """``(link_type, reason)`` for an edge; ``reason`` is ``None`` unless ``link_type`` is.

    ``rel`` is a case-insensitive list of tokens separated by whitespace or commas; tokens other
    than ``nofollow``/``ugc``/``sponsored`` are ignored.  ``given_type`` (a link type, compared
    case-insensitively after stripping) contributes NOFOLLOW/UGC/SPONSORED to the same set.  When
    several are present the most specific declared relationship wins, SPONSORED > UGC > NOFOLLOW;
    all three mean "do not pass authority".

    Otherwise the type is INTERNAL when both registered domains are equal and EXTERNAL when they
    differ; a given INTERNAL/EXTERNAL is recomputed.  If a domain is missing the given
    INTERNAL/EXTERNAL is kept, and without one the result is ``(None, "NULL_FIELD")``.  Any other
    ``given_type`` gives ``(None, "INVALID_VALUE")``.
    """
    declared: set[str] = set()
    given = given_type.strip().upper() if given_type is not None else ""
    if given:
        if given in _REL_TYPES:
            declared.add(given)
        elif given != "INTERNAL" and given != "EXTERNAL":
            return (None, INVALID_VALUE)
    if rel:
        for token in _SPLIT_REL_RE.split(rel.upper()):
            if token in _REL_TYPES:
                declared.add(token)
    if declared:
        for link_type in _REL_PRECEDENCE:
            if link_type in declared:
                return (link_type, None)
    if from_domain is None or to_domain is None:
        return (given, None) if given else (None, NULL_FIELD)
    return ("INTERNAL" if from_domain == to_domain else "EXTERNAL", None)
