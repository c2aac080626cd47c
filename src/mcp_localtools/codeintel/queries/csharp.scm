; Supplement to tree-sitter-c-sharp's tags.scm: structs, enums, records, properties,
; constructors, and calls of plain names.
(struct_declaration name: (identifier) @name) @definition.class

(enum_declaration name: (identifier) @name) @definition.enum

(record_declaration name: (identifier) @name) @definition.class

(property_declaration name: (identifier) @name) @definition.field

(constructor_declaration name: (identifier) @name) @definition.method

(invocation_expression function: (identifier) @name) @reference.call
