"""Code intelligence below the tools: grammars and tags, the code index, ranking and embeddings.

The code tools (``tools/code/``: symbols, findsymbol, repomap, semanticsearch) stand on this
package. Heavy libraries (tree-sitter and its grammars, WordLlama, numpy) are imported on first
use inside the modules that need them, never when this package is imported, so neither
``import mcp_localtools`` nor building a registry loads them.

Its modules: ``languages`` (which tree-sitter grammar wheel reads which file; the grammars' own
``queries/tags.scm``, plus ours in ``codeintel/queries/`` where a grammar lacks one or its
references; a grammar's tags, imports and locals patterns compiled as one query, one walk of a
file's tree), ``tags`` (a file's definitions with qualified names, JavaScript members by assignment,
``defineProperty`` and object literal qualified by their object, line ranges, signatures and doc
lines, and its references with the symbol each sits in), ``declarations`` (what a definition's
node says: its first line with its decorators, attributes or annotations, its signature, its doc
line), ``imports`` (what a file imports, by
``queries/<language>.imports.scm``, Python and JavaScript/TypeScript; which file a use of a name
resolves to through scope, imports, re-exports and a module it is qualified with, else a possible
use), ``owners`` (whose member a definition is: a Go receiver, a C++ ``A::`` scope, a JavaScript
object), ``scopes`` (the names a function or a JavaScript block binds for itself, destructuring
patterns included, by ``queries/<language>.locals.scm``: a use of one inside it is a local, left
out of the references),
``tokens`` (identifier-aware tokenizer, Snowball stems), ``chunks`` (symbol-sized pieces, each from
its doc comment, line windows for other text), ``database`` (opening that database: its schema, its
secondary indexes made after a first build's rows; a file SQLite cannot read, or cut shorter than
its header says, discarded and built again), ``store`` (the SQLite database of one indexed
directory: files with size, mtime and SHA-256, symbols, references, chunks with float16 WordLlama
vectors, an FTS5 table for BM25; its rows as Python values in ``records``; a build marks it complete
only after its last commit; the code tools' lookups of symbols and uses in ``lookups``),
``vectors`` (WordLlama loaded offline from its wheel; the in-memory
vector table), ``mapped`` (the vectors memory-mapped, float32, from a file beside the database, the
newer ones in memory), ``ranking`` (PageRank over the definition/reference graph as Aider ranks its
repository map; reciprocal rank fusion), ``rerank`` (the fused candidates re-scored: documentation,
history and test files below code unless the query asks for them, declaration files (``.d.ts``,
``.pyi``) below the code they declare, a symbol whose name the query spells in words above),
``index`` (one directory's index, reading it again through the ``PathPolicy``; its ``[index]``
settings in ``settings``), ``stale`` (which of
its files are stale; a directory a tool changed stands for the files under it), ``analysis`` (a
file's tags, chunks, terms and embedded words, in this process or, for a large update, in worker
processes on every core), ``pipeline`` (such an update: reading, analysing, embedding and writing
overlap), ``indexes`` (the workspace's indexes: which directory a path belongs to, the background
build with progress, freshness before each answer: a large project's periodic rescan runs beside the
answers, never in front of them, and an answer given meanwhile says "indexing, N of M files"; an
index never completed is built to its end before answering; a cache inside a root is moved out of
it). Heavy libraries (tree-sitter, grammars, WordLlama, numpy, PyStemmer) are imported on first use
only. ``[index]`` configures it (``tools/code/_group.index_settings``, checked at start-up);
``idle`` (unused for ``[index] idle_seconds``, the indexes' memory is released and the heap given
back to the OS); ``mcp-localtools index DIR`` builds an index ahead of time through
``tools.code.build_index``."""
