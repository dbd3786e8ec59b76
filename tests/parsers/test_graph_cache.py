"""The on-disk graph cache: a second parse of the same texts parses nothing."""

import logging
import sqlite3

import pytest

import mathgraph.parsers.graph_cache as graph_cache
from mathgraph import parsers
from mathgraph.parsers.graph_cache import GraphCache, default_cache_path, graph_key, parse_cached, parser_identity
from mathgraph.parsers.problem import _problem_parser, parse_problem

TEXTS = ["Let $f(x)=x^2+1$. Find $f(2)$.", "Solve $2x+3=7$ for $x$.", "What is 48/2 = 24?"]


@pytest.fixture
def parsed_texts(monkeypatch):
    """Every text handed to ``parse_problems`` by ``parse_cached``, in order."""
    seen: list[str] = []
    real = graph_cache.parse_problems

    def recording(texts, **kwargs):
        seen.extend(texts)
        return real(texts, **kwargs)

    monkeypatch.setattr(graph_cache, "parse_problems", recording)
    return seen


def test_miss_then_hit(tmp_path, parsed_texts, caplog):
    path = tmp_path / "graphs.sqlite"
    problems = [TEXTS[0], TEXTS[1], TEXTS[0], TEXTS[2]]
    first = parse_cached(problems, parser="spacy", cache=path)
    assert parsed_texts == TEXTS  # the duplicate is parsed once
    assert first[0] is first[2]
    parsed_texts.clear()
    with caplog.at_level(logging.DEBUG, logger="mathgraph"):  # a note for `mathgraph -v`, not a default line
        second = parse_cached(problems, parser="spacy", cache=path)
    assert parsed_texts == []
    assert f"graph cache {path}: 3 hits, 0 parsed" in caplog.text
    expected = [parse_problem(text, parser="spacy").to_dict() for text in problems]
    assert [g.to_dict() for g in first] == expected
    assert [g.to_dict() for g in second] == expected
    with GraphCache(path) as cache:
        assert len(cache) == 3


def test_an_open_cache_counts_hits_and_misses(tmp_path, parsed_texts):
    with GraphCache(tmp_path / "graphs.sqlite") as cache:
        parse_cached(TEXTS[:2], parser="spacy", cache=cache)
        parse_cached(TEXTS, parser="spacy", cache=cache)
        assert (cache.hits, cache.misses) == (2, 3)
    assert parsed_texts == TEXTS


def test_parser_changes_invalidate(tmp_path, parsed_texts, monkeypatch):
    path = tmp_path / "graphs.sqlite"
    identity = parser_identity(_problem_parser("spacy", False))
    assert identity != parser_identity(_problem_parser("spacy", True))
    parse_cached(TEXTS[:1], parser="spacy", cache=path)
    parse_cached(TEXTS[:1], parser="spacy", cache=path, bare_arithmetic=True)
    assert parsed_texts == TEXTS[:1] * 2
    monkeypatch.setattr(parsers, "PARSER_VERSION", parsers.PARSER_VERSION + 1)
    assert parser_identity(_problem_parser("spacy", False)) != identity
    parse_cached(TEXTS[:1], parser="spacy", cache=path)
    assert parsed_texts == TEXTS[:1] * 3


def test_keys_separate_identity_and_text():
    assert graph_key("b", "a") != graph_key("", "ab")
    assert len(graph_key("text", "id")) == 64


def test_corrupt_file_is_a_clear_error(tmp_path):
    path = tmp_path / "graphs.sqlite"
    path.write_bytes(b"this is not a database, just some bytes " * 100)
    with pytest.raises(ValueError, match=r"graphs\.sqlite.*delete it"):
        GraphCache(path)


