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

(field_access field: (identifier) @reference)

(method_reference (identifier) @reference)

; types, annotations and capitalised receivers (`Discounts.apply(x)`), minus java.lang's
; (`String`, `Integer`, `System`, `@Override`, …)
([(type_identifier) @reference
  (method_invocation object: (identifier) @reference)
  (field_access object: (identifier) @reference)
  (marker_annotation name: (identifier) @reference)
  (annotation name: (identifier) @reference)]
  (#match? @reference "^[A-Z]")
  (#not-match? @reference "^(Object|String|Integer|Long|Short|Byte|Double|Float|Boolean|Character|Void|Number|Math|System|Objects|Override|Deprecated|SuppressWarnings|FunctionalInterface|SafeVarargs)$"))

(import_declaration (scoped_identifier name: (identifier) @reference))
