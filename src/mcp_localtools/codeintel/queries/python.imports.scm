; What a Python file imports (codeintel/imports.py): from m import n, from m import n as a,
; import m, import m as a.
(import_from_statement module_name: (_) @module name: (dotted_name) @name)
(import_from_statement
  module_name: (_) @module
  name: (aliased_import name: (dotted_name) @name alias: (identifier) @local))
(import_statement name: (dotted_name) @module)
(import_statement name: (aliased_import name: (dotted_name) @module alias: (identifier) @local))
; from m import * (@star: any name m defines or imports).
(import_from_statement module_name: (_) @module (wildcard_import) @star)
