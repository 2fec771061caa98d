; Capture names: see grammars/python/definitions.scm. Used for both TypeScript and TSX.
; function_signature: overload signatures are folded into the implementation that follows them;
; one without an implementation (`declare function`) is listed on its own, without a body.
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(function_signature name: (identifier) @name) @definition.function
(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(internal_module name: (_) @name) @definition.module
(method_definition name: (_) @name) @definition.function
((method_definition name: (property_identifier) @name) @definition.constructor
  (#eq? @name "constructor"))
(abstract_method_signature name: (_) @name) @definition.function
(method_signature name: (_) @name) @definition.function
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
(variable_declarator name: (identifier) @name value: [(object) (class)]) @scope
(pair key: (_) @name value: (object)) @scope
; A field or an assignment is constrained by its value alone, and its name is found by the
; `name` path (see grammars/python/definitions.scm): a pattern constraining two fields
; (`name: … value: …`) costs tree-sitter up to 30 ms more to compile (it analyses every parse
; state the pair can occur in), and a field name needs no constraint beyond being there.
((public_field_definition value: (object)) @scope (#set! name "name"))
((public_field_definition value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
  (#set! name "name"))
(pair
  key: (_) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
; Assignments, one pattern for every left-hand side (alternatives tried in order, `|`; the
; receiver alternative at the same place goes with the name's): `a.b = () => …`; `o["k"] = …` (a
; string key; a computed `o[k]` names no definition); `baseWrite = (str) => …`, a function bound
; to a variable declared before (`let baseWrite;`).
((assignment_expression right: [(arrow_function) (function_expression) (generator_function)]) @definition.function
  (#set! name "left:member_expression/property:property_identifier|left:subscript_expression/index:string|left:identifier")
  (#set! receiver "left:member_expression/object|left:subscript_expression/object|"))
; A class or object assigned the same way (`module.exports = class {…}`, `module.exports = { m()
; {} }`, `Foo.prototype = {…}`) is the scope of its members, as one bound to a variable is.
((assignment_expression right: [(class) (object)]) @scope
  (#set! name "left:member_expression/property:property_identifier|left:subscript_expression/index:string|left:identifier")
  (#set! receiver "left:member_expression/object|left:subscript_expression/object|"))
; `export default` of an anonymous function, generator or class: named `default`, as the
; module's default export is imported; the members of the class are its methods.
(export_statement value: [(arrow_function) (function_expression) (generator_function)] @definition.function)
(export_statement value: (class) @definition.class)
; An object exported as the default (`export default { m() {} }`) is the scope `default` of its
; members, as the anonymous default class is.
(export_statement value: (object) @scope)
; After a syntax error, a function declaration can come back as a named function expression
; inside the ERROR node; it is still the definition the author wrote.
(ERROR (function_expression name: (identifier) @name) @definition.function)
; TypeScript's `export = class {…}` and `export = function () {…}` are named as `export default`
; is: `default` when anonymous (the empty path alternative: no name), else by their own name
; (`export = class Named {…}` is `Named`).
((export_statement "=" (class) @definition.class) (#set! name "name|"))
((export_statement "=" [(function_expression) (generator_function) (arrow_function)] @definition.function)
  (#set! name "name|"))
