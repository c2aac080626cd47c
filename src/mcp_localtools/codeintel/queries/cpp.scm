; Supplement to tree-sitter-cpp's tags.scm (definitions only): calls, types, namespaces, macros.
(call_expression function: (identifier) @name) @reference.call

(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call

(call_expression function: (qualified_identifier name: (identifier) @name)) @reference.call

(type_identifier) @name @reference.type

(namespace_definition name: (namespace_identifier) @name) @definition.module

(enum_specifier name: (type_identifier) @name) @definition.enum

(preproc_function_def name: (identifier) @name) @definition.macro
