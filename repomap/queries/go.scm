; Go tags. Capture convention: repomap/queries/README.md
; A type's name is a `type_identifier` only in `type_spec`/`type_alias` `name:`; every
; other `type_identifier` is a use.

; --- definitions ---------------------------------------------------------

(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct

(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface

; `type Handler func(…)`, `type IDs []int`, `type Celsius float64`
(type_spec
  name: (type_identifier) @name
  type: [(type_identifier) (qualified_type) (generic_type) (pointer_type) (slice_type)
         (array_type) (map_type) (channel_type) (function_type)]) @definition.type

; `type Key = string`
(type_alias name: (type_identifier) @name) @definition.type

; interface methods (qualified by the interface)
(method_elem name: (field_identifier) @name) @definition.method

(function_declaration name: (identifier) @name) @definition.function

; `func (s *Store) Save()` → `Store.Save`; also generic receivers `func (l *List[T]) Push()`
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [(type_identifier) @scope
             (pointer_type (type_identifier) @scope)
             (generic_type type: (type_identifier) @scope)
             (pointer_type (generic_type type: (type_identifier) @scope))]))
  name: (field_identifier) @name) @definition.method

; package-level `const`/`var` (`var ErrNotFound = errors.New(…)`): sentinel errors and
; constants a report quotes; locals inside functions are not definitions
(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))

(source_file (var_declaration (var_spec name: (identifier) @name) @definition.constant))

; --- references ----------------------------------------------------------

; predeclared functions (`len`, `make`, …) and conversions (`string(b)`) are left out
((call_expression function: (identifier) @reference)
  (#not-match? @reference "^(append|cap|clear|close|complex|copy|delete|imag|len|make|max|min|new|panic|print|println|real|recover|bool|byte|complex64|complex128|error|float32|float64|int|int8|int16|int32|int64|rune|string|uint|uint8|uint16|uint32|uint64|uintptr)$"))

; `fmt.Sprintf`, `s.items`, `store.Save()`
(selector_expression field: (field_identifier) @reference)

; type names where they are used; predeclared types (`string`, `error`, …) are left out
([(_ type: (type_identifier) @reference)
  (_ result: (type_identifier) @reference)
  (_ element: (type_identifier) @reference)
  (map_type key: (type_identifier) @reference)
  (map_type value: (type_identifier) @reference)
  (channel_type value: (type_identifier) @reference)
  (pointer_type (type_identifier) @reference)
  (qualified_type name: (type_identifier) @reference)
  (type_elem (type_identifier) @reference)
  (type_constraint (type_identifier) @reference)
  (negated_type (type_identifier) @reference)]
  (#not-match? @reference "^(any|bool|byte|comparable|complex64|complex128|error|float32|float64|int|int8|int16|int32|int64|rune|string|uint|uint8|uint16|uint32|uint64|uintptr)$"))
