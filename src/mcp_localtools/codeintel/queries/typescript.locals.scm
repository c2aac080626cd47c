; Names a TypeScript function or block binds for itself (codeintel/scopes.py): its parameters and
; its declarations; a bare use of one inside it is not a use of a definition elsewhere. let, const,
; a for loop's names, a switch's and a catch's are their block's or statement's (@local.definition);
; var is its function's (@local.hoisted).
[
  (statement_block)
  (function_expression)
  (arrow_function)
  (function_declaration)
  (generator_function)
  (generator_function_declaration)
  (method_definition)
  (class_static_block)
  (for_statement)
  (for_in_statement)
  (switch_body)
  (catch_clause)
] @local.scope
(required_parameter pattern: (identifier) @local.definition)
(optional_parameter pattern: (identifier) @local.definition)
(arrow_function parameter: (identifier) @local.definition)
(lexical_declaration (variable_declarator name: (identifier) @local.definition))
(lexical_declaration
  (variable_declarator name: (object_pattern (shorthand_property_identifier_pattern) @local.definition)))
(lexical_declaration (variable_declarator name: (array_pattern (identifier) @local.definition)))
(variable_declaration (variable_declarator name: (identifier) @local.hoisted))
(variable_declaration
  (variable_declarator name: (object_pattern (shorthand_property_identifier_pattern) @local.hoisted)))
(variable_declaration (variable_declarator name: (array_pattern (identifier) @local.hoisted)))
(for_in_statement kind: ["let" "const"] left: (identifier) @local.definition)
(for_in_statement
  kind: ["let" "const"] left: (object_pattern (shorthand_property_identifier_pattern) @local.definition))
(for_in_statement kind: ["let" "const"] left: (array_pattern (identifier) @local.definition))
(for_in_statement kind: "var" left: (identifier) @local.hoisted)
(for_in_statement kind: "var" left: (object_pattern (shorthand_property_identifier_pattern) @local.hoisted))
(for_in_statement kind: "var" left: (array_pattern (identifier) @local.hoisted))
(catch_clause parameter: (identifier) @local.definition)
