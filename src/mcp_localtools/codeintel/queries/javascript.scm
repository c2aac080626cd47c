; Supplement to tree-sitter-javascript's tags.scm (also read for TypeScript and TSX): members
; defined by a call, as express does (`defineGetter(req, 'protocol', function () {...})`) and
; `Object.defineProperty(obj, 'name', {...})`; the owner (`req`, `obj`) qualifies the name.
(call_expression
  function: [(identifier) @_define (member_expression property: (property_identifier) @_define)]
  arguments: (arguments . (_) . (string (string_fragment) @name) . [(function_expression) (arrow_function) (object)])
  (#match? @_define "^(defineProperty|defineGetter|defineSetter|__defineGetter__|__defineSetter__)$")) @definition.function
