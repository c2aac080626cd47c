"""Code intelligence below the tools: grammars and tags, the code index, ranking and embeddings.

The code tools (``tools/code/``: symbols, findsymbol, repomap, semanticsearch) stand on this
package. Heavy libraries (tree-sitter and its grammars, WordLlama, numpy) are imported on first
use inside the modules that need them, never when this package is imported, so neither
``import mcp_localtools`` nor building a registry loads them.

Its modules: ``languages`` (which tree-sitter grammar wheel reads which file; the grammars' own
``queries/tags.scm``, plus ours in ``codeintel/queries/`` where a grammar lacks one or its
references), ``tags`` (a file's definitions with qualified names, line ranges, signatures and doc
lines, and its references with the symbol each sits in), ``tokens`` (identifier-aware tokenizer,
Snowball stems), ``chunks`` (symbol-sized pieces, line windows for other text), ``store`` (the
SQLite database of one indexed directory: files with size, mtime and SHA-256, symbols, references,
chunks with float16 WordLlama vectors, an FTS5 table for BM25; its rows as Python values in
``records``), ``vectors`` (WordLlama loaded offline from its wheel; the in-memory vector table),
``ranking`` (PageRank over the definition/reference graph as Aider ranks its repository map;
reciprocal rank fusion), ``index`` (one directory's index: what is stale, reading it again through
the ``PathPolicy``), ``indexes`` (the workspace's indexes: which directory a path belongs to, the
background build with progress, freshness before each answer: a large project's periodic rescan runs
beside the answers, never in front of them). Heavy libraries (tree-sitter, grammars, WordLlama,
numpy, PyStemmer) are imported on first use only. ``[index]`` configures it
(``tools/code/_group.index_settings``, checked at start-up); ``mcp-localtools index DIR`` builds an
index ahead of time through ``tools.code.build_index``.
"""
