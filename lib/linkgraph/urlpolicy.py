"""URL normalisation policies and the Public Suffix Lists they use (pure Python, no Spark).

A :class:`UrlPolicy` holds the options of ``linkgraph.urls.canonicalize`` that a lake chooses once
(the ``urls`` section of the config): whether runs of ``/`` in a path are collapsed, query
parameters sorted by name and empty ones dropped, leading ``www.`` labels folded into the host's
registered domain, and which Public Suffix List says what a registered domain is (tldextract's
bundled snapshot or a ``.dat`` file's content, its private section or not, and what a host under a
top-level domain the list does not know gets).  :data:`DEFAULT_POLICY` is what canonicalisation did
before policies existed.

A policy is a small frozen value: a :class:`SuffixList` carries a user file's text with it (so a
policy pickled into a Spark task ships the list to the workers) but compares and hashes by the
text's SHA-256, so the caches keyed by a policy stay cheap.

Also here, beside the options they go with: the path rules (RFC 3986 dot segments, then
``collapse_slashes``), the query rules, and :data:`FAST_CANONICAL_URL`, the shape of URLs the
vectorised path takes as they are, with the patterns of those an option may rewrite.
"""

from __future__ import annotations

import hashlib
import io
import pkgutil
import re
from dataclasses import dataclass, field

import requests
import tldextract
from requests.adapters import BaseAdapter
from tldextract.suffix_list import extract_tlds_from_suffix_list

from linkgraph.errors import ConfigError

__all__ = ["DEFAULT_POLICY", "DEFAULT_RULE", "FAST_CANONICAL_URL", "REJECT", "UNKNOWN_TLD_CHOICES", "SuffixList",
           "UrlPolicy", "build_extractor", "fold_www", "public_suffix", "remove_dot_segments", "rewrite_path",
           "rewrite_query", "suffix_list_from_text", "suffix_list_version"]

REJECT, DEFAULT_RULE = "reject", "default_rule"
UNKNOWN_TLD_CHOICES = (REJECT, DEFAULT_RULE)

_VERSION_RE = re.compile(r"^// VERSION: (\S+)", re.MULTILINE)


@dataclass(frozen=True)
class SuffixList:
    """A Public Suffix List: tldextract's bundled snapshot (``digest`` empty, no ``text``) or the
    content of a ``.dat`` file.  Compared and hashed by ``digest`` (SHA-256 of the text, hex)."""

    digest: str = ""
    text: str | None = field(default=None, repr=False, compare=False)

    @property
    def bundled(self) -> bool:
        return self.text is None


BUNDLED = SuffixList()


def suffix_list_from_text(text: str, source: str) -> SuffixList:
    """The list a PSL ``.dat`` file holds (``source`` names it in errors): ``ConfigError`` when it
    has no rule."""
    public, private = extract_tlds_from_suffix_list(text)
    if not public and not private:
        raise ConfigError(f"urls.psl_file {source}: no Public Suffix List rule in it (a public_suffix_list.dat "
                          "holds one suffix per line)")
    return SuffixList(hashlib.sha256(text.encode("utf-8")).hexdigest(), text)


def _bundled_bytes() -> bytes:
    data = pkgutil.get_data("tldextract", ".tld_set_snapshot")
    assert data is not None, "tldextract ships its snapshot"
    return data


def suffix_list_version(suffixes: SuffixList) -> str:
    """What a lake records as the list it was written with: the list's own ``VERSION`` line (when
    it has one) and its SHA-256; for the bundled snapshot also the tldextract release that ships it
    (``tldextract 5.4.0 snapshot 2025-04-07_15-51-09_UTC sha256:8c1f...``)."""
    data = _bundled_bytes() if suffixes.bundled else (suffixes.text or "").encode("utf-8")
    text = data.decode("utf-8")
    found = _VERSION_RE.search(text)
    dated = f"{found.group(1)} " if found else ""
    digest = f"sha256:{hashlib.sha256(data).hexdigest()}"
    return f"tldextract {tldextract.__version__} snapshot {dated}{digest}" if suffixes.bundled else dated + digest


