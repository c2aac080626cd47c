; Supplement to tree-sitter-rust's tags.scm: impl blocks (the container of their methods),
; constants and statics.
(impl_item type: (_) @name) @definition.impl

(const_item name: (identifier) @name) @definition.constant

(static_item name: (identifier) @name) @definition.constant
