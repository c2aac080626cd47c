; Supplement to tree-sitter-java's tags.scm: enums, records, constructors, types in use.
(enum_declaration name: (identifier) @name) @definition.enum

(record_declaration name: (identifier) @name) @definition.class

(constructor_declaration name: (identifier) @name) @definition.method

(field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field

(type_identifier) @name @reference.type
