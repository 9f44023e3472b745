; Java tags. Capture convention: repomap/queries/README.md
; Declared names are `identifier`; every `type_identifier` is a use of a type.

; --- definitions ---------------------------------------------------------

(class_declaration name: (identifier) @name) @definition.class

(record_declaration name: (identifier) @name) @definition.class

(interface_declaration name: (identifier) @name) @definition.interface

; `@interface Audited {}`
(annotation_type_declaration name: (identifier) @name) @definition.interface

(enum_declaration name: (identifier) @name) @definition.enum

(method_declaration name: (identifier) @name) @definition.method

(constructor_declaration name: (identifier) @name) @definition.method

; --- references ----------------------------------------------------------

(method_invocation name: (identifier) @reference)

; `Discounts.apply(x)`, `Math.max(…)`: capitalised receivers are classes
((method_invocation object: (identifier) @reference)
  (#match? @reference "^[A-Z]"))

(field_access field: (identifier) @reference)

((field_access object: (identifier) @reference)
  (#match? @reference "^[A-Z]"))

(method_reference (identifier) @reference)

(type_identifier) @reference

(marker_annotation name: (identifier) @reference)

(annotation name: (identifier) @reference)

(import_declaration (scoped_identifier name: (identifier) @reference))
