; Capture names: see grammars/python/definitions.scm. A qualified declarator name (`A::f`) is
; split by src/code/definitions.ts into its qualifier and name.
(function_definition declarator: (function_declarator declarator: (_) @name)) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator declarator: (_) @name))) @definition.function
(function_definition
  declarator: (reference_declarator
    (function_declarator declarator: (_) @name))) @definition.function
(class_specifier name: (_) @name body: (field_declaration_list)) @definition.class
(struct_specifier name: (_) @name body: (field_declaration_list)) @definition.struct
(enum_specifier name: (_) @name body: (enumerator_list)) @definition.enum
(namespace_definition name: (_) @name) @definition.module
