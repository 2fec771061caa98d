; Capture names: see grammars/python/definitions.scm.
; Classes, interfaces, enum classes and objects; a companion object's functions belong to its class.
(class_declaration name: (identifier) @name) @definition.class
(object_declaration name: (identifier) @name) @definition.class
(function_declaration name: (identifier) @name) @definition.function
; A function bound to a property (`val parse = { s: String -> … }`, `val f = fun(x: Int) = x`), as a
; JavaScript arrow bound to a variable is.
(property_declaration
  (variable_declaration (identifier) @name)
  [(lambda_literal) (anonymous_function)]) @definition.function
