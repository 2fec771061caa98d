; Capture names: see grammars/python/definitions.scm.
(method_declaration name: (identifier) @name) @definition.function
(constructor_declaration name: (identifier) @name) @definition.constructor
(compact_constructor_declaration name: (identifier) @name) @definition.constructor
(variable_declarator name: (identifier) @name value: (lambda_expression)) @definition.function
; An enum constant with a body (`ADD { int apply(…) {…} }`) qualifies the methods inside it.
(enum_constant name: (identifier) @name body: (class_body)) @scope
(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
; An anonymous class (`new Runnable() { public void run() {…} }`) qualifies its methods by the
; type it implements: `A.start.Runnable.run`, a method.
(object_creation_expression type: (_) @name (class_body)) @scope
