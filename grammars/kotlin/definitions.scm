; Capture names: see grammars/python/definitions.scm.
; Classes, interfaces, enum classes and objects; a companion object's functions belong to its class.
(class_declaration name: (identifier) @name) @definition.class
(object_declaration name: (identifier) @name) @definition.class
(function_declaration name: (identifier) @name) @definition.function
