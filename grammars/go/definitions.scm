; Capture names: see grammars/python/definitions.scm.
(function_declaration name: (identifier) @name) @definition.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: (_) @receiver))
  name: (field_identifier) @name) @definition.method
(method_elem name: (field_identifier) @name) @definition.function
; Function literals bound to one name: `f := func() {…}`, `var f = func() {…}`.
(short_var_declaration
  left: (expression_list . (identifier) @name .)
  right: (expression_list . (func_literal) .)) @definition.function
(var_spec name: (identifier) @name value: (expression_list . (func_literal) .)) @definition.function
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
