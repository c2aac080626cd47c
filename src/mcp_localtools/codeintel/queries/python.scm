; Supplement to tree-sitter-python's tags.scm: types named in annotations and bases, and the
; constants of a class body.
(type (identifier) @name) @reference.type

(class_definition superclasses: (argument_list (identifier) @name) @reference.class)

(class_definition body: (block (expression_statement (assignment left: (identifier) @name) @definition.constant)))
