"""What names a search index directory (``tasks.search.index`` writes it, ``mathgraph.registry`` recognises it):
kept apart so that the loader need not import the index, nor the index the loader."""

FORMAT = "mathgraph-search-index"
FORMAT_VERSION = 1
MODEL_TYPE = "search-index"  # config.json's and the manifest's model_type (mathgraph.registry)
MANIFEST_FILE = "manifest.json"