def test_corrupt_row_is_parsed_again(tmp_path, parsed_texts):
    path = tmp_path / "graphs.sqlite"
    parse_cached(TEXTS[:2], parser="spacy", cache=path)
    key = graph_key(TEXTS[0], parser_identity(_problem_parser("spacy", False)))
    with sqlite3.connect(path) as db:
        db.execute("UPDATE graphs SET graph = ? WHERE key = ?", ('{"nodes": [', key))
    db.close()
    graphs = parse_cached(TEXTS[:2], parser="spacy", cache=path)
    assert parsed_texts == TEXTS[:2] + TEXTS[:1]
    assert graphs[0].to_dict() == parse_problem(TEXTS[0], parser="spacy").to_dict()
    parse_cached(TEXTS[:2], parser="spacy", cache=path)  # the re-parsed graph replaced the bad row
    assert parsed_texts == TEXTS[:2] + TEXTS[:1]


def test_bad_text_fails_before_parsing(tmp_path, parsed_texts):
    with pytest.raises(ValueError, match="problem 2: the problem text is empty"):
        parse_cached([TEXTS[0], TEXTS[1], "  "], parser="spacy", cache=tmp_path / "graphs.sqlite")
    with pytest.raises(TypeError, match="problem 1: expected the problem text as a str"):
        parse_cached([TEXTS[0], None], parser="spacy", cache=tmp_path / "graphs.sqlite")
    assert parsed_texts == []


def test_no_cache_writes_no_file(tmp_path, monkeypatch, parsed_texts):
    monkeypatch.setenv("MATHGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    for cache in (False, None):
        graphs = parse_cached(TEXTS[:1], parser="spacy", cache=cache)
        assert graphs[0].text == TEXTS[0]
    assert parsed_texts == TEXTS[:1] * 2
    assert not (tmp_path / "cache").exists()


def test_default_path_honours_the_environment(tmp_path, monkeypatch, parsed_texts):
    monkeypatch.setenv("MATHGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    assert default_cache_path() == tmp_path / "cache" / "graphs.sqlite"
    parse_cached(TEXTS[:1], parser="spacy")
    assert default_cache_path().is_file()
    monkeypatch.delenv("MATHGRAPH_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_path() == tmp_path / "xdg" / "mathgraph" / "graphs.sqlite"


def test_parsed_graphs_take_what_they_keep_and_parse_the_rest_through_their_own_cache(
    tmp_path, monkeypatch, parsed_texts
):
    """``ParsedGraphs.parse``: the graphs kept are taken as they are, the others parsed through the object's
    cache (``None``: no file), and at most ``limit`` graphs are kept, the oldest dropped first."""
    from mathgraph.parsers.graph_cache import ParsedGraphs

    monkeypatch.setenv("MATHGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    made_elsewhere = parse_cached(TEXTS[:1], parser="spacy", cache=None)
    parsed = ParsedGraphs(cache=None, limit=2)
    parsed.add(TEXTS[:1], made_elsewhere, parser="spacy")
    parsed_texts.clear()
    graphs = parsed.parse([TEXTS[0], TEXTS[1], TEXTS[0]], parser="spacy")
    assert parsed_texts == [TEXTS[1]]  # the kept graph is not parsed again
    assert graphs[0] is made_elsewhere[0] and graphs[2] is made_elsewhere[0]
    assert graphs[1].text == TEXTS[1] and len(parsed) == 2
    assert not (tmp_path / "cache").exists()  # cache=None writes no file
    parsed.parse(TEXTS[2:], parser="spacy")
    assert len(parsed) == 2  # bounded: TEXTS[0], the oldest, went out
    parsed.parse(TEXTS[:1], parser="spacy")
    assert parsed_texts == [TEXTS[1], TEXTS[2], TEXTS[0]]
    with pytest.raises(ValueError, match="problem 1: the problem text is empty"):
        parsed.parse([TEXTS[0], " "], parser="spacy")

    with GraphCache(tmp_path / "graphs.sqlite") as cache:
        ParsedGraphs(cache).parse(TEXTS[:2], parser="spacy")
        assert len(cache) == 2  # written where it was told
        parsed_texts.clear()
        ParsedGraphs(cache).parse(TEXTS[:2], parser="spacy")
        assert parsed_texts == []  # a second prediction reads them there
