; Supplement to tree-sitter-c's tags.scm (definitions only): calls, types and macros.
(call_expression function: (identifier) @name) @reference.call

(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call

(type_identifier) @name @reference.type

(preproc_function_def name: (identifier) @name) @definition.macro

(preproc_def name: (identifier) @name) @definition.constant
