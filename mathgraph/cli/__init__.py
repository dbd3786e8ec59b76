"""The ``mathgraph`` command line: one module per command group, each adding its commands with ``register``.

    mathgraph parse "TEXT" [--draw out.png] [--format text|json]
    mathgraph parse --sample N [--draw out.png]
    mathgraph parse --input FILE.jsonl --text-field problem --output GRAPHS.jsonl [--workers N] [--skip-bad]
    mathgraph vocab --corpus FILE.jsonl[:FIELD] [--corpus ...] --output DIR [--min-freq 2] [--latex-min-freq 5]
    mathgraph samples
    mathgraph encode --input FILE.jsonl --text-field problem --output EMB.npy [--graphs GRAPHS.jsonl] [--model DIR]
    mathgraph data qrc-pairs|sqr-lists|qam-pairs --input FILE --output FILE [--seed 0]
    mathgraph data qam-pairs --source gsm8k|gsmplus [--negatives hard|random] --input FILE --output FILE
    mathgraph data split --input FILE [--group-field group | --stratify-field F] [--dev 0.1 --test 0.1]
    mathgraph pretrain --corpus FILE.jsonl[:FIELD] --output DIR [--steps N] [--batch-size B] [--tasks mlm,dtc,tgcl] [--resume]
                       [--split-digits]
    mathgraph train kpc|qrc|qam|sqr --train F --output DIR [--dev F] [--model DIR] [--architecture comus|bert|bert+gat|tfidf]
                                    [--freeze-text-layers N] [--gat-heads H] [--split-digits] [--threads N]
                                    [--graph-cache FILE|none]
    mathgraph train multitask --task kpc:TRAIN[:DEV] --task qrc:... --output DIR [--adapter none|moe|cgc-lora]
                              [--moe-experts 4] [--moe-top-k 1] [--task-prompts] [--sampling proportional|uniform|temperature]
    mathgraph train simcse --corpus F.jsonl[:FIELD] [--corpus ...] --output DIR [--model DIR] [--steps N]
    mathgraph evaluate kpc|qrc|qam|sqr --model DIR --data F
    mathgraph predict kpc|qrc|qam|sqr [--model DIR] [--hybrid|--no-hybrid] TEXT [TEXT ...]
    mathgraph predict kpc|qrc|qam|sqr [--model DIR] --input F.jsonl [--output P.jsonl] [--skip-bad]
    mathgraph compare "A" "B" [--solution] [--model DIR | --no-model] [--format text|json]
    mathgraph compare --input PAIRS.jsonl [--output OUT.jsonl] [--skip-bad] [--solution] [--model DIR | --no-model]
    mathgraph index build --input CORPUS.jsonl --text-field problem --model DIR --output INDEX
    mathgraph search --index INDEX "QUERY" [-k 5] [--format json]
    mathgraph search --index INDEX --queries QUERIES.jsonl|QUERIES.txt [--text-field problem] [--output HITS.jsonl]
    mathgraph refine --problems F.jsonl --index INDEX --llm PATH|URL|smollm2 [--drafts F] [--stages 3] [--iterations T] --output OUT.jsonl
    mathgraph routes --model DIR "TEXT" [--task kpc] [--output routes.html|routes.png]
    mathgraph serve [--model DIR] [--index INDEX] [--host 127.0.0.1] [--port 8000] [--max-text-chars N] [--max-batch N]

Building the parser imports no model code: each command imports torch, transformers or spaCy
inside its ``run_*`` function, so ``mathgraph --help`` and ``mathgraph samples`` start at once.
"""

from mathgraph.cli.main import build_argument_parser, main

__all__ = ["build_argument_parser", "main"]
