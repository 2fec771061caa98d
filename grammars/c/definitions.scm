; Capture names: see grammars/python/definitions.scm. Only definitions with a body are listed;
; prototypes (`int f(void);`) are declarations, not definitions.
; Names are paths through the declarators rather than nested patterns, and types are constrained
; by their body alone: cheaper for tree-sitter to compile (see grammars/cpp/definitions.scm).
((function_definition) @definition.function
  (#set! name "declarator:function_declarator/declarator|declarator:pointer_declarator/declarator:function_declarator/declarator|declarator:pointer_declarator/declarator:pointer_declarator/declarator:function_declarator/declarator"))
((struct_specifier body: (field_declaration_list)) @definition.struct (#set! name "name:type_identifier"))
((enum_specifier body: (enumerator_list)) @definition.enum (#set! name "name:type_identifier"))
