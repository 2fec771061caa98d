; Definitions faultline lists and extracts (src/code/definitions.ts reads the capture names):
;   @definition.<kind>  the definition's node; <kind> is function, constructor, class, interface,
;                       struct, enum, trait or module (a function inside a class becomes a method)
;   @scope              a container that only qualifies names inside it (impl blocks, objects)
;   @name               the name;  @receiver  a qualifier outside the node (Go receivers, `a.b = …`)
; Instead of capturing them, a pattern may give the name or receiver as a path from the definition's
; node: (#set! name "left:member_expression/property:property_identifier") (#set! receiver "…").
; Steps are separated by `/`: `field` is a named child in that field (as `field: (_)`), `field:type`
; one of that type (as `field: (type)`); a path that leads nowhere drops the match. Paths joined
; by `|` are alternatives, tried in order (a receiver's alternatives go with the name's, one for
; one; an empty one: no receiver; an empty name alternative: no name, the module's `default`).
; Used where a pattern would otherwise constrain two fields, or where several patterns would
; differ only in their path: each pattern costs tree-sitter time to compile and to match.
(function_definition name: (identifier) @name) @definition.function
(class_definition name: (identifier) @name) @definition.class
(assignment left: (identifier) @name right: (lambda)) @definition.function