class _TextAdapter(BaseAdapter):
    """Serves one list's text to tldextract's loader (which reads lists from URLs), so that a list
    shipped to a worker is never written to or read from its disk."""

    def __init__(self, text: str):
        super().__init__()
        self.data = text.encode("utf-8")

    def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):
        response = requests.Response()
        response.status_code, response.encoding, response.url = 200, "utf-8", request.url
        response.raw = io.BytesIO(self.data)
        return response

    def close(self) -> None:
        pass


_SHIPPED_URL = "linkgraph-psl://list"


def build_extractor(private: bool, suffixes: SuffixList) -> tldextract.TLDExtract:
    """An offline tldextract extractor of ``suffixes`` (loaded now, not inside the first timed call),
    with or without the list's private section.  Never touches the network."""
    if suffixes.bundled:
        extractor = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True,
                                          include_psl_private_domains=private)
        extractor("example.com")
        return extractor
    extractor = tldextract.TLDExtract(suffix_list_urls=(_SHIPPED_URL,), cache_dir=None, fallback_to_snapshot=False,
                                      include_psl_private_domains=private)
    with requests.Session() as session:
        session.mount(_SHIPPED_URL, _TextAdapter(suffixes.text or ""))
        extractor("example.com", session=session)
    return extractor


def public_suffix(parts: tldextract.tldextract.ExtractResult, host: str, unknown_tld: str) -> tuple[str, str] | None:
    """``(public suffix, registrable domain)`` of an ASCII host name from what a list's extractor
    says of it (``parts``), the domain ``""`` when the host is itself a public suffix; None when no
    rule matches and ``unknown_tld`` is ``reject`` (``default_rule``: the PSL's rule ``*``, the last
    label is the suffix)."""
    if parts.suffix:
        return parts.suffix, parts.top_domain_under_public_suffix
    if unknown_tld == REJECT:
        return None
    labels = host.rsplit(".", 2)
    return labels[-1], ".".join(labels[-2:]) if len(labels) > 1 else ""


def fold_www(host: str, registered: str) -> str:
    """``fold_www``: the leading ``www.`` labels of ``host`` that are not part of its registered
    domain dropped (``www.example.com`` -> ``example.com``; ``www.com`` stays)."""
    while host.startswith("www.") and host != registered:
        host = host[4:]
    return host


# --- the options that rewrite paths and queries, and the fast path --------------------------------

# A percent-escape ``canonicalize`` keeps as it is: upper-case hex of a character that is not unreserved
# (escapes of ``A-Za-z0-9-._~`` are decoded, lower-case hex is upper-cased).
_CANONICAL_ESCAPE = r"%(?:[0189A-F][0-9A-F]|2[0-9A-CF]|3[A-F]|40|5[B-E]|60|7[B-DF])"
_SEGMENT_CHAR = r"(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|" + _CANONICAL_ESCAPE + ")"
_SEGMENT_START = r"(?:[A-Za-z0-9_~!$&'()*+,;=:@-]|" + _CANONICAL_ESCAPE + ")"  # no ".": no dot segment
# A URL this regex (RE2 and Java alike) matches is canonical as it is once its host is (under the
# default policy): lower-case scheme http(s), a dotted lower-case LDH host without port or
# userinfo, a path whose segments do not start with ``.`` (so none is a dot segment) and an
# optional non-empty query, both of characters that need no escaping and canonical escapes, no
# fragment, no whitespace.  ``linkgraph.urls.canonicalize_arrow`` takes such URLs as they are and
# looks up only their hosts; every other URL goes through ``canonicalize``.
FAST_CANONICAL_URL = (
    rf"^https?://[a-z0-9_-]+(?:\.[a-z0-9_-]+)+(?:/(?:{_SEGMENT_START}{_SEGMENT_CHAR}*)?)+"
    rf"(?:\?(?:{_SEGMENT_CHAR}|[/?])+)?\z"
)

