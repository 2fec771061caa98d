; Definitions faultline lists and extracts (src/code/definitions.ts reads the capture names):
;   @definition.<kind>  the definition's node; <kind> is function, constructor, class, interface,
;                       struct, enum, trait or module (a function inside a class becomes a method)
;   @scope              a container that only qualifies names inside it (impl blocks, objects)
;   @name               the name;  @receiver  a qualifier outside the node (Go receivers, `a.b = …`)
(function_definition name: (identifier) @name) @definition.function
(class_definition name: (identifier) @name) @definition.class
(assignment left: (identifier) @name right: (lambda)) @definition.function
