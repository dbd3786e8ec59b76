"""What names a search index directory (``tasks.search.index`` writes it, ``tasks.loading`` recognises it):
kept apart so that the loader need not import the index, nor the index the loader."""

FORMAT = "mathgraph-search-index"
FORMAT_VERSION = 1
MODEL_TYPE = "search-index"  # the manifest's model_type (tasks.loading)
MANIFEST_FILE = "manifest.json"
