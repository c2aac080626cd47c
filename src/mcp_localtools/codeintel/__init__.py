"""Code intelligence below the tools: grammars and tags, the code index, ranking and embeddings.

The code tools (``tools/code/``: symbols, findsymbol, repomap, semanticsearch) stand on this
package. Heavy libraries (tree-sitter and its grammars, WordLlama, numpy) are imported on first
use inside the modules that need them, never when this package is imported, so neither
``import mcp_localtools`` nor building a registry loads them.

Modules: ``languages`` (which grammar reads which file, its tags queries), ``tags`` (a file's
definitions and references), ``tokens`` (the identifier-aware tokenizer), ``chunks`` (symbol-sized
pieces for search), ``store`` (the SQLite index on disk), ``vectors`` (WordLlama embeddings and the
in-memory vector table), ``ranking`` (PageRank over the reference graph, reciprocal rank fusion),
``index`` (one index per project directory: build, refresh, queries).
"""
