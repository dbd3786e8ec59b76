"""Problem text -> formulas and words -> dependency tree and operator trees -> graph."""

# Bump whenever segment/latex/syntax_graph change the graphs they build (this invalidates every cached graph).
PARSER_VERSION = 5  # 3: U+2212 read as a minus before spaCy (0.3.0); 4, 5: the quantity readers of 0.5.0
