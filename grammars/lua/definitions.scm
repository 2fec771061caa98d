; Capture names: see grammars/python/definitions.scm.
; `function f()`, `local function f()`, `function M.f()` and `function Class:method()`.
(function_declaration name: (identifier) @name) @definition.function
(function_declaration
  name: (dot_index_expression table: (_) @receiver field: (identifier) @name)) @definition.function
(function_declaration
  name: (method_index_expression table: (_) @receiver method: (identifier) @name)) @definition.method
; A function bound to one name: `local f = function() … end`.
(variable_declaration
  (assignment_statement
    (variable_list . name: (identifier) @name .)
    (expression_list . value: (function_definition) .))) @definition.function
