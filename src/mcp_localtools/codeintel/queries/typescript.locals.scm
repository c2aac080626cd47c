; Names a TypeScript function or block binds for itself (codeintel/scopes.py): its parameters and
; its declarations; a bare use of one inside it is not a use of a definition elsewhere. let, const,
; a for loop's names, a switch's and a catch's are their block's or statement's (@local.definition);
; var is its function's (@local.hoisted). A pattern (destructuring: {a, b: c, d = 1, ...e}, [f, ...g])
; is captured whole; codeintel/scopes.py takes the names it binds out of it.
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
(required_parameter pattern: (_) @local.definition)
(optional_parameter pattern: (_) @local.definition)
(arrow_function parameter: (identifier) @local.definition)
(lexical_declaration (variable_declarator name: (_) @local.definition))
(variable_declaration (variable_declarator name: (_) @local.hoisted))
(for_in_statement kind: ["let" "const"] left: (_) @local.definition)
(for_in_statement kind: "var" left: (_) @local.hoisted)
(catch_clause parameter: (_) @local.definition)
