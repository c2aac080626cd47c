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
; What a CommonJS module exports (@export, its name in the module; no @module): module.exports =
; {n, n: local, n() {}, n: function () {}}, module.exports.n = ..., exports.n = ...
(assignment_expression
  left: (member_expression object: (identifier) @_module property: (property_identifier) @_exports)
  right: (object [
    (shorthand_property_identifier) @export
    (pair key: (property_identifier) @export value: (identifier) @local)
    (pair key: (property_identifier) @export value: [(function_expression) (arrow_function)])
    (method_definition name: (property_identifier) @export)
  ])
  (#eq? @_module "module")
  (#eq? @_exports "exports"))
(assignment_expression
  left: (member_expression
    object: (member_expression object: (identifier) @_module property: (property_identifier) @_exports)
    property: (property_identifier) @export)
  (#eq? @_module "module")
  (#eq? @_exports "exports"))
(assignment_expression
  left: (member_expression object: (identifier) @_exports property: (property_identifier) @export)
  (#eq? @_exports "exports"))
; A re-export (a package's index file): export {n, n as a} from './m' (a name here that is n of
; './m'), export * from './m' (@star: any name './m' exports).
(export_statement
  (export_clause (export_specifier name: (_) @name !alias))
  source: (string (string_fragment) @module))
(export_statement
  (export_clause (export_specifier name: (_) @name alias: (_) @local))
  source: (string (string_fragment) @module))
(export_statement "*" @star source: (string (string_fragment) @module))
; export * as ns from './m': ns here is the module './m' itself.
(export_statement (namespace_export (identifier) @local) source: (string (string_fragment) @module))
; An ES module (@esm: any export statement): its exports are what importing it reaches.
(export_statement) @esm
