; Supplement to tree-sitter-go's tags.scm: package-level constants and variables.
(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))

(source_file (var_declaration (var_spec name: (identifier) @name) @definition.variable))
