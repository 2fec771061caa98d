; Capture names: see grammars/python/definitions.scm.
; Elixir's definitions are calls: `defmodule Name do … end`, `def name(args) do … end`, `def name, do: …`,
; `def name(args) when guard do … end`.
(call
  target: (identifier) @_keyword
  (arguments (alias) @name)
  (#any-of? @_keyword "defmodule" "defprotocol")) @definition.module
(call
  target: (identifier) @_keyword
  (arguments
    [
      (call target: (identifier) @name)
      (identifier) @name
      (binary_operator operator: "when" left: (call target: (identifier) @name))
    ])
  (#any-of? @_keyword "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp")) @definition.function
