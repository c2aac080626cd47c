; Supplement to tree-sitter-typescript's and -javascript's tags.scm: enums, type aliases, and the
; types a file uses.
(enum_declaration name: (identifier) @name) @definition.enum

(type_alias_declaration name: (type_identifier) @name) @definition.type

(type_identifier) @name @reference.type
