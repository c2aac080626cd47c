; Names a Python function binds for itself (codeintel/scopes.py): its parameters and what its body
; assigns, but what it declares global or nonlocal; a bare use of one inside it is not a use of a
; definition elsewhere. A pattern (a, (b, *c)) is captured whole; codeintel/scopes.py takes the
; names it binds out of it. A class body is a scope of its own (its names are not its methods').
(function_definition) @local.scope
(lambda) @local.scope
(class_definition) @local.scope
(global_statement (identifier) @local.global)
(nonlocal_statement (identifier) @local.global)
(parameters (identifier) @local.definition)
(parameters (default_parameter name: (identifier) @local.definition))
(parameters (typed_parameter (identifier) @local.definition))
(parameters (typed_default_parameter name: (identifier) @local.definition))
(parameters (list_splat_pattern (identifier) @local.definition))
(parameters (dictionary_splat_pattern (identifier) @local.definition))
(lambda_parameters (identifier) @local.definition)
(assignment left: (identifier) @local.definition)
(assignment left: [(pattern_list) (tuple_pattern) (list_pattern)] @local.definition)
(for_statement left: (identifier) @local.definition)
(for_statement left: [(pattern_list) (tuple_pattern) (list_pattern)] @local.definition)
(as_pattern alias: (as_pattern_target (identifier) @local.definition))
