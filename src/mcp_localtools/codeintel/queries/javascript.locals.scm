; Names a JavaScript function or block binds for itself (codeintel/scopes.py): its
; parameters and its declarations; a bare use of one inside it is not a use of a definition elsewhere.
[
  (statement_block)
  (function_expression)
  (arrow_function)
  (function_declaration)
  (method_definition)
] @local.scope
(formal_parameters (identifier) @local.definition)
(formal_parameters (assignment_pattern left: (identifier) @local.definition))
(formal_parameters (rest_pattern (identifier) @local.definition))
(arrow_function parameter: (identifier) @local.definition)
(variable_declarator name: (identifier) @local.definition)
(variable_declarator name: (object_pattern (shorthand_property_identifier_pattern) @local.definition))
(variable_declarator name: (array_pattern (identifier) @local.definition))