_SLASH_RUNS_RE = re.compile("//+")

# URLs of the shape ``FAST_CANONICAL_URL`` matches that an option may rewrite, as
# patterns (RE2 and Python alike) that match every such URL (and a few more): ``//`` in the path,
# a second query parameter, an empty parameter (``a=``, ``&&``, a trailing ``&``).
_MAY_COLLAPSE = r"^https?://[^/]*[^?]*//"
_MAY_SORT = r"\?.*&"
_MAY_DROP = r"[?&](?:[^&=]*=)?(?:&|$)"


@dataclass(frozen=True)
class UrlPolicy:
    """How URLs are canonicalised beyond RFC 3986 (the ``urls`` section of the config).

    ``host_key`` (the options a host's canonical form and registered domain depend on) keys the
    per-process host caches; ``slow_shapes`` are the patterns of the URLs the vectorised path must
    leave to ``canonicalize`` under this policy; ``rewrites`` says whether an option rewrites paths
    or queries."""

    collapse_slashes: bool = False
    sort_query: bool = False
    drop_empty_params: bool = False
    fold_www: bool = False
    psl_private: bool = True
    unknown_tld: str = REJECT
    suffixes: SuffixList = BUNDLED
    host_key: tuple = field(init=False, repr=False, compare=False)
    slow_shapes: tuple[str, ...] = field(init=False, repr=False, compare=False)
    rewrites: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.unknown_tld not in UNKNOWN_TLD_CHOICES:
            raise ConfigError(f"urls.unknown_tld must be reject or default_rule, got {self.unknown_tld!r}")
        object.__setattr__(self, "host_key", (self.fold_www, self.psl_private, self.unknown_tld, self.suffixes))
        shapes = [pattern for on, pattern in ((self.collapse_slashes, _MAY_COLLAPSE), (self.sort_query, _MAY_SORT),
                                              (self.drop_empty_params, _MAY_DROP)) if on]
        object.__setattr__(self, "slow_shapes", tuple(shapes))
        object.__setattr__(self, "rewrites", bool(shapes))


DEFAULT_POLICY = UrlPolicy()


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4 for an absolute path (starts with ``/``)."""
    if "/." not in path:
        return path
    segments = path.split("/")
    out: list[str] = []
    for segment in segments[1:]:
        if segment == "..":
            if out:
                out.pop()
        elif segment != ".":
            out.append(segment)
    if segments[-1] in (".", ".."):
        out.append("")
    return "/" + "/".join(out)


def rewrite_path(path: str) -> str:
    """``collapse_slashes``: every run of ``/`` in a (normalised) path becomes one."""
    return _SLASH_RUNS_RE.sub("/", path) if "//" in path else path


def _name(parameter: str) -> str:
    return parameter.partition("=")[0]


def rewrite_query(query: str, policy: UrlPolicy) -> str:
    """A (normalised) query, ``?`` included (or ``""``: none), under ``sort_query`` and
    ``drop_empty_params``: its parameters are the texts between ``&``; a parameter's name is what
    precedes its first ``=``.  Empty parameters (``&&``, a leading or trailing ``&``) and those with
    ``=`` and nothing after it (``a=``) are dropped; ``a`` alone (no ``=``) is kept.  Sorting is by
    name and stable: parameters of the same name keep their order.  A query left empty is none."""
    if not query or not (policy.sort_query or policy.drop_empty_params):
        return query
    parameters = query[1:].split("&")
    if policy.drop_empty_params:
        parameters = [p for p in parameters if p and (p.partition("=")[2] or "=" not in p)]
    if policy.sort_query:
        parameters.sort(key=_name)
    return "?" + "&".join(parameters) if parameters else ""
