; Capture names: see grammars/python/definitions.scm.
(function_definition name: (word) @name) @definition.function
