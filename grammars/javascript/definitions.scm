; Capture names: see grammars/python/definitions.scm.
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(class_declaration name: (identifier) @name) @definition.class
(method_definition name: (_) @name) @definition.function
((method_definition name: (property_identifier) @name) @definition.constructor
  (#eq? @name "constructor"))
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
(variable_declarator name: (identifier) @name value: [(object) (class)]) @scope
(pair key: (_) @name value: (object)) @scope
(field_definition property: (_) @name value: (object)) @scope
(field_definition
  property: (_) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
(pair
  key: (_) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
(assignment_expression
  left: (member_expression object: (_) @receiver property: (property_identifier) @name)
  right: [(arrow_function) (function_expression) (generator_function)]) @definition.function
; `baseWrite = (str) => …` binds a function to a variable declared before (`let baseWrite;`).
(assignment_expression
  left: (identifier) @name
  right: [(arrow_function) (function_expression) (generator_function)]) @definition.function
(export_statement value: [(arrow_function) (function_expression)] @definition.function)
; After a syntax error, a function declaration can come back as a named function expression
; inside the ERROR node; it is still the definition the author wrote.
(ERROR (function_expression name: (identifier) @name) @definition.function)
