; Capture names: see grammars/python/definitions.scm.
(function_definition name: (name) @name) @definition.function
(method_declaration name: (name) @name) @definition.function
(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(assignment_expression
  left: (variable_name (name) @name)
  right: [(anonymous_function) (arrow_function)]) @definition.function
