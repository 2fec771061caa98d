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
; `M.f = function() … end`: a function bound to a table's field (`local` cannot declare one).
(assignment_statement
  (variable_list . name: (dot_index_expression table: (_) @receiver field: (identifier) @name) .)
  (expression_list . value: (function_definition) .)) @definition.function
; `t = { f = function() … end }` or `return { f = … }`: a field of a table that is assigned or
; returned (a module's functions), not of one passed to a call (a metatable's `__index`); a table
; bound to a name, `local` or not, qualifies its fields.
(expression_list
  (table_constructor
    (field name: (identifier) @name value: (function_definition)) @definition.function))
(assignment_statement
  (variable_list . name: (identifier) @name .)
  (expression_list . value: (table_constructor) .)) @scope
; `f = function() … end`, a global (wrk's scripts, Neovim configs): only as a statement of a chunk
; or block, since `local f = …` holds the same assignment, which the pattern above captures whole.
(chunk
  (assignment_statement
    (variable_list . name: (identifier) @name .)
    (expression_list . value: (function_definition) .)) @definition.function)
(block
  (assignment_statement
    (variable_list . name: (identifier) @name .)
    (expression_list . value: (function_definition) .)) @definition.function)
