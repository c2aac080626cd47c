; What a TypeScript file imports beyond JavaScript's (javascript.imports.scm, read too):
; import m = require('./m') (the module itself).
(import_statement (import_require_clause (identifier) @local source: (string (string_fragment) @module)))
