; What a JavaScript or TypeScript file imports (codeintel/imports.py): import {n as a} from './m',
; import a from './m' (@default: the module's default export, not the module), import * as a from './m', const a = require('./m'), const {n, n: a} = require('./m').
(import_statement
  (import_clause (named_imports (import_specifier name: (_) @name !alias)))
  source: (string (string_fragment) @module))
(import_statement
  (import_clause (named_imports (import_specifier name: (_) @name alias: (_) @local)))
  source: (string (string_fragment) @module))
(import_statement (import_clause (identifier) @local @default) source: (string (string_fragment) @module))
(variable_declarator
  name: (identifier) @local
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments . (string (string_fragment) @module)))
  (#eq? @_require "require"))
(variable_declarator
  name: (object_pattern (shorthand_property_identifier_pattern) @name)
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments . (string (string_fragment) @module)))
  (#eq? @_require "require"))
(variable_declarator
  name: (object_pattern (pair_pattern key: (_) @name value: (identifier) @local))
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments . (string (string_fragment) @module)))
  (#eq? @_require "require"))
(import_statement (import_clause (namespace_import (identifier) @local)) source: (string (string_fragment) @module))
