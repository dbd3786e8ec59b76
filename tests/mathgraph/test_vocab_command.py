"""`mathgraph vocab` (the library it calls is tested in tests/models/test_vocabularies.py)."""

import json

from mathgraph.cli import main
from mathgraph.graph import GraphVocabulary
from mathgraph.models.encoder import LATEX_TOKENS_NAME
from mathgraph.samples import sample_problems

PROBLEMS = [row["problem"] for row in sample_problems()]


def test_vocab_command(tmp_path, capsys):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"question": p}) + "\n" for p in PROBLEMS), encoding="utf-8")
    output = tmp_path / "vocab"
    assert (
        main(
            [
                "vocab",
                "--corpus",
                f"{corpus}:question",
                "--output",
                str(output),
                "--parser",
                "spacy",
                "--min-freq",
                "1",
                "--latex-min-freq",
                "2",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert f"{corpus}: {len(PROBLEMS)} texts from field 'question'" in err
    vocab = GraphVocabulary.from_pretrained(output)
    latex = json.loads((output / LATEX_TOKENS_NAME).read_text())
    assert (
        f"wrote {len(vocab.labels)} node labels, {len(vocab.relations)} relations and {len(latex)} LaTeX tokens" in err
    )
