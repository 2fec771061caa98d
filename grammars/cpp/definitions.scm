; Capture names: see grammars/python/definitions.scm. A qualified declarator name (`A::f`) is
; split by src/code/definitions.ts into its qualifier and name.
; Function names are paths through the declarators rather than nested patterns, and types are
; constrained by their body alone: nested or two-field patterns cost tree-sitter ~40 ms more to
; compile here (see grammars/typescript/definitions.scm). The first alternative path that fits a
; function's declarator names it; none fitting drops the match. A conversion operator
; (`operator bool() const {…}`, `S::operator int() {…}`) has no function declarator: the operator,
; or the name qualifying it, is the declarator itself (any other qualified name there is error
; recovery, e.g. `MACRO namespace NAME {`, which src/code/definitions.ts drops; a pattern telling
; them apart costs ~10-20 ms more to compile).
((function_definition) @definition.function
  (#set! name "declarator:function_declarator/declarator|declarator:pointer_declarator/declarator:function_declarator/declarator|declarator:reference_declarator/:function_declarator/declarator|declarator:operator_cast|declarator:qualified_identifier"))
((class_specifier body: (field_declaration_list)) @definition.class (#set! name "name"))
((struct_specifier body: (field_declaration_list)) @definition.struct (#set! name "name"))
((enum_specifier body: (enumerator_list)) @definition.enum (#set! name "name"))
(namespace_definition name: (_) @name) @definition.module
